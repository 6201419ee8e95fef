// An independent float64 implementation of attention for the tests: plain loops over explicit
// indices, written from the definition, sharing no code with the library.
#pragma once

#include <attnlens/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ref {

struct Options {
  double scale = -1.0;  // < 0: 1/sqrt(E)
  double softcap = 0;   // > 0: a scaled score x becomes softcap · tanh(x / softcap), before masks
  bool causal = false;
  bool bottom_right = false;
  // mask: empty = none; otherwise values at the given shape, broadcast by multi-index
  std::vector<double> mask;  // additive values (-inf allowed) or 1/0 for boolean
  bool mask_is_bool = false;
  attnlens::Shape mask_shape;
};

struct Result {
  std::vector<double> output;
  std::vector<double> weights;
};

// q [..., L, E], k [..., S, E], v [..., S, Ev] lifted to rank 4 [B, H, ., .].
inline Result attention(const std::vector<float>& q, const attnlens::Shape& qs,
                        const std::vector<float>& k, const attnlens::Shape& ks,
                        const std::vector<float>& v, const attnlens::Shape& vs,
                        const Options& o = {}) {
  const std::size_t r = qs.size();
  const std::int64_t B = r >= 3 ? qs[0] : 1, H = r == 4 ? qs[1] : 1, Hkv = r == 4 ? ks[1] : 1;
  const std::int64_t L = qs[r - 2], E = qs[r - 1], S = ks[r - 2], Ev = vs[r - 1];
  const double scale = o.scale < 0 ? 1.0 / std::sqrt(static_cast<double>(E)) : o.scale;
  const double ninf = -std::numeric_limits<double>::infinity();
  // The score shape at q's rank, to broadcast the mask against.
  std::vector<std::int64_t> target;
  if (r == 4) target = {B, H, L, S};
  if (r == 3) target = {B, L, S};
  if (r == 2) target = {L, S};
  auto mask_at = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
    std::vector<std::int64_t> idx;
    if (r == 4) idx = {b, h, i, j};
    if (r == 3) idx = {b, i, j};
    if (r == 2) idx = {i, j};
    const std::size_t mr = o.mask_shape.size();
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < mr; ++d) {
      const std::int64_t dim = o.mask_shape[d];
      const std::int64_t at = idx[idx.size() - mr + d];
      flat = flat * dim + (dim == 1 ? 0 : at);
    }
    return o.mask[static_cast<std::size_t>(flat)];
  };
  Result res;
  res.output.assign(static_cast<std::size_t>(B * H * L * Ev), 0.0);
  res.weights.assign(static_cast<std::size_t>(B * H * L * S), 0.0);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t kh = h / (H / Hkv);
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> logits(static_cast<std::size_t>(S));
        for (std::int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < E; ++e) {
            dot +=
                static_cast<double>(q[static_cast<std::size_t>(((b * H + h) * L + i) * E + e)]) *
                static_cast<double>(k[static_cast<std::size_t>(((b * Hkv + kh) * S + j) * E + e)]);
          }
          double logit = dot * scale;
          if (o.softcap > 0) logit = o.softcap * std::tanh(logit / o.softcap);
          if (!o.mask.empty()) {
            const double m = mask_at(b, h, i, j);
            if (o.mask_is_bool) {
              if (m == 0) logit = ninf;
            } else {
              logit += m;
            }
          }
          const std::int64_t limit = i + (o.bottom_right ? S - L : 0);
          if (o.causal && j > limit) logit = ninf;
          logits[static_cast<std::size_t>(j)] = logit;
        }
        double mx = ninf;
        for (double x : logits)
          mx = std::max(mx, x);
        if (mx == ninf) continue;  // all masked: zeros
        double sum = 0;
        for (double& x : logits)
          sum += (x = (x == ninf ? 0.0 : std::exp(x - mx)));
        for (std::int64_t j = 0; j < S; ++j) {
          const double p = logits[static_cast<std::size_t>(j)] / sum;
          res.weights[static_cast<std::size_t>(((b * H + h) * L + i) * S + j)] = p;
          for (std::int64_t e = 0; e < Ev; ++e) {
            res.output[static_cast<std::size_t>(((b * H + h) * L + i) * Ev + e)] +=
                p *
                static_cast<double>(v[static_cast<std::size_t>(((b * Hkv + kh) * S + j) * Ev + e)]);
          }
        }
      }
    }
  }
  return res;
}

inline std::vector<float> random_vector(std::size_t n, std::mt19937& gen, float lo = -1.0f,
                                        float hi = 1.0f) {
  // uniform_real_distribution is fine here: tests only need some values, not portable ones.
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out)
    x = dist(gen);
  return out;
}

// Largest |x| over some values (for the error bounds below); NaN if any value is NaN, so that a
// bound built from it fails every comparison.
template <typename Values>
double max_abs(const Values& values) {
  double m = 0.0;
  for (const auto x : values) {
    const double a = std::abs(static_cast<double>(x));
    if (std::isnan(a)) return a;
    m = std::max(m, a);
  }
  return m;
}

// How far float32 attention, computed in any order (blocked, streaming, the Eigen reference),
// may be from the exact answer: worst-case bounds from the arithmetic, no fitting.
struct Tolerance {
  double weights;  // on each weight
  double output;   // on each output value
};

// Inputs bounded by |q| <= q_max, |k| <= k_max, |v| <= v_max, head dimension E, S keys, the
// given scale and additive mask values bounded by mask_max. With u = 2^-24 (float32 rounding)
// and gamma(n) = n u / (1 - n u) (the error of an n-term sum or dot product, in any order):
//   - a score q·k is off by at most gamma(E) · E q_max k_max, so a logit (scale, mask, minus the
//     row maximum: three more roundings of values up to 2 |logit|) by
//       d = |scale| gamma(E) E q_max k_max + 6 u (|scale| E q_max k_max + mask_max);
//   - softmax turns logit errors up to d into relative weight errors up to e^(2d) - 1 ~ 2d,
//     and adds exp() (a few ulp; 8 u allowed), the sum over S keys and the division:
//     every weight is off by at most 2d + gamma(S + 10) (+ 2d for e^(2d) - 1 above 2d);
//   - output = weights · v adds at most v_max times the total weight error of a row (the
//     same bound: relative errors of weights that sum to 1) plus gamma(S) v_max.
// `logit_error` adds to d when the inputs themselves carry errors (e.g. projected q and k).
inline Tolerance attention_tolerance(std::int64_t E, std::int64_t S, double q_max, double k_max,
                                     double v_max, double scale, double mask_max = 0.0,
                                     double logit_error = 0.0) {
  const double u = std::ldexp(1.0, -24);
  const auto gamma = [u](double n) { return n * u / (1.0 - n * u); };
  const double e = static_cast<double>(E);
  const double s = static_cast<double>(S);
  const double raw = e * q_max * k_max;
  const double d =
      std::abs(scale) * gamma(e) * raw + 6 * u * (std::abs(scale) * raw + mask_max) + logit_error;
  const double weights = std::expm1(2 * d) + 2 * d + gamma(s + 10);
  return {weights, v_max * (weights + gamma(s))};
}

// attention_tolerance() for these very inputs.
inline Tolerance attention_tolerance(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, std::int64_t E, std::int64_t S,
                                     double scale, double mask_max = 0.0) {
  return attention_tolerance(E, S, max_abs(q), max_abs(k), max_abs(v), scale, mask_max);
}

// Worst-case float32 error of a multi-head self-attention layer's output (E = model dimension,
// H heads of width d = E / H, L tokens, scale 1/sqrt(d)), with |x| <= x_max, weights and biases
// bounded by w_max and b_max, projected values |Q|, |K|, |V| <= projected_max and the heads'
// concatenation bounded by concat_max. Stage by stage:
//  - a projection x W + b sums E + 1 terms of size <= x_max w_max (and b_max): off by
//    p = gamma(E + 1) (E x_max w_max + b_max) (+ extra_projection_error, e.g. a reference that
//    rounds its float64 projections to float);
//  - a projection error p moves a score (d products) by <= d (2 P p + p^2), P = projected_max
//    + p, i.e. a logit by scale times that: attention_tolerance() takes it as extra logit error
//    and bounds the head outputs; V's own error adds p;
//  - the output projection multiplies E such errors by |W_O| and rounds E + 1 terms more.
// Returns the bound on each head's weights and on the layer's output.
inline Tolerance mha_tolerance(std::int64_t E, std::int64_t H, std::int64_t L, double x_max,
                               double w_max, double b_max, double projected_max, double concat_max,
                               double extra_projection_error = 0.0) {
  const double u = std::ldexp(1.0, -24);
  const auto gamma = [u](double n) { return n * u / (1.0 - n * u); };
  const double e = static_cast<double>(E);
  const std::int64_t d = E / H;
  const double p = gamma(e + 1) * (e * x_max * w_max + b_max) + extra_projection_error;
  const double big = projected_max + p;
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  const double logit_error = scale * static_cast<double>(d) * (2 * big * p + p * p);
  const auto head = attention_tolerance(d, L, big, big, big, scale, 0.0, logit_error);
  const double concat_error = head.output + p;
  return {head.weights, e * w_max * concat_error +
                            gamma(e + 1) * (e * (concat_max + concat_error) * w_max + b_max)};
}

// The same bounds for two float32 computations compared with each other.
inline Tolerance twice(Tolerance t) {
  return {2 * t.weights, 2 * t.output};
}

}  // namespace ref
