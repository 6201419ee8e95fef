// Private: the transformer block described by data. A family (lib/src/models/<family>/) reads
// its config.json into a DecoderSpec and points DecoderWeights at its tensors; the math of every
// family lives here once, composed from the pieces below (norm, attention with its key/value
// heads, feed-forward) by the spec's flags. Attention is attnlens::attention() with the one
// score rule: this file never computes a softmax of its own.
//
// What the block computes today is what Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3 and
// ModernBERT need: RMSNorm (or Gemma's (1 + w) form) or LayerNorm with or without bias, before
// attention and before the MLP or around each (sandwich), rotary positions (default, linear and
// llama3 frequencies, and a second set for windowed layers), grouped-query attention with separate
// q, k, v projections (a family whose file fuses them splits the matrix when it loads),
// optional biases and QK-norm, causal or bidirectional attention with a window per layer and a
// soft cap on the scores (and one on the logits), a
// gated SiLU or gated GELU (tanh or erf) MLP, a norm after the embeddings and a dense-GELU-norm
// transform before the head (ModernBERT's). The enums name what other families add (post
// placement, learned positions, plain GELU MLPs); check_spec() refuses those values, naming
// them, until their code and tests join. The forward runs over a batch, or over one sequence
// from a kept prefix (DecoderCache, causal models); the pieces have backward passes, the stack
// does not yet (no family trains through it).
#pragma once

#include <attnlens/model.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnlens::detail {

class WeightPanels;  // core/matmul.hpp
struct Readout;      // nn/lens.hpp

enum class NormKind {
  LayerNorm,       // (x - mean) / sqrt(var + eps) · w (+ b): GPT-2, BERT
  RMSNorm,         // x / sqrt(mean(x²) + eps) · w: Llama, Mistral, Qwen
  RMSNormPlusOne,  // x / sqrt(mean(x²) + eps) · (1 + w): Gemma
};

enum class NormPlacement {
  Pre,       // x + f(norm(x)) for attention and MLP
  Post,      // norm(x + f(x)): BERT
  Sandwich,  // x + norm(f(norm(x))): Gemma 2 and 3
};

enum class PositionKind {
  Learned,  // a table of position vectors added to the embeddings: GPT-2, BERT
  Rotary,   // q and k rotated by position (RoPE)
  None,
};

enum class RopeScaling {
  Default,  // inv_freq[i] = theta^(-2i / head_dim)
  Linear,   // inv_freq / factor
  Llama3,   // long wavelengths / factor, short kept, a smooth blend between
};

enum class MlpKind {
  GeluTanh,      // down(gelu_tanh(up(x))): GPT-2
  GeluErf,       // down(gelu(up(x))): BERT
  GatedSilu,     // down(silu(gate(x)) · up(x)): SwiGLU, Llama
  GatedGelu,     // down(gelu_tanh(gate(x)) · up(x)): GeGLU, Gemma
  GatedGeluErf,  // down(gelu(gate(x)) · up(x)) with the exact GELU: ModernBERT
};

const char* norm_kind_name(NormKind kind) noexcept;           // "layernorm", "rmsnorm", ...
const char* position_kind_name(PositionKind kind) noexcept;   // "learned", "rotary", "none"
const char* rope_scaling_name(RopeScaling scaling) noexcept;  // "default", "linear", "llama3"

struct RopeSpec {
  double theta = 10000.0;
  RopeScaling scaling = RopeScaling::Default;
  double factor = 1.0;               // linear and llama3
  double low_freq_factor = 1.0;      // llama3
  double high_freq_factor = 4.0;     // llama3
  double original_context = 8192.0;  // llama3: original_max_position_embeddings
};

struct BlockSpec {
  std::int64_t d_model = 0;
  std::int64_t intermediate = 0;  // the MLP's hidden width
  NormKind norm = NormKind::RMSNorm;
  bool norm_bias = false;  // LayerNorm's bias
  float norm_eps = 1e-6f;
  NormPlacement placement = NormPlacement::Pre;
  PositionKind positions = PositionKind::Rotary;
  RopeSpec rope;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // grouped-query attention: heads is a multiple of kv_heads
  std::int64_t head_dim = 0;  // need not be d_model / heads (Qwen3, Gemma)
  bool fused_qkv = false;     // one [d, (heads + 2 kv_heads) head_dim] projection
  bool q_bias = false, k_bias = false, v_bias = false, o_bias = false;
  bool mlp_bias = false;  // biases on the MLP's projections
  bool qk_norm = false;   // the block's norm over head_dim on each q and k head, before RoPE
  float scale = 0.0f;     // multiplies q·k; 0 means 1 / sqrt(head_dim)
  // 0: none; c > 0: each scaled score x becomes c · tanh(x / c) before the mask (Gemma 2's
  // attn_logit_softcapping)
  float attn_softcap = 0.0f;
  MlpKind mlp = MlpKind::GatedSilu;
};

// How one layer's attention differs from the block's: a window over the keys and which rotary
// frequencies it uses.
struct LayerAttention {
  // 0: every key the model's attention allows. W > 0, causal: query i sees keys j with
  // 0 <= i - j < W, itself and the W - 1 before it (transformers' sliding window, kv_idx > q_idx
  // - sliding_window). W > 0, bidirectional: keys j with |i - j| < W, itself and W - 1 on each
  // side (ModernBERT's local layers: W = local_attention / 2 + 1, as masking_utils'
  // abs(q_idx - kv_idx) <= sliding_window with sliding_window = local_attention / 2).
  std::int64_t window = 0;
  bool local_rope = false;  // DecoderSpec::local_rope instead of the block's rope (Gemma 3)
};

struct DecoderSpec {
  BlockSpec block;
  // One entry per layer, or none: every layer then sees every earlier key with block.rope.
  std::vector<LayerAttention> layer_attention;
  RopeSpec local_rope;  // the rotary positions of layers whose local_rope is set
  std::int64_t layers = 0;
  std::int64_t vocab_size = 0;
  std::int64_t context = 0;  // longest sequence
  bool causal = true;
  float embedding_scale = 1.0f;  // multiplies the token embeddings (Gemma: sqrt(d_model))
  bool embedding_norm = false;   // the block's norm on the embeddings (ModernBERT)
  // false: layer 0's attention reads the stream without a norm (ModernBERT: its embeddings are
  // normalised already); every other layer has its norm before attention.
  bool first_attn_norm = true;
  // Before the head, after the final norm: norm(gelu(dense(x))) with the exact GELU
  // (ModernBERT's prediction head); the head may then add a bias.
  bool head_transform = false;
  // 0: none; c > 0: each logit x becomes c · tanh(x / c) (Gemma 2's final_logit_softcapping), in
  // the forward's logits and the logit lens alike.
  float final_softcap = 0.0f;
};

// The tensors of one block, as float32 in memory. Projection matrices are [in, out] (x · W);
// a bias or norm weight the spec does not have is null.
struct BlockWeights {
  const float* attn_norm_w = nullptr;  // [d]; null in layer 0 exactly when !first_attn_norm
  const float* attn_norm_b = nullptr;
  const float* q_w = nullptr;  // [d, heads · head_dim]
  const float* q_b = nullptr;
  const float* k_w = nullptr;  // [d, kv_heads · head_dim]
  const float* k_b = nullptr;
  const float* v_w = nullptr;  // [d, kv_heads · head_dim]
  const float* v_b = nullptr;
  const float* o_w = nullptr;  // [heads · head_dim, d]
  const float* o_b = nullptr;
  const float* q_norm_w = nullptr;          // [head_dim]
  const float* k_norm_w = nullptr;          // [head_dim]
  const float* post_attn_norm_w = nullptr;  // [d]: sandwich placement, after the attention
  const float* post_attn_norm_b = nullptr;
  const float* mlp_norm_w = nullptr;  // [d]
  const float* mlp_norm_b = nullptr;
  const float* gate_w = nullptr;  // [d, intermediate]
  const float* gate_b = nullptr;
  const float* up_w = nullptr;  // [d, intermediate]
  const float* up_b = nullptr;
  const float* down_w = nullptr;  // [intermediate, d]
  const float* down_b = nullptr;
  const float* post_mlp_norm_w = nullptr;  // [d]: sandwich placement, after the MLP
  const float* post_mlp_norm_b = nullptr;
};

struct DecoderWeights {
  const float* embed = nullptr;         // [vocab, d]
  const float* embed_norm_w = nullptr;  // [d]: embedding_norm
  const float* embed_norm_b = nullptr;
  std::vector<BlockWeights> blocks;
  const float* final_norm_w = nullptr;  // [d]
  const float* final_norm_b = nullptr;
  const float* head_dense_w = nullptr;  // [d, d]: head_transform
  const float* head_dense_b = nullptr;
  const float* head_norm_w = nullptr;  // [d]
  const float* head_norm_b = nullptr;
  const float* head = nullptr;       // [vocab, d]: the embedding itself when tied; null: no head
  const float* head_bias = nullptr;  // [vocab] or null
};

// Error(BAD_ARGUMENT) naming the first field the block cannot compute, or whose sizes disagree
// (heads not a multiple of kv_heads, a size below 1, a non-finite eps or theta, ...).
void check_spec(const DecoderSpec& spec);

// ---------------------------------------------------------------------------------------------
// The pieces, each a forward pass over N rows (row-major, contiguous).

// The block's norm of rows x [N, d] into out (which may be x): RMSNorm, its (1 + w) form, or
// LayerNorm ((x - mean) / sqrt(var + eps) · w + b, b may be null) in float32 as PyTorch computes
// it (the mean, then the biased variance of the centred row).
void norm_forward(float* out, const float* x, const float* w, const float* b, std::int64_t N,
                  std::int64_t d, float eps, NormKind kind);

// out = x / sqrt(mean(x²) + eps) · w, per row of width d, in float32 as transformers'
// LlamaRMSNorm computes it (the mean of squares, then rsqrt); with `plus_one`, · (1 + w).
// out may be x.
void rmsnorm_forward(float* out, const float* x, const float* w, std::int64_t N, std::int64_t d,
                     float eps, bool plus_one = false);

// The inverse frequencies of rotary embeddings over head_dim (head_dim / 2 of them), by the
// spec's scaling, as transformers' modeling_rope_utils.py computes them (in float64 here, then
// rounded to float32 where they are used).
std::vector<double> rope_inv_freq(const RopeSpec& rope, std::int64_t head_dim);

// cos and sin [T, head_dim / 2] of positions 0 .. T - 1 for those frequencies: the angle
// t · inv_freq[i] and its cosine and sine are computed in float64 and rounded once.
void rope_tables(std::vector<float>& cos, std::vector<float>& sin,
                 const std::vector<double>& inv_freq, std::int64_t T);

// Rotates heads x [B, H, T, head_dim] in place by position t (transformers' rotate_half
// convention: element i pairs with i + head_dim / 2):
//   x[i]        = x[i] cos[t, i] - x[i + half] sin[t, i]
//   x[i + half] = x[i + half] cos[t, i] + x[i] sin[t, i]
void rope_apply(float* x, const float* cos, const float* sin, std::int64_t B, std::int64_t H,
                std::int64_t T, std::int64_t head_dim);

// out = silu(gate) · up elementwise (n elements), silu(g) = g / (1 + exp(-g)). out may be gate.
void swiglu_forward(float* out, const float* gate, const float* up, std::int64_t n);

// out = gelu(gate) · up elementwise: GeGLU with the tanh GELU
// 0.5 g (1 + tanh(sqrt(2/π) (g + 0.044715 g³))) as Gemma computes it, or (exact) with
// 0.5 g (1 + erf(g / sqrt 2)) as ModernBERT does. out may be gate.
void geglu_forward(float* out, const float* gate, const float* up, std::int64_t n, bool exact);

// Grouped-query attention of q [B, heads, L, hd] over k, v [B, kv_heads, S, hd] (S >= L: the
// last L of S positions ask, as with a cache) through attnlens::attention(): query head h reads
// key/value head h / (heads / kv_heads); causal with the diagonal bottom-right, so query i sees
// keys j <= i + S - L; with a window W > 0 also only keys j > i + S - L - W, or, bidirectional
// (L = S), keys with |i - j| < W (LayerAttention::window), through a boolean mask that is built
// only when the window hides a key; a soft cap c > 0 (AttentionOptions::softcap) when given. The
// weights [B, heads, L, S] are kept when asked.
AttentionResult grouped_attention(const float* q, const float* k, const float* v, std::int64_t B,
                                  std::int64_t heads, std::int64_t kv_heads, std::int64_t L,
                                  std::int64_t S, std::int64_t hd, float scale, bool causal,
                                  bool keep_weights, std::int64_t window = 0, float softcap = 0.0f);

// Backward passes of the pieces, for training and for gradients through a model: each takes
// dL/d(output) and the forward's inputs. `dx` and parameter gradients accumulate (+=) as nn/layers'
// backward functions do, unless said otherwise.

// RMSNorm: dx += r (g ⊙ w') - x r³ / d · Σ g ⊙ w' ⊙ x and dw += g ⊙ x r per row, r = 1 / sqrt(
// mean(x²) + eps), w' = w (or 1 + w with plus_one).
void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w,
                      std::int64_t N, std::int64_t d, float eps, bool plus_one = false);

// Rotary embeddings are a rotation of each pair (i, i + half): the gradient turns back by the
// same angle, in place (on entry dL/d(rotated), on exit dL/dx).
void rope_backward(float* grad, const float* cos, const float* sin, std::int64_t B, std::int64_t H,
                   std::int64_t T, std::int64_t head_dim);

// SwiGLU: dgate = dout ⊙ up ⊙ silu'(gate), silu'(g) = σ(g) (1 + g (1 − σ(g))), and
// dup = dout ⊙ silu(gate); both written.
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, std::int64_t n);

// Grouped-query attention's backward (self-attention over T positions): nn/layers'
// attention_backward over the key/value heads repeated for their query heads, then each shared
// head's dk and dv summed over the query heads that read it. q, dq [B, heads, T, hd]; k, v, dk, dv
// [B, kv_heads, T, hd] (dq, dk, dv written); weights [B, heads, T, T] from the forward.
void grouped_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                const float* k, const float* v, const float* weights,
                                std::int64_t B, std::int64_t heads, std::int64_t kv_heads,
                                std::int64_t T, std::int64_t hd, float scale, bool causal);

// ---------------------------------------------------------------------------------------------
// The whole stack: embeddings, every block, the final norm and the head.

struct DecoderForward {
  bool attention = false;      // every layer's weights into ModelOutput::attention
  bool hidden_states = false;  // the stream before the first block and after each
  bool logits = true;
  std::vector<std::int64_t> logit_rows;  // b · T + t; empty = every row
  std::int64_t max_elements = kDefaultMaxElements;
  std::int64_t attention_from = 0;  // the query rows from this one on only (ModelForwardOptions)
  Ablation ablation;                // heads switched off (not with a DecoderCache)
  bool value_weighted = false;      // ModelOutput::value_norms and value_weighted (not cached)
  std::vector<std::int64_t> head_output_rows;  // ModelOutput::head_outputs (not cached)
};

// The forward pass of ids [B, T] (already checked to lie in the vocabulary, T within the
// context). The hidden states are the residual stream: the last one is before the final norm,
// as transformers' output_hidden_states gives it apart from its last entry (which it takes
// after the norm). `panels` packs the weights for repeated forwards (see core/matmul.hpp).
// Throws NON_FINITE naming the layer where float32 overflowed, TOO_LARGE for results over
// max_elements, OUT_OF_MEMORY.
ModelOutput decoder_forward(const DecoderSpec& spec, const DecoderWeights& weights,
                            const std::int32_t* ids, std::int64_t B, std::int64_t T,
                            const DecoderForward& options, WeightPanels* panels);

// The final norm and the head as the logit lens and attribution read them (nn/lens.hpp), for a
// model without head_transform (whose readout is not one norm and one product).
Readout decoder_readout(const DecoderSpec& spec, const DecoderWeights& weights);

// The logit lens of any spec: rows [R, d] of the stream through the final norm, the head's
// transform when it has one, and the head (with its bias). BAD_ARGUMENT for rows that are not
// [R, d] with R >= 1 or a model without a head; NON_FINITE naming a row that is not finite, or
// logits that overflow.
Tensor decoder_unembed(const DecoderSpec& spec, const DecoderWeights& weights, const Tensor& rows);

// What a causal decoder keeps between forwards of edits of one sentence: every layer's keys
// (after RoPE) and values, the stream after the last block, and the rows of logits, attention
// and hidden states computed so far. Usable with the spec and weights that filled it only (the
// model that made it says so); the weights must not change meanwhile.
class DecoderCache {
 public:
  DecoderCache();
  ~DecoderCache();
  DecoderCache(const DecoderCache&) = delete;
  DecoderCache& operator=(const DecoderCache&) = delete;
  std::int64_t tokens() const noexcept;  // tokens whose results it holds
  std::int64_t reused() const noexcept;  // tokens the last forward took from it

 private:
  friend ModelOutput decoder_forward(const DecoderSpec&, const DecoderWeights&, const std::int32_t*,
                                     std::int64_t, const DecoderForward&, DecoderCache&,
                                     WeightPanels*);
  struct Data;
  std::unique_ptr<Data> data_;
};

// decoder_forward() of one sequence ids [1, T] reusing `cache` (a bidirectional model computes
// every row again, and the cache then holds nothing): a causal row depends on tokens
// 0 .. t only, so the rows before the first token that differs from the cached ones are kept,
// and the rows from there on are computed, their queries attending over the kept keys and their
// own. The same results as decoder_forward() up to float32 rounding (the products see fewer
// rows). Logits of a row are computed when first asked for; attention and hidden-state rows are
// kept when every call since the cache started asked for them (otherwise the call starts over).
// Throws as decoder_forward(); after a throw the cache is empty.
ModelOutput decoder_forward(const DecoderSpec& spec, const DecoderWeights& weights,
                            const std::int32_t* ids, std::int64_t T, const DecoderForward& options,
                            DecoderCache& cache, WeightPanels* panels);

}  // namespace attnlens::detail
