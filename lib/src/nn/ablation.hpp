// Private: ablation (attnlens/ablation.hpp) applied inside a family's forward, between its
// heads' merge and the attention's output projection. One implementation for every family.
#pragma once

#include <attnlens/ablation.hpp>

#include <cstdint>

namespace attnlens::detail {

// Whether a forward with these options (ModelForwardOptions, Gpt2ForwardOptions, DecoderForward)
// must compute every row without a family's prefix cache: a cache holds the rows of the model as
// trained, and neither the values' norms nor the heads' writes, so heads switched off, value
// weighting and heads' writes are computed afresh and the cache is left as it was.
template <typename Options>
bool computes_without_cache(const Options& options) {
  return !options.ablation.empty() || options.value_weighted || !options.head_output_rows.empty();
}

// BAD_ARGUMENT naming the first bad entry, as "ablate[i]": a layer outside [0, layers), a head
// outside [0, heads), a head named twice.
void check_ablation(const Ablation& ablation, std::int64_t layers, std::int64_t heads);

// Replaces the ablated heads of `layer` in merged [B, T, heads · head_dim] (the heads' outputs
// side by side, as the output projection reads them). causal: a position's mean runs over
// positions 0 .. t; otherwise over the positions whose mask [B, T] is 1 (every position when
// mask is null). Means are summed in float64 and rounded once. Nothing to do for a layer
// without ablated heads.
void ablate_heads(float* merged, const Ablation& ablation, std::int64_t layer, std::int64_t B,
                  std::int64_t T, std::int64_t heads, std::int64_t head_dim, bool causal,
                  const std::int32_t* mask);

// Value-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a Weight") of one
// layer. Head h's output at token i is Σ_j α_ij f_h(x_j) before the output projection's bias,
// f_h(x_j) = v_j^h W_O^h: token j's value through head h's rows of W_O [heads · hd, d]. Writes
// norms [B, heads, T] = ‖f_h(x_j)‖ (per key token j) and mixed [B, T, T] = ‖Σ_h α^h_ij
// f_h(x_j)‖, through each token's heads' Gram matrix (‖Σ_h a_h f_h‖² = Σ_hh' a_h a_h' <f_h,
// f_h'>: T · heads² · d products rather than T² · heads · d). v [B, kv_heads, T, hd] (query
// head h reads kv head h / (heads / kv_heads)); weights [B, heads, T, T]. Ablated
// heads of the layer (when `ablation` is given) mix nothing by attention: their norms are 0 and
// they are left out of the sums. f in float32 (as the forward's own products), the Gram matrices
// and the sums in float64, each result rounded once. NON_FINITE names the layer when a norm or
// a sum is not finite; OUT_OF_MEMORY when the [heads, T, d] of f cannot be allocated.
void value_weighted(float* norms, float* mixed, const float* v, const float* o_w,
                    const float* weights, std::int64_t B, std::int64_t heads, std::int64_t kv_heads,
                    std::int64_t T, std::int64_t head_dim, std::int64_t d, const Ablation* ablation,
                    std::int64_t layer);

}  // namespace attnlens::detail
