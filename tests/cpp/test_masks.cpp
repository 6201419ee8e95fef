// Boolean and additive masks: broadcasting, combination with causal, fully masked rows.
#include "compare.hpp"
#include "helpers.hpp"
#include "reference.hpp"

#include <cmath>

using attnlens::AttentionOptions;
using attnlens::MaskView;
using attnlens::Shape;
using testing::view;

TEST_CASE("a boolean mask equals an additive mask of 0 and -inf", "[mask]") {
  std::mt19937 gen(43);
  const auto q = ref::random_vector(4 * 3, gen);
  const std::vector<std::uint8_t> allow = {1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1};
  std::vector<float> additive;
  for (auto a : allow)
    additive.push_back(a ? 0.0f : -INFINITY);
  AttentionOptions o;
  o.return_weights = true;
  o.mask = MaskView::boolean(allow.data(), {4, 4});
  const auto b = attnlens::attention(view(q, {4, 3}), view(q, {4, 3}), view(q, {4, 3}), o);
  o.mask = MaskView::additive(additive.data(), {4, 4});
  const auto a = attnlens::attention(view(q, {4, 3}), view(q, {4, 3}), view(q, {4, 3}), o);
  // Adding 0 is exact, so the only difference may be the schedule (an additive mask is added
  // to scaled scores, a boolean one lets the scale fold into exp): two float32 computations.
  const auto tol = ref::twice(ref::attention_tolerance(q, q, q, 3, 4, 1 / std::sqrt(3.0)));
  CHECK(testing::close(a.weights.data, b.weights.data, tol.weights, {4, 4}));
  for (std::size_t i = 0; i < allow.size(); ++i) {
    if (!allow[i]) CHECK(a.weights.data[i] == 0.0f);
    if (!allow[i]) CHECK(b.weights.data[i] == 0.0f);
  }
}

TEST_CASE("an [L, S] mask broadcasts over batch and heads", "[mask]") {
  std::mt19937 gen(47);
  const Shape s{2, 3, 4, 5};
  const auto q = ref::random_vector(2 * 3 * 4 * 5, gen);
  std::vector<std::uint8_t> allow(16, 1);
  allow[1] = allow[6] = allow[11] = 0;
  AttentionOptions o;
  o.return_weights = true;
  o.mask = MaskView::boolean(allow.data(), {4, 4});
  const auto r = attnlens::attention(view(q, s), view(q, s), view(q, s), o);
  for (int slice = 0; slice < 6; ++slice) {
    CHECK(r.weights.data[static_cast<std::size_t>(slice * 16 + 1)] == 0.0f);
    CHECK(r.weights.data[static_cast<std::size_t>(slice * 16 + 6)] == 0.0f);
    CHECK(r.weights.data[static_cast<std::size_t>(slice * 16 + 11)] == 0.0f);
  }
}

TEST_CASE("per-batch and per-head masks pick the right slice", "[mask]") {
  std::mt19937 gen(53);
  const int B = 2, H = 3, L = 3, E = 2;
  const auto q = ref::random_vector(B * H * L * E, gen);
  const Shape qs{B, H, L, E};
  for (const Shape& ms :
       {Shape{B, 1, L, L}, Shape{1, H, L, L}, Shape{H, L, L}, Shape{B, H, L, L}}) {
    const auto n = static_cast<std::size_t>(attnlens::shape_numel(ms));
    std::vector<float> additive(n);
    std::uniform_int_distribution<int> pick(0, 2);
    for (float& m : additive) {
      const int p = pick(gen);
      m = p == 0 ? -INFINITY : static_cast<float>(p);
    }
    AttentionOptions o;
    o.return_weights = true;
    o.mask = MaskView::additive(additive.data(), ms);
    const auto r = attnlens::attention(view(q, qs), view(q, qs), view(q, qs), o);
    ref::Options ro;
    ro.mask.assign(additive.begin(), additive.end());
    ro.mask_shape = ms;
    const auto expected = ref::attention(q, qs, q, qs, q, qs, ro);
    INFO("mask " << attnlens::shape_to_string(ms));
    const auto tol = ref::attention_tolerance(q, q, q, E, L, 1 / std::sqrt(E), 2.0);
    CHECK(testing::close(r.weights.data, expected.weights, tol.weights, r.weights.shape));
    CHECK(testing::close(r.output.data, expected.output, tol.output, r.output.shape));
  }
}

TEST_CASE("causal and a mask combine: a key needs both to allow it", "[mask]") {
  std::mt19937 gen(59);
  const auto q = ref::random_vector(4 * 2, gen);
  // The mask forbids key 0 everywhere; causal forbids the future.
  std::vector<std::uint8_t> allow(16, 1);
  for (int i = 0; i < 4; ++i)
    allow[static_cast<std::size_t>(i * 4)] = 0;
  AttentionOptions o;
  o.return_weights = true;
  o.causal = true;
  o.mask = MaskView::boolean(allow.data(), {4, 4});
  const auto r = attnlens::attention(view(q, {4, 2}), view(q, {4, 2}), view(q, {4, 2}), o);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const float w = r.weights.data[static_cast<std::size_t>(i * 4 + j)];
      if (j == 0 || j > i) CHECK(w == 0.0f);
    }
  }
  CHECK(r.weights.data[5] == 1.0f);  // row 1 may only see key 1
}

TEST_CASE("a fully masked row gives zero weights and zero output, not NaN", "[mask]") {
  std::mt19937 gen(61);
  const auto q = ref::random_vector(3 * 2, gen);
  const std::vector<std::uint8_t> allow = {1, 1, 1, 0, 0, 0, 1, 0, 1};
  AttentionOptions o;
  o.return_weights = true;
  o.mask = MaskView::boolean(allow.data(), {3, 3});
  const auto r = attnlens::attention(view(q, {3, 2}), view(q, {3, 2}), view(q, {3, 2}), o);
  for (int j = 0; j < 3; ++j)
    CHECK(r.weights.data[static_cast<std::size_t>(3 + j)] == 0.0f);
  CHECK(r.output.data[2] == 0.0f);
  CHECK(r.output.data[3] == 0.0f);
  for (float x : r.output.data)
    CHECK(std::isfinite(x));
}

TEST_CASE("causal with L > S: top-left keeps every row, bottom-right empties some", "[mask]") {
  std::mt19937 gen(67);
  const auto q = ref::random_vector(5 * 2, gen);
  const auto k = ref::random_vector(2 * 2, gen);
  AttentionOptions o;
  o.return_weights = true;
  o.causal = true;
  o.causal_align = attnlens::CausalAlign::BottomRight;
  // S - L = -3: rows 0..2 see no key at all; rows 3 and 4 see keys 0 and 0..1.
  const auto r = attnlens::attention(view(q, {5, 2}), view(k, {2, 2}), view(k, {2, 2}), o);
  for (int i = 0; i < 3; ++i) {
    CHECK(r.weights.data[static_cast<std::size_t>(i * 2)] == 0.0f);
    CHECK(r.output.data[static_cast<std::size_t>(i * 2)] == 0.0f);
  }
  CHECK(r.weights.data[6] == 1.0f);
  o.causal_align = attnlens::CausalAlign::TopLeft;
  const auto tl = attnlens::attention(view(q, {5, 2}), view(k, {2, 2}), view(k, {2, 2}), o);
  CHECK(tl.weights.data[0] == 1.0f);
  std::vector<double> sums;
  for (int i = 1; i < 5; ++i) {
    sums.push_back(static_cast<double>(tl.weights.data[static_cast<std::size_t>(i * 2)]) +
                   tl.weights.data[static_cast<std::size_t>(i * 2 + 1)]);
  }
  // Two weights e_j / sum: 1 within (S + 1) u = 3 u (see "weight rows sum to one").
  CHECK(testing::close(sums, {1.0, 1.0, 1.0, 1.0}, 3 * std::ldexp(1.0, -24)));
}
