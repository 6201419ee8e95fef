// The block's pieces' backward passes (nn/block.hpp: RMSNorm, rotary embeddings, SwiGLU and
// grouped-query attention's gradient summed over the query heads sharing a key/value head),
// each against central finite differences of its forward pass, as tests/cpp/test_layers.cpp
// checks nn/layers' backward passes.
//
// Tolerance (test_layers.cpp's argument): the forwards run in float32 (u = 2^-24); L = Σ r ⊙ out
// sums at most a few hundred terms of size ~1 in float64, so its rounding is about 100 · u ≈
// 6e-6 absolute, which a central difference with h = 1e-2 divides by 2h: ~3e-4. Its truncation
// error h² |L'''| / 6 is about 2e-5 for these smooth ops. 2e-3 absolute plus 1e-3 of the
// gradient's scale sits above both; a dropped term, a wrong sign or a missing factor (1/d, r³,
// the group sum) moves an element by far more.
#include "gradient_check.hpp"
#include "helpers.hpp"

#include "nn/block.hpp"

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

TEST_CASE("block backward: RMSNorm, with w and with 1 + w", "[llama][block]") {
  const bool plus_one = GENERATE(false, true);
  INFO((plus_one ? "1 + w" : "w"));
  const std::int64_t N = 3, d = 7;
  std::mt19937 gen(11);
  std::vector<float> x = randoms(N * d, gen), w = randoms(d, gen);
  const std::vector<float> r = randoms(N * d, gen);
  std::vector<float> out(N * d);
  const auto loss = [&] {
    detail::rmsnorm_forward(out.data(), x.data(), w.data(), N, d, 1e-6f, plus_one);
    return weighted_sum(out, r);
  };
  std::vector<float> dx(N * d, 0.0f), dw(d, 0.0f);
  detail::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), N, d, 1e-6f,
                           plus_one);
  check_gradient("rmsnorm dx", x, dx, loss);
  check_gradient("rmsnorm dw", w, dw, loss);
}

TEST_CASE("block backward: rotary embeddings (llama3 frequencies)", "[llama][block]") {
  const std::int64_t B = 2, H = 3, T = 5, hd = 8;
  detail::RopeSpec rope;
  rope.theta = 100;
  rope.scaling = detail::RopeScaling::Llama3;
  rope.factor = 4;
  rope.original_context = 16;
  std::vector<float> cos, sin;
  detail::rope_tables(cos, sin, detail::rope_inv_freq(rope, hd), T);
  std::mt19937 gen(12);
  std::vector<float> x = randoms(B * H * T * hd, gen);
  const std::vector<float> r = randoms(x.size(), gen);
  std::vector<float> out(x.size());
  const auto loss = [&] {
    out = x;
    detail::rope_apply(out.data(), cos.data(), sin.data(), B, H, T, hd);
    return weighted_sum(out, r);
  };
  std::vector<float> dx = r;
  detail::rope_backward(dx.data(), cos.data(), sin.data(), B, H, T, hd);
  check_gradient("rope dx", x, dx, loss);
  // A rotation keeps lengths: position 0 is the identity, and every row keeps its norm.
  loss();
  for (std::int64_t s = 0; s < B * H; ++s) {
    for (std::int64_t t = 0; t < T; ++t) {
      double before = 0, after = 0;
      for (std::int64_t i = 0; i < hd; ++i) {
        const auto at = static_cast<std::size_t>((s * T + t) * hd + i);
        before += static_cast<double>(x[at]) * x[at];
        after += static_cast<double>(out[at]) * out[at];
        if (t == 0) CHECK(out[at] == x[at]);
      }
      CHECK(std::abs(before - after) < 1e-5 * before);
    }
  }
}

TEST_CASE("block backward: SwiGLU", "[llama][block]") {
  const std::int64_t n = 30;
  std::mt19937 gen(13);
  std::vector<float> gate = randoms(n, gen, 2.0f), up = randoms(n, gen);
  const std::vector<float> r = randoms(n, gen);
  std::vector<float> out(n);
  const auto loss = [&] {
    detail::swiglu_forward(out.data(), gate.data(), up.data(), n);
    return weighted_sum(out, r);
  };
  std::vector<float> dgate(n), dup(n);
  detail::swiglu_backward(dgate.data(), dup.data(), r.data(), gate.data(), up.data(), n);
  check_gradient("swiglu dgate", gate, dgate, loss);
  check_gradient("swiglu dup", up, dup, loss);
}

TEST_CASE("block backward: grouped-query attention sums over the shared heads", "[llama][block]") {
  const std::int64_t Hkv = GENERATE(std::int64_t{1}, std::int64_t{2}, std::int64_t{6});
  INFO("kv heads " << Hkv << " of 6");
  const std::int64_t B = 2, H = 6, T = 4, hd = 3;
  std::mt19937 gen(static_cast<std::uint32_t>(14 + Hkv));
  std::vector<float> q = randoms(B * H * T * hd, gen), k = randoms(B * Hkv * T * hd, gen),
                     v = randoms(B * Hkv * T * hd, gen);
  const std::vector<float> r = randoms(q.size(), gen);
  const float scale = 0.6f;
  attnlens::AttentionResult result;
  const auto loss = [&] {
    result = detail::grouped_attention(q.data(), k.data(), v.data(), B, H, Hkv, T, T, hd, scale,
                                       true, true);
    return weighted_sum(result.output.data, r);
  };
  loss();
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  detail::grouped_attention_backward(dq.data(), dk.data(), dv.data(), r.data(), q.data(), k.data(),
                                     v.data(), result.weights.data.data(), B, H, Hkv, T, hd, scale,
                                     true);
  check_gradient("gqa dq", q, dq, loss);
  check_gradient("gqa dk", k, dk, loss);
  check_gradient("gqa dv", v, dv, loss);
}
