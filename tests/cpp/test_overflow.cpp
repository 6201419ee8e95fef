// The overflow rule (attention.hpp): finite inputs give the right answer whenever it fits
// float32, on every path (blocked, streaming, reference, forward), even where float32 scores,
// logits or sums of weights times values would overflow; what cannot fit is NON_FINITE.
#include "compare.hpp"
#include "helpers.hpp"

#include <cmath>
#include <limits>

using attnlens::AttentionOptions;
using attnlens::AttentionResult;
using attnlens::Shape;
using testing::view;

namespace {

const double u = std::ldexp(1.0, -24);

struct Paths {
  AttentionResult blocked, streaming, reference;
};

// Runs all three attention() paths with the same options (weights from the two that give them).
Paths run_all(const std::vector<float>& q, Shape qs, const std::vector<float>& k, Shape ks,
              const std::vector<float>& v, Shape vs, AttentionOptions o) {
  o.return_weights = true;
  Paths r;
  r.blocked = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
  r.reference = attnlens::attention_reference(view(q, qs), view(k, ks), view(v, vs), o);
  o.return_weights = false;
  o.streaming = true;
  r.streaming = attnlens::attention(view(q, qs), view(k, ks), view(v, vs), o);
  return r;
}

// Every path gives `output` (and `weights`) within `tol`.
void require_all(const Paths& r, const std::vector<double>& output,
                 const std::vector<double>& weights, double tol) {
  CHECK(testing::close(r.blocked.output.data, output, tol));
  CHECK(testing::close(r.streaming.output.data, output, tol));
  CHECK(testing::close(r.reference.output.data, output, tol));
  CHECK(testing::close(r.blocked.weights.data, weights, tol));
  CHECK(testing::close(r.reference.weights.data, weights, tol));
}

}  // namespace

TEST_CASE("overflow: a single key whose score is -1e40 still gets all the weight", "[overflow]") {
  // q · k = -1e40 is below float32's range, but one visible key takes weight 1 whatever its
  // score: the output is v exactly. (The fast path once treated the -inf score as masked: [0].)
  const std::vector<float> q = {1e20f}, k = {-1e20f}, v = {7.0f, -2.0f};
  AttentionOptions o;
  o.scale = 1.0f;
  require_all(run_all(q, {1, 1}, k, {1, 1}, v, {1, 2}, o), {7.0, -2.0}, {1.0}, 0.0);
}

TEST_CASE("overflow: scores of +-1e40 pick the larger, on every path", "[overflow]") {
  // Scores 1e40 and -1e40 (1e20 squared): weights [1, 0], output v's first row exactly. (Once:
  // NON_FINITE on the fast path, NaN on the reference path.)
  const std::vector<float> q = {1e20f, -1e20f}, k = {1e20f, -1e20f};
  const std::vector<float> v = {1.0f, 2.0f, 3.0f, 4.0f};
  AttentionOptions o;
  o.scale = 1.0f;
  require_all(run_all(q, {2, 1}, k, {2, 1}, v, {2, 2}, o), {1, 2, 3, 4}, {1, 0, 0, 1}, 0.0);
}

TEST_CASE("overflow: a score whose partial sums overflow in some orders", "[overflow]") {
  // q · k0 = 1e40 + 1e40 - 1e40 = 1e40 in exact arithmetic, +inf or 1e40 in float32 depending on
  // the order of the sum; q · k1 = 0. The answer is key 0's value, whatever the order.
  const std::vector<float> q = {1e20f, 1e20f, 1e20f};
  const std::vector<float> k = {1e20f, 1e20f, -1e20f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> v = {5.0f, 6.0f};
  AttentionOptions o;
  o.scale = 1.0f;
  require_all(run_all(q, {1, 3}, k, {2, 3}, v, {2, 1}, o), {5.0}, {1.0, 0.0}, 0.0);
}

TEST_CASE("overflow: weights times values that overflow in float32 sum to the right answer",
          "[overflow]") {
  // q = k = 0: four equal weights 1/4. v = [3e38, 3e38, -3e38, -3e38]: the exact output is 0,
  // while float32 partial sums (3e38 + 3e38) overflow to inf. (Once: Infinity or NaN.)
  const std::vector<float> q = {0.0f}, k(4, 0.0f);
  const std::vector<float> v = {3e38f, 3e38f, -3e38f, -3e38f};
  AttentionOptions o;
  require_all(run_all(q, {1, 1}, k, {4, 1}, v, {4, 1}, o), {0.0}, {0.25, 0.25, 0.25, 0.25}, 0.0);
  // With an odd count the answer is a third of 3e38: within u of it (one rounding).
  const std::vector<float> v3 = {3e38f, 3e38f, -3e38f};
  const std::vector<float> k3(3, 0.0f);
  const double third = static_cast<double>(3e38f) / 3.0;
  const auto r = run_all(q, {1, 1}, k3, {3, 1}, v3, {3, 1}, o);
  require_all(r, {third}, {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0}, u * third);
}

TEST_CASE("overflow: a scale of 3e38 gives the same answer on every path", "[overflow]") {
  // Logits 3e38, 1.5e38, 7.5e37 and 3.75e37: the first key takes everything. (Once: the fast
  // path folded the scale into exp() as 3e38 * log2(e) = inf and gave four equal weights; the
  // reference path gave one-hot weights.)
  const std::vector<float> q = {1.0f}, k = {1.0f, 0.5f, 0.25f, 0.125f};
  const std::vector<float> v = {10.0f, 20.0f, 30.0f, 40.0f};
  AttentionOptions o;
  o.scale = 3e38f;
  require_all(run_all(q, {1, 1}, k, {4, 1}, v, {4, 1}, o), {10.0}, {1.0, 0.0, 0.0, 0.0}, 0.0);
  // A negative huge scale picks the smallest score.
  o.scale = -3e38f;
  require_all(run_all(q, {1, 1}, k, {4, 1}, v, {4, 1}, o), {40.0}, {0.0, 0.0, 0.0, 1.0}, 0.0);
}

TEST_CASE("overflow: a fully masked row on the float64 path is zeros, not NaN", "[overflow]") {
  // Scores of 1e40 send the call to the float64 path; row 0 masks both keys.
  const std::vector<std::uint8_t> allow = {0, 0, 1, 1};
  const std::vector<float> q = {1e20f, 1e20f}, k = {1e20f, 1e20f}, v = {2.0f, 6.0f};
  AttentionOptions o;
  o.scale = 1.0f;
  o.mask = attnlens::MaskView::boolean(allow.data(), {2, 2});
  // Row 1: equal scores, weights 1/2 each, output 4: exact in binary.
  require_all(run_all(q, {2, 1}, k, {2, 1}, v, {2, 1}, o), {0.0, 4.0}, {0.0, 0.0, 0.5, 0.5}, 0.0);
}

TEST_CASE("overflow: a mask of -3.4e38 (PyTorch's finfo.min) masks without overflowing",
          "[overflow]") {
  // Row 0: key 1 is pushed to -3.4e38 and gets weight 0. Row 1: both keys are pushed down by the
  // same -3.4e38, which absorbs the scores (as in PyTorch): equal logits, equal weights.
  const float lowest = std::numeric_limits<float>::lowest();
  const std::vector<float> mask = {0.0f, lowest, lowest, lowest};
  const std::vector<float> q = {1.0f, 2.0f}, k = {1.0f, -1.0f}, v = {3.0f, 5.0f};
  AttentionOptions o;
  o.mask = attnlens::MaskView::additive(mask.data(), {2, 2});
  const auto r = run_all(q, {2, 1}, k, {2, 1}, v, {2, 1}, o);
  // Row 1: two exp(0) = 1 over their sum 2: exact.
  require_all(r, {3.0, 4.0}, {1.0, 0.0, 0.5, 0.5}, 0.0);
}

TEST_CASE("overflow: forward computes scores beyond float32 right, and its trace refuses them",
          "[overflow]") {
  // x = [[1e20, 0], [1e20, 1e19]], one head of width 2, identity weights: Q = K = V = x. Scores
  // 1e40 and 1.01e40 are beyond float32; scaled by 1/sqrt(2) they differ by 7e37, so each
  // (causal) query puts all its weight on its own key: weights [[1, 0], [0, 1]], output = x.
  attnlens::SelfAttentionConfig config;
  config.model_dim = 2;
  config.num_heads = 1;
  config.init = attnlens::Init::Identity;
  const attnlens::SelfAttention layer(config);
  const std::vector<float> x = {1e20f, 0.0f, 1e20f, 1e19f};
  attnlens::ForwardOptions fo;
  fo.causal = true;
  const auto r = layer.forward(view(x, {2, 2}), fo);
  CHECK(testing::close(r.weights.data, {1.0, 0.0, 0.0, 1.0}, 0.0, {1, 2, 2}));
  CHECK(testing::close(r.output.data, x, 0.0, {2, 2}));
  fo.trace = true;
  testing::require_error(
      [&] {
        layer.forward(view(x, {2, 2}), fo);
      },
      attnlens::ErrorCode::NON_FINITE,
      {"the trace's scores is 1e+40 at row 0, column 0", "beyond float32"});
}

TEST_CASE("overflow: a projection beyond float32 is NON_FINITE, naming it", "[overflow]") {
  // x W_Q with W = I is x; with all-ones weights each entry is 3e38 + 3e38 = 6e38.
  attnlens::SelfAttentionWeights w;
  w.wq = w.wk = w.wv = w.wo = attnlens::RowMatrixXf::Ones(2, 2);
  const attnlens::SelfAttention layer(2, 1, w);
  const std::vector<float> x = {3e38f, 3e38f};
  testing::require_error(
      [&] {
        layer.forward(view(x, {1, 2}));
      },
      attnlens::ErrorCode::NON_FINITE,
      {"x W_Q + b_Q is 6e+38 at row 0, column 0", "beyond float32"});
  // 3e38 - 3e38 + 1 = 1 fits: computed in float64 instead of overflowing in a partial sum.
  const std::vector<float> cancel = {3e38f, -3e38f};
  const auto r = layer.forward(view(cancel, {1, 2}));
  CHECK(testing::close(r.output.data, {0.0, 0.0}, 0.0));
}
