// Private: the score rule, the one description of how the raw scores of a (batch, head) slice
// become the logits that softmax reads. The fast kernels (kernels.cpp), the reference and
// float64 paths (attention.cpp) and the trace's `masked` stage (self_attention.cpp) all apply
// it through apply_score_rule(), so they cannot disagree on what is masked or how it is scaled.
//
// For query i and key j, with s[i, j] = q_i · k_j:
//   logit[i, j] = cap(s[i, j] · scale) + add_mask[i, j] + bias(i, j)   if key j is visible to i
//   logit[i, j] = -inf                                                  otherwise
// where cap(x) = x, or with a soft cap c > 0, c · tanh(x / c) (Gemma 2's attn_logit_softcapping,
// applied to the scaled scores before the mask, as modeling_gemma2.py's eager attention does).
// Key j is visible to query i unless causal hides it (j > i + causal_shift) or the boolean mask
// holds 0 at [i, j]. An additive mask entry of -inf hides the key as well.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace attnlens::detail {

struct ScoreRule {
  float scale = 1.0f;                       // multiplies s; finite
  bool causal = false;                      // hide keys j > i + causal_shift
  std::int64_t causal_shift = 0;            // 0 top-left, S - L bottom-right
  const std::uint8_t* bool_mask = nullptr;  // [L, S] slice, rows mask_stride apart; 0 = hidden
  const float* add_mask = nullptr;          // [L, S] slice, added to the scaled score
  std::int64_t mask_stride = 0;             // row stride of either mask, in elements
  // The place for a position bias: ALiBi's bias(i, j) = -alibi_slope · (i + causal_shift - j),
  // added after the additive mask; 0 adds nothing. No public option sets it yet: it is here so
  // that a bias (or a sliding window, which hides keys the same way causal does) joins this one
  // rule instead of becoming a second copy of it.
  float alibi_slope = 0.0f;
  float softcap = 0.0f;  // 0: none; c > 0: the scaled score x becomes c · tanh(x / c)

  // Keys j0 .. j0 + n - 1 of query i that causal leaves visible: the first returned count of
  // them (causal only ever hides a suffix of a row).
  std::int64_t causal_visible(std::int64_t i, std::int64_t j0, std::int64_t n) const {
    if (!causal) return n;
    return std::clamp<std::int64_t>(i + causal_shift + 1 - j0, 0, n);
  }
  // One past the last key that any of queries [i0, i0 + rows) may see, out of S.
  std::int64_t key_end(std::int64_t i0, std::int64_t rows, std::int64_t S) const {
    if (!causal) return S;
    return std::clamp<std::int64_t>(i0 + rows + causal_shift, 0, S);
  }
  // True when logits inside the causally visible keys may be -inf (a mask hides some).
  bool masks_inside() const { return bool_mask != nullptr || add_mask != nullptr; }
  // True when the logits are the scaled scores themselves, so that a softmax may apply the scale
  // inside exp(): softmax(s · scale) = exp((s - max s) · scale) / sum, for scale > 0.
  bool scale_foldable() const {
    return scale > 0.0f && add_mask == nullptr && alibi_slope == 0.0f && softcap == 0.0f;
  }
};

// row[0, n) becomes c · tanh(row / c) for a cap c > 0 (core/attention.cpp): out of line, so
// that the kernels that inline apply_score_rule() carry one call each, not the loop.
void soft_cap_row(float* row, std::int64_t n, float cap);
void soft_cap_row(double* row, std::int64_t n, float cap);

// Writes -inf where `rule` (causal) hides key j from query i into mask[L, S] (row-major), and
// leaves the visible entries as they are: causal_mask() and the trace's mask stage.
template <typename T>
void fill_causal_mask(const ScoreRule& rule, T* mask, std::int64_t L, std::int64_t S) {
  for (std::int64_t i = 0; i < L; ++i)
    std::fill(mask + i * S + rule.causal_visible(i, 0, S), mask + (i + 1) * S,
              -std::numeric_limits<T>::infinity());
}

// Turns row[0, n), the raw scores of query i against keys j0 .. j0 + n - 1, into logits in
// place, for the n keys that causal leaves visible (n <= causal_visible(i, j0, n_total); the
// caller handles the keys past them). With `apply_scale` false the scale is left out, for a
// softmax that folds it into exp() (only when rule.scale_foldable()).
template <typename T>
void apply_score_rule(const ScoreRule& rule, T* row, std::int64_t i, std::int64_t j0,
                      std::int64_t n, bool apply_scale) {
  if (apply_scale) {
    const T scale = static_cast<T>(rule.scale);
    for (std::int64_t c = 0; c < n; ++c)
      row[c] *= scale;
  }
  if (rule.softcap > 0.0f) soft_cap_row(row, n, rule.softcap);
  if (rule.add_mask) {
    const float* add = rule.add_mask + i * rule.mask_stride + j0;
    for (std::int64_t c = 0; c < n; ++c)
      row[c] += static_cast<T>(add[c]);
  }
  if (rule.alibi_slope != 0.0f) {
    const T slope = static_cast<T>(rule.alibi_slope);
    for (std::int64_t c = 0; c < n; ++c)
      row[c] -= slope * static_cast<T>(i + rule.causal_shift - (j0 + c));
  }
  if (rule.bool_mask) {
    const std::uint8_t* allow = rule.bool_mask + i * rule.mask_stride + j0;
    for (std::int64_t c = 0; c < n; ++c)
      row[c] = allow[c] ? row[c] : -std::numeric_limits<T>::infinity();
  }
}

}  // namespace attnlens::detail
