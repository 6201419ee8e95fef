// Private: the block's families (model_type "llama", "mistral", "qwen2", "qwen3", "gemma2",
// "gemma3_text", and the encoder "modernbert") as Hugging Face writes their checkpoints:
// config.json in transformers 4's dialect (rope_theta, rope_scaling, torch_dtype) or transformers
// 5's (rope_parameters, dtype, layer_types), read into the block's description (nn/block.hpp). They
// differ only in data:
//   llama    attention_bias on q, k, v, o; mlp_bias on gate, up, down; rope_scaling llama3
//   mistral  no biases; sliding_window (see LlamaConfig::context)
//   qwen2    biases on q, k, v (not o), always
//   qwen3    attention_bias on q, k, v, o; RMSNorm over head_dim on q and k (QK-norm); head_dim
//            given apart from hidden_size / num_attention_heads
//   gemma3_text  RMSNorm with (1 + w) before and after each of attention and MLP (sandwich);
//            QK-norm; embeddings times sqrt(hidden_size); scores times query_pre_attn_scalar^-0.5;
//            GeGLU; per layer (layer_types, or every sliding_window_pattern-th full) a window of
//            sliding_window keys with rope_local_base_freq, or full attention with rope_theta;
//            the norms' tensors are input_, post_attention_, pre_feedforward_ and
//            post_feedforward_layernorm; attn_logit_softcapping / final_logit_softcapping
//            soft-cap scores and logits where not null
//   gemma2   gemma3_text's block without QK-norm, with one rope_theta for every layer, layers
//            0, 2, 4, ... sliding unless layer_types says otherwise, and soft caps 50 and 30
//            by default
//   modernbert  a bidirectional encoder: LayerNorms (bias per norm_bias) after the embeddings,
//            before attention (none in layer 0) and MLP, and at the end; a fused Wqkv; GeGLU with
//            the exact GELU; global layers every global_attn_every_n_layers-th with
//            global_rope_theta, the others a window of +-local_attention / 2 with
//            local_rope_theta; the head norm(gelu(dense(x))) and a tied decoder with a bias
#pragma once

#include "nn/block.hpp"

#include <attnlens/safetensors.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlens::detail {

struct LlamaConfig {
  std::string model_type;  // "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", ...
  DecoderSpec spec;        // spec.context is the longest sequence computed exactly (below)
  bool tied = false;       // tie_word_embeddings: lm_head is embed_tokens
  std::int64_t max_position_embeddings = 0;
  // Mistral's window: a query sees the sliding_window keys before it. Within that many tokens
  // the window hides nothing, so spec.context is min(max_position_embeddings, sliding_window)
  // and every sequence attnlens takes is computed exactly as transformers computes it.
  // Gemma: the window of its sliding layers (computed as such: spec.layer_attention).
  std::optional<std::int64_t> sliding_window;
  double query_pre_attn_scalar = 256.0;  // Gemma: the scores' scale is its -1/2 power
  // ModernBERT: the local layers' window (|i - j| <= local_attention / 2), and biases on the
  // head's dense layer and on its decoder.
  std::int64_t local_attention = 128;
  bool classifier_bias = false;
  bool decoder_bias = true;
  // ModernBERT: pad_token_id, bos_token_id, ... as config.json gives them, for save().
  std::vector<std::pair<std::string, std::int64_t>> token_ids;
};

// config.json of a Llama-family model. Throws BAD_FILE naming the file and the field: a size
// missing or not a positive integer, num_attention_heads not a multiple of
// num_key_value_heads, an odd head_dim, hidden_act other than "silu", an unknown rope_type
// (listing default, linear, llama3), partial rotary embeddings, sliding-window attention in a
// family other than Gemma (use_sliding_window true or a layer_types entry "sliding_attention"),
// a soft cap that is not null or a number > 0, Gemma's bidirectional attention.
LlamaConfig parse_llama_config(std::string_view config_json,
                               std::string_view file_name = "config.json");

// config.json as transformers 4 writes it for the model (torch_dtype from `dtype`), which
// parse_llama_config reads back to the same config.
std::string llama_config_json(const LlamaConfig& config, Dtype dtype);

}  // namespace attnlens::detail
