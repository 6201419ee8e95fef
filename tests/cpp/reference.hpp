// An independent float64 implementation of attention for the tests: plain loops over explicit
// indices, written from the definition, sharing no code with the library.
#pragma once

#include <attnlens/tensor.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ref {

struct Options {
  double scale = -1.0;  // < 0: 1/sqrt(E)
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

// Largest |a - b| over two equally long sequences.
template <typename A, typename B>
double max_abs_diff(const A& a, const B& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  }
  return worst;
}

}  // namespace ref
