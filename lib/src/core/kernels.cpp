#include "core/kernels.hpp"

#include <attnlens/random.hpp>

#include "core/check.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

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

// Rows of the register tile: kRows x 2W accumulators, plus two operands of B and one broadcast,
// must fit the register file: 14 x 2 + 3 = 31 of AVX-512's 32, 6 x 2 + 3 = 15 of the 16 of
// SSE, AVX and WebAssembly SIMD (V8 keeps one XMM register as scratch).
#ifndef ATTNLENS_KERNEL_ROWS
#if defined(__AVX512F__)
#define ATTNLENS_KERNEL_ROWS 14
#else
#define ATTNLENS_KERNEL_ROWS 6
#endif
#endif

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr std::int64_t kRows = ATTNLENS_KERNEL_ROWS;
// Query rows per block: about 64, a multiple of the tile's rows.
constexpr std::int64_t kBlockRows = kRows * ((64 + kRows - 1) / kRows);
constexpr std::int64_t kTileCols = 64;  // keys per tile in the streaming schedule

inline vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, vf v) {
  std::memcpy(p, &v, sizeof v);
}
// All lanes x: a broadcast (vbroadcastss, f32x4.splat). Not `vf{} + x`: that addition must stay
// (0 + -0 is +0) and takes an arithmetic port per broadcast; x - 0 is x for every x.
inline vf splat(float x) {
  return x - vf{};
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

// max(a, b) for numbers (no NaN here): one instruction (maxps; f32x4.pmax in WebAssembly,
// where f32x4.max's NaN and signed-zero rules cost a long sequence in V8).
inline vf vmax(vf a, vf b) {
#if defined(__wasm_simd128__)
  return reinterpret_cast<vf>(
      wasm_f32x4_pmax(reinterpret_cast<v128_t>(b), reinterpret_cast<v128_t>(a)));
#else
  return a > b ? a : b;
#endif
}

// max(a, b) of 32-bit integers, lane by lane (i32x4.max_s in WebAssembly).
inline vi imax(vi a, vi b) {
#if defined(__wasm_simd128__)
  return reinterpret_cast<vi>(
      wasm_i32x4_max(reinterpret_cast<v128_t>(a), reinterpret_cast<v128_t>(b)));
#else
  return a > b ? a : b;
#endif
}

constexpr float kLog2e = 1.44269504088896341f;

// 2^t for t <= 0 (or -inf), elementwise, about 2 ulp. t = n + f with n an integer and |f| <= 1/2
// (rounding by adding 1.5 * 2^23, which also leaves n in the low bits of the sum), 2^f from a
// degree-5 polynomial fitted for relative error on [-1/2, 1/2] (9e-8), and 2^n built in the
// exponent bits. t is clamped at -125 (no denormals, which are slow); with ExactZero, results
// below that (including -inf, masked entries) are exactly 0, otherwise about 2^-125.
template <bool ExactZero>
inline vf exp2_nonpositive(vf t) {
  const vf lo = splat(-125.0f);
  const vi underflow = t < lo;
  t = vmax(t, lo);
  // 1.5 * 2^23 + 127: the sum's low bits hold n + 127, the biased exponent of 2^n.
  const vf shifted = t + splat(12583039.0f);
  const vf f = t - (shifted - splat(12583039.0f));
  vf p = splat(1.3264730805531144e-3f);
  p = p * f + splat(9.671512991189957e-3f);
  p = p * f + splat(5.550733581185341e-2f);
  p = p * f + splat(2.4022242426872253e-1f);
  p = p * f + splat(6.931470036506653e-1f);
  p = p * f + splat(1.0f);
  const vf e = p * reinterpret_cast<vf>(reinterpret_cast<vi>(shifted) << 23);
  if (!ExactZero) return e;
#if defined(__wasm_simd128__)
  // v128.andnot: LLVM would otherwise emit a bitselect, three instructions in V8.
  return reinterpret_cast<vf>(
      wasm_v128_andnot(reinterpret_cast<v128_t>(e), reinterpret_cast<v128_t>(underflow)));
#else
  return reinterpret_cast<vf>(reinterpret_cast<vi>(e) & ~underflow);
#endif
}

float exp2_nonpositive(float t) {
  return exp2_nonpositive<true>(splat(t))[0];
}

// ---------------------------------------------------------------------------------------------
// Matrix products.

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

// c + x * b. WebAssembly SIMD128 has no multiply-add; relaxed SIMD's f32x4.relaxed_madd is one
// fused instruction where the CPU has FMA (else a multiply and an add), and LLVM never forms it
// from `c + x * b` by itself. Natively -ffp-contract=fast lets the compiler fuse where it can.
inline vf madd(vf x, vf b, vf c) {
#if defined(__wasm_relaxed_simd__)
  return __builtin_wasm_relaxed_madd_f32x4(x, b, c);
#else
  return c + x * b;
#endif
}

template <int MR, int Lane>
inline void kernel_step(vf (&c)[MR][2], const vf4 (&a)[MR], const float* b) {
  const vf b0 = load(b);
  const vf b1 = load(b + W);
  for (int r = 0; r < MR; ++r) {
    const vf x = broadcast_lane<Lane>(a[r]);
    c[r][0] = madd(x, b0, c[r][0]);
    c[r][1] = madd(x, b1, c[r][1]);
  }
}

// C[MR x P] (+)= A[MR x K] · panel[K x P]; only the first `cols` columns of C are written.
template <int MR, bool Accumulate>
void kernel(std::int64_t K, const float* A, std::int64_t lda, const float* panel, float* C,
            std::int64_t ldc, std::int64_t cols) {
  vf c[MR][2] = {};
  std::int64_t k = 0;
  if (W == 4) {
    // Four steps of K per pass: each row of A is read as one 4-vector whose lanes are broadcast
    // by shuffles (measured faster in V8 than four scalar loads and splats).
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
  }
  // Wider vectors broadcast straight from memory (vbroadcastss): no shuffle-port pressure.
  for (; k < K; ++k) {
    const vf b0 = load(panel + k * P);
    const vf b1 = load(panel + k * P + W);
    for (int r = 0; r < MR; ++r) {
      const vf x = splat(A[r * lda + k]);
      c[r][0] = madd(x, b0, c[r][0]);
      c[r][1] = madd(x, b1, c[r][1]);
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

// Which extent of a product a causal row group may cut short: none, its columns (the keys of
// Q·Kᵀ) or its depth (the keys of P·V).
enum class Cut { None, Cols, Depth };

// Rows [i, i + g) of a causal product only need keys < i + g + diag (the last row's diagonal).
inline std::int64_t group_keys(std::int64_t i, std::int64_t g, std::int64_t diag, std::int64_t n) {
  return std::clamp<std::int64_t>(i + g + diag, 0, n);
}

// Rows [i, i + kRows) of C (+)= A · B; see gemm.
template <bool Accumulate, Cut cut>
void gemm_rows(std::int64_t i, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda,
               const float* packed, std::int64_t panel_stride, float* C, std::int64_t ldc,
               std::int64_t diag) {
  if (cut == Cut::Cols) N = group_keys(i, kRows, diag, N);
  if (cut == Cut::Depth) K = group_keys(i, kRows, diag, K);
  for (std::int64_t j = 0; j < panels(N); ++j) {
    kernel<kRows, Accumulate>(K, A + i * lda, lda, packed + j * panel_stride, C + i * ldc + j * P,
                              ldc, std::min(P, N - j * P));
  }
}

// Scratch kept between calls, so the hot path does not allocate once it has warmed up;
// release_scratch() gives back the buffers a large call grew.
float* scratch(std::vector<float>& buffer, std::int64_t n) {
  if (static_cast<std::int64_t>(buffer.size()) < n) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}
thread_local std::vector<float> tl_keys;
thread_local std::vector<float> tl_values;
thread_local std::vector<float> tl_scores;
thread_local std::vector<float> tl_accumulator;
thread_local std::vector<float> tl_stats;
thread_local std::vector<float> tl_tail;
thread_local std::vector<float> tl_lhs;      // packed_matmul's copy of alpha · op(a)
thread_local std::vector<float> tl_shifted;  // a score row minus its maximum (row entropy)

// C[M x N] (+)= A[M x K] · B, with B packed as panels(N) panels `panel_stride` floats apart
// (K <= the packed row count), kRows rows at a time. With a cut, each row group stops at its
// diagonal (see group_keys): columns past it are not written (Cols), or keys past it are not
// read (Depth; A must be zero between a row's own diagonal and its group's).
template <bool Accumulate, Cut cut = Cut::None>
[[gnu::noinline]] void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A,
                            std::int64_t lda, const float* packed, std::int64_t panel_stride,
                            float* C, std::int64_t ldc, std::int64_t diag = 0) {
  std::int64_t i = 0;
  for (; i + kRows <= M; i += kRows)
    gemm_rows<Accumulate, cut>(i, N, K, A, lda, packed, panel_stride, C, ldc, diag);
  const std::int64_t rows = M - i;
  if (rows == 0) return;
  // The last rows (fewer than kRows) use the same tile, so that there is one kernel per product
  // instead of one per remainder. Without accumulation the tile moves up over rows already
  // written, which get the same bits again (a cut only adds columns past their diagonal, or
  // products with their zeros); with it, or when M < kRows, through a zero-padded copy.
  if (!Accumulate && M >= kRows) {
    gemm_rows<Accumulate, cut>(M - kRows, N, K, A, lda, packed, panel_stride, C, ldc, diag);
    return;
  }
  float* a = scratch(tl_tail, kRows * (K + N));
  float* c = a + kRows * K;
  std::fill(a, a + kRows * K, 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::copy(A + (i + r) * lda, A + (i + r) * lda + K, a + r * K);
    if (Accumulate) std::copy(C + (i + r) * ldc, C + (i + r) * ldc + N, c + r * N);
  }
  const std::int64_t tail_diag = i + diag - (kRows - rows);  // the group ends at its last row
  gemm_rows<Accumulate, cut>(0, N, K, a, K, packed, panel_stride, c, N, tail_diag);
  const std::int64_t written = cut == Cut::Cols ? group_keys(0, kRows, tail_diag, N) : N;
  for (std::int64_t r = 0; r < rows; ++r)
    std::copy(c + r * N, c + r * N + written, C + (i + r) * ldc);
}

// Kᵀ as panels of keys: out[p][d][c] = k[(p·P + c)·ldk + d], zero past S. Panel stride D·P.
// Four keys by four dimensions at a time: four loads, a 4 x 4 transpose in registers and four
// contiguous stores, instead of scattered scalar stores.
[[gnu::noinline]] void pack_keys(const float* k, std::int64_t ldk, std::int64_t S, std::int64_t D,
                                 float* out) {
  const std::int64_t D4 = D / 4 * 4;
  for (std::int64_t p = 0; p < panels(S); ++p) {
    float* panel = out + p * D * P;
    for (std::int64_t c = 0; c < P; c += 4) {
      const float* rows[4];
      int valid = 0;
      for (int r = 0; r < 4; ++r) {
        const std::int64_t j = p * P + c + r;
        rows[r] = j < S ? k + j * ldk : nullptr;
        valid += j < S;
      }
      if (valid == 4) {
        for (std::int64_t d = 0; d < D4; d += 4) {
          vf4 a, b, e, f;
          std::memcpy(&a, rows[0] + d, sizeof a);
          std::memcpy(&b, rows[1] + d, sizeof b);
          std::memcpy(&e, rows[2] + d, sizeof e);
          std::memcpy(&f, rows[3] + d, sizeof f);
          const vf4 ab_lo = __builtin_shufflevector(a, b, 0, 4, 1, 5);
          const vf4 ab_hi = __builtin_shufflevector(a, b, 2, 6, 3, 7);
          const vf4 ef_lo = __builtin_shufflevector(e, f, 0, 4, 1, 5);
          const vf4 ef_hi = __builtin_shufflevector(e, f, 2, 6, 3, 7);
          const vf4 t0 = __builtin_shufflevector(ab_lo, ef_lo, 0, 1, 4, 5);
          const vf4 t1 = __builtin_shufflevector(ab_lo, ef_lo, 2, 3, 6, 7);
          const vf4 t2 = __builtin_shufflevector(ab_hi, ef_hi, 0, 1, 4, 5);
          const vf4 t3 = __builtin_shufflevector(ab_hi, ef_hi, 2, 3, 6, 7);
          std::memcpy(panel + d * P + c, &t0, sizeof t0);
          std::memcpy(panel + (d + 1) * P + c, &t1, sizeof t1);
          std::memcpy(panel + (d + 2) * P + c, &t2, sizeof t2);
          std::memcpy(panel + (d + 3) * P + c, &t3, sizeof t3);
        }
      }
      for (std::int64_t d = valid == 4 ? D4 : 0; d < D; ++d) {
        for (int r = 0; r < 4; ++r)
          panel[d * P + c + r] = rows[r] ? rows[r][d] : 0.0f;
      }
    }
  }
}

// V as panels of columns: out[p][j][c] = v[j·ldv + p·P + c], zero past Dv. Panel stride S·P.
[[gnu::noinline]] void pack_values(const float* v, std::int64_t ldv, std::int64_t S,
                                   std::int64_t Dv, float* out) {
  for (std::int64_t p = 0; p < panels(Dv); ++p) {
    float* panel = out + p * S * P;
    const std::int64_t cols = std::min(P, Dv - p * P);
    for (std::int64_t j = 0; j < S; ++j) {
      const float* row = v + j * ldv + p * P;
      float* dst = panel + j * P;
      if (cols == P) {
        store(dst, load(row));
        store(dst + W, load(row + W));
      } else {
        for (std::int64_t c = 0; c < P; ++c)
          dst[c] = c < cols ? row[c] : 0.0f;
      }
    }
  }
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
  scale_into(row, row, n, factor);
}

// Applies the score rule to row[0, visible) (query i, keys j0 .. j0 + visible − 1) with the
// scale left to exp() when it folds. Returns the maximum over row[0, visible) (−inf when
// nothing is visible).
float mask_row(float* row, std::int64_t visible, const SliceProblem& p, std::int64_t i,
               std::int64_t j0) {
  apply_score_rule(p.rule, row, i, j0, visible, !p.rule.scale_foldable());
  float max = kNegInf;
  std::int64_t c = 0;
  if (visible >= W) {
    vf m = load(row);
    for (c = W; c + W <= visible; c += W)
      m = vmax(m, load(row + c));
    max = hmax(m);
  }
  for (; c < visible; ++c)
    max = std::max(max, row[c]);
  return max;
}

// row[c] = exp((row[c] − max) · factor) for c < n; returns the sum. With ExactZero, entries of
// −inf (masked) give exactly 0; without, every entry must be finite.
template <bool ExactZero>
float exp_and_sum(float* row, std::int64_t n, float max, float factor) {
  const float f = factor * kLog2e;  // exp(x) = 2^(x · log2 e)
  const vf scale = splat(f);
  const vf m = splat(max);
  std::int64_t c = 0;
  // One vector per pass and the sum in a second pass: the exponential's dozen constants then
  // stay in registers (V8 spills a running sum, which makes a store-to-load chain).
  for (; c + W <= n; c += W)
    store(row + c, exp2_nonpositive<ExactZero>((load(row + c) - m) * scale));
  if (c < n) {  // the last n − c < W entries, through a padded vector whose padding gives 0
    float tail[W];
    for (std::int64_t t = 0; t < W; ++t)
      tail[t] = c + t < n ? row[c + t] : kNegInf;
    store(tail, exp2_nonpositive<true>((load(tail) - m) * scale));
    for (std::int64_t t = 0; c + t < n; ++t)
      row[c + t] = tail[t];
  }
  vf s0{}, s1{};
  for (c = 0; c + 2 * W <= n; c += 2 * W) {
    s0 += load(row + c);
    s1 += load(row + c + W);
  }
  float sum = hsum(s0 + s1);
  for (; c < n; ++c)
    sum += row[c];
  return sum;
}

float exp_and_sum(float* row, std::int64_t n, float max, float factor, bool exact_zero) {
  return exact_zero ? exp_and_sum<true>(row, n, max, factor)
                    : exp_and_sum<false>(row, n, max, factor);
}

// The keys and values of a slice, packed once into panels: O(S·D) memory, like the inputs.
// Only keys some query can see are packed (causal slices stop at the last query's diagonal).
struct PackedSlice {
  std::int64_t key_end;
  const float* keys;    // panels of Kᵀ, stride D·P
  const float* values;  // panels of V, stride key_end·P
};

PackedSlice pack_slice(const SliceProblem& p) {
  const std::int64_t key_end = p.rule.key_end(0, p.L, p.S);
  float* keys = scratch(tl_keys, panels(key_end) * p.D * P);
  float* values = scratch(tl_values, panels(p.Dv) * key_end * P);
  pack_keys(p.k, p.ldk, key_end, p.D, keys);
  pack_values(p.v, p.ldv, key_end, p.Dv, values);
  return {key_end, keys, values};
}

// sum of e[c] · x[c] for c < n (x >= -125 ln 2 and finite, so a masked key's e = 0 adds 0).
float dot(const float* e, const float* x, std::int64_t n) {
  vf s0{}, s1{};
  std::int64_t c = 0;
  for (; c + 2 * W <= n; c += 2 * W) {
    s0 += load(e + c) * load(x + c);
    s1 += load(e + c + W) * load(x + c + W);
  }
  float sum = hsum(s0 + s1);
  for (; c < n; ++c)
    sum += e[c] * x[c];
  return sum;
}

// Softmax of one score row over its visible keys row[0, visible), the rest of the row up to
// `zero_end` set to 0 (so that a causal P·V group may read it). Returns 1 / sum, or 0 when every
// key is masked (the row is then all zeros: zero weights and output, never NaN).
//
// With `entropy` (and `shifted`, room for `visible` floats) it also stores the entropy of the
// row's weights w = e / Z, e = exp(f d), d = logit - max <= 0, Z = sum e (f: the scale when the
// softmax folds it in, else 1): -sum w ln w = ln Z - sum(e f d) / Z. Both terms are >= 0, so
// nothing cancels; the cost is a copy and a dot product per row instead of a logarithm per
// weight. Error, with k = n / 2W + 2W + 3 (the depth of a float sum of n terms in 2W lanes, its
// scalar tail and the lanes' reduction) and gamma(k) = k u / (1 - k u), u = 2^-24: Z's sum moves
// ln Z by gamma(k); the dot product's terms (one sign) and the division by Z move sum(e f d) / Z
// by 2 gamma(k + 1) of itself (<= H); the exponential's 4u relative error, and f d rounded
// differently from the exponential's argument (3u relative), add 4u + 3u H; the stored weights,
// e · (1/Z) rounded twice, have an entropy 2u (1 + H) away; the result's rounding adds u H. In
// all, within gamma(k + 1) (1 + 2 H) + 6u + 6u H of the stored weights' entropy H.
float softmax_row(float* row, std::int64_t visible, std::int64_t zero_end, const SliceProblem& p,
                  std::int64_t i, float factor, float* shifted, float* entropy) {
  const float max = mask_row(row, visible, p, i, 0);
  std::fill(row + visible, row + std::max(visible, zero_end), 0.0f);
  if (max == kNegInf) {
    std::fill(row, row + visible, 0.0f);
    if (entropy) *entropy = 0.0f;
    return 0.0f;
  }
  if (entropy == nullptr)
    return 1.0f / exp_and_sum(row, visible, max, factor, p.rule.masks_inside());
  // x = max(f d, -125 ln 2): ln e as the exponential makes it (it clamps f d log2 e at -125),
  // and finite for a masked key (d = -inf) or a tiny f.
  const vf m = splat(max);
  const vf f = splat(factor);
  const float lowest = -125.0f * 0.693147181f;
  const vf lo = splat(lowest);
  std::int64_t c = 0;
  for (; c + W <= visible; c += W)
    store(shifted + c, vmax((load(row + c) - m) * f, lo));
  for (; c < visible; ++c)
    shifted[c] = std::max((row[c] - max) * factor, lowest);
  const float sum = exp_and_sum(row, visible, max, factor, p.rule.masks_inside());
  const double weighted = static_cast<double>(dot(row, shifted, visible));
  *entropy = static_cast<float>(detmath::log(static_cast<double>(sum)) - weighted / sum);
  return 1.0f / sum;
}

}  // namespace

void release_scratch() {
  constexpr std::size_t kKeep = 1 << 17;  // floats (512 KiB): [1, 8, 1024, 64] stays warm
  for (auto* buffer : {&tl_keys, &tl_values, &tl_scores, &tl_accumulator, &tl_stats, &tl_tail,
                       &tl_lhs, &tl_shifted}) {
    if (buffer->capacity() > kKeep) std::vector<float>().swap(*buffer);
  }
}

float finite_max_abs(const float* data, std::int64_t count) {
  // |x| read as an integer (the sign bit cleared) orders like |x| for finite x and infinity, and
  // NaN sorts above infinity (0x7f800000): one integer maximum per value gives both the largest
  // |x| and whether any value is not finite.
  const vi magnitude = vi{} + 0x7fffffff;
  const auto bits = [&](const float* p) { return reinterpret_cast<vi>(load(p)) & magnitude; };
  vi m0{}, m1{};
  std::int64_t i = 0;
  for (; i + 2 * W <= count; i += 2 * W) {
    m0 = imax(m0, bits(data + i));
    m1 = imax(m1, bits(data + i + W));
  }
  const vi m = imax(m0, m1);
  std::int32_t largest = 0;
  for (int l = 0; l < W; ++l)
    largest = std::max(largest, m[l]);
  for (; i < count; ++i) {
    std::int32_t b = 0;
    std::memcpy(&b, data + i, sizeof b);
    largest = std::max(largest, b & 0x7fffffff);
  }
  if (largest >= 0x7f800000) return std::numeric_limits<float>::quiet_NaN();
  float max_abs = 0.0f;
  std::memcpy(&max_abs, &largest, sizeof max_abs);
  return max_abs;
}

void matmul(const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float* C,
            std::int64_t ldc, std::int64_t M, std::int64_t K, std::int64_t N) {
  // B is (K, N): packed as panels of columns, like the values of a slice with K keys.
  float* packed = scratch(tl_values, panels(N) * K * P);
  pack_values(B, ldb, K, N, packed);
  gemm<false>(M, N, K, A, lda, packed, K * P, C, ldc);
}

void matmul_transposed(const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float* C,
                       std::int64_t ldc, std::int64_t M, std::int64_t K, std::int64_t N) {
  // B is (N, K): packed as panels of Bᵀ, like the keys of a slice with N keys.
  float* packed = scratch(tl_keys, panels(N) * K * P);
  pack_keys(B, ldb, N, K, packed);
  gemm<false>(M, N, K, A, lda, packed, K * P, C, ldc);
}

void mean_of_slices(const float* data, int slices, std::int64_t n, float* out) {
  if (slices < 1) {  // no slices: 0 / 0, as the plain loop gives, without reading data
    std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  const auto count = static_cast<float>(slices);
  constexpr std::int64_t kChunk = 4096;  // 16 KiB of the mean, added to in L1
  for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) {
    const std::int64_t m = std::min(kChunk, n - c0);
    float* __restrict mean = out + c0;
    const float* __restrict first = data + c0;
    for (std::int64_t c = 0; c < m; ++c)
      mean[c] = 0.0f + first[c];  // as the plain loop from 0: a -0 weight gives +0
    for (int h = 1; h < slices; ++h) {
      const float* __restrict w = data + h * n + c0;
      for (std::int64_t c = 0; c < m; ++c)
        mean[c] += w[c];
    }
    for (std::int64_t c = 0; c < m; ++c)
      mean[c] /= count;
  }
}

namespace {

// C[R x N] (+)= A[R x K] · B for a few rows (a cached forward's new tokens), B (K, N) read once
// in place: packing it would cost as much as the product. B is streamed row by row, four rows at
// a time, into C's rows (which stay in L1: 4N floats at most): every cache line of B is read whole
// and in order, which the hardware prefetches. Strips of columns summed over every k in registers
// walked B down its columns instead, one partial cache line per row: 3x slower on GPT-2 small's
// matrices in V8 (bench/typing.mjs; docs/performance.md). Each C element still sums its k terms
// in order 0..K-1, as the strip kernel did, so the results are the same bits.
// Columns [n0, n1) of C only (n0 a multiple of W; n1 one too, or N): a compute thread's share.
// A column is summed the same way whichever share it is in.
template <int R>
void few_rows_kn(float* c, const float* a, const float* b, std::int64_t N, std::int64_t K,
                 bool accumulate, std::int64_t n0, std::int64_t n1) {
  if (!accumulate) {
    for (int r = 0; r < R; ++r)
      std::fill(c + r * N + n0, c + r * N + n1, 0.0f);
  }
  const std::int64_t NW = std::min(n1, N / W * W);
  std::int64_t k = 0;
  for (; k + 4 <= K; k += 4) {
    const float* b0 = b + k * N;
    const float* b1 = b0 + N;
    const float* b2 = b1 + N;
    const float* b3 = b2 + N;
    vf x[R][4];
    for (int r = 0; r < R; ++r) {
      for (int j = 0; j < 4; ++j)
        x[r][j] = splat(a[r * K + k + j]);
    }
    for (std::int64_t n = n0; n < NW; n += W) {
      const vf v0 = load(b0 + n), v1 = load(b1 + n), v2 = load(b2 + n), v3 = load(b3 + n);
      for (int r = 0; r < R; ++r) {
        vf acc = load(c + r * N + n);
        acc = madd(x[r][0], v0, acc);
        acc = madd(x[r][1], v1, acc);
        acc = madd(x[r][2], v2, acc);
        acc = madd(x[r][3], v3, acc);
        store(c + r * N + n, acc);
      }
    }
    for (std::int64_t n = std::max(n0, NW); n < n1; ++n) {
      for (int r = 0; r < R; ++r) {
        float sum = c[r * N + n];
        for (int j = 0; j < 4; ++j)
          sum += a[r * K + k + j] * b[(k + j) * N + n];
        c[r * N + n] = sum;
      }
    }
  }
  for (; k < K; ++k) {
    const float* bk = b + k * N;
    for (int r = 0; r < R; ++r) {
      const vf x = splat(a[r * K + k]);
      for (std::int64_t n = n0; n < NW; n += W)
        store(c + r * N + n, madd(x, load(bk + n), load(c + r * N + n)));
      for (std::int64_t n = std::max(n0, NW); n < n1; ++n)
        c[r * N + n] += a[r * K + k] * bk[n];
    }
  }
}

// C[R x N] (+)= A[R x K] · Bᵀ for a few rows, B stored (N, K) (the tied unembedding): dot
// products of A's rows with B's, four of B's rows at a time, B read once.
// Outputs [n0, n1) only (n0 a multiple of 4; n1 one too, or N).
template <int R>
void few_rows_nk(float* c, const float* a, const float* b, std::int64_t N, std::int64_t K,
                 bool accumulate, std::int64_t n0, std::int64_t n1) {
  const std::int64_t KW = K / W * W;
  std::int64_t n = n0;
  for (; n + 4 <= n1; n += 4) {
    vf acc[R][4] = {};
    for (std::int64_t k = 0; k < KW; k += W) {
      const vf b0 = load(b + n * K + k), b1 = load(b + (n + 1) * K + k),
               b2 = load(b + (n + 2) * K + k), b3 = load(b + (n + 3) * K + k);
      for (int r = 0; r < R; ++r) {
        const vf x = load(a + r * K + k);
        acc[r][0] = madd(x, b0, acc[r][0]);
        acc[r][1] = madd(x, b1, acc[r][1]);
        acc[r][2] = madd(x, b2, acc[r][2]);
        acc[r][3] = madd(x, b3, acc[r][3]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int j = 0; j < 4; ++j) {
        float sum = hsum(acc[r][j]);
        for (std::int64_t k = KW; k < K; ++k)
          sum += a[r * K + k] * b[(n + j) * K + k];
        c[r * N + n + j] = accumulate ? c[r * N + n + j] + sum : sum;
      }
    }
  }
  for (; n < n1; ++n) {
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < K; ++k)
        sum += a[r * K + k] * b[n * K + k];
      c[r * N + n] = accumulate ? c[r * N + n] + sum : sum;
    }
  }
}

// Rows of A at most this many take the few-rows path.
constexpr std::int64_t kFewRows = 4;

// Products of at least this many multiply-adds are split over the compute threads (parallel.hpp):
// 1 MB of a weight matrix read in place for one row, about 60 microseconds here, against the
// tens of microseconds of waking a helper.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 18;
// Columns of a thread's share are a multiple of this: whole cache lines of C, and of B's rows.
constexpr std::int64_t kShareUnit = 64;

// The compute threads' shares of a product of M x N x K: none past one for a small one.
inline std::int64_t shares(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t unit) {
  if (M * N * K < kParallelWork) return 1;
  return (N + unit - 1) / unit;
}

void few_rows(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
              std::int64_t K, bool transpose_b, bool accumulate) {
  const auto run = [&](auto rows) {
    constexpr int R = decltype(rows)::value;
    // Each thread its columns of C (rows of a transposed B): every output is summed as on one
    // thread, so the same bits.
    parallel_parts(shares(R, N, K, kShareUnit), [&](int part, int parts) {
      std::int64_t n0 = 0, n1 = 0;
      part_range(N, kShareUnit, part, parts, n0, n1);
      if (n0 == n1) return;
      if (transpose_b) {
        few_rows_nk<R>(c, a, b, N, K, accumulate, n0, n1);
      } else {
        few_rows_kn<R>(c, a, b, N, K, accumulate, n0, n1);
      }
    });
  };
  switch (M) {
    case 1:
      run(std::integral_constant<int, 1>{});
      break;
    case 2:
      run(std::integral_constant<int, 2>{});
      break;
    case 3:
      run(std::integral_constant<int, 3>{});
      break;
    default:
      run(std::integral_constant<int, 4>{});
      break;
  }
}

// Panels of a (K, N) operand packed together, row by row: each row of B is read as
// kPanelGroup · P contiguous floats (two cache lines in WebAssembly), not one P-float piece per
// panel, half a cache line. Four against one: 391 against 463 ms for GPT-2 small's 32-token
// forward (two or eight: 399, 390; medians of 11 in one Node 22 process, docs/performance.md).
constexpr std::int64_t kPanelGroup = 4;

// out[p][k][c] = v[k·ldv + p·P + c] for the panels(Dv) <= kPanelGroup panels of Dv columns
// (zero past Dv), rows outer: each row of v is read once, in order.
void pack_value_rows(const float* v, std::int64_t ldv, std::int64_t K, std::int64_t Dv,
                     float* out) {
  const std::int64_t n = panels(Dv);
  for (std::int64_t k = 0; k < K; ++k) {
    const float* row = v + k * ldv;
    for (std::int64_t p = 0; p < n; ++p) {
      float* dst = out + (p * K + k) * P;
      const std::int64_t cols = std::min(P, Dv - p * P);
      if (cols == P) {
        store(dst, load(row + p * P));
        store(dst + W, load(row + p * P + W));
      } else {
        for (std::int64_t c = 0; c < P; ++c)
          dst[c] = c < cols ? row[p * P + c] : 0.0f;
      }
    }
  }
}

// Rows of A per block of panel_matmul: each group of panels, packed once per block, serves this
// many rows while it is in cache. In WebAssembly 96: a sentence of up to 96 tokens reads each
// weight matrix once per product.
constexpr std::int64_t kPanelBlockRows = 16 * kRows;
// Floats of B over which packed_matmul goes panel by panel whatever the rows: 4 MB, eight times
// the L2 cache of one core here (512 KB), so that sweeping a packed copy of it once per row group
// would read it from memory each time.
constexpr std::int64_t kLargeOperand = std::int64_t{1} << 20;

// Whether a product of M rows by a (K, N) operand goes panel by panel (panel_matmul) rather than
// sweeping a packed copy of the whole operand once per row group (gemm): up to a block of rows, or
// an operand larger than the caches. More rows by small matrices (the training page's 2 048 × 128
// products) keep the sweep, which was 7 % faster there (docs/performance.md).
inline bool by_panels(std::int64_t M, std::int64_t N, std::int64_t K) {
  return M <= kPanelBlockRows || K * N > kLargeOperand;
}

// A tile of `rows` (fewer than kRows) rows. Each row's outputs are the same operations in the
// same order whatever the tile's height, so the same bits as in a full tile, for less work: a
// 32-token sentence's last 2 rows went through a zero-padded tile of 6 (docs/performance.md,
// "Weights packed once").
template <bool Accumulate, int MR = kRows - 1>
void tail_kernel(std::int64_t rows, std::int64_t K, const float* A, std::int64_t lda,
                 const float* panel, float* C, std::int64_t ldc, std::int64_t cols) {
  if constexpr (MR >= 1) {
    if (rows == MR) {
      kernel<MR, Accumulate>(K, A, lda, panel, C, ldc, cols);
    } else {
      tail_kernel<Accumulate, MR - 1>(rows, K, A, lda, panel, C, ldc, cols);
    }
  }
}

// C[M x N] (+)= A[M x K] · op(B), A row-major with rows K apart, op(B) (K, N): B stored (K, N), or
// (N, K) when transpose_b (the tied unembedding). Panel by panel: P columns of op(B) are packed
// into a scratch (kPanelGroup panels at a time; transposed B one panel, packed by pack_keys) and
// multiplied by every row group of a block of A before the next panel. Packing all of B first and
// then sweeping it once per row group read a weight matrix from memory ceil(M / kRows) times per
// product (six times for a 32-token sentence) and wrote and read a packed copy of it as large as B
// (154 MB for GPT-2 small's unembedding): bench/typing.mjs's full forward, docs/performance.md.
// Each tile of C is still one kernel() call summing k = 0 .. K-1 in order, so the results are the
// same bits.
// With `prepacked` (b packed whole by pack_panels), nothing is packed: panel j is read from
// prepacked + j · K · P.
// Panels [j0, j1) only (j0 a multiple of the packing group): a compute thread's share.
template <bool Accumulate>
void panel_range(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
                 std::int64_t K, bool transpose_b, const float* prepacked, std::int64_t j0,
                 std::int64_t j1) {
  const std::int64_t group = transpose_b ? 1 : kPanelGroup;
  float* packed = prepacked != nullptr ? nullptr : scratch(tl_values, group * K * P);
  for (std::int64_t m0 = 0; m0 < M; m0 += kPanelBlockRows) {
    const std::int64_t rows = std::min(kPanelBlockRows, M - m0);
    // Tiles of kRows rows, then the last rows (fewer) in a shorter tile. A short tile's
    // accumulators are too few to hide the multiply-add's latency (two rows: 4 chains, 2/3 of a
    // full tile's time for 1/3 of its work), so a remainder of up to half a tile shares the last
    // full tile's rows: two tiles of about equal height (6 + 2 rows as 4 + 4).
    const std::int64_t full = rows / kRows * kRows;
    const std::int64_t tail = rows - full;
    const bool share = tail > 0 && tail <= kRows / 2 && full >= kRows;
    const std::int64_t whole = share ? full - kRows : full;
    const std::int64_t last[2] = {share ? (kRows + tail + 1) / 2 : tail,
                                  share ? (kRows + tail) / 2 : 0};
    const float* A = a + m0 * K;
    float* C = c + m0 * N;
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t cols = std::min(P, N - j * P);
      const float* panel =
          prepacked != nullptr ? prepacked + j * K * P : packed + (j % group) * K * P;
      if (prepacked == nullptr && transpose_b) {
        pack_keys(b + j * P * K, K, cols, K, packed);
      } else if (prepacked == nullptr && j % group == 0) {
        pack_value_rows(b + j * P, N, K, std::min(group * P, N - j * P), packed);
      }
      for (std::int64_t i = 0; i < whole; i += kRows)
        kernel<kRows, Accumulate>(K, A + i * K, K, panel, C + i * N + j * P, N, cols);
      for (std::int64_t i = whole, t = 0; t < 2; i += last[t++]) {
        if (last[t] > 0)
          tail_kernel<Accumulate>(last[t], K, A + i * K, K, panel, C + i * N + j * P, N, cols);
      }
    }
  }
}

// panel_range over every panel, the panels shared out among the compute threads in runs of whole
// packing groups (each thread packs into its own scratch). Each tile of C is still one kernel()
// call, so the same bits as on one thread.
template <bool Accumulate>
void panel_matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
                  std::int64_t K, bool transpose_b, const float* prepacked = nullptr) {
  const std::int64_t unit = transpose_b ? 1 : kPanelGroup;  // in panels
  parallel_parts(shares(M, N, K, unit * P), [&](int part, int parts) {
    std::int64_t j0 = 0, j1 = 0;
    part_range(panels(N), unit, part, parts, j0, j1);
    if (j0 < j1) panel_range<Accumulate>(c, a, b, M, N, K, transpose_b, prepacked, j0, j1);
  });
}

}  // namespace

void packed_matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
                   std::int64_t K, bool transpose_a, bool transpose_b, bool accumulate,
                   float alpha) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate) std::fill(c, c + M * N, 0.0f);
    return;
  }
  if (M <= kFewRows && !transpose_a && alpha == 1.0f) {
    few_rows(c, a, b, M, N, K, transpose_b, accumulate);
    return;
  }
  // op(a) is (M, K). The micro-kernel reads rows of it: a transposed a, or one scaled by alpha,
  // is first copied as alpha · op(a), O(M·K) work next to the product's O(M·N·K).
  const float* lhs = a;
  if (transpose_a || alpha != 1.0f) {
    float* copy = scratch(tl_lhs, M * K);
    if (transpose_a) {
      // a is (K, M): read its rows in order, write columns of the copy.
      for (std::int64_t k = 0; k < K; ++k) {
        for (std::int64_t m = 0; m < M; ++m)
          copy[m * K + k] = alpha * a[k * M + m];
      }
    } else {
      for (std::int64_t i = 0; i < M * K; ++i)
        copy[i] = alpha * a[i];
    }
    lhs = copy;
  }
  // Panel by panel, B read from memory once per block of rows (panel_matmul); otherwise
  // (training: 2 048 rows by matrices of 128 x 512) B is packed once, stays in cache, and each row
  // group sweeps it.
  if (by_panels(M, N, K)) {
    if (accumulate) {
      panel_matmul<true>(c, lhs, b, M, N, K, transpose_b);
    } else {
      panel_matmul<false>(c, lhs, b, M, N, K, transpose_b);
    }
    return;
  }
  // op(b) is (K, N) as panels of columns: b (K, N) packs like a slice's values, b stored (N, K)
  // like its keys (N keys of K dimensions).
  float* packed = scratch(tl_values, panels(N) * K * P);
  if (transpose_b) {
    pack_keys(b, K, N, K, packed);
  } else {
    pack_values(b, N, K, N, packed);
  }
  if (accumulate) {
    gemm<true>(M, N, K, lhs, K, packed, K * P, c, N);
  } else {
    gemm<false>(M, N, K, lhs, K, packed, K * P, c, N);
  }
}

std::int64_t panel_floats(std::int64_t K, std::int64_t N) {
  return panels(N) * K * P;
}

void pack_panels(const float* b, std::int64_t K, std::int64_t N, float* out) {
  pack_values(b, N, K, N, out);
}

bool packs_operand(std::int64_t M) {
  return M > kFewRows;
}

void panels_matmul(float* c, const float* a, const float* panels, std::int64_t M, std::int64_t N,
                   std::int64_t K, bool accumulate) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate) std::fill(c, c + M * N, 0.0f);
    return;
  }
  // packed_matmul's choice of schedule, with its packing done already.
  if (by_panels(M, N, K)) {
    if (accumulate) {
      panel_matmul<true>(c, a, nullptr, M, N, K, false, panels);
    } else {
      panel_matmul<false>(c, a, nullptr, M, N, K, false, panels);
    }
  } else if (accumulate) {
    gemm<true>(M, N, K, a, K, panels, K * P, c, N);
  } else {
    gemm<false>(M, N, K, a, K, panels, K * P, c, N);
  }
}

void attend_blocked(const SliceProblem& p) {
  const std::int64_t L = p.L, S = p.S, D = p.D, Dv = p.Dv;
  const ScoreRule& rule = p.rule;
  float* scores = scratch(tl_scores, kBlockRows * S);
  float* inv_sum = scratch(tl_stats, kBlockRows);
  float* shifted = p.entropy ? scratch(tl_shifted, S) : nullptr;
  const float factor = rule.scale_foldable() ? rule.scale : 1.0f;
  const auto [key_end, keys, values] = pack_slice(p);
  for (std::int64_t i0 = 0; i0 < L; i0 += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, L - i0);
    const std::int64_t kend = rule.key_end(i0, rows, S);
    float* out = p.out + i0 * p.ldo;
    const float* q = p.q + i0 * p.ldq;
    // Causal row groups stop at their diagonal in both products (keys < row + 1 + shift).
    const std::int64_t diag = i0 + rule.causal_shift;
    if (rule.causal) {
      gemm<false, Cut::Cols>(rows, kend, D, q, p.ldq, keys, D * P, scores, S, diag);
    } else {
      gemm<false>(rows, kend, D, q, p.ldq, keys, D * P, scores, S);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + r;
      float* row = scores + r * S;
      const std::int64_t visible = rule.causal_visible(i, 0, kend);
      inv_sum[r] = softmax_row(row, visible, std::min(kend, visible + kRows), p, i, factor, shifted,
                               p.entropy ? p.entropy + i : nullptr);
      // Weights are written while the row is still in cache; the product below uses the
      // unnormalised row, so the output is the same to the bit with or without weights.
      if (p.weights) {
        float* weights = p.weights + i * S;
        scale_into(weights, row, visible, inv_sum[r]);
        std::fill(weights + visible, weights + S, 0.0f);
      }
    }
    // The output rows are divided by the sum after the product: Dv values per row, not kend.
    if (rule.causal) {
      gemm<false, Cut::Depth>(rows, Dv, kend, scores, S, values, key_end * P, out, p.ldo, diag);
    } else {
      gemm<false>(rows, Dv, kend, scores, S, values, key_end * P, out, p.ldo);
    }
    for (std::int64_t r = 0; r < rows; ++r)
      scale_row(out + r * p.ldo, Dv, inv_sum[r]);
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
  const ScoreRule& rule = p.rule;
  const float factor = rule.scale_foldable() ? rule.scale : 1.0f;
  const auto [key_end, keys, values] = pack_slice(p);
  for (std::int64_t i0 = 0; i0 < L; i0 += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, L - i0);
    const std::int64_t kend = rule.key_end(i0, rows, p.S);
    const float* q = p.q + i0 * p.ldq;
    std::fill(acc, acc + rows * Dv, 0.0f);
    std::fill(row_max, row_max + rows, kNegInf);
    std::fill(row_sum, row_sum + rows, 0.0f);
    for (std::int64_t j0 = 0; j0 < kend; j0 += kTileCols) {
      const std::int64_t cols = std::min(kTileCols, kend - j0);
      const std::int64_t diag = i0 + rule.causal_shift - j0;
      // Tiles start at multiples of kTileCols, a multiple of the panel width P.
      const float* tile_keys = keys + (j0 / P) * D * P;
      if (rule.causal) {
        gemm<false, Cut::Cols>(rows, cols, D, q, p.ldq, tile_keys, D * P, scores, kTileCols, diag);
      } else {
        gemm<false>(rows, cols, D, q, p.ldq, tile_keys, D * P, scores, kTileCols);
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = i0 + r;
        float* row = scores + r * kTileCols;
        const std::int64_t visible = rule.causal_visible(i, j0, cols);
        const float tile_max = mask_row(row, visible, p, i, j0);
        std::fill(row + visible, row + std::min(cols, visible + kRows), 0.0f);
        const float new_max = std::max(row_max[r], tile_max);
        if (new_max == kNegInf) {
          std::fill(row, row + visible, 0.0f);  // nothing visible yet in this row
          continue;
        }
        // Online softmax: rescale what was accumulated under the old maximum.
        const float correction = row_max[r] == kNegInf
                                     ? 0.0f
                                     : exp2_nonpositive((row_max[r] - new_max) * factor * kLog2e);
        row_sum[r] = row_sum[r] * correction +
                     exp_and_sum(row, visible, new_max, factor, rule.masks_inside());
        if (correction != 1.0f) scale_row(acc + r * Dv, Dv, correction);
        row_max[r] = new_max;
      }
      const float* tile_values = values + j0 * P;
      if (rule.causal) {
        gemm<true, Cut::Depth>(rows, Dv, cols, scores, kTileCols, tile_values, key_end * P, acc, Dv,
                               diag);
      } else {
        gemm<true>(rows, Dv, cols, scores, kTileCols, tile_values, key_end * P, acc, Dv);
      }
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      float* out = p.out + (i0 + r) * p.ldo;
      const float inv = row_sum[r] > 0.0f ? 1.0f / row_sum[r] : 0.0f;
      for (std::int64_t e = 0; e < Dv; ++e)
        out[e] = acc[r * Dv + e] * inv;
    }
  }
}

}  // namespace attnlens::detail
