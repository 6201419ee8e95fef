// attnlens — GPT-2 checkpoints as Hugging Face writes them: a model directory held in memory.
//
// A checkpoint is the files of a Hugging Face GPT-2 model directory:
//   model.safetensors  the weights, named as in gpt2.hpp (Gpt2Model::from_tensors), F32, F16 or
//                      BF16; an optional "transformer." prefix, and the causal-mask buffers
//                      "h.{i}.attn.bias" / "h.{i}.attn.masked_bias" of older files (skipped
//                      unread, whatever their dtype)
//   config.json        the model's sizes, with Hugging Face's GPT2Config keys (below)
//   vocab.json         the tokenizer (bpe.hpp): token -> id          } optional, together: a
//   merges.txt         its merges, one per line                     } checkpoint may have no
//                                                                     tokenizer
// The files are passed as their contents (bytes and text), never as paths, so the same code
// serves the native tools and the WebAssembly build (where the JS side reads the files).
//
// config.json, as GPT2Config.to_json_string() writes it:
//   read:    n_layer, n_head, n_embd, vocab_size (integers) and n_positions (or, if that is
//            absent, n_ctx) give the Gpt2Config (layers, heads, d_model, vocab_size, context).
//   checked when present, because they change what the model computes:
//            model_type            must be "gpt2"
//            architectures         every entry must start with "GPT2" (GPT2LMHeadModel, ...)
//            layer_norm_epsilon    must be 1e-5
//            activation_function   "gelu_new" or "gelu_pytorch_tanh" (the same tanh formula)
//            n_inner               null or 4 · n_embd
//            scale_attn_weights    true (scores are divided by sqrt(head size))
//            scale_attn_by_inverse_layer_idx, add_cross_attention   false
//            tie_word_embeddings   true (attnlens ties the unembedding to wte)
//   ignored: every other key (dropout rates, token ids, torch_dtype, ...).
#pragma once

#include <attnlens/bpe.hpp>
#include <attnlens/gpt2.hpp>
#include <attnlens/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// The files of a checkpoint to load, as views: the caller keeps the bytes alive during the call.
struct CheckpointFileViews {
  const std::uint8_t* model_safetensors = nullptr;  // the file's bytes; null only if size is 0
  std::size_t model_safetensors_size = 0;           // in bytes
  std::string_view config_json;                     // UTF-8 text
  // The tokenizer's files, both or neither (std::nullopt = no tokenizer in the checkpoint).
  std::optional<std::string_view> vocab_json;
  std::optional<std::string_view> merges_txt;
};

// A loaded checkpoint.
struct Checkpoint {
  Gpt2Model model;
  std::optional<BpeTokenizer> tokenizer;  // when vocab.json and merges.txt were given
  SafetensorsMetadata metadata;           // model.safetensors' __metadata__ (e.g. "format": "pt")
};

// Reads config.json (see the top of this header). `file_name` names the file in messages.
// Throws Error(BAD_FILE) starting with the file name and naming the key: not JSON, not an
// object, a size key missing or not an integer, another architecture (naming it, e.g. "bert" or
// "LlamaForCausalLM"), a checked key with another value, "attnlens_attention_norm" (read into
// Gpt2Config::attention_norm; absent means true) not a boolean, or sizes Gpt2Config does not accept
// (validate()'s message); Error(TOO_LARGE) when the sizes exceed kGpt2MaxParameters.
Gpt2Config parse_gpt2_config(std::string_view config_json,
                             std::string_view file_name = "config.json");

// config.json text for `config` that Hugging Face's GPT2LMHeadModel.from_pretrained accepts:
// keys sorted and indented by 2 as GPT2Config.to_json_string() writes them, with model_type
// "gpt2", architectures ["GPT2LMHeadModel"], activation_function "gelu_new",
// layer_norm_epsilon 1e-05, n_inner null, tie_word_embeddings true, n_positions = n_ctx =
// context, dropout rates 0 (attnlens trains without dropout), and
//   torch_dtype:              "float32" for Dtype::F32, "float16" for Dtype::F16 (the weights'
//                             dtype in model.safetensors)
//   end_of_text_id:           written as bos_token_id and eos_token_id when >= 0; -1 (default)
//                             leaves them out.
// A config without attention_norm also gets "attnlens_attention_norm": false (a key
// GPT2LMHeadModel ignores: it would compute the model with ln_1, which the weights lack).
// Throws as validate(config); Error(BAD_ARGUMENT) for a dtype other than F32/F16 or an
// end_of_text_id outside [-1, vocab_size).
std::string gpt2_config_json(const Gpt2Config& config, Dtype dtype = Dtype::F32,
                             std::int32_t end_of_text_id = -1);

// Loads a model (and its tokenizer) from a checkpoint's files, checking that they fit together:
// the weights' names and shapes against config.json (Gpt2Model::from_tensors), the tokenizer
// against the model (its vocabulary may not be larger than vocab_size; a smaller one is fine, as
// in checkpoints whose embedding rows are padded). Throws Error(BAD_FILE) whose message starts
// with the file at fault ("model.safetensors: ...", "config.json: ...", "vocab.json: ...",
// "merges.txt: ...") and names the tensor, key or entry; Error(BAD_ARGUMENT) when only one of
// vocab_json and merges_txt is given or model_safetensors is null with a non-zero size;
// Error(TOO_LARGE) for sizes over the limits; Error(OUT_OF_MEMORY).
Checkpoint load_checkpoint(const CheckpointFileViews& files);

// The files of a checkpoint to save.
struct CheckpointFiles {
  std::vector<std::uint8_t> model_safetensors;
  std::string config_json;
  std::string vocab_json;  // empty when saved without a tokenizer
  std::string merges_txt;  // empty when saved without a tokenizer
};

struct CheckpointSaveOptions {
  // The weights' dtype: Dtype::F32 (exact) or Dtype::F16 (rounded to nearest even; a weight
  // whose magnitude rounds beyond 65504 is an error). Default F32.
  Dtype dtype = Dtype::F32;
  // Extra __metadata__ entries for model.safetensors, after "format": "pt" (which Hugging Face's
  // loader requires) and "writer": "attnlens <version>"; keys must differ from those two.
  SafetensorsMetadata metadata;
};

// Writes `model` (and `tokenizer`, when not null) as a checkpoint's files: model.safetensors
// with the tensors of Gpt2Model::to_tensors() (no prefix, no lm_head: tied), config.json from
// gpt2_config_json() (with the tokenizer's "<|endoftext|>" id as bos/eos when it has one),
// vocab.json and merges.txt as BpeTokenizer writes them. load_checkpoint() of the result gives
// the same parameters bit for bit (F32) or rounded to F16.
// Throws Error(BAD_ARGUMENT) for a dtype other than F32/F16, a metadata key "format" or
// "writer", or a tokenizer with more tokens than the model's vocab_size; Error(BAD_FILE) from
// the safetensors writer (e.g. a weight too large for F16); Error(OUT_OF_MEMORY).
CheckpointFiles save_checkpoint(const Gpt2Model& model, const BpeTokenizer* tokenizer = nullptr,
                                const CheckpointSaveOptions& options = {});

}  // namespace attnlens
