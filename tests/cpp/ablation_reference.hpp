// Ablation for the float64 references (gpt2_reference.hpp, bert_reference.hpp,
// llama_reference.hpp), written from its definition apart from the library: the heads named are
// replaced, in each layer's heads' outputs before the output projection, by zeros or by their
// mean over the positions a row may read (0 .. t in a causal model, every unmasked token in an
// encoder).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace ablationref {

struct Spec {
  std::vector<std::pair<int, int>> heads;  // (layer, head)
  bool mean = false;
};

// heads: [B · T, H · hd], token n's head h at n · H · hd + h · hd. mask [B, T] or null.
inline void apply(std::vector<double>& heads, const Spec* spec, int layer, std::int64_t B,
                  std::int64_t T, std::int64_t H, std::int64_t hd, bool causal,
                  const std::int32_t* mask = nullptr) {
  if (spec == nullptr) return;
  const auto at = [&](std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t e) -> double& {
    return heads[static_cast<std::size_t>(((b * T + t) * H + h) * hd + e)];
  };
  for (const auto& [l, h] : spec->heads) {
    if (l != layer) continue;
    for (std::int64_t b = 0; b < B; ++b) {
      std::vector<double> out(static_cast<std::size_t>(T * hd), 0.0);
      for (std::int64_t t = 0; t < T && spec->mean; ++t) {
        double count = 0;
        for (std::int64_t j = 0; j < T; ++j) {
          const bool read = causal ? j <= t : (mask == nullptr || mask[b * T + j] == 1);
          if (!read) continue;
          count += 1;
          for (std::int64_t e = 0; e < hd; ++e)
            out[static_cast<std::size_t>(t * hd + e)] += at(b, j, h, e);
        }
        for (std::int64_t e = 0; e < hd; ++e)
          out[static_cast<std::size_t>(t * hd + e)] /= count;
      }
      for (std::int64_t t = 0; t < T; ++t) {
        for (std::int64_t e = 0; e < hd; ++e)
          at(b, t, h, e) = out[static_cast<std::size_t>(t * hd + e)];
      }
    }
  }
}

// Value-weighted attention of one layer (Kobayashi et al. 2020), appended to norms [B, H, T] and
// mixed [B, T, T]: f_h(x_j) = Σ_e v(b, j, h, e) · wo(h, e, c) (token j's value through head h's
// rows of the output projection), norms ‖f_h(x_j)‖ and mixed ‖Σ_h α^h_ij f_h(x_j)‖ as the plain
// vector sum. weights(b, h, i, j) are the layer's attention weights. Heads `spec` ablates in this
// layer mix nothing by attention: their f is 0.
inline void value_weighted(
    std::vector<double>& norms, std::vector<double>& mixed,
    const std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>& v,
    const std::function<double(std::int64_t, std::int64_t, std::int64_t)>& wo,
    const std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>& weights,
    std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t hd, std::int64_t d,
    const Spec* spec, int layer) {
  const auto off = [&](std::int64_t h) {
    if (spec == nullptr) return false;
    for (const auto& [l, head] : spec->heads)
      if (l == layer && head == h) return true;
    return false;
  };
  for (std::int64_t b = 0; b < B; ++b) {
    // f[j][h][c]
    std::vector<double> f(static_cast<std::size_t>(T * H * d), 0.0);
    for (std::int64_t j = 0; j < T; ++j)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t c = 0; c < d && !off(h); ++c) {
          double s = 0;
          for (std::int64_t e = 0; e < hd; ++e)
            s += v(b, j, h, e) * wo(h, e, c);
          f[static_cast<std::size_t>((j * H + h) * d + c)] = s;
        }
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t j = 0; j < T; ++j) {
        double s = 0;
        for (std::int64_t c = 0; c < d; ++c)
          s += f[static_cast<std::size_t>((j * H + h) * d + c)] *
               f[static_cast<std::size_t>((j * H + h) * d + c)];
        norms.push_back(std::sqrt(s));
      }
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j < T; ++j) {
        double s = 0;
        for (std::int64_t c = 0; c < d; ++c) {
          double sum = 0;
          for (std::int64_t h = 0; h < H; ++h)
            sum += weights(b, h, i, j) * f[static_cast<std::size_t>((j * H + h) * d + c)];
          s += sum * sum;
        }
        mixed.push_back(std::sqrt(s));
      }
  }
}

}  // namespace ablationref
