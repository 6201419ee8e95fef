// Scaled dot-product attention: known answers, invariants and a differential test against the
// float64 reference.
#include "compare.hpp"
#include "helpers.hpp"
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

using attnlens::AttentionOptions;
using attnlens::CausalAlign;
using attnlens::Shape;
using testing::view;

namespace {

AttentionOptions with_weights(AttentionOptions o = {}) {
  o.return_weights = true;
  return o;
}

}  // namespace

TEST_CASE("single head, worked by hand", "[attention][known]") {
  // q = k = I (2x2), v = [[1, 2], [3, 4]], scale = 1/sqrt(2).
  // Row 0 logits: [1/sqrt2, 0] -> p0 = e^(1/sqrt2) / (e^(1/sqrt2) + 1); row 1 mirrors it.
  const std::vector<float> q = {1, 0, 0, 1};
  const std::vector<float> v = {1, 2, 3, 4};
  const auto r =
      attnlens::attention(view(q, {2, 2}), view(q, {2, 2}), view(v, {2, 2}), with_weights());
  const double a = std::exp(1.0 / std::sqrt(2.0));
  const double p = a / (a + 1.0);
  const std::vector<double> weights = {p, 1 - p, 1 - p, p};
  const std::vector<double> output = {p * 1 + (1 - p) * 3, p * 2 + (1 - p) * 4, (1 - p) * 1 + p * 3,
                                      (1 - p) * 2 + p * 4};
  CHECK(r.weights.shape == Shape{2, 2});
  CHECK(r.output.shape == Shape{2, 2});
  const auto tol = ref::attention_tolerance(q, q, v, 2, 2, 1 / std::sqrt(2.0));
  CHECK(testing::close(r.weights.data, weights, tol.weights, r.weights.shape));
  CHECK(testing::close(r.output.data, output, tol.output, r.output.shape));
}

TEST_CASE("three tokens with a causal mask, worked by hand", "[attention][known]") {
  // E = 1, q = k = [1, 2, 3], v = [10, 20, 30], scale 1, causal.
  // Row 0 sees key 0 only: output 10. Row 1: logits [2, 4]. Row 2: logits [3, 6, 9].
  const std::vector<float> q = {1, 2, 3};
  const std::vector<float> v = {10, 20, 30};
  AttentionOptions o = with_weights();
  o.causal = true;
  o.scale = 1.0f;
  const auto r = attnlens::attention(view(q, {3, 1}), view(q, {3, 1}), view(v, {3, 1}), o);
  const double r1 = 1.0 / (1.0 + std::exp(2.0));  // weight of key 0 in row 1
  const double z2 = std::exp(-6.0) + std::exp(-3.0) + 1.0;
  const std::vector<double> weights = {
      1, 0, 0, r1, 1 - r1, 0, std::exp(-6.0) / z2, std::exp(-3.0) / z2, 1 / z2};
  const auto tol = ref::attention_tolerance(q, q, v, 1, 3, 1.0);
  CHECK(testing::close(r.weights.data, weights, tol.weights, {3, 3}));
  CHECK(r.output.data[0] == 10.0f);  // one visible key: exactly its value
  CHECK(testing::close(
      r.output.data,
      {10, 10 * r1 + 20 * (1 - r1), (10 * std::exp(-6.0) + 20 * std::exp(-3.0) + 30) / z2},
      tol.output));
}

TEST_CASE("rank 3 and rank 4 inputs match the float64 reference", "[attention][known]") {
  std::mt19937 gen(11);
  for (const Shape& qs : {Shape{2, 5, 3}, Shape{2, 3, 5, 4}}) {
    Shape ks = qs;
    ks[ks.size() - 2] = 6;
    Shape vs = ks;
    vs.back() = 2;
    const auto q = ref::random_vector(attnlens::shape_numel(qs), gen);
    const auto k = ref::random_vector(attnlens::shape_numel(ks), gen);
    const auto v = ref::random_vector(attnlens::shape_numel(vs), gen);
    const auto r = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), with_weights());
    const auto expected = ref::attention(q, qs, k, ks, v, vs);
    Shape out_shape = qs;
    out_shape.back() = 2;
    CHECK(r.output.shape == out_shape);
    const auto tol = ref::attention_tolerance(q, k, v, qs.back(), 6, 1 / std::sqrt(qs.back()));
    CHECK(testing::close(r.output.data, expected.output, tol.output, r.output.shape));
    CHECK(testing::close(r.weights.data, expected.weights, tol.weights, r.weights.shape));
  }
}

TEST_CASE("weight rows sum to one", "[attention][invariant]") {
  std::mt19937 gen(3);
  const Shape s{2, 4, 7, 8};
  const auto q = ref::random_vector(attnlens::shape_numel(s), gen, -3, 3);
  const auto k = ref::random_vector(attnlens::shape_numel(s), gen, -3, 3);
  for (bool causal : {false, true}) {
    AttentionOptions o = with_weights();
    o.causal = causal;
    const auto r = attnlens::attention(view(q, s), view(k, s), view(k, s), o);
    // Weights are e_j / sum: the float32 sum of S = 7 exponentials is off by (S - 1) u relative
    // (u = 2^-24), the reciprocal and each product round once more, so the weights (summed here
    // in float64, which adds nothing at this size) sum to 1 within (S + 1) u = 8 u; 16 u leaves
    // room for either schedule's order of operations.
    std::vector<double> sums, ones;
    for (std::size_t row = 0; row < r.weights.data.size() / 7; ++row) {
      sums.push_back(std::accumulate(r.weights.data.begin() + row * 7,
                                     r.weights.data.begin() + row * 7 + 7, 0.0));
      ones.push_back(1.0);
    }
    CHECK(sums.size() == 2 * 4 * 7);
    CHECK(testing::close(sums, ones, 16 * std::ldexp(1.0, -24)));
  }
}

TEST_CASE("causal weights are exactly zero above the diagonal", "[attention][invariant]") {
  std::mt19937 gen(5);
  const Shape s{1, 2, 9, 4};
  const auto q = ref::random_vector(attnlens::shape_numel(s), gen, -5, 5);
  AttentionOptions o = with_weights();
  o.causal = true;
  const auto r = attnlens::attention(view(q, s), view(q, s), view(q, s), o);
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 9; ++i) {
      for (int j = 0; j < 9; ++j) {
        const float w = r.weights.data[static_cast<std::size_t>((h * 9 + i) * 9 + j)];
        if (j > i) {
          CHECK(w == 0.0f);
        } else {
          CHECK(w > 0.0f);
        }
      }
    }
  }
}

TEST_CASE("the first causal query attends only to key 0", "[attention][invariant]") {
  std::mt19937 gen(8);
  const Shape s{6, 5};
  const auto q = ref::random_vector(30, gen);
  const auto k = ref::random_vector(30, gen);
  const auto v = ref::random_vector(30, gen);
  AttentionOptions o = with_weights();
  o.causal = true;
  const auto r = attnlens::attention(view(q, s), view(k, s), view(v, s), o);
  CHECK(r.weights.data[0] == 1.0f);
  for (int e = 0; e < 5; ++e)
    CHECK(r.output.data[static_cast<std::size_t>(e)] == v[static_cast<std::size_t>(e)]);
}

TEST_CASE("full attention is permutation-equivariant", "[attention][invariant]") {
  std::mt19937 gen(13);
  const int L = 7, E = 4;
  const auto q = ref::random_vector(L * E, gen);
  const auto k = ref::random_vector(L * E, gen);
  const auto v = ref::random_vector(L * E, gen);
  const std::vector<int> perm = {3, 0, 6, 1, 5, 2, 4};
  auto permute = [&](const std::vector<float>& x) {
    std::vector<float> out(x.size());
    for (int i = 0; i < L; ++i) {
      std::copy_n(x.begin() + perm[static_cast<std::size_t>(i)] * E, E, out.begin() + i * E);
    }
    return out;
  };
  const auto base = attnlens::attention(view(q, {L, E}), view(k, {L, E}), view(v, {L, E}));
  const auto moved = attnlens::attention(view(permute(q), {L, E}), view(permute(k), {L, E}),
                                         view(permute(v), {L, E}));
  // The same scores in another order; the sums over keys may round differently.
  const auto tol = ref::twice(ref::attention_tolerance(q, k, v, E, L, 1 / std::sqrt(E)));
  CHECK(testing::close(moved.output.data, permute(base.output.data), tol.output, {L, E}));
}

TEST_CASE("a constant added to every score changes nothing", "[attention][invariant]") {
  std::mt19937 gen(17);
  const auto q = ref::random_vector(5 * 3, gen);
  const auto k = ref::random_vector(5 * 3, gen);
  const std::vector<float> shift(25, 37.5f);
  AttentionOptions o = with_weights();
  const auto base = attnlens::attention(view(q, {5, 3}), view(k, {5, 3}), view(k, {5, 3}), o);
  o.mask = attnlens::MaskView::additive(shift.data(), {5, 5});
  const auto shifted = attnlens::attention(view(q, {5, 3}), view(k, {5, 3}), view(k, {5, 3}), o);
  // Both are within the bound of the exact answer, which the shift does not change.
  const auto tol = ref::twice(ref::attention_tolerance(q, k, k, 3, 5, 1 / std::sqrt(3.0), 37.5));
  CHECK(testing::close(shifted.weights.data, base.weights.data, tol.weights, {5, 5}));
  CHECK(testing::close(shifted.output.data, base.output.data, tol.output, {5, 3}));
}

TEST_CASE("a custom scale multiplies the scores", "[attention][invariant]") {
  std::mt19937 gen(19);
  const auto q = ref::random_vector(4 * 6, gen);
  const auto k = ref::random_vector(4 * 6, gen);
  const auto v = ref::random_vector(4 * 6, gen);
  std::vector<float> q3 = q;
  for (float& x : q3)
    x *= 3.0f;
  AttentionOptions o;
  o.scale = 3.0f;
  const auto scaled = attnlens::attention(view(q, {4, 6}), view(k, {4, 6}), view(v, {4, 6}), o);
  o.scale = 1.0f;
  const auto prescaled = attnlens::attention(view(q3, {4, 6}), view(k, {4, 6}), view(v, {4, 6}), o);
  // Two float32 computations of nearly the same logits: q3 = 3 q rounds each entry once
  // (relative u), which moves each logit by at most u E max|q3| max|k|, less than the
  // gamma(E) term of the bound that twice() adds for the second computation.
  const auto tol = ref::twice(ref::attention_tolerance(q3, k, v, 6, 4, 1.0));
  CHECK(testing::close(scaled.output.data, prescaled.output.data, tol.output, {4, 6}));
  ref::Options ro;
  ro.scale = 3.0;
  const auto expected = ref::attention(q, {4, 6}, k, {4, 6}, v, {4, 6}, ro);
  const auto single = ref::attention_tolerance(q, k, v, 6, 4, 3.0);
  CHECK(testing::close(scaled.output.data, expected.output, single.output, {4, 6}));
}

TEST_CASE("scale 0 gives uniform weights", "[attention][invariant]") {
  std::mt19937 gen(23);
  const auto q = ref::random_vector(3 * 4, gen, -100, 100);
  AttentionOptions o = with_weights();
  o.scale = 0.0f;
  const auto r = attnlens::attention(view(q, {3, 4}), view(q, {3, 4}), view(q, {3, 4}), o);
  // Every logit is exactly 0, so each weight is exp(0) / 3 = 1/3 with only the sum and the
  // division rounded: within 4 u of 1/3.
  CHECK(testing::close(r.weights.data, std::vector<double>(9, 1.0 / 3.0), 4 * std::ldexp(1.0, -24),
                       {3, 3}));
}

TEST_CASE("grouped-query attention equals explicitly repeated KV heads", "[attention][invariant]") {
  std::mt19937 gen(29);
  const int B = 2, Hq = 6, Hkv = 2, L = 5, S = 4, E = 3;
  const auto q = ref::random_vector(B * Hq * L * E, gen);
  const auto k = ref::random_vector(B * Hkv * S * E, gen);
  const auto v = ref::random_vector(B * Hkv * S * E, gen);
  std::vector<float> k_rep, v_rep;
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < Hq; ++h) {
      const int src = h / (Hq / Hkv);
      const auto from = (b * Hkv + src) * S * E;
      k_rep.insert(k_rep.end(), k.begin() + from, k.begin() + from + S * E);
      v_rep.insert(v_rep.end(), v.begin() + from, v.begin() + from + S * E);
    }
  }
  const auto gqa = attnlens::attention(view(q, {B, Hq, L, E}), view(k, {B, Hkv, S, E}),
                                       view(v, {B, Hkv, S, E}), with_weights());
  const auto rep = attnlens::attention(view(q, {B, Hq, L, E}), view(k_rep, {B, Hq, S, E}),
                                       view(v_rep, {B, Hq, S, E}), with_weights());
  CHECK(gqa.output.data == rep.output.data);
  CHECK(gqa.weights.data == rep.weights.data);
}

TEST_CASE("bottom-right causal equals top-left when L == S", "[attention][invariant]") {
  std::mt19937 gen(31);
  const auto q = ref::random_vector(6 * 4, gen);
  AttentionOptions o = with_weights();
  o.causal = true;
  const auto tl = attnlens::attention(view(q, {6, 4}), view(q, {6, 4}), view(q, {6, 4}), o);
  o.causal_align = CausalAlign::BottomRight;
  const auto br = attnlens::attention(view(q, {6, 4}), view(q, {6, 4}), view(q, {6, 4}), o);
  CHECK(tl.weights.data == br.weights.data);
  CHECK(tl.output.data == br.output.data);
}

TEST_CASE("bottom-right causal lets the last query see every key (KV cache)",
          "[attention][known]") {
  std::mt19937 gen(37);
  const int L = 3, S = 7, E = 4;
  const auto q = ref::random_vector(L * E, gen);
  const auto k = ref::random_vector(S * E, gen);
  AttentionOptions o = with_weights();
  o.causal = true;
  o.causal_align = CausalAlign::BottomRight;
  const auto r = attnlens::attention(view(q, {L, E}), view(k, {S, E}), view(k, {S, E}), o);
  for (int i = 0; i < L; ++i) {
    for (int j = 0; j < S; ++j) {
      const float w = r.weights.data[static_cast<std::size_t>(i * S + j)];
      if (j <= i + (S - L)) {
        CHECK(w > 0.0f);
      } else {
        CHECK(w == 0.0f);
      }
    }
  }
  ref::Options ro;
  ro.causal = true;
  ro.bottom_right = true;
  const auto expected = ref::attention(q, {L, E}, k, {S, E}, k, {S, E}, ro);
  const auto tol = ref::attention_tolerance(q, k, k, E, S, 0.5);
  CHECK(testing::close(r.output.data, expected.output, tol.output, {L, E}));
}

TEST_CASE("logits of plus and minus 1e4 stay finite", "[attention][invariant]") {
  // q·k = ±1e4 after scaling: a naive exp() would overflow to inf and give NaN.
  const std::vector<float> q = {100, -100};
  const std::vector<float> k = {100, -100};
  const std::vector<float> v = {1, 2, 3, 4};
  AttentionOptions o = with_weights();
  o.scale = 1.0f;
  const auto r = attnlens::attention(view(q, {2, 1}), view(k, {2, 1}), view(v, {2, 2}), o);
  for (float x : r.output.data)
    CHECK(std::isfinite(x));
  CHECK(r.weights.data == std::vector<float>{1, 0, 0, 1});
  CHECK(r.output.data == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("differential: random shapes, masks and options against float64",
          "[attention][differential]") {
  std::mt19937 gen(2024);
  std::uniform_int_distribution<int> dim(1, 9);
  std::uniform_int_distribution<int> coin(0, 1);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 2 + trial % 3;
    const int B = dim(gen) % 3 + 1, Hkv = dim(gen) % 2 + 1, group = dim(gen) % 3 + 1;
    const int Hq = Hkv * group, L = dim(gen), S = dim(gen), E = dim(gen), Ev = dim(gen);
    Shape qs{L, E}, ks{S, E}, vs{S, Ev}, ms{L, S};
    if (rank >= 3) {
      qs.insert(qs.begin(), rank == 4 ? Hq : B);
      ks.insert(ks.begin(), rank == 4 ? Hkv : B);
      vs.insert(vs.begin(), rank == 4 ? Hkv : B);
      if (coin(gen)) ms.insert(ms.begin(), qs[0]);
    }
    if (rank == 4) {
      qs.insert(qs.begin(), B);
      ks.insert(ks.begin(), B);
      vs.insert(vs.begin(), B);
      if (ms.size() == 3) ms.insert(ms.begin(), coin(gen) ? B : 1);
    }
    const auto q =
        ref::random_vector(static_cast<std::size_t>(attnlens::shape_numel(qs)), gen, -2, 2);
    const auto k =
        ref::random_vector(static_cast<std::size_t>(attnlens::shape_numel(ks)), gen, -2, 2);
    const auto v =
        ref::random_vector(static_cast<std::size_t>(attnlens::shape_numel(vs)), gen, -2, 2);
    AttentionOptions o = with_weights();
    ref::Options ro;
    o.causal = ro.causal = coin(gen);
    ro.bottom_right = coin(gen);
    o.causal_align = ro.bottom_right ? CausalAlign::BottomRight : CausalAlign::TopLeft;
    if (coin(gen)) {
      o.scale = 0.3f;
      ro.scale = static_cast<double>(0.3f);
    }
    const int mask_kind = trial % 3;  // none, boolean, additive
    std::vector<std::uint8_t> bool_mask;
    std::vector<float> add_mask;
    if (mask_kind > 0) {
      const auto n = static_cast<std::size_t>(attnlens::shape_numel(ms));
      ro.mask_shape = ms;
      ro.mask_is_bool = mask_kind == 1;
      std::uniform_int_distribution<int> pick(0, 3);
      for (std::size_t i = 0; i < n; ++i) {
        const int p = pick(gen);
        bool_mask.push_back(p != 0);
        add_mask.push_back(p == 0 ? -INFINITY : 0.5f * static_cast<float>(p - 2));
        ro.mask.push_back(mask_kind == 1 ? (p != 0) : static_cast<double>(add_mask.back()));
      }
      o.mask = mask_kind == 1 ? attnlens::MaskView::boolean(bool_mask.data(), ms)
                              : attnlens::MaskView::additive(add_mask.data(), ms);
    }
    const auto r = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
    const auto expected = ref::attention(q, qs, k, ks, v, vs, ro);
    const double scale = ro.scale < 0 ? 1 / std::sqrt(E) : ro.scale;
    const auto tol = ref::attention_tolerance(q, k, v, E, S, scale, 0.5);
    INFO("trial " << trial << " q " << attnlens::shape_to_string(qs) << " mask "
                  << attnlens::shape_to_string(ms) << " kind " << mask_kind);
    CHECK(testing::close(r.output.data, expected.output, tol.output, r.output.shape));
    CHECK(testing::close(r.weights.data, expected.weights, tol.weights, r.weights.shape));
  }
}

TEST_CASE("a soft cap bends the scaled scores through c tanh(x over c) on every path",
          "[attention][softcap]") {
  // tanh is 1-Lipschitz: a score's rounding error passes through the cap no larger. The cap
  // adds its own (c · tanh(x / c) in float32: a few ulps of c, about 1e-5 at c = 50), about as
  // large as the scores' bound itself here (E u Σ|q k| scale ≈ 8 · 6e-8 · 72 · 0.35 ≈ 1e-5):
  // attention_tolerance() doubled covers both.
  std::mt19937 gen(77);
  for (const float cap : {0.5f, 3.0f, 50.0f}) {
    for (const bool causal : {false, true}) {
      const std::int64_t B = 2, Hq = 4, Hkv = 2, L = 7, S = 9, E = 8, Ev = 5;
      const Shape qs{B, Hq, L, E}, ks{B, Hkv, S, E}, vs{B, Hkv, S, Ev};
      const auto q = ref::random_vector(static_cast<std::size_t>(B * Hq * L * E), gen, -3, 3);
      const auto k = ref::random_vector(static_cast<std::size_t>(B * Hkv * S * E), gen, -3, 3);
      const auto v = ref::random_vector(static_cast<std::size_t>(B * Hkv * S * Ev), gen, -2, 2);
      AttentionOptions o = with_weights();
      o.softcap = cap;
      o.causal = causal;
      o.causal_align = CausalAlign::BottomRight;
      ref::Options ro;
      ro.softcap = static_cast<double>(cap);
      ro.causal = causal;
      ro.bottom_right = true;
      INFO("cap " << cap << (causal ? ", causal" : ""));
      const auto expected = ref::attention(q, qs, k, ks, v, vs, ro);
      const auto tol = ref::twice(ref::attention_tolerance(q, k, v, E, S, 1 / std::sqrt(E), 0));
      const auto blocked = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
      const auto reference =
          attnlens::attention_reference(view(q, qs), view(k, ks), view(v, vs), o);
      CHECK(testing::close(blocked.output.data, expected.output, tol.output, blocked.output.shape));
      CHECK(testing::close(blocked.weights.data, expected.weights, tol.weights,
                           blocked.weights.shape));
      CHECK(testing::close(reference.weights.data, expected.weights, tol.weights,
                           reference.weights.shape));
      CHECK(testing::close(reference.output.data, expected.output, tol.output,
                           reference.output.shape));
      o.return_weights = false;
      o.streaming = true;
      const auto streaming = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
      CHECK(testing::close(streaming.output.data, expected.output, tol.output,
                           streaming.output.shape));
      // Without the cap the weights differ by far more than the tolerance: the cap is applied.
      ro.softcap = 0;
      const auto uncapped = ref::attention(q, qs, k, ks, v, vs, ro);
      // (Scores reach about 25 here: a cap of 50 bends them by up to 2.)
      CHECK(testing::max_abs_difference(blocked.weights.data, uncapped.weights) >
            (cap < 10.0f ? 0.01 : 1e-4));
    }
  }
  // Scores past float32's range take the float64 path; capped, they are at most c.
  const Shape qs{1, 2, 3}, ks{1, 4, 3}, vs{1, 4, 2};
  const std::vector<float> q = {1e20f, -2e20f, 3e19f, -1e20f, 5e19f, 2e20f};
  const std::vector<float> k = {1e20f, 1e20f, 0, -1e20f, 2e19f, 1e20f, 3e20f, 0, 1e19f, 0, 0, 1};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8};
  AttentionOptions o = with_weights();
  o.softcap = 2.0f;
  ref::Options ro;
  ro.softcap = 2.0;
  const auto r = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
  const auto expected = ref::attention(q, qs, k, ks, v, vs, ro);
  CHECK(testing::close(r.weights.data, expected.weights, 1e-6, r.weights.shape));
  CHECK(testing::close(r.output.data, expected.output, 1e-5, r.output.shape));
}

TEST_CASE("a soft cap must be finite and above zero", "[attention][softcap][errors]") {
  const std::vector<float> x = {1, 2, 3, 4};
  const Shape s{2, 2};
  for (const float bad : {0.0f, -1.0f}) {
    AttentionOptions o;
    o.softcap = bad;
    testing::require_error([&] { attnlens::attention(view(x, s), view(x, s), view(x, s), o); },
                           attnlens::ErrorCode::BAD_ARGUMENT, {"softcap is", "finite number > 0"});
  }
  for (const float bad : {NAN, INFINITY}) {
    AttentionOptions o;
    o.softcap = bad;
    testing::require_error([&] { attnlens::attention(view(x, s), view(x, s), view(x, s), o); },
                           attnlens::ErrorCode::NON_FINITE, {"softcap is", "finite number > 0"});
  }
}

TEST_CASE("output only and output with weights agree", "[attention]") {
  std::mt19937 gen(41);
  const auto q = ref::random_vector(2 * 3 * 5 * 4, gen);
  AttentionOptions o;
  o.causal = true;
  const auto a =
      attnlens::attention(view(q, {2, 3, 5, 4}), view(q, {2, 3, 5, 4}), view(q, {2, 3, 5, 4}), o);
  CHECK(a.weights.empty());
  o.return_weights = true;
  const auto b =
      attnlens::attention(view(q, {2, 3, 5, 4}), view(q, {2, 3, 5, 4}), view(q, {2, 3, 5, 4}), o);
  CHECK(a.output.data == b.output.data);
  CHECK(b.weights.shape == Shape{2, 3, 5, 5});
}

TEST_CASE("one query and one key", "[attention][known]") {
  const std::vector<float> q = {0.5f, -2.0f};
  const std::vector<float> v = {7.0f, -3.0f, 1.0f};
  const auto r =
      attnlens::attention(view(q, {1, 2}), view(q, {1, 2}), view(v, {1, 3}), with_weights());
  CHECK(r.weights.data == std::vector<float>{1.0f});
  CHECK(r.output.data == v);
}

TEST_CASE("stage functions: scores, causal mask, softmax", "[attention][stages]") {
  attnlens::RowMatrixXf q(2, 3), k(2, 3), scores(2, 2);
  q << 1, 2, 3, 4, 5, 6;
  k << 1, 0, 0, 0, 1, 1;
  attnlens::attention_scores(q, k, scores);
  CHECK(scores(0, 0) == 1);
  CHECK(scores(0, 1) == 5);
  CHECK(scores(1, 0) == 4);
  CHECK(scores(1, 1) == 11);

  const attnlens::RowMatrixXf tl = attnlens::causal_mask(2, 4);
  const attnlens::RowMatrixXf br = attnlens::causal_mask(2, 4, CausalAlign::BottomRight);
  CHECK(tl(0, 0) == 0);
  CHECK(std::isinf(tl(0, 1)));
  CHECK(tl(1, 1) == 0);
  CHECK(std::isinf(tl(1, 2)));
  CHECK(br(0, 2) == 0);
  CHECK(std::isinf(br(0, 3)));
  CHECK(br(1, 3) == 0);

  attnlens::RowMatrixXf logits(2, 3);
  logits << 0, std::log(2.0f), -INFINITY, -INFINITY, -INFINITY, -INFINITY;
  attnlens::softmax_rows(logits);
  // log(2) rounded to float32 (u relative), exp, sum and division: a few u of 1/3 and 2/3.
  CHECK(testing::close(logits, {1.0 / 3.0, 2.0 / 3.0, 0.0, 0.0, 0.0, 0.0}, 8 * std::ldexp(1.0, -24),
                       {2, 3}));
}
