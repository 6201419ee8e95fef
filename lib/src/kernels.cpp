#include "kernels.hpp"

#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace attnlens::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Vectors: 16 floats with AVX-512, 8 with AVX, otherwise 4 (SSE2 natively, SIMD128 in
// WebAssembly). Only builds with ATTNLENS_NATIVE_ARCH (-march=native) go past SSE2.
#if defined(__AVX512F__)
constexpr int W = 16;
#elif defined(__AVX__)
constexpr int W = 8;
#else
constexpr int W = 4;
#endif
using vf = float __attribute__((vector_size(W * sizeof(float))));
using vi = std::int32_t __attribute__((vector_size(W * sizeof(float))));

#ifndef ATTNLENS_KERNEL_ROWS
#define ATTNLENS_KERNEL_ROWS 6
#endif

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::int64_t kBlockRows = 64;  // query rows per block
constexpr std::int64_t kTileCols = 64;   // keys per tile in the streaming schedule

inline vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, vf v) {
  std::memcpy(p, &v, sizeof v);
}
inline vf splat(float x) {
  return vf{} + x;
}
inline vf select(vi mask, vf yes, vf no) {
  return reinterpret_cast<vf>((reinterpret_cast<vi>(yes) & mask) |
                              (reinterpret_cast<vi>(no) & ~mask));
}
inline float hmax(vf v) {
  float m = v[0];
  for (int i = 1; i < W; ++i)
    m = std::max(m, v[i]);
  return m;
}
inline float hsum(vf v) {
  float s = v[0];
  for (int i = 1; i < W; ++i)
    s += v[i];
  return s;
}

// exp(x) for x <= 0, elementwise: Cephes' expf polynomial (about 1 ulp). Inputs below -87.3
// (including -inf, the masked entries) give exactly 0 instead of a denormal.
inline vf exp_nonpositive(vf x) {
  const vf lo = splat(-87.3f);
  const vi underflow = x < lo;
  x = select(underflow, lo, x);
  const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const vf n = (x * splat(1.44269504088896341f) + magic) - magic;
  const vf r = x - n * splat(0.693359375f) + n * splat(2.12194440e-4f);
  vf p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * r * r + r + splat(1.0f);
  const vi bits = (__builtin_convertvector(n, vi) + 127) << 23;
  return select(underflow, vf{}, p * reinterpret_cast<vf>(bits));
}

float exp_nonpositive(float x) {
  vf v = splat(x);
  return exp_nonpositive(v)[0];
}

// ---------------------------------------------------------------------------------------------
// Matrix products.
constexpr int kRows = ATTNLENS_KERNEL_ROWS;

using vf4 = float __attribute__((vector_size(4 * sizeof(float))));

// All W lanes set to lane `Lane` of a 4-vector: one shuffle instead of a scalar load + splat.
template <int Lane>
inline vf broadcast_lane(vf4 a) {
#if defined(__AVX512F__)
  return __builtin_shufflevector(a, a, Lane, Lane, Lane, Lane, Lane, Lane, Lane, Lane, Lane, Lane,
                                 Lane, Lane, Lane, Lane, Lane, Lane);
#elif defined(__AVX__)
  return __builtin_shufflevector(a, a, Lane, Lane, Lane, Lane, Lane, Lane, Lane, Lane);
#else
  return __builtin_shufflevector(a, a, Lane, Lane, Lane, Lane);
#endif
}

// Panels: the right-hand operand B[K x N] of every product is packed once per slice into
// panels of P = 2W columns, each stored as K contiguous rows of P floats (zero-padded past N),
// so the micro-kernel reads it sequentially whatever the matrix's shape.
constexpr std::int64_t P = 2 * W;

inline std::int64_t panels(std::int64_t n) {
  return (n + P - 1) / P;
}

template <int MR, int Lane>
inline void kernel_step(vf (&c)[MR][2], const vf4 (&a)[MR], const float* b) {
  const vf b0 = load(b);
  const vf b1 = load(b + W);
  for (int r = 0; r < MR; ++r) {
    const vf x = broadcast_lane<Lane>(a[r]);
    c[r][0] += x * b0;
    c[r][1] += x * b1;
  }
}

// C[MR x P] (+)= A[MR x K] · panel[K x P]; only the first `cols` columns of C are written.
template <int MR, bool Accumulate>
void kernel(std::int64_t K, const float* A, std::int64_t lda, const float* panel, float* C,
            std::int64_t ldc, std::int64_t cols) {
  vf c[MR][2] = {};
  std::int64_t k = 0;
  // Four steps of K per pass: each row of A is read as one 4-vector and its lanes broadcast.
  for (; k + 4 <= K; k += 4) {
    vf4 a[MR];
    for (int r = 0; r < MR; ++r)
      std::memcpy(&a[r], A + r * lda + k, sizeof(vf4));
    const float* b = panel + k * P;
    kernel_step<MR, 0>(c, a, b);
    kernel_step<MR, 1>(c, a, b + P);
    kernel_step<MR, 2>(c, a, b + 2 * P);
    kernel_step<MR, 3>(c, a, b + 3 * P);
  }
  for (; k < K; ++k) {
    const vf b0 = load(panel + k * P);
    const vf b1 = load(panel + k * P + W);
    for (int r = 0; r < MR; ++r) {
      const vf x = splat(A[r * lda + k]);
      c[r][0] += x * b0;
      c[r][1] += x * b1;
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* out = C + r * ldc;
    if (cols == P) {
      if (Accumulate) {
        c[r][0] += load(out);
        c[r][1] += load(out + W);
      }
      store(out, c[r][0]);
      store(out + W, c[r][1]);
    } else {
      float tile[P];
      store(tile, c[r][0]);
      store(tile + W, c[r][1]);
      for (std::int64_t j = 0; j < cols; ++j)
        out[j] = Accumulate ? out[j] + tile[j] : tile[j];
    }
  }
}

// C[M x N] (+)= A[M x K] · B, with B packed as panels(N) panels `panel_stride` floats apart
// (K <= the packed row count). The micro-kernel keeps a kRows x P tile of C in registers: 12
// vectors plus 3 operands fit the 16 registers of SSE, AVX and WebAssembly SIMD as V8 maps it.
template <bool Accumulate>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda,
          const float* packed, std::int64_t panel_stride, float* C, std::int64_t ldc) {
  const std::int64_t np = panels(N);
  std::int64_t i = 0;
  for (; i + kRows <= M; i += kRows) {
    for (std::int64_t j = 0; j < np; ++j) {
      kernel<kRows, Accumulate>(K, A + i * lda, lda, packed + j * panel_stride, C + i * ldc + j * P,
                                ldc, std::min(P, N - j * P));
    }
  }
  for (; i < M; ++i) {
    for (std::int64_t j = 0; j < np; ++j) {
      kernel<1, Accumulate>(K, A + i * lda, lda, packed + j * panel_stride, C + i * ldc + j * P,
                            ldc, std::min(P, N - j * P));
    }
  }
}

// Kᵀ as panels of keys: out[p][d][c] = k[(p·P + c)·D + d], zero past S. Panel stride D·P.
void pack_keys(const float* k, std::int64_t S, std::int64_t D, float* out) {
  for (std::int64_t p = 0; p < panels(S); ++p) {
    float* panel = out + p * D * P;
    for (std::int64_t c = 0; c < P; ++c) {
      const std::int64_t j = p * P + c;
      for (std::int64_t d = 0; d < D; ++d)
        panel[d * P + c] = j < S ? k[j * D + d] : 0.0f;
    }
  }
}

// V as panels of columns: out[p][j][c] = v[j·Dv + p·P + c], zero past Dv. Panel stride S·P.
void pack_values(const float* v, std::int64_t S, std::int64_t Dv, float* out) {
  for (std::int64_t p = 0; p < panels(Dv); ++p) {
    float* panel = out + p * S * P;
    const std::int64_t cols = std::min(P, Dv - p * P);
    for (std::int64_t j = 0; j < S; ++j) {
      const float* row = v + j * Dv + p * P;
      float* dst = panel + j * P;
      for (std::int64_t c = 0; c < cols; ++c)
        dst[c] = row[c];
      for (std::int64_t c = cols; c < P; ++c)
        dst[c] = 0.0f;
    }
  }
}

// True when the scale can be applied inside exp(): softmax(s · scale) = exp((s − max) · scale)
// / sum for scale > 0, which saves a pass over the scores. An additive mask must be added to
// scaled scores, so it needs the explicit pass.
bool scale_folded(const SliceProblem& p) {
  return p.scale > 0.0f && p.add_mask == nullptr;
}

// Applies the masks of query `i` to row[0, n) (keys j0 .. j0 + n − 1; keys at or past `visible`,
// relative to j0, are causally masked) and, unless folded, the scale. Returns the row maximum.
float mask_row(float* row, std::int64_t n, std::int64_t visible, const SliceProblem& p,
               std::int64_t i, std::int64_t j0) {
  if (!scale_folded(p)) {
    const float scale = p.scale;
    for (std::int64_t c = 0; c < visible; ++c)
      row[c] *= scale;
  }
  if (p.add_mask) {
    const float* m = p.add_mask + i * p.S + j0;
    for (std::int64_t c = 0; c < visible; ++c)
      row[c] += m[c];
  }
  if (p.bool_mask) {
    const std::uint8_t* m = p.bool_mask + i * p.S + j0;
    for (std::int64_t c = 0; c < visible; ++c)
      row[c] = m[c] ? row[c] : kNegInf;
  }
  for (std::int64_t c = std::max<std::int64_t>(visible, 0); c < n; ++c)
    row[c] = kNegInf;
  float max = kNegInf;
  std::int64_t c = 0;
  if (n >= W) {
    vf m = load(row);
    for (c = W; c + W <= n; c += W)
      m = select(load(row + c) > m, load(row + c), m);
    max = hmax(m);
  }
  for (; c < n; ++c)
    max = std::max(max, row[c]);
  if (max == std::numeric_limits<float>::infinity()) {
    fail(ErrorCode::NON_FINITE, "attention scores overflowed float32 (query row ", i,
         "); scale the inputs down");
  }
  return max;
}

// row[c] = exp((row[c] − max) · factor) for c < n; returns the sum.
float exp_and_sum(float* row, std::int64_t n, float max, float factor) {
  const vf m = splat(max);
  const vf f = splat(factor);
  vf s{};
  std::int64_t c = 0;
  for (; c + W <= n; c += W) {
    const vf e = exp_nonpositive((load(row + c) - m) * f);
    store(row + c, e);
    s += e;
  }
  float sum = hsum(s);
  for (; c < n; ++c)
    sum += row[c] = exp_nonpositive((row[c] - max) * factor);
  return sum;
}

// out[c] = row[c] · factor for c < n.
void scale_into(float* out, const float* row, std::int64_t n, float factor) {
  const vf f = splat(factor);
  std::int64_t c = 0;
  for (; c + W <= n; c += W)
    store(out + c, load(row + c) * f);
  for (; c < n; ++c)
    out[c] = row[c] * factor;
}

void scale_row(float* row, std::int64_t n, float factor) {
  const vf f = splat(factor);
  std::int64_t c = 0;
  for (; c + W <= n; c += W)
    store(row + c, load(row + c) * f);
  for (; c < n; ++c)
    row[c] *= factor;
}

// Keys query block [i0, i0 + rows) can see at all: causal blocks stop at the diagonal.
std::int64_t block_key_end(const SliceProblem& p, std::int64_t i0, std::int64_t rows) {
  if (!p.causal) return p.S;
  return std::clamp<std::int64_t>(i0 + rows + p.causal_shift, 0, p.S);
}

std::int64_t row_visible(const SliceProblem& p, std::int64_t i, std::int64_t j0, std::int64_t n) {
  if (!p.causal) return n;
  return std::clamp<std::int64_t>(i + p.causal_shift + 1 - j0, 0, n);
}

// Scratch kept between calls, so the hot path does not allocate once it has warmed up.
float* scratch(std::vector<float>& buffer, std::int64_t n) {
  if (static_cast<std::int64_t>(buffer.size()) < n) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}
thread_local std::vector<float> tl_keys;
thread_local std::vector<float> tl_scores;
thread_local std::vector<float> tl_values;
thread_local std::vector<float> tl_accumulator;
thread_local std::vector<float> tl_stats;

// The keys and values of a slice, packed once into panels: O(S·D) memory, like the inputs.
// Only keys some query can see are packed (causal slices stop at the last query's diagonal).
struct PackedSlice {
  std::int64_t key_end;
  const float* keys;    // panels of Kᵀ, stride D·P
  const float* values;  // panels of V, stride key_end·P
};

PackedSlice pack_slice(const SliceProblem& p) {
  const std::int64_t key_end = block_key_end(p, 0, p.L);
  float* keys = scratch(tl_keys, panels(key_end) * p.D * P);
  float* values = scratch(tl_values, panels(p.Dv) * key_end * P);
  pack_keys(p.k, key_end, p.D, keys);
  pack_values(p.v, key_end, p.Dv, values);
  return {key_end, keys, values};
}

}  // namespace

void attend_blocked(const SliceProblem& p) {
  const std::int64_t L = p.L, S = p.S, D = p.D, Dv = p.Dv;
  float* scores = scratch(tl_scores, kBlockRows * S);
  float* inv_sum = scratch(tl_stats, kBlockRows);
  const float factor = scale_folded(p) ? p.scale : 1.0f;
  const auto [key_end, keys, values] = pack_slice(p);
  for (std::int64_t i0 = 0; i0 < L; i0 += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, L - i0);
    const std::int64_t kend = block_key_end(p, i0, rows);
    float* out = p.out + i0 * Dv;
    if (kend > 0) {
      // scores[r, j] = q[i0 + r] · k[j] for the keys this block can see.
      gemm<false>(rows, kend, D, p.q + i0 * D, D, keys, D * P, scores, S);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = i0 + r;
        float* row = scores + r * S;
        float* weights = p.weights ? p.weights + i * S : nullptr;
        const float max = mask_row(row, kend, row_visible(p, i, 0, kend), p, i, 0);
        if (max == kNegInf) {
          std::fill(row, row + kend, 0.0f);  // every key masked: zero weights, never NaN
          inv_sum[r] = 0.0f;
        } else {
          inv_sum[r] = 1.0f / exp_and_sum(row, kend, max, factor);
        }
        // Weights are written while the row is still in cache; the product below uses the
        // unnormalised row, so the output is the same to the bit with or without weights.
        if (weights) {
          scale_into(weights, row, kend, inv_sum[r]);
          std::fill(weights + kend, weights + S, 0.0f);
        }
      }
      // The output rows are divided by the sum after the product: Dv values per row, not kend.
      gemm<false>(rows, Dv, kend, scores, S, values, key_end * P, out, Dv);
      for (std::int64_t r = 0; r < rows; ++r)
        scale_row(out + r * Dv, Dv, inv_sum[r]);
    } else {
      std::fill(out, out + rows * Dv, 0.0f);
      if (p.weights) std::fill(p.weights + i0 * S, p.weights + (i0 + rows) * S, 0.0f);
    }
  }
}

void attend_streaming(const SliceProblem& p) {
  const std::int64_t L = p.L, D = p.D, Dv = p.Dv;
  static_assert(kTileCols % P == 0, "key tiles must start on panel boundaries");
  float* scores = scratch(tl_scores, kBlockRows * kTileCols);
  float* acc = scratch(tl_accumulator, kBlockRows * Dv);
  float* stats = scratch(tl_stats, 2 * kBlockRows);
  float* row_max = stats;
  float* row_sum = stats + kBlockRows;
  const float factor = scale_folded(p) ? p.scale : 1.0f;
  const auto [key_end, keys, values] = pack_slice(p);
  for (std::int64_t i0 = 0; i0 < L; i0 += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, L - i0);
    const std::int64_t kend = block_key_end(p, i0, rows);
    std::fill(acc, acc + rows * Dv, 0.0f);
    std::fill(row_max, row_max + rows, kNegInf);
    std::fill(row_sum, row_sum + rows, 0.0f);
    for (std::int64_t j0 = 0; j0 < kend; j0 += kTileCols) {
      const std::int64_t cols = std::min(kTileCols, kend - j0);
      // Tiles start at multiples of kTileCols, a multiple of the panel width P.
      gemm<false>(rows, cols, D, p.q + i0 * D, D, keys + (j0 / P) * D * P, D * P, scores,
                  kTileCols);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = i0 + r;
        float* row = scores + r * kTileCols;
        const float tile_max = mask_row(row, cols, row_visible(p, i, j0, cols), p, i, j0);
        const float new_max = std::max(row_max[r], tile_max);
        if (new_max == kNegInf) {
          std::fill(row, row + cols, 0.0f);  // nothing visible yet in this row
          continue;
        }
        // Online softmax: rescale what was accumulated under the old maximum.
        const float correction =
            row_max[r] == kNegInf ? 0.0f : exp_nonpositive((row_max[r] - new_max) * factor);
        row_sum[r] = row_sum[r] * correction + exp_and_sum(row, cols, new_max, factor);
        if (correction != 1.0f) scale_row(acc + r * Dv, Dv, correction);
        row_max[r] = new_max;
      }
      gemm<true>(rows, Dv, cols, scores, kTileCols, values + j0 * P, key_end * P, acc, Dv);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      float* out = p.out + (i0 + r) * Dv;
      const float inv = row_sum[r] > 0.0f ? 1.0f / row_sum[r] : 0.0f;
      for (std::int64_t e = 0; e < Dv; ++e)
        out[e] = acc[r * Dv + e] * inv;
    }
  }
}

}  // namespace attnlens::detail
