// Every layer's backward pass on its own, against central finite differences of its forward
// pass (as ggml's test-backend-ops does): a failure names the op, not a model tensor far
// downstream of the bug. Each check takes a scalar L = Σ r ⊙ out with fixed random r, so dL/dout
// = r, and compares the backward's dL/dx (and parameter gradients) with (L(x + h) - L(x - h)) / 2h.
//
// Tolerance: the forward passes run in float32 (u = 2^-24); L sums at most a few hundred terms
// of size ~1 in float64, so its rounding is about 100 · u ≈ 6e-6 absolute, and a central
// difference with h = 1e-2 divides that by 2h: ~3e-4. Its truncation error is h² |L'''| / 6,
// about 2e-5 for these smooth ops. We allow 2e-3 absolute plus 1e-3 of the gradient's scale: a
// dropped term, a wrong sign or a missing factor (scale, 1/d, the mask) moves an element by far
// more.
#include "gradient_check.hpp"
#include "helpers.hpp"

#include "core/matmul.hpp"
#include "nn/layers.hpp"

#include <attnlens/attention.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace detail = attnlens::detail;

using testing::check_gradient;
using testing::randoms;
using testing::weighted_sum;

}  // namespace

TEST_CASE("layer backward: LayerNorm (GPT-2's and BERT's eps)", "[layers]") {
  const float eps = GENERATE(1e-5f, 1e-12f);
  const std::int64_t N = 3, d = 6;
  std::mt19937 gen(1);
  std::vector<float> x = randoms(N * d, gen), w = randoms(d, gen), b = randoms(d, gen);
  const std::vector<float> r = randoms(N * d, gen);
  std::vector<float> out(N * d), mean(N), rstd(N);
  const auto loss = [&] {
    detail::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N,
                              d, eps);
    return weighted_sum(out, r);
  };
  loss();
  std::vector<float> dx(N * d, 0.0f), dw(d, 0.0f), db(d, 0.0f);
  detail::layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(),
                             mean.data(), rstd.data(), N, d);
  check_gradient("layernorm dx", x, dx, loss);
  check_gradient("layernorm dw", w, dw, loss);
  check_gradient("layernorm db", b, db, loss);
}

TEST_CASE("layer backward: linear with a residual", "[layers]") {
  const std::int64_t N = 4, in = 5, out_dim = 3;
  std::mt19937 gen(2);
  std::vector<float> x = randoms(N * in, gen), w = randoms(in * out_dim, gen),
                     b = randoms(out_dim, gen), res = randoms(N * out_dim, gen);
  const std::vector<float> r = randoms(N * out_dim, gen);
  std::vector<float> out(N * out_dim);
  const auto loss = [&] {
    detail::linear_forward(out.data(), x.data(), w.data(), b.data(), res.data(), N, in, out_dim);
    return weighted_sum(out, r);
  };
  std::vector<float> dx(N * in), dw(in * out_dim, 0.0f), db(out_dim, 0.0f);
  detail::linear_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), N, in,
                          out_dim);
  check_gradient("linear dx", x, dx, loss);
  check_gradient("linear dw", w, dw, loss);
  check_gradient("linear db", b, db, loss);
  check_gradient("linear dresidual", res, r, loss);
}

TEST_CASE("layer backward: GELU, tanh approximation and exact erf", "[layers]") {
  const bool exact = GENERATE(false, true);
  std::mt19937 gen(3);
  std::vector<float> x = randoms(40, gen, 2.0f);
  const std::vector<float> r = randoms(40, gen);
  std::vector<float> out(40);
  const auto loss = [&] {
    if (exact) {
      detail::gelu_erf_forward(out.data(), x.data(), 40);
    } else {
      detail::gelu_forward(out.data(), x.data(), 40);
    }
    return weighted_sum(out, r);
  };
  std::vector<float> grad = r;
  if (exact) {
    detail::gelu_erf_backward(grad.data(), x.data(), 40);
  } else {
    detail::gelu_backward(grad.data(), x.data(), 40);
  }
  check_gradient(exact ? "gelu (erf) dx" : "gelu (tanh) dx", x, grad, loss);
  if (exact) {
    // Known values of the exact GELU: x Φ(x).
    const std::vector<float> probe = {-2.0f, 0.0f, 1.0f};
    std::vector<float> y(3);
    detail::gelu_erf_forward(y.data(), probe.data(), 3);
    CHECK(std::abs(y[0] - -0.04550026f) < 1e-6f);
    CHECK(y[1] == 0.0f);
    CHECK(std::abs(y[2] - 0.84134475f) < 1e-6f);
  }
}

TEST_CASE("layer backward: attention, causal and full (with a padded key)", "[layers]") {
  const bool causal = GENERATE(true, false);
  INFO((causal ? "causal" : "full"));
  const std::int64_t B = 1, H = 2, T = 4, hd = 3;
  const std::int64_t n = B * H * T * hd;
  std::mt19937 gen(causal ? 5 : 6);
  std::vector<float> q = randoms(n, gen), k = randoms(n, gen), v = randoms(n, gen);
  const std::vector<float> r = randoms(n, gen);
  // Full attention masks the last key (padding), as BERT does for a padded sequence.
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(T * T), 1);
  if (!causal) {
    for (std::int64_t i = 0; i < T; ++i)
      mask[static_cast<std::size_t>(i * T + T - 1)] = 0;
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  attnlens::AttentionResult result;
  const auto forward = [&] {
    attnlens::AttentionOptions o;
    o.causal = causal;
    o.scale = scale;
    o.return_weights = true;
    if (!causal) o.mask = attnlens::MaskView::boolean(mask.data(), {T, T});
    const attnlens::Shape shape = {B, H, T, hd};
    result = attnlens::attention(attnlens::ConstTensorView{q.data(), shape},
                                 attnlens::ConstTensorView{k.data(), shape},
                                 attnlens::ConstTensorView{v.data(), shape}, o);
    return weighted_sum(result.output.data, r);
  };
  forward();
  std::vector<float> dq(n), dk(n), dv(n), scratch(T * T);
  detail::attention_backward(dq.data(), dk.data(), dv.data(), scratch.data(), r.data(), q.data(),
                             k.data(), v.data(), result.weights.data.data(), B, H, T, hd, scale,
                             causal);
  check_gradient("attention dq", q, dq, forward);
  check_gradient("attention dk", k, dk, forward);
  check_gradient("attention dv", v, dv, forward);
  if (!causal) {
    // The padded key takes no part: its key and value rows get exactly zero gradient.
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t e = 0; e < hd; ++e) {
        CHECK(dk[static_cast<std::size_t>((h * T + T - 1) * hd + e)] == 0.0f);
        CHECK(dv[static_cast<std::size_t>((h * T + T - 1) * hd + e)] == 0.0f);
      }
    }
  }
}

TEST_CASE("layer backward: embeddings with positions and token types", "[layers]") {
  const std::int64_t B = 2, T = 3, d = 4, V = 5, types = 2;
  std::mt19937 gen(7);
  std::vector<float> wte = randoms(V * d, gen), wpe = randoms(T * d, gen),
                     wtt = randoms(types * d, gen);
  const std::vector<std::int32_t> ids = {1, 4, 1, 0, 2, 4}, type_ids = {0, 0, 1, 1, 1, 0};
  const std::vector<float> r = randoms(B * T * d, gen);
  std::vector<float> out(B * T * d);
  const auto loss = [&] {
    detail::embed_forward(out.data(), ids.data(), wte.data(), wpe.data(), B, T, d, type_ids.data(),
                          wtt.data());
    return weighted_sum(out, r);
  };
  std::vector<float> dwte(V * d, 0.0f), dwpe(T * d, 0.0f), dwtt(types * d, 0.0f);
  detail::embed_backward(dwte.data(), dwpe.data(), r.data(), ids.data(), B, T, d, type_ids.data(),
                         dwtt.data());
  check_gradient("embeddings dwte", wte, dwte, loss);
  check_gradient("embeddings dwpe", wpe, dwpe, loss);
  check_gradient("embeddings dtoken_type", wtt, dwtt, loss);
}

TEST_CASE("layer backward: cross-entropy with ignored targets", "[layers]") {
  const std::int64_t N = 3, V = 6;
  std::mt19937 gen(8);
  std::vector<float> logits = randoms(N * V, gen, 2.0f);
  const std::vector<std::int32_t> targets = {2, -1, 5};
  const auto loss = [&] {
    std::vector<float> copy = logits;
    return detail::cross_entropy(copy.data(), targets.data(), N, V, false, 1.0f);
  };
  std::vector<float> grad = logits;
  detail::cross_entropy(grad.data(), targets.data(), N, V, true, 1.0f);
  check_gradient("cross_entropy dlogits", logits, grad, loss);
  for (std::int64_t v = 0; v < V; ++v)
    CHECK(grad[static_cast<std::size_t>(V + v)] == 0.0f);  // the ignored row
}
