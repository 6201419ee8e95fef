// The BERT family's tokenizers behind the Tokenizer interface: WordPiece (tokenizer.json, or
// vocab.txt with tokenizer_config.json's settings), and a byte-level BPE with an encoder's
// special tokens (vocab.json + merges.txt holding [CLS], [SEP], [MASK] and [PAD]: how
// attnlens' own encoder reads the same text as its causal model).
#include <attnlens/wordpiece.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "models/bert/family.hpp"
#include "text/unicode_tables.hpp"
#include "text/unicode_utf8.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace attnlens {
namespace {

// Whether a special token written in the text takes the white space on its left (lstrip) or
// right (rstrip) with it, as Hugging Face's added tokens do: that space then makes no token of
// its own and belongs to the special token's span.
struct Strip {
  bool left = false;
  bool right = false;
};

// White space as Hugging Face's added tokens strip it (Unicode White_Space): the pre-tokenizer's
// class of JS \s, which adds only U+FEFF to it.
bool is_white_space(char32_t cp) noexcept {
  return cp != 0xFEFF && detail::char_class(cp) == detail::CharClass::Space;
}

// The start of the white space that ends text[from, at) (at when there is none). text is valid
// UTF-8 (the caller's encode checked it).
std::size_t white_space_before(std::string_view text, std::size_t from, std::size_t at) noexcept {
  while (at > from) {
    std::size_t start = at - 1;
    while (start > from && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
      --start;
    const detail::Utf8Char c = detail::decode_utf8_char(text, start);
    if (c.status != detail::Utf8Status::Ok || start + c.length != at ||
        !is_white_space(c.code_point))
      break;
    at = start;
  }
  return at;
}

// The end of the white space that starts at text[at] (at when there is none).
std::size_t white_space_after(std::string_view text, std::size_t at) noexcept {
  while (at < text.size()) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, at);
    if (c.status != detail::Utf8Status::Ok || !is_white_space(c.code_point)) break;
    at += c.length;
  }
  return at;
}

// [CLS] text [SEP] and [CLS] a [SEP] b [SEP] (RoBERTa: <s> text </s> and <s> a </s></s> b </s>,
// every token of type 0), with a special token written out in the text
// ("[MASK]", "[SEP]", ...) read as that token, as Hugging Face's tokenizers match their added
// tokens before normalising; the text between is the subclass's pieces().
class EncoderTokenizer : public Tokenizer {
 public:
  std::vector<EncodedToken> encode(std::string_view text) const override {
    std::vector<EncodedToken> out;
    out.push_back(special(cls_, 0, 0, 0));
    append(out, text, 0);
    out.push_back(special(sep_, text.size(), 0, 0));
    return out;
  }
  std::vector<EncodedToken> encode_pair(std::string_view a, std::string_view b) const override {
    std::vector<EncodedToken> out;
    out.push_back(special(cls_, 0, 0, 0));
    append(out, a, 0);
    out.push_back(special(sep_, a.size(), 0, 0));
    // RobertaProcessing: a second </s> opens the second text, and RoBERTa has one token type.
    const std::int32_t type_b = roberta_pairs_ ? 0 : 1;
    if (roberta_pairs_) out.push_back(special(sep_, 0, type_b, 1));
    append(out, b, 1, type_b);
    out.push_back(special(sep_, b.size(), type_b, 1));
    return out;
  }
  std::int32_t mask_id() const noexcept override { return mask_; }
  std::int32_t unk_id() const noexcept override { return unk_; }
  std::vector<std::int32_t> special_ids() const override {
    std::vector<std::int32_t> out;
    for (const std::int32_t id : specials_)
      if (id >= 0) out.push_back(id);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 protected:
  // Ids of [CLS], [SEP], [MASK], [PAD], [UNK] (-1 where the vocabulary has none); [CLS] and
  // [SEP] must exist (the subclass checks).
  void set_specials(std::int32_t cls, std::int32_t sep, std::int32_t mask, std::int32_t pad,
                    std::int32_t unk) {
    cls_ = cls;
    sep_ = sep;
    mask_ = mask;
    unk_ = unk;
    specials_ = {mask, cls, sep, pad, unk};
    strips_.assign(specials_.size(), Strip{});
  }
  // Pairs as RobertaProcessing writes them: <s> a </s></s> b </s>, all of type 0.
  void set_roberta_pairs() noexcept { roberta_pairs_ = true; }
  // How the special token `id` (one of set_specials()'s) strips white space around it.
  void set_strip(std::int32_t id, Strip strip) {
    for (std::size_t k = 0; k < specials_.size(); ++k)
      if (id >= 0 && specials_[k] == id) strips_[k] = strip;
  }
  // The tokens of a stretch of text without special tokens: (id, begin, end) in its bytes.
  virtual void pieces(std::string_view text, std::vector<EncodedToken>& out) const = 0;

 private:
  static EncodedToken special(std::int32_t id, std::size_t at, std::int32_t type,
                              std::int32_t segment) {
    return EncodedToken{id, at, at, type, segment, true};
  }

  void append(std::vector<EncodedToken>& out, std::string_view text, std::int32_t segment,
              std::int32_t type = -1) const {
    if (type < 0) type = segment;
    // The next occurrence of each special token; each is searched again only once passed, so
    // the whole text is scanned once per special token (linear, however many [MASK]s it holds).
    std::vector<std::string> names;
    std::vector<std::size_t> next;
    for (const std::int32_t id : specials_) {
      names.push_back(id < 0 ? std::string() : token_text(id));
      next.push_back(id < 0 ? std::string_view::npos : text.find(names.back()));
    }
    std::size_t from = 0;
    for (;;) {
      std::size_t at = text.size(), k_found = names.size();
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (next[k] < from) next[k] = text.find(names[k], from);
        if (next[k] < at) {
          at = next[k];
          k_found = k;
        }
      }
      // An lstrip token takes the white space before it (back to the previous special token),
      // an rstrip token the white space after it: no bare-space token beside it.
      const bool found = k_found < names.size();
      const std::size_t begin =
          found && strips_[k_found].left ? white_space_before(text, from, at) : at;
      const std::size_t first = out.size();
      pieces(text.substr(from, begin - from), out);
      for (std::size_t i = first; i < out.size(); ++i) {
        out[i].begin += from;
        out[i].end += from;
        out[i].type = type;
        out[i].segment = segment;
      }
      if (!found) return;
      std::size_t end = at + names[k_found].size();
      if (strips_[k_found].right) end = white_space_after(text, end);
      out.push_back(EncodedToken{specials_[k_found], begin, end, type, segment, false});
      from = end;
    }
  }

  std::int32_t cls_ = -1, sep_ = -1, mask_ = -1, unk_ = -1;
  bool roberta_pairs_ = false;
  std::vector<std::int32_t> specials_;
  std::vector<Strip> strips_;
};

// lstrip and rstrip of tokenizer.json's added tokens, by their text. A file that parsed as a
// WordPiece tokenizer: only the flags' types are checked here.
std::map<std::string, Strip, std::less<>> added_token_strips(std::string_view tokenizer_json) {
  std::map<std::string, Strip, std::less<>> out;
  const detail::JsonValue root = detail::parse_json(tokenizer_json, "tokenizer.json");
  const detail::JsonValue* added = root.find("added_tokens");
  if (added == nullptr || added->is_null()) return out;
  if (!added->is_array()) {
    detail::fail(ErrorCode::BAD_FILE, "tokenizer.json: \"added_tokens\" is ", added->kind_name(),
                 "; expected an array");
  }
  for (const detail::JsonValue& token : added->items()) {
    const detail::JsonValue* content = token.is_object() ? token.find("content") : nullptr;
    if (content == nullptr || !content->is_string()) continue;
    const auto flag = [&](const char* key) {
      const detail::JsonValue* v = token.find(key);
      if (v == nullptr || v->is_null()) return false;
      if (!v->is_bool()) {
        detail::fail(ErrorCode::BAD_FILE, "tokenizer.json: added_tokens: \"", content->as_string(),
                     "\": \"", key, "\" is ", v->kind_name(), "; expected true or false");
      }
      return v->as_bool();
    };
    out[content->as_string()] = Strip{flag("lstrip"), flag("rstrip")};
  }
  return out;
}

class WordPieceAdapter final : public EncoderTokenizer {
 public:
  // `files`: the files it was read from, as given, which save() writes back (every setting a
  // tokenizer.json or tokenizer_config.json holds survives, read by the same code).
  WordPieceAdapter(WordPieceTokenizer tokenizer, std::string note,
                   std::vector<std::pair<std::string, std::string>> files,
                   const std::map<std::string, Strip, std::less<>>& strips = {})
      : tokenizer_(std::move(tokenizer)), note_(std::move(note)), files_(std::move(files)) {
    set_specials(tokenizer_.cls_id(), tokenizer_.sep_id(), tokenizer_.mask_id(),
                 tokenizer_.pad_id(), tokenizer_.unk_id());
    for (const auto& [content, strip] : strips)
      set_strip(tokenizer_.token_to_id(content), strip);
  }
  const char* kind() const noexcept override { return "WordPiece"; }
  std::int32_t vocab_size() const noexcept override { return tokenizer_.vocab_size(); }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    return tokenizer_.decode(ids);
  }
  std::string token_text(std::int32_t id) const override { return tokenizer_.id_to_token(id); }
  std::int32_t token_to_id(std::string_view token) const override {
    return tokenizer_.token_to_id(token);
  }
  std::vector<std::pair<std::string, std::string>> files() const override { return files_; }
  std::string note() const override { return note_; }

 private:
  void pieces(std::string_view text, std::vector<EncodedToken>& out) const override {
    for (const WordPieceToken& t : tokenizer_.tokens(text))
      out.push_back(EncodedToken{t.id, t.begin, t.end, 0, 0, false});
  }
  WordPieceTokenizer tokenizer_;
  std::string note_;
  std::vector<std::pair<std::string, std::string>> files_;
};

// A vocab.txt folder's tokenizer_config.json when it had none: the settings the tokenizer was
// read with (BertTokenizer's defaults), so that the saved folder reads back the same.
std::string default_tokenizer_config(const WordPieceOptions& o) {
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  return std::string("{\n  \"do_lower_case\": ") + flag(o.lower_case) +
         ",\n  \"strip_accents\": " + flag(o.strips_accents()) +
         ",\n  \"tokenize_chinese_chars\": " + flag(o.tokenize_chinese_chars) +
         ",\n  \"tokenizer_class\": \"BertTokenizer\"\n}\n";
}

class BpeEncoderAdapter final : public EncoderTokenizer {
 public:
  // The special tokens' names are BERT's ([CLS], [SEP], [MASK], [PAD]: attnlens' own encoder)
  // or, in a vocabulary without [CLS], RoBERTa's (<s>, </s>, <mask>, <pad>, <unk>).
  explicit BpeEncoderAdapter(BpeTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {
    const bool roberta = tokenizer_.token_to_id("[CLS]") < 0 && tokenizer_.token_to_id("<s>") >= 0;
    const char* const cls_name = roberta ? "<s>" : "[CLS]";
    const char* const sep_name = roberta ? "</s>" : "[SEP]";
    const std::int32_t cls = tokenizer_.token_to_id(cls_name),
                       sep = tokenizer_.token_to_id(sep_name);
    if (cls < 0 || sep < 0) {
      detail::fail(ErrorCode::BAD_FILE, "vocab.json: an encoder's byte-level BPE needs the ",
                   "special tokens \"[CLS]\" and \"[SEP]\" (or RoBERTa's \"<s>\" and \"</s>\")",
                   " (no ", cls < 0 ? cls_name : sep_name, ")");
    }
    const std::int32_t mask = tokenizer_.token_to_id(roberta ? "<mask>" : "[MASK]");
    set_specials(cls, sep, mask, tokenizer_.token_to_id(roberta ? "<pad>" : "[PAD]"),
                 roberta ? tokenizer_.token_to_id("<unk>") : -1);
    if (roberta) set_roberta_pairs();
    // A byte-level BPE writes a word's space into the word's token (" man"), so a masked word's
    // space belongs to the mask: "a [MASK] in" must read as "a", "[MASK]", " in", not with a
    // bare " " the model never saw before a word. Hugging Face gives RoBERTa's <mask> lstrip
    // for the same reason.
    set_strip(mask, Strip{true, false});
  }
  const char* kind() const noexcept override { return "byte-level BPE"; }
  std::int32_t vocab_size() const noexcept override { return tokenizer_.vocab_size(); }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    return tokenizer_.decode(ids);
  }
  std::string token_text(std::int32_t id) const override { return tokenizer_.token_bytes(id); }
  std::int32_t token_to_id(std::string_view token) const override {
    return tokenizer_.token_to_id(token);
  }
  std::vector<std::pair<std::string, std::string>> files() const override {
    return {{"vocab.json", tokenizer_.to_vocab_json()}, {"merges.txt", tokenizer_.to_merges_txt()}};
  }

 private:
  void pieces(std::string_view text, std::vector<EncodedToken>& out) const override {
    for (const BpeToken& t : tokenizer_.tokens(text))
      out.push_back(EncodedToken{t.id, t.begin, t.end, 0, 0, false});
  }
  BpeTokenizer tokenizer_;
};

}  // namespace

std::unique_ptr<Tokenizer> as_encoder_tokenizer(BpeTokenizer tokenizer) {
  return std::make_unique<BpeEncoderAdapter>(std::move(tokenizer));
}

namespace detail {

std::unique_ptr<Tokenizer> load_wordpiece(const ModelFiles& files, std::int32_t vocab_size) {
  const auto find = [&](const char* name) -> std::optional<std::string_view> {
    const auto it = files.texts.find(name);
    return it == files.texts.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  };
  const auto json = find("tokenizer.json");
  const auto vocab = find("vocab.txt");
  const auto config = find("tokenizer_config.json");
  const auto bpe_vocab = find("vocab.json");
  const auto merges = find("merges.txt");
  std::unique_ptr<Tokenizer> out;
  const char* file = nullptr;
  if (json) {
    std::vector<std::pair<std::string, std::string>> kept = {
        {"tokenizer.json", std::string(*json)}};
    // (Read beside tokenizer.json by nothing here, but part of the folder as loaded.)
    if (config) kept.emplace_back("tokenizer_config.json", std::string(*config));
    out = std::make_unique<WordPieceAdapter>(WordPieceTokenizer::from_tokenizer_json(*json), "",
                                             std::move(kept), added_token_strips(*json));
    file = "tokenizer.json";
  } else if (vocab) {
    WordPieceOptions options;
    bool said = false;
    if (config) options = WordPieceTokenizer::options_from_tokenizer_config(*config, &said);
    std::string note;
    if (!said) {
      note =
          "The folder does not say whether the model is cased (tokenizer_config.json's "
          "do_lower_case): text is lower-cased and its accents stripped, as Hugging Face's "
          "BertTokenizer does by default.";
    }
    std::vector<std::pair<std::string, std::string>> kept = {
        {"vocab.txt", std::string(*vocab)},
        {"tokenizer_config.json",
         config ? std::string(*config) : default_tokenizer_config(options)}};
    out = std::make_unique<WordPieceAdapter>(WordPieceTokenizer::from_vocab_txt(*vocab, options),
                                             std::move(note), std::move(kept));
    file = "vocab.txt";
  } else if (bpe_vocab && merges) {
    out = as_encoder_tokenizer(BpeTokenizer::from_files(*bpe_vocab, *merges));
    file = "vocab.json";
  } else if (bpe_vocab || merges) {
    fail(ErrorCode::BAD_FILE, bpe_vocab ? "merges.txt" : "vocab.json",
         ": missing; a byte-level BPE needs both vocab.json and merges.txt");
  } else if (config) {
    fail(ErrorCode::BAD_FILE, "tokenizer_config.json was given without the tokenizer's files ",
         "(tokenizer.json or vocab.txt)");
  }
  if (out && out->vocab_size() > vocab_size) {
    fail(ErrorCode::BAD_FILE, file, ": the tokenizer has ", out->vocab_size(),
         " tokens but config.json's vocab_size is ", vocab_size, " (ids from ", vocab_size,
         " on have no embedding)");
  }
  return out;
}

}  // namespace detail
}  // namespace attnlens
