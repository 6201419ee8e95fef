// An independent float64 GPT-2 for the tests: plain loops over explicit indices, written from
// the definition (Radford et al. 2019; Hugging Face's GPT2LMHeadModel), sharing no code with
// the library. Parameters come in by checkpoint name. Also a checked comparison that fails on
// NaN and on a size mismatch and reports the worst element.
#pragma once

#include "ablation_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gpt2ref {

struct Config {
  int layers = 0, heads = 0, d = 0, context = 0, vocab = 0;
  bool attention_norm = true;  // ln_1 before attention; false: attention reads x itself
};

using Params = std::map<std::string, std::vector<double>>;

struct Output {
  std::vector<double> logits;          // [B, T, V]
  std::vector<double> attention;       // [layers, B, H, T, T]
  std::vector<double> residuals;       // [layers + 1, B, T, d]
  std::vector<double> value_norms;     // [layers, B, H, T]: ablation_reference.hpp
  std::vector<double> value_weighted;  // [layers, B, T, T]
  // What each part writes into the residual stream (lens_reference.hpp): each head's slice of
  // the heads' outputs through its rows of c_proj [layers, B · T, H, d], and each MLP's output
  // [layers, B · T, d].
  std::vector<double> head_writes;
  std::vector<double> mlp_writes;
};

namespace impl {

using Vec = std::vector<double>;

inline const Vec& at(const Params& p, const std::string& name) {
  return p.at(name);
}

// y[n, o] = b[o] + Σ_i x[n, i] W[i, o]      x [N, in], W [in, out]
inline Vec linear(const Vec& x, const Vec& w, const Vec& b, int N, int in, int out) {
  Vec y(static_cast<std::size_t>(N) * out);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < out; ++o) {
      double s = b[o];
      for (int i = 0; i < in; ++i)
        s += x[static_cast<std::size_t>(n) * in + i] * w[static_cast<std::size_t>(i) * out + o];
      y[static_cast<std::size_t>(n) * out + o] = s;
    }
  }
  return y;
}

// (x − mean) / sqrt(var + 1e-5) · w + b per row, biased variance.
inline Vec layernorm(const Vec& x, const Vec& w, const Vec& b, int N, int d) {
  Vec y(x.size());
  for (int n = 0; n < N; ++n) {
    const double* row = x.data() + static_cast<std::size_t>(n) * d;
    double mean = 0;
    for (int i = 0; i < d; ++i)
      mean += row[i];
    mean /= d;
    double var = 0;
    for (int i = 0; i < d; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= d;
    const double inv = 1.0 / std::sqrt(var + 1e-5);
    for (int i = 0; i < d; ++i)
      y[static_cast<std::size_t>(n) * d + i] = (row[i] - mean) * inv * w[i] + b[i];
  }
  return y;
}

inline double gelu(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

}  // namespace impl

// Logits (and every layer's attention weights and the residual streams) for ids [B, T].
inline Output forward(const Config& c, const Params& p, const std::vector<std::int32_t>& ids, int B,
                      int T, const ablationref::Spec* ablate = nullptr) {
  using impl::at;
  using impl::Vec;
  const int d = c.d, H = c.heads, hd = c.d / c.heads, N = B * T, V = c.vocab;
  const auto idx = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  Output out;
  out.attention.assign(idx(std::int64_t{c.layers} * B * H * T * T), 0.0);
  const Vec& wte = at(p, "wte.weight");
  const Vec& wpe = at(p, "wpe.weight");
  Vec x(idx(N) * d);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      for (int i = 0; i < d; ++i) {
        x[idx((b * T + t) * d + i)] = wte[idx(ids[idx(b * T + t)] * d + i)] + wpe[idx(t * d + i)];
      }
    }
  }
  out.residuals = x;
  for (int l = 0; l < c.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    const Vec ln1 = c.attention_norm
                        ? impl::layernorm(x, at(p, h + "ln_1.weight"), at(p, h + "ln_1.bias"), N, d)
                        : x;
    const Vec qkv = impl::linear(ln1, at(p, h + "attn.c_attn.weight"),
                                 at(p, h + "attn.c_attn.bias"), N, d, 3 * d);
    Vec heads(idx(N) * d, 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    for (int b = 0; b < B; ++b) {
      for (int hh = 0; hh < H; ++hh) {
        for (int t = 0; t < T; ++t) {
          // Query t sees keys 0 .. t (causal).
          std::vector<double> score(idx(t + 1));
          double mx = -std::numeric_limits<double>::infinity();
          for (int j = 0; j <= t; ++j) {
            double s = 0;
            for (int e = 0; e < hd; ++e) {
              s += qkv[idx((b * T + t) * 3 * d + hh * hd + e)] *
                   qkv[idx((b * T + j) * 3 * d + d + hh * hd + e)];
            }
            score[idx(j)] = s * scale;
            mx = std::max(mx, score[idx(j)]);
          }
          double sum = 0;
          for (double& s : score)
            sum += (s = std::exp(s - mx));
          for (int j = 0; j <= t; ++j) {
            const double w = score[idx(j)] / sum;
            out.attention[idx((((std::int64_t{l} * B + b) * H + hh) * T + t) * T + j)] = w;
            for (int e = 0; e < hd; ++e) {
              heads[idx((b * T + t) * d + hh * hd + e)] +=
                  w * qkv[idx((b * T + j) * 3 * d + 2 * d + hh * hd + e)];
            }
          }
        }
      }
    }
    ablationref::apply(heads, ablate, l, B, T, H, hd, true);
    const Vec& proj_w = at(p, h + "attn.c_proj.weight");  // Conv1D [in, out]
    ablationref::value_weighted(
        out.value_norms, out.value_weighted,
        [&](std::int64_t b, std::int64_t j, std::int64_t hh, std::int64_t e) {
          return qkv[idx((b * T + j) * 3 * d + 2 * d + hh * hd + e)];
        },
        [&](std::int64_t hh, std::int64_t e, std::int64_t col) {
          return proj_w[idx((hh * hd + e) * d + col)];
        },
        [&](std::int64_t b, std::int64_t hh, std::int64_t i, std::int64_t j) {
          return out.attention[idx((((std::int64_t{l} * B + b) * H + hh) * T + i) * T + j)];
        },
        B, T, H, hd, d, ablate, l);
    for (int n = 0; n < N; ++n) {
      for (int hh = 0; hh < H; ++hh) {
        for (int col = 0; col < d; ++col) {
          double s = 0;
          for (int e = 0; e < hd; ++e)
            s += heads[idx(n * d + hh * hd + e)] * proj_w[idx((hh * hd + e) * d + col)];
          out.head_writes.push_back(s);
        }
      }
    }
    const Vec proj = impl::linear(heads, at(p, h + "attn.c_proj.weight"),
                                  at(p, h + "attn.c_proj.bias"), N, d, d);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] += proj[i];
    const Vec ln2 = impl::layernorm(x, at(p, h + "ln_2.weight"), at(p, h + "ln_2.bias"), N, d);
    Vec fc =
        impl::linear(ln2, at(p, h + "mlp.c_fc.weight"), at(p, h + "mlp.c_fc.bias"), N, d, 4 * d);
    for (double& v : fc)
      v = impl::gelu(v);
    const Vec mlp =
        impl::linear(fc, at(p, h + "mlp.c_proj.weight"), at(p, h + "mlp.c_proj.bias"), N, 4 * d, d);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] += mlp[i];
    out.mlp_writes.insert(out.mlp_writes.end(), mlp.begin(), mlp.end());
    out.residuals.insert(out.residuals.end(), x.begin(), x.end());
  }
  const Vec lnf = impl::layernorm(x, at(p, "ln_f.weight"), at(p, "ln_f.bias"), N, d);
  out.logits.assign(idx(N) * V, 0.0);
  for (int n = 0; n < N; ++n) {
    for (int v = 0; v < V; ++v) {
      double s = 0;
      for (int i = 0; i < d; ++i)
        s += lnf[idx(n * d + i)] * wte[idx(v * d + i)];
      out.logits[idx(n * V + v)] = s;
    }
  }
  return out;
}

// Mean over the targets that are not -1 of −log softmax(logits)[target].
inline double loss(const Config& c, const Params& p, const std::vector<std::int32_t>& ids,
                   const std::vector<std::int32_t>& targets, int B, int T) {
  const Output o = forward(c, p, ids, B, T);
  double total = 0;
  int counted = 0;
  for (int n = 0; n < B * T; ++n) {
    const int target = targets[static_cast<std::size_t>(n)];
    if (target < 0) continue;
    const double* row = o.logits.data() + static_cast<std::size_t>(n) * c.vocab;
    const double mx = *std::max_element(row, row + c.vocab);
    double sum = 0;
    for (int v = 0; v < c.vocab; ++v)
      sum += std::exp(row[v] - mx);
    total += std::log(sum) + mx - row[target];
    ++counted;
  }
  return total / counted;
}

// ---------------------------------------------------------------------------------------------
// Checked comparison: |actual − expected| <= atol + rtol·|expected| for every element.

struct Comparison {
  bool ok = false;
  std::string report;  // the worst element (or why the comparison failed outright)
};

template <typename A, typename E>
Comparison compare(const std::string& what, const A& actual, const E& expected, double atol,
                   double rtol) {
  Comparison c;
  std::ostringstream s;
  s.precision(9);
  if (actual.size() != expected.size()) {
    s << what << ": size mismatch, " << actual.size() << " values vs " << expected.size()
      << " expected";
    c.report = s.str();
    return c;
  }
  // The worst element is the one closest to (or furthest past) its allowance.
  double worst_ratio = -1.0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      s << what << ": non-finite value at flat index " << i << ": " << a << " vs expected " << e;
      c.report = s.str();
      return c;
    }
    const double diff = std::abs(a - e), allowed = atol + rtol * std::abs(e);
    const double ratio =
        allowed > 0 ? diff / allowed : (diff > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  c.ok = worst_ratio <= 1.0;
  s << what << ": " << actual.size() << " values";
  if (!actual.empty()) {
    const double a = static_cast<double>(actual[worst]), e = static_cast<double>(expected[worst]);
    s << ", worst at flat index " << worst << ": " << a << " vs expected " << e << ", |diff| "
      << std::abs(a - e) << " of an allowed " << atol + rtol * std::abs(e) << " (" << atol << " + "
      << rtol << "·|expected|)";
  }
  c.report = s.str();
  return c;
}

}  // namespace gpt2ref
