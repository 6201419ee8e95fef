#include "warm_start.hpp"

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "io/json.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <unordered_map>

namespace attnlens::train {
namespace {

constexpr std::size_t kMaxModelFile = std::size_t{1} << 31;

// The old tokens of `bytes` when the old tokenizer cannot encode it (a token that ends inside a
// UTF-8 character): the longest old token at each place, left to right. Every single byte is an
// old token, so this always ends.
std::vector<std::int32_t> longest_pieces(
    std::string_view bytes, const std::unordered_map<std::string, std::int32_t>& old_ids) {
  std::vector<std::int32_t> out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    for (std::size_t n = bytes.size() - at; n > 0; --n) {
      const auto it = old_ids.find(std::string(bytes.substr(at, n)));
      if (it != old_ids.end()) {
        out.push_back(it->second);
        at += n;
        break;
      }
      if (n == 1) {
        detail::fail(ErrorCode::BAD_FILE, "the old vocabulary has no token for byte ",
                     static_cast<int>(static_cast<unsigned char>(bytes[at])));
      }
    }
  }
  return out;
}

// Remaps the tensors whose name `by_token` picks (their rows are tokens); returns how many.
template <typename Pick>
int remap_token_rows(TensorList& tensors, const VocabularyMap& map, const std::string& dir,
                     Pick by_token) {
  int mapped = 0;
  for (auto& [name, tensor] : tensors) {
    if (!by_token(name)) continue;
    tensor = remap_rows(tensor, map, "--init-from " + dir + ": " + name);
    ++mapped;
  }
  return mapped;
}

}  // namespace

VocabularyMap map_vocabulary(const BpeTokenizer& from, const BpeTokenizer& to) {
  std::unordered_map<std::string, std::int32_t> old_ids;
  for (std::int32_t id = 0; id < from.vocab_size(); ++id)
    old_ids.emplace(from.token_bytes(id), id);
  VocabularyMap map;
  map.old_size = from.vocab_size();
  map.sources.resize(static_cast<std::size_t>(to.vocab_size()));
  for (std::int32_t id = 0; id < to.vocab_size(); ++id) {
    const std::string& bytes = to.token_bytes(id);
    if (bytes.empty()) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "token ", id, " of the new vocabulary is empty");
    }
    std::vector<std::int32_t>& src = map.sources[static_cast<std::size_t>(id)];
    if (const auto it = old_ids.find(bytes); it != old_ids.end()) {
      src.push_back(it->second);
      ++map.same;
      continue;
    }
    try {
      src = from.encode(bytes);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::INVALID_UTF8) throw;
      src = longest_pieces(bytes, old_ids);
      ++map.cut;
    }
    ++map.composed;
  }
  return map;
}

Tensor remap_rows(const Tensor& rows, const VocabularyMap& map, const std::string& name) {
  if (rows.shape.empty() || rows.shape[0] < map.old_size) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, name, " has shape ", shape_to_string(rows.shape),
                 "; a warm start maps its first dimension, which must hold the old vocabulary "
                 "of ",
                 map.old_size, " tokens");
  }
  std::int64_t width = 1;
  for (std::size_t i = 1; i < rows.shape.size(); ++i)
    width *= rows.shape[i];
  Shape shape = rows.shape;
  shape[0] = static_cast<std::int64_t>(map.sources.size());
  Tensor out(shape);
  std::vector<double> sum(static_cast<std::size_t>(width));
  for (std::size_t id = 0; id < map.sources.size(); ++id) {
    std::fill(sum.begin(), sum.end(), 0.0);
    if (map.sources[id].empty()) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "new token ", id, " has no old tokens to start from");
    }
    for (const std::int32_t src : map.sources[id]) {
      if (src < 0 || src >= map.old_size) {
        detail::fail(ErrorCode::BAD_ARGUMENT, "new token ", id, " starts from old token ", src,
                     ", outside the old vocabulary's ids 0 .. ", map.old_size - 1);
      }
      const float* row = rows.data.data() + static_cast<std::int64_t>(src) * width;
      for (std::int64_t j = 0; j < width; ++j)
        sum[static_cast<std::size_t>(j)] += row[j];
    }
    const double n = static_cast<double>(map.sources[id].size());
    float* dst = out.data.data() + static_cast<std::int64_t>(id) * width;
    for (std::int64_t j = 0; j < width; ++j) {
      dst[j] = static_cast<float>(sum[static_cast<std::size_t>(j)] / n);
    }
  }
  return out;
}

WarmStart read_warm_start(const std::string& flag, const std::string& dir) {
  namespace fs = std::filesystem;
  WarmStart w;
  w.dir = dir;
  for (const char* name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
    if (!fs::is_regular_file(fs::path(dir) / name)) {
      detail::fail(ErrorCode::BAD_ARGUMENT, flag, " ", dir, ": no ", name,
                   " (a warm start reads a trained attnlens model folder: config.json, "
                   "model.safetensors, vocab.json and merges.txt)");
    }
  }
  try {
    const std::string weights = corpus::read_file(dir + "/model.safetensors", kMaxModelFile);
    const std::string config = corpus::read_file(dir + "/config.json", kMaxModelFile);
    const std::string vocab = corpus::read_file(dir + "/vocab.json", kMaxModelFile);
    const std::string merges = corpus::read_file(dir + "/merges.txt", kMaxModelFile);
    ModelFiles files;
    files.weights = reinterpret_cast<const std::uint8_t*>(weights.data());
    files.weights_size = weights.size();
    files.texts = {{"config.json", config}, {"vocab.json", vocab}, {"merges.txt", merges}};
    w.loaded = load_model(files);
    w.tokenizer = BpeTokenizer::from_files(vocab, merges);
    w.hash = hash_bytes(merges, hash_bytes(vocab, hash_bytes(weights, 0)));
    for (const auto& [key, value] : w.loaded.metadata) {
      if (key == "step") w.step = value;
    }
  } catch (const Error& e) {
    detail::fail(ErrorCode::BAD_ARGUMENT, flag, " ", dir, ": ", e.what());
  }
  return w;
}

Gpt2Model warm_gpt2(const Gpt2Config& config, const WarmStart& warm, const BpeTokenizer& tokenizer,
                    VocabularyMap& map) {
  const Gpt2Model* old = warm.loaded.model->gpt2();
  if (old == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "--init-from ", warm.dir,
                 ": not a GPT-2 model (attnlens_train starts from a causal model folder)");
  }
  const Gpt2Config& c = old->config();
  if (c.layers != config.layers || c.heads != config.heads || c.d_model != config.d_model ||
      c.context != config.context || c.attention_norm != config.attention_norm) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "--init-from ", warm.dir, ": its blocks are ", c.layers,
                 " layers, ", c.heads, " heads, d_model ", c.d_model, ", context ", c.context,
                 c.attention_norm ? "" : ", no attention norm", "; this run's are ", config.layers,
                 " layers, ", config.heads, " heads, d_model ", config.d_model, ", context ",
                 config.context, config.attention_norm ? "" : ", no attention norm");
  }
  map = map_vocabulary(warm.tokenizer, tokenizer);
  TensorList tensors = old->to_tensors();
  remap_token_rows(tensors, map, warm.dir,
                   [](const std::string& name) { return name == "wte.weight"; });
  return Gpt2Model::from_tensors(config, tensors);
}

BertModel warm_bert(const BertConfig& config, const WarmStart& warm, const BpeTokenizer& tokenizer,
                    VocabularyMap& map) {
  const BertModel* old = warm.loaded.model->bert();
  if (old == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "--init-from ", warm.dir,
                 ": not a BERT model (attnlens_train_encoder starts from an encoder folder)");
  }
  const BertConfig& c = old->config();
  if (c.flavor != config.flavor || c.layers != config.layers || c.heads != config.heads ||
      c.d_model != config.d_model || c.intermediate != config.intermediate ||
      c.context != config.context || c.type_vocab_size != config.type_vocab_size ||
      c.mlm_head != config.mlm_head) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "--init-from ", warm.dir, ": its blocks are ", c.layers,
                 " layers, ", c.heads, " heads, d_model ", c.d_model, ", intermediate ",
                 c.intermediate, ", context ", c.context, ", ", c.type_vocab_size, " token types",
                 c.mlm_head ? "" : ", no MLM head", "; this run's are ", config.layers, " layers, ",
                 config.heads, " heads, d_model ", config.d_model, ", intermediate ",
                 config.intermediate, ", context ", config.context, ", ", config.type_vocab_size,
                 " token types", config.mlm_head ? "" : ", no MLM head");
  }
  map = map_vocabulary(warm.tokenizer, tokenizer);
  TensorList tensors = old->to_tensors();
  const int mapped = remap_token_rows(tensors, map, warm.dir, [](const std::string& name) {
    constexpr std::string_view word = "embeddings.word_embeddings.weight";
    return (name.size() >= word.size() &&
            name.compare(name.size() - word.size(), word.size(), word) == 0) ||
           name == "cls.predictions.bias";
  });
  if (mapped != (config.mlm_head ? 2 : 1)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "--init-from ", warm.dir, ": found ", mapped,
                 " of the word embeddings and the MLM bias, not ", config.mlm_head ? 2 : 1);
  }
  return BertModel::from_tensors(config, tensors);
}

WarmStartRecord warm_start_record(const WarmStart& warm, const VocabularyMap& map) {
  return {warm.dir, warm.step, warm.hash, map.old_size, map.same, map.composed, map.cut};
}

std::string warm_start_json(const WarmStartRecord& r, std::string_view indent) {
  if (r.dir.empty()) return {};
  std::string out(indent);
  out += "\"init_from\": {\"dir\": ";
  detail::append_json_string(out, r.dir);
  out += ", \"step\": ";
  detail::append_json_string(out, r.step);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                ", \"vocab_size\": %d, \"same_tokens\": %lld, \"composed_tokens\": %lld, "
                "\"cut_tokens\": %lld, \"files_hash\": \"%016llx\"},\n",
                r.old_size, static_cast<long long>(r.same), static_cast<long long>(r.composed),
                static_cast<long long>(r.cut), static_cast<unsigned long long>(r.hash));
  return out + buf;
}

}  // namespace attnlens::train
