// GPT-2 checkpoints: config.json, model.safetensors and the tokenizer's files, in and out.
#include <attnlens/checkpoint.hpp>
#include <attnlens/status.hpp>
#include <attnlens/version.hpp>

#include "core/check.hpp"
#include "io/json.hpp"

#include <algorithm>
#include <climits>
#include <utility>

namespace attnlens {
namespace {

constexpr std::string_view kSafetensorsName = "model.safetensors";
constexpr std::string_view kVocabName = "vocab.json";
constexpr std::string_view kMergesName = "merges.txt";
constexpr std::string_view kEndOfText = "<|endoftext|>";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Text from a file for a message: quoted, cut to at most 60 bytes at a character boundary.
std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out = "\"";
  if (text.size() <= kMax) {
    out += text;
  } else {
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;
    out += text.substr(0, cut);
    out += "...";
  }
  return out + "\"";
}

// The integer value of a size key (n_layer, ...), which must be present.
int size_key(const detail::JsonValue& root, std::string_view key, std::string_view file_name) {
  const detail::JsonValue* value = root.find(key);
  if (value == nullptr) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": the key \"", key,
                 "\" is missing; a GPT-2 config gives n_layer, n_head, n_embd, n_positions (or "
                 "n_ctx) and vocab_size");
  }
  if (!value->is_integer()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" must be an integer, not ",
                 value->kind_name(), value->is_number() ? " with a fraction or exponent" : "");
  }
  const std::int64_t n = value->as_integer();
  if (n < 1 || n > INT_MAX) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" is ", n,
                 "; it must be a positive size");
  }
  return static_cast<int>(n);
}

// A key that must hold `expected` (a boolean) when present.
void check_bool_key(const detail::JsonValue& root, std::string_view key, bool expected,
                    std::string_view file_name, std::string_view why) {
  const detail::JsonValue* value = root.find(key);
  if (value == nullptr) return;
  if (!value->is_bool() || value->as_bool() != expected) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" is ",
                 value->is_bool() ? (value->as_bool() ? "true" : "false") : value->kind_name(),
                 " but attnlens computes GPT-2 with ", key, " = ", expected ? "true" : "false",
                 " (", why, ")");
  }
}

void check_architecture(const detail::JsonValue& root, std::string_view file_name) {
  if (const detail::JsonValue* type = root.find("model_type")) {
    if (!type->is_string()) {
      detail::fail(ErrorCode::BAD_FILE, file_name, ": \"model_type\" must be a string, not ",
                   type->kind_name());
    }
    if (type->as_string() != "gpt2") {
      detail::fail(ErrorCode::BAD_FILE, file_name, ": model_type is ", quoted(type->as_string()),
                   "; attnlens loads GPT-2 models (model_type \"gpt2\")");
    }
  }
  if (const detail::JsonValue* list = root.find("architectures")) {
    if (list->is_null()) return;
    if (!list->is_array()) {
      detail::fail(ErrorCode::BAD_FILE, file_name,
                   ": \"architectures\" must be an array of strings, not ", list->kind_name());
    }
    for (const detail::JsonValue& item : list->items()) {
      if (!item.is_string()) {
        detail::fail(ErrorCode::BAD_FILE, file_name, ": \"architectures\" must hold strings, not ",
                     item.kind_name());
      }
      if (!starts_with(item.as_string(), "GPT2")) {
        detail::fail(ErrorCode::BAD_FILE, file_name, ": architectures names ",
                     quoted(item.as_string()),
                     "; attnlens loads GPT-2 models (GPT2LMHeadModel, GPT2Model)");
      }
    }
  }
}

// Keys whose other values would change what the model computes.
void check_semantics(const detail::JsonValue& root, int d_model, std::string_view file_name) {
  if (const detail::JsonValue* eps = root.find("layer_norm_epsilon")) {
    if (!eps->is_number()) {
      detail::fail(ErrorCode::BAD_FILE, file_name,
                   ": \"layer_norm_epsilon\" must be a number, not ", eps->kind_name());
    }
    if (eps->as_number() != 1e-5) {
      detail::fail(ErrorCode::BAD_FILE, file_name, ": \"layer_norm_epsilon\" is ", eps->as_number(),
                   " but attnlens' GPT-2 LayerNorm uses 1e-05");
    }
  }
  if (const detail::JsonValue* act = root.find("activation_function")) {
    if (!act->is_string()) {
      detail::fail(ErrorCode::BAD_FILE, file_name,
                   ": \"activation_function\" must be a string, not ", act->kind_name());
    }
    if (act->as_string() != "gelu_new" && act->as_string() != "gelu_pytorch_tanh") {
      detail::fail(ErrorCode::BAD_FILE, file_name, ": activation_function is ",
                   quoted(act->as_string()),
                   " but attnlens' GPT-2 uses GELU with the tanh approximation (\"gelu_new\")");
    }
  }
  if (const detail::JsonValue* inner = root.find("n_inner")) {
    if (!inner->is_null() && !(inner->is_integer() && inner->as_integer() == 4LL * d_model)) {
      detail::fail(ErrorCode::BAD_FILE, file_name,
                   ": \"n_inner\" must be null or 4 * n_embd = ", 4LL * d_model,
                   " (attnlens' MLP is d -> 4d -> d)");
    }
  }
  check_bool_key(root, "scale_attn_weights", true, file_name,
                 "scores divided by the square root of the head size");
  check_bool_key(root, "scale_attn_by_inverse_layer_idx", false, file_name,
                 "no extra per-layer scaling");
  check_bool_key(root, "add_cross_attention", false, file_name, "a decoder without an encoder");
  check_bool_key(root, "tie_word_embeddings", true, file_name,
                 "the unembedding is wte; there is no separate lm_head");
}

// Runs `f`; an attnlens::Error it throws gets `file_name` in front of its message when the
// message does not start with it, and BAD_ARGUMENT becomes BAD_FILE (bad values in a file).
template <typename F>
auto blame_file(std::string_view file_name, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string_view message = e.what();
    const ErrorCode code = e.code() == ErrorCode::BAD_ARGUMENT ? ErrorCode::BAD_FILE : e.code();
    if (starts_with(message, file_name) && code == e.code()) throw;
    if (starts_with(message, file_name)) detail::fail(code, message);
    detail::fail(code, file_name, ": ", message);
  }
}

const char* torch_dtype_name(Dtype dtype) {
  if (dtype == Dtype::F32) return "float32";
  if (dtype == Dtype::F16) return "float16";
  detail::fail(ErrorCode::BAD_ARGUMENT, "dtype: checkpoints are written as F32 or F16, not ",
               dtype_name(dtype));
}

}  // namespace

Gpt2Config parse_gpt2_config(std::string_view config_json, std::string_view file_name) {
  const detail::JsonValue root = detail::parse_json(config_json, file_name);
  if (!root.is_object()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": expected a JSON object, found ",
                 root.kind_name());
  }
  // The architecture first: a BERT config has no n_layer, and the message should say "bert".
  check_architecture(root, file_name);

  Gpt2Config config;
  config.layers = size_key(root, "n_layer", file_name);
  config.heads = size_key(root, "n_head", file_name);
  config.d_model = size_key(root, "n_embd", file_name);
  config.context =
      size_key(root, root.find("n_positions") != nullptr ? "n_positions" : "n_ctx", file_name);
  config.vocab_size = size_key(root, "vocab_size", file_name);
  check_semantics(root, config.d_model, file_name);
  if (const detail::JsonValue* norm = root.find("attnlens_attention_norm")) {
    if (!norm->is_bool()) {
      detail::fail(ErrorCode::BAD_FILE, file_name,
                   ": \"attnlens_attention_norm\" must be true or false, not ", norm->kind_name());
    }
    config.attention_norm = norm->as_bool();
  }
  blame_file(file_name, [&] { validate(config); });
  return config;
}

std::string gpt2_config_json(const Gpt2Config& config, Dtype dtype, std::int32_t end_of_text_id) {
  validate(config);
  const char* torch_dtype = torch_dtype_name(dtype);
  if (end_of_text_id < -1 || end_of_text_id >= config.vocab_size) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "end_of_text_id: ", end_of_text_id,
                 " is not a token id of a vocabulary of ", config.vocab_size, " (or -1 for none)");
  }
  const std::string eot = std::to_string(end_of_text_id);
  const std::string ctx = std::to_string(config.context);
  // Keys in sorted order, as GPT2Config.to_json_string() writes them.
  std::vector<std::pair<std::string_view, std::string>> entries = {
      {"activation_function", "\"gelu_new\""},
      {"architectures", "[\n    \"GPT2LMHeadModel\"\n  ]"},
      {"attn_pdrop", "0.0"},
      {"attnlens_attention_norm", "false"},
      {"bos_token_id", eot},
      {"embd_pdrop", "0.0"},
      {"eos_token_id", eot},
      {"initializer_range", "0.02"},
      {"layer_norm_epsilon", "1e-05"},
      {"model_type", "\"gpt2\""},
      {"n_ctx", ctx},
      {"n_embd", std::to_string(config.d_model)},
      {"n_head", std::to_string(config.heads)},
      {"n_inner", "null"},
      {"n_layer", std::to_string(config.layers)},
      {"n_positions", ctx},
      {"reorder_and_upcast_attn", "false"},
      {"resid_pdrop", "0.0"},
      {"scale_attn_by_inverse_layer_idx", "false"},
      {"scale_attn_weights", "true"},
      {"tie_word_embeddings", "true"},
      {"torch_dtype", std::string("\"") + torch_dtype + "\""},
      {"use_cache", "true"},
      {"vocab_size", std::to_string(config.vocab_size)},
  };
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : entries) {
    if (end_of_text_id < 0 && (key == "bos_token_id" || key == "eos_token_id")) continue;
    if (config.attention_norm && key == "attnlens_attention_norm") continue;
    if (!first) out += ",\n";
    first = false;
    out += "  \"";
    out += key;
    out += "\": ";
    out += value;
  }
  out += "\n}\n";
  return out;
}

Checkpoint load_checkpoint(const CheckpointFileViews& files) {
  if (files.model_safetensors == nullptr && files.model_safetensors_size != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "model_safetensors is null but its size is ",
                 files.model_safetensors_size, " bytes");
  }
  if (files.vocab_json.has_value() != files.merges_txt.has_value()) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "the tokenizer needs both vocab.json and merges.txt; ",
                 files.vocab_json ? "merges.txt" : "vocab.json", " was not given");
  }
  const Gpt2Config config = parse_gpt2_config(files.config_json, "config.json");

  const SafetensorsView view(files.model_safetensors, files.model_safetensors_size,
                             std::string(kSafetensorsName));
  // Each tensor is read from the file's bytes straight into the model's parameters.
  Gpt2Model model =
      blame_file(kSafetensorsName, [&] { return Gpt2Model::from_safetensors(config, view); });

  std::optional<BpeTokenizer> tokenizer;
  if (files.vocab_json) {
    tokenizer =
        BpeTokenizer::from_files(*files.vocab_json, *files.merges_txt, kVocabName, kMergesName);
    if (tokenizer->vocab_size() > config.vocab_size) {
      detail::fail(ErrorCode::BAD_FILE, kVocabName, ": the tokenizer has ", tokenizer->vocab_size(),
                   " tokens but config.json's vocab_size is ", config.vocab_size,
                   " (the model has ", config.vocab_size, " embedding rows, so ids from ",
                   config.vocab_size, " on have none)");
    }
  }
  return Checkpoint{std::move(model), std::move(tokenizer), view.metadata()};
}

CheckpointFiles save_checkpoint(const Gpt2Model& model, const BpeTokenizer* tokenizer,
                                const CheckpointSaveOptions& options) {
  torch_dtype_name(options.dtype);
  SafetensorsMetadata metadata = {{"format", "pt"},
                                  {"writer", std::string("attnlens ") + kVersion}};
  for (const auto& [key, value] : options.metadata) {
    if (key == "format" || key == "writer") {
      detail::fail(ErrorCode::BAD_ARGUMENT, "options.metadata: the key \"", key,
                   "\" is written by save_checkpoint itself");
    }
    metadata.emplace_back(key, value);
  }
  const Gpt2Config& config = model.config();
  std::int32_t end_of_text_id = -1;
  if (tokenizer != nullptr) {
    if (tokenizer->vocab_size() > config.vocab_size) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "tokenizer: it has ", tokenizer->vocab_size(),
                   " tokens but the model's vocab_size is ", config.vocab_size);
    }
    end_of_text_id = tokenizer->token_to_id(kEndOfText);
  }

  CheckpointFiles files;
  files.model_safetensors =
      write_safetensors(model.to_tensors(), metadata, options.dtype, kSafetensorsName);
  files.config_json = gpt2_config_json(config, options.dtype, end_of_text_id);
  if (tokenizer != nullptr) {
    files.vocab_json = tokenizer->to_vocab_json();
    files.merges_txt = tokenizer->to_merges_txt();
  }
  return files;
}

}  // namespace attnlens
