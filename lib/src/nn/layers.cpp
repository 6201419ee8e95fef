#include "nn/layers.hpp"

#include "core/matmul.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlens::detail {
namespace {

using Arr = Eigen::Map<Eigen::ArrayXf>;
using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMat = Eigen::Map<const RowMat>;
using Mat = Eigen::Map<RowMat>;
using ConstRow = Eigen::Map<const Eigen::RowVectorXf>;

constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2 / π)
constexpr float kGeluC = 0.044715f;
// GELU's backward works in chunks held in an aligned local array, so tanh is computed once per
// element and chunk boundaries (hence results) do not depend on where the caller's data sits.
constexpr std::int64_t kChunk = 256;

}  // namespace

void embed_forward(float* out, const std::int32_t* ids, const float* wte, const float* wpe,
                   std::int64_t B, std::int64_t T, std::int64_t d, const std::int32_t* types,
                   const float* wtt, const std::int32_t* positions) {
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t n = b * T + t;
      const std::int64_t p = positions != nullptr ? std::int64_t{positions[n]} : t;
      Arr row(out + n * d, d);
      row = ConstArr(wte + std::int64_t{ids[n]} * d, d) + ConstArr(wpe + p * d, d);
      if (wtt != nullptr) row += ConstArr(wtt + std::int64_t{types[n]} * d, d);
    }
  }
}

void embed_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* ids,
                    std::int64_t B, std::int64_t T, std::int64_t d, const std::int32_t* types,
                    float* dwtt, const std::int32_t* positions) {
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t n = b * T + t;
      const std::int64_t p = positions != nullptr ? std::int64_t{positions[n]} : t;
      const ConstArr g(dout + n * d, d);
      Arr(dwte + std::int64_t{ids[n]} * d, d) += g;
      Arr(dwpe + p * d, d) += g;
      if (dwtt != nullptr) Arr(dwtt + std::int64_t{types[n]} * d, d) += g;
    }
  }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w,
                       const float* b, std::int64_t N, std::int64_t d, float eps) {
  const ConstArr wa(w, d);
  const float inv_d = 1.0f / static_cast<float>(d);
  for (std::int64_t n = 0; n < N; ++n) {
    const ConstArr xr(x + n * d, d);
    // Two passes: the mean, then the (biased) variance of the centred row, as PyTorch.
    const float m = xr.sum() * inv_d;
    const float var = (xr - m).square().sum() * inv_d;
    const float s = 1.0f / std::sqrt(var + eps);
    // Elementwise: out may be x.
    if (b != nullptr) {
      Arr(out + n * d, d) = (xr - m) * s * wa + ConstArr(b, d);
    } else {
      Arr(out + n * d, d) = (xr - m) * s * wa;
    }
    if (mean != nullptr) mean[n] = m;
    if (rstd != nullptr) rstd[n] = s;
  }
}

void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x,
                        const float* w, const float* mean, const float* rstd, std::int64_t N,
                        std::int64_t d) {
  const ConstArr wa(w, d);
  Arr dwa(dw, d), dba(db, d);
  const float inv_d = 1.0f / static_cast<float>(d);
  for (std::int64_t n = 0; n < N; ++n) {
    const ConstArr go(dout + n * d, d);
    const ConstArr xr(x + n * d, d);
    const float m = mean[n], s = rstd[n];
    // norm = (x − mean)·rstd and dnorm = w ⊙ dout; then
    // dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm ⊙ norm))
    const auto norm = (xr - m) * s;
    const auto dnorm = wa * go;
    const float dnorm_mean = dnorm.sum() * inv_d;
    const float dnorm_norm_mean = (dnorm * norm).sum() * inv_d;
    dba += go;
    dwa += norm * go;
    Arr(dx + n * d, d) += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
  }
}

void linear_forward(float* out, const float* x, const float* w, const float* b,
                    const float* residual, std::int64_t N, std::int64_t in, std::int64_t out_dim,
                    WeightPanels* panels) {
  Mat o(out, N, out_dim);
  const ConstRow bias(b, out_dim);
  if (residual != nullptr) {
    o = ConstMat(residual, N, out_dim).rowwise() + bias;
  } else {
    o.rowwise() = bias;
  }
  if (panels != nullptr) {
    panels->matmul(out, x, w, N, out_dim, in, true);
  } else {
    matmul(out, x, w, N, out_dim, in, false, false, true);
  }
}

void linear_backward(float* dx, float* dw, float* db, const float* dout, const float* x,
                     const float* w, std::int64_t N, std::int64_t in, std::int64_t out_dim) {
  matmul(dx, dout, w, N, in, out_dim, false, true, false);  // dx = dout · wᵀ
  matmul(dw, x, dout, in, out_dim, N, true, false, true);   // dw += xᵀ · dout
  // db += column sums, row by row: each column is summed in row order whatever db's address
  // (Eigen's colwise().sum() splits columns between packet and scalar paths by the
  // destination's alignment, which changed the last bits between runs in AVX-512 builds).
  for (std::int64_t n = 0; n < N; ++n) {
    const float* row = dout + n * out_dim;
    for (std::int64_t j = 0; j < out_dim; ++j)
      db[j] += row[j];
  }
}

void add_into(float* dst, const float* src, std::int64_t n) {
  Arr(dst, n) += ConstArr(src, n);
}

void gelu_forward(float* out, const float* x, std::int64_t n) {
  const ConstArr xa(x, n);
  Arr(out, n) = 0.5f * xa * (1.0f + (kGeluK * (xa + kGeluC * xa.cube())).tanh());
}

void gelu_backward(float* grad, const float* x, std::int64_t n) {
  Eigen::Array<float, kChunk, 1> t;
  for (std::int64_t start = 0; start < n; start += kChunk) {
    const std::int64_t len = std::min(kChunk, n - start);
    const ConstArr xa(x + start, len);
    auto th = t.head(len);
    th = (kGeluK * (xa + kGeluC * xa.cube())).tanh();
    // d/dx [0.5 x (1 + tanh u)] = 0.5 (1 + tanh u) + 0.5 x (1 − tanh² u) u',
    // u' = sqrt(2/π) (1 + 3 · 0.044715 x²)
    Arr(grad + start, len) *= 0.5f * (1.0f + th) + 0.5f * xa * (1.0f - th.square()) * kGeluK *
                                                       (1.0f + 3.0f * kGeluC * xa.square());
  }
}

void gelu_erf_forward(float* out, const float* x, std::int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

void gelu_erf_backward(float* grad, const float* x, std::int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1 / sqrt(2π)
  for (std::int64_t i = 0; i < n; ++i) {
    const float cdf = 0.5f * (1.0f + std::erf(x[i] * kInvSqrt2));
    const float pdf = kInvSqrt2Pi * std::exp(-0.5f * x[i] * x[i]);
    grad[i] *= cdf + x[i] * pdf;
  }
}

void split_heads(float* q, float* k, float* v, const float* qkv, std::int64_t B, std::int64_t T,
                 std::int64_t H, std::int64_t hd) {
  const std::int64_t d = H * hd;
  const std::size_t bytes = static_cast<std::size_t>(hd) * sizeof(float);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      const float* row = qkv + (b * T + t) * 3 * d;
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t at = ((b * H + h) * T + t) * hd;
        std::memcpy(q + at, row + h * hd, bytes);
        std::memcpy(k + at, row + d + h * hd, bytes);
        std::memcpy(v + at, row + 2 * d + h * hd, bytes);
      }
    }
  }
}

void join_heads(float* dqkv, const float* dq, const float* dk, const float* dv, std::int64_t B,
                std::int64_t T, std::int64_t H, std::int64_t hd) {
  const std::int64_t d = H * hd;
  const std::size_t bytes = static_cast<std::size_t>(hd) * sizeof(float);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      float* row = dqkv + (b * T + t) * 3 * d;
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t at = ((b * H + h) * T + t) * hd;
        std::memcpy(row + h * hd, dq + at, bytes);
        std::memcpy(row + d + h * hd, dk + at, bytes);
        std::memcpy(row + 2 * d + h * hd, dv + at, bytes);
      }
    }
  }
}

void merge_heads(float* out, const float* heads, std::int64_t B, std::int64_t T, std::int64_t H,
                 std::int64_t hd) {
  const std::size_t bytes = static_cast<std::size_t>(hd) * sizeof(float);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t h = 0; h < H; ++h) {
        std::memcpy(out + (b * T + t) * H * hd + h * hd, heads + ((b * H + h) * T + t) * hd, bytes);
      }
    }
  }
}

void unmerge_heads(float* heads, const float* x, std::int64_t B, std::int64_t T, std::int64_t H,
                   std::int64_t hd) {
  const std::size_t bytes = static_cast<std::size_t>(hd) * sizeof(float);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t h = 0; h < H; ++h) {
        std::memcpy(heads + ((b * H + h) * T + t) * hd, x + (b * T + t) * H * hd + h * hd, bytes);
      }
    }
  }
}

void attention_backward(float* dq, float* dk, float* dv, float* scratch, const float* dout,
                        const float* q, const float* k, const float* v, const float* weights,
                        std::int64_t B, std::int64_t H, std::int64_t T, std::int64_t hd,
                        float scale, bool causal) {
  for (std::int64_t bh = 0; bh < B * H; ++bh) {
    // Slices of one (b, h): q, k, v, dout, dq, dk, dv are (T, hd); p is (T, T).
    const std::int64_t at = bh * T * hd;
    const float* p = weights + bh * T * T;
    matmul(dv + at, p, dout + at, T, hd, T, true, false, false);       // dV = Pᵀ dO
    matmul(scratch, dout + at, v + at, T, T, hd, false, true, false);  // dP = dO Vᵀ
    // Softmax backward row by row, in place: dS = P ⊙ (dP − Σ_j dP_j P_j). Causal: only keys
    // j <= t were visible; P is exactly 0 above the diagonal, so dS is too.
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t visible = causal ? t + 1 : T;
      const ConstArr pr(p + t * T, visible);
      Arr ds(scratch + t * T, visible);
      const float dot = (ds * pr).sum();
      ds = pr * (ds - dot);
      std::fill(scratch + t * T + visible, scratch + (t + 1) * T, 0.0f);
    }
    matmul(dq + at, scratch, k + at, T, hd, T, false, false, false, scale);  // dQ = scale dS K
    matmul(dk + at, scratch, q + at, T, hd, T, true, false, false, scale);   // dK = scale dSᵀ Q
  }
}

double cross_entropy(float* logits, const std::int32_t* targets, std::int64_t N, std::int64_t V,
                     bool write_gradient, float grad_scale) {
  double total = 0.0;
  for (std::int64_t n = 0; n < N; ++n) {
    Arr row(logits + n * V, V);
    const std::int32_t target = targets[n];
    if (target < 0) {
      if (write_gradient) row.setZero();
      continue;
    }
    // loss = log Σ exp(x − max) − (x_target − max); the max keeps exp in range.
    const float max = row.maxCoeff();
    const float shifted_target = row[target] - max;
    row = (row - max).exp();
    const float sum = row.sum();
    total += std::log(static_cast<double>(sum)) - static_cast<double>(shifted_target);
    if (write_gradient) {
      // d loss / d logits = (softmax − onehot(target)) · grad_scale
      row *= grad_scale / sum;
      row[target] -= grad_scale;
    }
  }
  return total;
}

}  // namespace attnlens::detail
