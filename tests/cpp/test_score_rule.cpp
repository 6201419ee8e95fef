// The score rule (lib/src/core/score_rule.hpp, private): the one description of scale, causal
// alignment, masks and bias that the kernels, the reference path and the trace apply.
#include "compare.hpp"
#include "core/score_rule.hpp"

#include <cmath>
#include <vector>

using attnlens::detail::apply_score_rule;
using attnlens::detail::ScoreRule;

TEST_CASE("score rule: causal visibility and key ranges, both alignments", "[score_rule]") {
  ScoreRule rule;
  CHECK(rule.causal_visible(0, 0, 7) == 7);
  CHECK(rule.key_end(0, 3, 7) == 7);
  rule.causal = true;
  // Top-left: query i sees keys 0 .. i.
  CHECK(rule.causal_visible(0, 0, 7) == 1);
  CHECK(rule.causal_visible(3, 0, 7) == 4);
  CHECK(rule.causal_visible(3, 2, 5) == 2);  // keys 2, 3 of a tile starting at key 2
  CHECK(rule.causal_visible(3, 4, 3) == 0);  // a tile wholly in the future
  CHECK(rule.causal_visible(9, 0, 7) == 7);  // L > S: late queries see every key
  CHECK(rule.key_end(0, 3, 7) == 3);         // queries 0..2 need keys 0..2
  // Bottom-right with L = 3, S = 7: query i sees keys 0 .. i + 4.
  rule.causal_shift = 4;
  CHECK(rule.causal_visible(0, 0, 7) == 5);
  CHECK(rule.causal_visible(2, 0, 7) == 7);
  // Bottom-right with L = 5, S = 2: queries 0..2 see nothing.
  rule.causal_shift = -3;
  CHECK(rule.causal_visible(2, 0, 2) == 0);
  CHECK(rule.causal_visible(4, 0, 2) == 2);
  CHECK(rule.key_end(0, 3, 2) == 0);
}

TEST_CASE("score rule: scale, additive mask, bias and boolean mask, in float and double",
          "[score_rule]") {
  // One query row i = 1 against keys 2..4 of a [2, 5] mask slice.
  const std::vector<float> add = {0, 0, 0, 0, 0, 0, 0, 0.5f, -INFINITY, 2};
  const std::vector<std::uint8_t> allow = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  ScoreRule rule;
  rule.scale = 0.5f;
  rule.add_mask = add.data();
  rule.mask_stride = 5;
  std::vector<float> row = {4, 6, 8};
  apply_score_rule(rule, row.data(), 1, 2, 3, true);
  // 4 * 0.5 + 0.5, 6 * 0.5 - inf, 8 * 0.5 + 2: exact in binary.
  CHECK(testing::close(row, {2.5, -INFINITY, 6.0}, 0.0));
  rule.bool_mask = allow.data();
  rule.alibi_slope = 0.25f;
  rule.causal_shift = 3;
  std::vector<double> wide = {4, 6, 8};
  apply_score_rule(rule, wide.data(), 1, 2, 3, true);
  // Bias -0.25 (i + shift - j) = -0.25 (4 - j) for j = 2, 3: -0.5, -0.25; key 4 is not allowed.
  CHECK(testing::close(wide, {2.0, -INFINITY, -INFINITY}, 0.0));
  // Without the scale (a softmax that folds it into exp): only masks apply.
  ScoreRule folded;
  folded.scale = 3.0f;
  folded.bool_mask = allow.data();
  folded.mask_stride = 5;
  CHECK(folded.scale_foldable());
  std::vector<float> raw = {1, 2, 3};
  apply_score_rule(folded, raw.data(), 1, 2, 3, false);
  CHECK(testing::close(raw, {1.0, 2.0, -INFINITY}, 0.0));
  CHECK_FALSE(rule.scale_foldable());  // an additive mask must see scaled scores
}

TEST_CASE("score rule: the soft cap against std::tanh on each of its branches, in float and double",
          "[score_rule][softcap]") {
  // Below 2^-12 the series y (1 - y^2 / 3), up to 20 the exp form, past it c itself; NaN stays NaN
  // and an infinity becomes +-c. Each within 1e-12 relative of tanh in double (the comment's
  // bound), within float32's rounding of it in float.
  const std::vector<double> xs = {0.0,  1e-9, -3e-5, 2.5e-4 * 50, 0.4,   -7.3,
                                  49.9, -300, 999.0, 1e30,        -1e300};
  std::vector<double> wide = xs;
  attnlens::detail::soft_cap_row(wide.data(), static_cast<std::int64_t>(wide.size()), 50.0f);
  std::vector<float> narrow(xs.begin(), xs.end());
  attnlens::detail::soft_cap_row(narrow.data(), static_cast<std::int64_t>(narrow.size()), 50.0f);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    const double want = 50.0 * std::tanh(xs[i] / 50.0);
    CHECK(std::abs(wide[i] - want) <= 1e-12 * std::abs(want));
    const double want_narrow =
        50.0 * std::tanh(static_cast<double>(static_cast<float>(xs[i])) / 50.0);
    CHECK(std::abs(static_cast<double>(narrow[i]) - want_narrow) <=
          std::abs(want_narrow) * 0x1p-24 + 1e-45);
  }
  std::vector<double> odd = {NAN, INFINITY, -INFINITY};
  attnlens::detail::soft_cap_row(odd.data(), 3, 2.0f);
  CHECK(std::isnan(odd[0]));
  CHECK(odd[1] == 2.0);
  CHECK(odd[2] == -2.0);
}
