// A Llama-family folder's tokenizer.json (and tokenizer_config.json) behind the Tokenizer
// interface: the tokenizer.json pipeline (text/tokenizer_json.hpp), with the begin-of-text token
// the config asks for, the special tokens marked, and the files kept as given for save().
#include "core/check.hpp"
#include "models/llama/model.hpp"
#include "text/tokenizer_json.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attnlens {
namespace {

class TokenizerJsonAdapter final : public Tokenizer {
 public:
  TokenizerJsonAdapter(TokenizerJson tokenizer,
                       std::vector<std::pair<std::string, std::string>> files, bool masked)
      : tokenizer_(std::move(tokenizer)), files_(std::move(files)) {
    // An encoder's mask, by the names its families give it (ModernBERT's [MASK], RoBERTa-style
    // <mask>). A decoder has none, whatever its vocabulary holds (Gemma's has a <mask>).
    if (masked) {
      mask_ = tokenizer_.token_to_id("[MASK]");
      if (mask_ < 0) mask_ = tokenizer_.token_to_id("<mask>");
    }
  }

  const char* kind() const noexcept override { return "tokenizer.json BPE"; }
  std::int32_t vocab_size() const noexcept override { return tokenizer_.vocab_size(); }
  std::int32_t embedded_size() const noexcept override { return tokenizer_.embedded_size(); }
  std::vector<EncodedToken> encode(std::string_view text) const override {
    std::vector<EncodedToken> out;
    // A mask is the reader's, not the tokenizer's: part of the text (a figure that hides the
    // special tokens keeps it, and it reads as typed, " [MASK]" with the space it took).
    for (const TokenizerJsonToken& t : tokenizer_.encode(text))
      out.push_back(EncodedToken{t.id, t.begin, t.end, 0, 0, t.special && t.id != mask_});
    return out;
  }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    return tokenizer_.decode(ids);
  }
  // One token through the decoders: " the" for a byte-level "Ġthe", "<|begin_of_text|>" for a
  // special token. (A SentencePiece-style decoder strips the space a lone first token carries.)
  std::string token_text(std::int32_t id) const override {
    if (id < 0 || id >= tokenizer_.vocab_size()) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "token id ", id, " is out of range [0, ",
                   tokenizer_.vocab_size(), ")");
    }
    return tokenizer_.decode({id});
  }
  std::int32_t token_to_id(std::string_view token) const override {
    return tokenizer_.token_to_id(token);
  }
  std::int32_t mask_id() const noexcept override { return mask_; }
  std::int32_t unk_id() const noexcept override { return tokenizer_.unk_id(); }
  std::vector<std::int32_t> special_ids() const override { return tokenizer_.special_ids(); }
  std::vector<std::int32_t> byte_ids() const override { return tokenizer_.byte_ids(); }
  std::vector<std::pair<std::string, std::string>> files() const override { return files_; }

 private:
  TokenizerJson tokenizer_;
  std::vector<std::pair<std::string, std::string>> files_;
  std::int32_t mask_ = -1;
};

}  // namespace

namespace detail {

std::unique_ptr<Tokenizer> load_tokenizer_json(const ModelFiles& files, std::int32_t vocab_size,
                                               bool masked) {
  const auto json = files.texts.find("tokenizer.json");
  if (json == files.texts.end()) return nullptr;
  TokenizerJson tokenizer = TokenizerJson::from_json(json->second, "tokenizer.json");
  std::vector<std::pair<std::string, std::string>> kept = {
      {"tokenizer.json", std::string(json->second)}};
  const auto config = files.texts.find("tokenizer_config.json");
  if (config != files.texts.end()) {
    tokenizer.apply_config(read_tokenizer_config(config->second, "tokenizer_config.json"),
                           "tokenizer_config.json");
    kept.emplace_back("tokenizer_config.json", std::string(config->second));
  }
  if (tokenizer.embedded_size() > vocab_size) {
    fail(ErrorCode::BAD_FILE, "tokenizer.json: the tokenizer's vocabulary has ",
         tokenizer.embedded_size(), " tokens but config.json's vocab_size is ", vocab_size,
         " (ids from ", vocab_size, " on have no embedding)");
  }
  return std::make_unique<TokenizerJsonAdapter>(std::move(tokenizer), std::move(kept), masked);
}

}  // namespace detail
}  // namespace attnlens
