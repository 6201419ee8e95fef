// attnlens — scaled dot-product attention.
//
//   weights = softmax(q kᵀ · scale + mask),   output = weights v
//
// Semantics mirror PyTorch's torch.nn.functional.scaled_dot_product_attention:
//   q [..., L, E], k [..., S, E], v [..., S, Ev]  ->  output [..., L, Ev], weights [..., L, S]
// with ranks 2 ([L, E]), 3 ([B, L, E]) and 4 ([B, H, L, E]). All storage is row-major float32.
//
// Differences from PyTorch, on purpose:
//   - `causal` and an explicit mask may be combined: a key is attended only if both allow it.
//   - a query row whose keys are all masked gets all-zero weights and an all-zero output
//     (as FlashAttention does) instead of NaN.
//
// Overflow: finite inputs always give finite, right answers (within float32 rounding), on every
// path. The output is a weighted mean of value rows, so it always fits float32, even when
// scores (q kᵀ up to E · 3.4e38²), logits (times a scale up to 3.4e38) or running sums of
// weights times values would not. Before computing, each call bounds those intermediates from
// the largest |q|, |k|, |v| and mask values; when float32 could overflow anywhere, in any order
// of operations, the call is computed in float64 (a slower, exact-enough path) and rounded
// once. Results are the same rule's on attention(), attention_reference() and
// SelfAttention::forward(), natively and in WebAssembly. What cannot be represented is an
// error: NaN or infinity in an input (NON_FINITE).
#pragma once

#include <attnlens/status.hpp>
#include <attnlens/tensor.hpp>

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace attnlens {

// Default cap on the elements of any input or output tensor, and of the L x S score matrix of
// one (batch, head) slice: 2^26 floats = 256 MiB. Exceeding it is Error(TOO_LARGE).
inline constexpr std::int64_t kDefaultMaxElements = std::int64_t{1} << 26;

// What one call may cost, in multiply-adds: every score of every (batch, head) slice counts
// E + Ev multiply-adds (its dot product and its share of weights · v) plus kScoreWork for its
// softmax (exp, maximum and sum cost about as much as 24 to 36 multiply-adds in the kernels,
// measured). Causal calls count every score too. Exceeding max_work is Error(TOO_LARGE).
inline constexpr std::int64_t kScoreWork = 32;
// Default cap on that work: 2^36, about 4 s in WebAssembly on a 2-core server (0.055 ns per
// multiply-add measured), so a call cannot block for minutes unless asked to.
inline constexpr std::int64_t kDefaultMaxWork = std::int64_t{1} << 36;

// Where a causal mask's diagonal sits when L != S.
enum class CausalAlign {
  TopLeft,      // query i sees keys j <= i (PyTorch's is_causal, tril(ones(L, S)))
  BottomRight,  // query i sees keys j <= i + (S - L): the last query sees every key (KV cache)
};

struct AttentionOptions {
  // Multiplies q kᵀ before the mask and softmax. Default (unset): 1 / sqrt(E). Must be finite.
  std::optional<float> scale;
  // A soft cap c > 0 on the scaled scores: each becomes c · tanh(score · scale / c) before the
  // mask (Gemma 2's attn_logit_softcapping). Default (unset): none. Must be finite and > 0.
  std::optional<float> softcap;
  // Mask out future keys. Default: false (full attention).
  bool causal = false;
  // Diagonal alignment of the causal mask; only read when `causal` is true.
  CausalAlign causal_align = CausalAlign::TopLeft;
  // Optional boolean or additive mask; combined with `causal` when both are given.
  MaskView mask;
  // Also return the attention weights [..., L, S]. Default: false (output only).
  bool return_weights = false;
  // FlashAttention's schedule: key tiles with an online softmax, so no L x S matrix is ever
  // held (memory O(L·D) and no max_elements limit on L x S). Cannot return weights.
  // Default: false (query blocks against all visible keys, usually a little faster).
  bool streaming = false;
  // Size limit on each tensor involved; see kDefaultMaxElements.
  std::int64_t max_elements = kDefaultMaxElements;
  // Limit on the call's work, B · Hq · L · S · (E + Ev + kScoreWork); see kDefaultMaxWork.
  // It bounds streaming too, which has no L x S limit.
  std::int64_t max_work = kDefaultMaxWork;
};

struct AttentionResult {
  Tensor output;   // [..., L, Ev], same leading dimensions as q
  Tensor weights;  // [..., L, S] when return_weights, otherwise empty (no shape)
};

// Scaled dot-product attention.
//
// q: [L, E], [B, L, E] or [B, Hq, L, E]
// k: same rank as q; [S, E], [B, S, E] or [B, Hkv, S, E]
// v: same rank as q; [S, Ev], [B, S, Ev] or [B, Hkv, S, Ev]
// Batch dimensions must be equal. For rank 4, Hq must be a multiple of Hkv (grouped-query
// attention: query head h reads key/value head h / (Hq / Hkv)).
//
// Throws Error with SHAPE_MISMATCH (ranks or dimensions disagree), EMPTY_INPUT (a zero
// dimension), NON_FINITE (NaN/inf in q, k, v, scale, or NaN/+inf in an additive mask; never
// for finite inputs, see "Overflow" above), TOO_LARGE (a tensor over options.max_elements, or
// the work over options.max_work), BAD_ARGUMENT (null data, a limit below 1, or streaming with
// return_weights), OUT_OF_MEMORY (results that cannot be allocated).
//
// Thread-safe. Each thread keeps scratch buffers between calls (packed keys and values, a block
// of scores) so that repeated calls of moderate size allocate only their results; a buffer a
// call grew past 512 KiB is freed when that call returns.
AttentionResult attention(const ConstTensorView& q, const ConstTensorView& k,
                          const ConstTensorView& v, const AttentionOptions& options = {});

// The same contract computed the plain way — Eigen products for the scores and the output, a
// separate masked softmax — and slower. The fast kernels behind attention() are tested
// against it; use it when you want the obviously correct version.
AttentionResult attention_reference(const ConstTensorView& q, const ConstTensorView& k,
                                    const ConstTensorView& v, const AttentionOptions& options = {});

// ---------------------------------------------------------------------------------------------
// The stages, one function each, on a single (batch, head) slice. attention() and the traced
// multi-head forward pass are built from these; they are public so that every number a view
// draws comes from the same code. Matrices are row-major.

// scores[L, S] = q[L, E] · k[S, E]ᵀ
void attention_scores(const Eigen::Ref<const RowMatrixXf>& q,
                      const Eigen::Ref<const RowMatrixXf>& k, Eigen::Ref<RowMatrixXf> scores);

// Additive causal mask [L, S]: 0 where query i may attend key j, -infinity elsewhere.
RowMatrixXf causal_mask(std::int64_t L, std::int64_t S, CausalAlign align = CausalAlign::TopLeft);

// Row-wise softmax in place, max-subtracted so that logits of ±1e4 stay finite. A row whose
// entries are all -infinity becomes all zeros.
void softmax_rows(Eigen::Ref<RowMatrixXf> logits);

}  // namespace attnlens
