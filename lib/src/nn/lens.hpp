// Private: the logit lens and direct logit attribution (attnlens/lens.hpp) for every family.
// A family says where its final norm and unembedding are (Readout); the arithmetic is here once.
#pragma once

#include <attnlens/lens.hpp>
#include <attnlens/model.hpp>

#include <cstdint>
#include <vector>

namespace attnlens::detail {

// BAD_ARGUMENT naming the first entry of head_output_rows outside [0, N).
void check_head_output_rows(const std::vector<std::int64_t>& rows, std::int64_t N);

// Each head's write into the residual stream at `rows` of merged [N, heads · hd] (the heads'
// outputs side by side, after any ablation): out [R, heads, d], out[r, h] = merged[rows[r],
// h · hd .. (h + 1) · hd] · o_w[h · hd .. (h + 1) · hd, :] for o_w [heads · hd, d] (x · W).
// Summed in float64 and rounded once.
void head_writes(float* out, const float* merged, const float* o_w,
                 const std::vector<std::int64_t>& rows, std::int64_t heads, std::int64_t hd,
                 std::int64_t d);

// Where a pre-norm model's last steps are: the final norm, the unembedding [V, d] (x · Uᵀ) and
// its bias, and each layer's attention output bias (for attribution).
struct Readout {
  bool layernorm = false;  // LayerNorm (with norm_b); else RMSNorm
  bool plus_one = false;   // RMSNorm scaling by (1 + w)
  float eps = 1e-5f;
  const float* norm_w = nullptr;       // [d]
  const float* norm_b = nullptr;       // [d] or null
  const float* unembedding = nullptr;  // [V, d]; null: the model has no head
  const float* bias = nullptr;         // [V] or null
  std::vector<const float*> o_bias;    // per layer: [d] or null
  std::int64_t layers = 0, heads = 0, d = 0, vocab = 0;
};

// What unembed() of every family checks first: rows [R, d] with R >= 1 (BAD_ARGUMENT), R · V
// logits within the library's element limit (TOO_LARGE), every row finite (NON_FINITE naming
// the first that is not).
void check_stream_rows(const Tensor& rows, std::int64_t d, std::int64_t V);

// logits [R, V] of rows [R, d] through the readout's norm and unembedding (the logit lens of a
// pre-norm model). BAD_ARGUMENT for rows that are not [R, d] with R >= 1, or no head;
// NON_FINITE naming the first row that is not finite, or logits that overflow.
Tensor unembed_prenorm(const Readout& readout, const Tensor& rows);

// BAD_ARGUMENT naming `row` outside [0, N) or `token` outside [0, V) and not -1.
void check_attribution(std::int64_t row, std::int32_t token, std::int64_t N, std::int64_t V);

// The attribution of `token` at `row` from a forward's output with hidden_states [L + 1, B, T,
// d] (the last before the final norm), head_outputs [L, 1, heads, d] at `row` and logits [1, V]
// at `row`; token -1 is the one whose logit is largest there. Each MLP's output is what the layer
// added after its attention: hidden[l + 1] − hidden[l] − Σ_h heads − o_bias, in float64.
LogitAttribution attribute_prenorm(const Readout& readout, const ModelOutput& out, std::int64_t row,
                                   std::int32_t token);

}  // namespace attnlens::detail
