// Private: the fast attention kernels behind attnlens::attention().
//
// One (batch, head) slice at a time:  q [L, D], k [S, D], v [S, Dv]  ->  out [L, Dv]
// (and weights [L, S] when asked). Two schedules, both tested against the plain reference path:
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

#include <attnlens/attention.hpp>

#include <cstdint>

namespace attnlens::detail {

struct SliceProblem {
  const float* q = nullptr;  // [L, D] row-major
  const float* k = nullptr;  // [S, D]
  const float* v = nullptr;  // [S, Dv]
  float* out = nullptr;      // [L, Dv]
  float* weights = nullptr;  // [L, S] or null
  std::int64_t L = 0, S = 0, D = 0, Dv = 0;
  float scale = 1.0f;
  bool causal = false;
  std::int64_t causal_shift = 0;            // query i sees keys j <= i + causal_shift
  const std::uint8_t* bool_mask = nullptr;  // [L, S] slice or null; 0 = masked
  const float* add_mask = nullptr;          // [L, S] slice or null; added to scaled scores
};

// Softmax(q kᵀ · scale + masks) v for one slice, query-blocked. Writes out (and weights).
void attend_blocked(const SliceProblem& p);

// The same result with an online softmax over key tiles; p.weights must be null.
void attend_streaming(const SliceProblem& p);

// Frees this thread's scratch buffers that a large call grew past 512 KiB each; smaller ones
// stay for the next call. Called at the end of every attention() call.
void release_scratch();

}  // namespace attnlens::detail
