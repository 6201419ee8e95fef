// The model families attnlens loads, keyed on config.json's "model_type". Adding a family: a
// folder under lib/src/models/ with its loader, and one entry in families() below
// (docs/architecture.md).
#include <attnlens/model.hpp>
#include <attnlens/version.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "models/bert/family.hpp"
#include "models/gpt2/family.hpp"
#include "models/llama/model.hpp"

#include <algorithm>

namespace attnlens {
namespace {

const std::vector<ModelFamily>& families() {
  static const std::vector<ModelFamily> list = {
      {"gpt2",
       {"gpt2"},
       true,
       PredictionKind::NextToken,
       {{"vocab.json", "merges.txt"}},
       {},
       &detail::load_gpt2},
      {"bert",
       {"bert"},
       false,
       PredictionKind::MaskedToken,
       {{"vocab.txt"}, {"tokenizer.json"}, {"vocab.json", "merges.txt"}},
       {"tokenizer_config.json"},
       &detail::load_bert},
      {"distilbert",
       {"distilbert"},
       false,
       PredictionKind::MaskedToken,
       {{"vocab.txt"}, {"tokenizer.json"}, {"vocab.json", "merges.txt"}},
       {"tokenizer_config.json"},
       &detail::load_bert},
      // tokenizer.json is optional: not read, but a folder with only it is named as missing
      // vocab.json and merges.txt rather than loaded without a tokenizer.
      {"roberta",
       {"roberta"},
       false,
       PredictionKind::MaskedToken,
       {{"vocab.json", "merges.txt"}},
       {"tokenizer.json"},
       &detail::load_bert},
      // One block described by data serves the six (lib/src/models/llama/config.hpp).
      {"llama",
       {"llama"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"mistral",
       {"mistral"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"qwen2",
       {"qwen2"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"qwen3",
       {"qwen3"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"gemma2",
       {"gemma2"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"gemma3_text",
       {"gemma3_text"},
       true,
       PredictionKind::NextToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
      {"modernbert",
       {"modernbert"},
       false,
       PredictionKind::MaskedToken,
       {{"tokenizer.json"}},
       {"tokenizer_config.json"},
       &detail::load_llama},
  };
  return list;
}

std::string known_types() {
  std::string out;
  for (const ModelFamily& f : families()) {
    for (const std::string& t : f.model_types)
      out += (out.empty() ? "\"" : ", \"") + t + "\"";
  }
  return out;
}

}  // namespace

const char* prediction_kind_name(PredictionKind kind) noexcept {
  return kind == PredictionKind::NextToken ? "next-token" : "masked-token";
}

ModelOutput Model::forward(const ModelInputs&, const ModelForwardOptions&, ForwardCache&) {
  detail::fail(ErrorCode::BAD_ARGUMENT,
               "this cache belongs to another model (each model makes "
               "its own with make_cache / createCache)");
}

std::vector<EncodedToken> Tokenizer::encode_pair(std::string_view, std::string_view) const {
  detail::fail(ErrorCode::BAD_ARGUMENT, "this model's ", kind(),
               " tokenizer has no sentence pairs; give one text");
}

const std::vector<ModelFamily>& model_families() {
  return families();
}

std::size_t max_text_file_bytes(std::string_view file_name) noexcept {
  constexpr std::size_t MiB = std::size_t{1} << 20;
  if (file_name == "config.json") return 1 * MiB;
  if (file_name == "tokenizer_config.json") return 4 * MiB;
  if (file_name == "vocab.txt") return 16 * MiB;
  if (file_name == "vocab.json" || file_name == "merges.txt") return 32 * MiB;
  if (file_name == "tokenizer.json") return 64 * MiB;
  return 0;
}

namespace {

// BAD_FILE when `text`, read as a file of kind `kind` (named `file_name`), is over its cap.
void require_text_size(std::string_view kind, std::string_view file_name, std::string_view text) {
  const std::size_t cap = max_text_file_bytes(kind);
  if (cap != 0 && text.size() > cap) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": ", text.size(), " bytes, over the limit of ",
                 cap, " for this file (real ones are far smaller); nothing was read");
  }
}

}  // namespace

const ModelFamily& family_of(std::string_view config_json, std::string_view file_name) {
  require_text_size("config.json", file_name, config_json);
  const detail::JsonValue root = detail::parse_json(config_json, file_name);
  if (!root.is_object())
    detail::fail(ErrorCode::BAD_FILE, file_name, ": not a JSON object but ", root.kind_name());
  const detail::JsonValue* type = root.find("model_type");
  // Older GPT-2 configs have no model_type: GPT-2's own keys say what it is.
  if (type == nullptr && root.find("n_embd") != nullptr) return families().front();
  if (type == nullptr || !type->is_string()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"model_type\" is ",
                 type == nullptr ? "missing" : type->kind_name(),
                 "; it names the architecture (attnlens loads ", known_types(), ")");
  }
  for (const ModelFamily& f : families()) {
    if (std::find(f.model_types.begin(), f.model_types.end(), type->as_string()) !=
        f.model_types.end()) {
      return f;
    }
  }
  // Families readers bring whose one missing piece attnlens can name.
  static const std::pair<const char*, const char*> not_yet[] = {
      {"xlm-roberta",
       "RoBERTa's encoder with a SentencePiece unigram tokenizer (tokenizer.json's model "
       "\"Unigram\"), which attnlens does not read yet"},
  };
  for (const auto& [name, why] : not_yet) {
    if (type->as_string() == name) {
      detail::fail(ErrorCode::BAD_FILE, file_name, ": model_type \"", name, "\" is ", why,
                   " (attnlens loads ", known_types(), ")");
    }
  }
  detail::fail(ErrorCode::BAD_FILE, file_name, ": model_type \"", type->as_string(),
               "\" is not a family attnlens loads (", known_types(), ")");
}

LoadedModel load_model(const ModelFiles& files) {
  const auto config = files.texts.find("config.json");
  if (config == files.texts.end())
    detail::fail(ErrorCode::BAD_FILE, "config.json: missing; every checkpoint folder needs one");
  for (const auto& [name, text] : files.texts)
    require_text_size(name, name, text);
  const ModelFamily& family = family_of(config->second);
  return family.load(files);
}

std::vector<std::pair<std::string, std::vector<std::uint8_t>>> save_model(
    const Model& model, const Tokenizer* tokenizer, const CheckpointSaveOptions& options) {
  if (options.dtype != Dtype::F32 && options.dtype != Dtype::F16) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "options.dtype must be F32 or F16, not ",
                 dtype_name(options.dtype));
  }
  SafetensorsMetadata metadata = {{"format", "pt"},
                                  {"writer", std::string("attnlens ") + kVersion}};
  for (const auto& [key, value] : options.metadata) {
    if (key == "format" || key == "writer") {
      detail::fail(ErrorCode::BAD_ARGUMENT, "options.metadata: the key \"", key,
                   "\" is written by save_model itself");
    }
    metadata.emplace_back(key, value);
  }
  const ModelInfo info = model.info();
  if (tokenizer != nullptr && tokenizer->embedded_size() > info.vocab_size) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "tokenizer: it has ", tokenizer->embedded_size(),
                 " tokens but the model's vocab_size is ", info.vocab_size);
  }
  const auto bytes = [](const std::string& text) {
    return std::vector<std::uint8_t>(text.begin(), text.end());
  };
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> out;
  out.emplace_back("model.safetensors",
                   write_safetensors(model.to_tensors(), metadata, options.dtype));
  out.emplace_back("config.json", bytes(model.config_json(options.dtype, tokenizer)));
  if (tokenizer != nullptr) {
    for (const auto& [name, text] : tokenizer->files())
      out.emplace_back(name, bytes(text));
  }
  return out;
}

}  // namespace attnlens
