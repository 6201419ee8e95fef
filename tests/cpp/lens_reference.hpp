// The logit lens and direct logit attribution for the float64 references (gpt2_reference.hpp,
// llama_reference.hpp), written from their definitions apart from the library
// (lib/src/nn/lens.cpp): a pre-norm model's logits are its final norm then its unembedding; the
// attribution of a part of the residual stream is that part through the final norm with the
// norm's scale frozen at the whole stream's (centred first for a LayerNorm), onto the token's
// unembedding row.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace lensref {

struct Readout {
  bool layernorm =
      false;  // (x − mean) / sqrt(var + eps) · w + b; else x / sqrt(mean(x²) + eps) · w
  bool plus_one = false;  // RMSNorm scaling by (1 + w)
  double eps = 1e-5;
  std::vector<double> w, b;  // b empty: no bias
  // The unembedding row of a token (its [d] weights); bias of the head per token (0 without).
  std::function<double(std::int64_t token, std::int64_t k)> unembedding;
  std::function<double(std::int64_t token)> bias = [](std::int64_t) { return 0.0; };
  std::int64_t d = 0, vocab = 0;
};

// The final norm's scale for a stream row x [d]: 1 / σ or 1 / rms.
inline double scale_of(const Readout& r, const double* x) {
  double mean = 0;
  if (r.layernorm) {
    for (std::int64_t k = 0; k < r.d; ++k)
      mean += x[k];
    mean /= static_cast<double>(r.d);
  }
  double var = 0;
  for (std::int64_t k = 0; k < r.d; ++k)
    var += (x[k] - mean) * (x[k] - mean);
  return 1.0 / std::sqrt(var / static_cast<double>(r.d) + r.eps);
}

// The norm of part c with a given scale, its bias left out: (c − mean(c)) · scale · w (LayerNorm)
// or c · scale · w (RMSNorm).
inline std::vector<double> frozen(const Readout& r, const double* c, double scale) {
  double mean = 0;
  if (r.layernorm) {
    for (std::int64_t k = 0; k < r.d; ++k)
      mean += c[k];
    mean /= static_cast<double>(r.d);
  }
  std::vector<double> y(static_cast<std::size_t>(r.d));
  for (std::int64_t k = 0; k < r.d; ++k) {
    const double w =
        r.plus_one ? 1.0 + r.w[static_cast<std::size_t>(k)] : r.w[static_cast<std::size_t>(k)];
    y[static_cast<std::size_t>(k)] = (c[k] - mean) * scale * w;
  }
  return y;
}

inline double dot_row(const Readout& r, const std::vector<double>& y, std::int64_t token) {
  double s = 0;
  for (std::int64_t k = 0; k < r.d; ++k)
    s += y[static_cast<std::size_t>(k)] * r.unembedding(token, k);
  return s;
}

// The logits [V] of a stream row x [d]: the logit lens of the layer it follows.
inline std::vector<double> logits(const Readout& r, const double* x) {
  std::vector<double> y = frozen(r, x, scale_of(r, x));
  for (std::int64_t k = 0; k < r.d && !r.b.empty(); ++k)
    y[static_cast<std::size_t>(k)] += r.b[static_cast<std::size_t>(k)];
  std::vector<double> out(static_cast<std::size_t>(r.vocab));
  for (std::int64_t v = 0; v < r.vocab; ++v)
    out[static_cast<std::size_t>(v)] = dot_row(r, y, v) + r.bias(v);
  return out;
}

struct Attribution {
  double logit = 0, embeddings = 0, constant = 0;
  std::vector<double> heads, biases, mlps;  // [layers · heads], [layers], [layers]
  // Σ_k |w_k U[token, k]| · scale: how far a part moves when one of its components moves by 1
  // (times 2 for a LayerNorm's centring), for the tolerances of a test.
  double sensitivity = 0;
};

// `final` is the stream before the final norm [d]; parts are [d] rows.
inline Attribution attribute(const Readout& r, std::int64_t token, const double* final,
                             const double* embeddings,
                             const std::function<const double*(int l, int h)>& head,
                             const std::function<const double*(int l)>& bias,
                             const std::function<const double*(int l)>& mlp, int layers,
                             int heads) {
  Attribution a;
  const double scale = scale_of(r, final);
  const auto through = [&](const double* c) { return dot_row(r, frozen(r, c, scale), token); };
  a.logit = logits(r, final)[static_cast<std::size_t>(token)];
  a.embeddings = through(embeddings);
  for (int l = 0; l < layers; ++l) {
    for (int h = 0; h < heads; ++h)
      a.heads.push_back(through(head(l, h)));
    const double* b = bias(l);
    a.biases.push_back(b != nullptr ? through(b) : 0.0);
    a.mlps.push_back(through(mlp(l)));
  }
  std::vector<double> y(static_cast<std::size_t>(r.d), 0.0);
  for (std::int64_t k = 0; k < r.d && !r.b.empty(); ++k)
    y[static_cast<std::size_t>(k)] = r.b[static_cast<std::size_t>(k)];
  a.constant = dot_row(r, y, token) + r.bias(token);
  for (std::int64_t k = 0; k < r.d; ++k) {
    const double w =
        r.plus_one ? 1.0 + r.w[static_cast<std::size_t>(k)] : r.w[static_cast<std::size_t>(k)];
    a.sensitivity += std::abs(w * r.unembedding(token, k)) * scale * (r.layernorm ? 2.0 : 1.0);
  }
  return a;
}

}  // namespace lensref
