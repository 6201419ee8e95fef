// Private: a Llama-family model's weights and forward pass. The tensors are Hugging Face's names
// (model.embed_tokens.weight, model.layers.{i}.self_attn.q_proj.weight, ...; rotary_emb.inv_freq
// buffers are ignored), read from F32, F16 or BF16 and held as float32, projections transposed
// from torch's [out, in] to the [in, out] the block multiplies by. The math is the block's
// (nn/block.hpp); this file only says where its tensors are.
#pragma once

#include "core/matmul.hpp"
#include "models/llama/config.hpp"
#include "nn/block.hpp"

#include <attnlens/model.hpp>
#include <attnlens/safetensors.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnlens::detail {

// One checkpoint tensor: its name, its shape in the file, where it sits in the parameters, and
// whether it is a torch Linear weight stored transposed there.
struct LlamaTensor {
  std::string name;
  Shape shape;
  std::int64_t offset = 0;
  std::int64_t count = 0;
  bool transposed = false;
  // A fused torch Linear [pieces · P, in] (ModernBERT's Wqkv, Wi) is held as `pieces` matrices
  // [in, P] one after the other: each row block transposed on its own.
  std::int64_t pieces = 1;
};

class LlamaModel {
 public:
  // The model of `config` with the tensors of `file` (checked by name and shape against the
  // config before the parameters are allocated). Throws BAD_FILE naming the tensor: unknown,
  // given twice, missing, of the wrong shape (q_proj's names num_attention_heads × head_dim),
  // non-finite, or an lm_head that differs from embed_tokens while tie_word_embeddings is true;
  // OUT_OF_MEMORY.
  static LlamaModel from_safetensors(const LlamaConfig& config, const SafetensorsView& file);

  const LlamaConfig& config() const noexcept { return config_; }
  std::int64_t num_parameters() const noexcept { return static_cast<std::int64_t>(params_.size()); }

  // Checks ids [B, T] (non-empty, T within the context, ids in the vocabulary) and runs the
  // block's forward.
  ModelOutput forward(const TokenIds& ids, const DecoderForward& options);
  // The same for one sequence, reusing the prefix `cache` holds (decoder_forward's cached form).
  // BAD_ARGUMENT for a batch of more than one sequence.
  ModelOutput forward(const TokenIds& ids, DecoderCache& cache, const DecoderForward& options);

  // The logit lens: the final norm and the unembedding on rows [R, d] of the stream.
  Tensor unembed(const Tensor& rows) const;
  // Direct logit attribution of `token` at row b · T + t of ids (attnlens/lens.hpp).
  LogitAttribution attribute(const TokenIds& ids, std::int64_t row, std::int32_t token,
                             const Ablation& ablation);

  // The checkpoint's tensors as the file names and shapes them (lm_head only when untied).
  TensorList to_tensors() const;

 private:
  LlamaModel() = default;
  void check_ids(const TokenIds& ids) const;
  LlamaConfig config_;
  std::vector<LlamaTensor> tensors_;
  std::vector<float> params_;
  DecoderWeights weights_;
  std::unique_ptr<WeightPanels> panels_;
};

// Loads a Llama-family folder: config.json and model.safetensors, and its tokenizer from
// tokenizer.json (with tokenizer_config.json's add_bos_token / add_eos_token when given);
// without tokenizer.json the model loads without a tokenizer.
LoadedModel load_llama(const ModelFiles& files);

// The tokenizer of tokenizer.json (and tokenizer_config.json) in `files`, or null without
// tokenizer.json; `masked` (an encoder's) gives it a mask token ([MASK] or <mask>). BAD_FILE
// naming the file for what the pipeline does not read, and when the tokenizer has more tokens
// than the model's `vocab_size`.
std::unique_ptr<Tokenizer> load_tokenizer_json(const ModelFiles& files, std::int32_t vocab_size,
                                               bool masked = false);

}  // namespace attnlens::detail
