// Private: the fast attention kernels behind attnlens::attention() and the forward pass.
//
// One (batch, head) slice at a time:  q [L, D], k [S, D], v [S, Dv]  ->  out [L, Dv]
// (and weights [L, S] when asked), the scores turned into logits by the slice's score rule
// (score_rule.hpp). Two schedules, both tested against the plain reference path:
//   - blocked:   query blocks of about 64 rows against all visible keys. In causal blocks each
//                group of rows of the micro-kernel stops at its diagonal in Q·Kᵀ and in P·V, so
//                the masked upper triangle is never computed. Weights, when requested, are
//                written straight from the block while it is in cache.
//   - streaming: FlashAttention's schedule: query blocks against key tiles with an online
//                softmax. Never holds more than a block x tile of scores: memory O(L·D).
// The matrix products use one register-blocked micro-kernel written with GCC/Clang vector
// extensions, which compile to SSE/AVX/AVX-512 natively and to SIMD128 in WebAssembly, over
// keys and values packed once per slice into panels. The softmax's exp is a base-2 polynomial
// (about 2 ulp) with the scale folded in.
#pragma once

#include "core/score_rule.hpp"

#include <cstdint>

namespace attnlens::detail {

// One (batch, head) slice. Rows of q, k, v and out sit `ld*` floats apart, so that a head's
// column block of a [L, E] projection is a slice without a copy (ld = E).
struct SliceProblem {
  const float* q = nullptr;  // [L, D], rows ldq apart
  const float* k = nullptr;  // [S, D], rows ldk apart
  const float* v = nullptr;  // [S, Dv], rows ldv apart
  float* out = nullptr;      // [L, Dv], rows ldo apart
  float* weights = nullptr;  // [L, S] contiguous, or null
  float* entropy = nullptr;  // [L], or null: each row's entropy -sum w ln w of its weights (the
                             // blocked schedule from the softmax's own sums; the others from
                             // the weights, which they then need)
  std::int64_t L = 0, S = 0, D = 0, Dv = 0;
  std::int64_t ldq = 0, ldk = 0, ldv = 0, ldo = 0;
  ScoreRule rule;  // scale, causal, masks: see score_rule.hpp
};

// How a slice is computed.
enum class Schedule {
  Blocked,    // the fast kernels: query blocks against all visible keys
  Streaming,  // the fast kernels: key tiles with an online softmax; no weights
  Reference,  // Eigen products and a separate softmax, as attention_reference() promises
  Exact,      // float64 scores, logits, softmax and sums, rounded to float32 once at the end:
              // for inputs where float32 intermediates could overflow (see fits_float32)
};

// The magnitudes that decide whether float32 can hold every intermediate of a call.
struct InputBounds {
  std::int64_t D = 0;     // length of each dot product q · k
  std::int64_t S = 0;     // keys per query
  double q = 0, k = 0;    // largest |q| and |k|
  double v = 0;           // largest |v|
  double scale = 1;       // the score rule's scale
  double mask_above = 0;  // largest finite additive mask value, if positive (else 0)
  double mask_below = 0;  // largest magnitude of a negative finite additive mask value (else 0)
};

// True when no intermediate of the float32 schedules can overflow, whatever the order of
// operations: every score, logit, difference from a row maximum and partial sum of weights · v
// then stays finite, so their answer is right up to rounding. Otherwise attention takes
// Schedule::Exact, whose answer (a convex combination of value rows) always fits float32.
bool fits_float32(const InputBounds& b);

// Throws TOO_LARGE when `slices` slices of L queries and S keys (dot products of length D,
// values of width Dv) are more work than `limit` multiply-adds, as attention.hpp's max_work
// counts it: slices · L · S · (D + Dv + kScoreWork). Defined in attention.cpp.
void require_work(std::int64_t slices, std::int64_t L, std::int64_t S, std::int64_t D,
                  std::int64_t Dv, std::int64_t limit);

// The slice routine behind attention(), attention_reference() and SelfAttention::forward():
// softmax(rule(q kᵀ)) v for one slice by the given schedule. Defined in attention.cpp.
void attend_slice(const SliceProblem& p, Schedule schedule);

// Softmax(rule(q kᵀ)) v for one slice, query-blocked. Writes out (and weights).
void attend_blocked(const SliceProblem& p);

// The same result with an online softmax over key tiles; p.weights must be null.
void attend_streaming(const SliceProblem& p);

// C[M, N] = A[M, K] · B[K, N], row-major with row strides lda, ldb, ldc: the kernels' packed
// product (B packed into panels once), for the projections of the forward pass.
void matmul(const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float* C,
            std::int64_t ldc, std::int64_t M, std::int64_t K, std::int64_t N);

// C[M, N] = A[M, K] · B[N, K]ᵀ, the same way (B packed like a slice's keys): the raw scores of a
// slice, Q · Kᵀ, for the forward pass's trace.
void matmul_transposed(const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float* C,
                       std::int64_t ldc, std::int64_t M, std::int64_t K, std::int64_t N);

// out[c] = (0 + s_0[c] + s_1[c] + ... + s_{slices-1}[c]) / slices for c < n, where slice s_h
// starts at data + h · n: the mean of the heads' weights. Summed in that order, one element at
// a time (vectorised across elements, so the bits are the plain loop's), in chunks that stay in
// L1 so that each slice is read once. out must not overlap data. slices < 1 gives NaN (0 / 0).
void mean_of_slices(const float* data, int slices, std::int64_t n, float* out);

// The same packed product with matmul.hpp's contract (transposes, accumulate, alpha; all
// contiguous): what detail::matmul runs in WebAssembly, where Eigen's product is scalar.
void packed_matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
                   std::int64_t K, bool transpose_a, bool transpose_b, bool accumulate,
                   float alpha);

// A right-hand operand packed ahead of its products (a model's weight matrix, packed once
// instead of in every product): b (K, N) row-major as packed_matmul packs it, panels of
// columns, each K rows of the panel's width, zero past N. panel_floats(K, N) floats.
std::int64_t panel_floats(std::int64_t K, std::int64_t N);
void pack_panels(const float* b, std::int64_t K, std::int64_t N, float* out);
// Whether packed_matmul packs b (K, N) for a product with M rows of a (no transposes, alpha 1):
// false when it reads b in place (a few rows, a cached forward's new tokens).
bool packs_operand(std::int64_t M);
// packed_matmul(c, a, b, M, N, K, false, false, accumulate, 1) with b given as pack_panels
// made it, for packs_operand(M): the same kernel calls in the same order, so the same bits.
void panels_matmul(float* c, const float* a, const float* panels, std::int64_t M, std::int64_t N,
                   std::int64_t K, bool accumulate);

// Frees this thread's scratch buffers that a large call grew past 512 KiB each; smaller ones
// stay for the next call. Called at the end of every attention() call and forward pass.
void release_scratch();

}  // namespace attnlens::detail
