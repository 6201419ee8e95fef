// Private: a tokenizer read from a Hugging Face `tokenizer.json` (the `tokenizers` library's file
// format), run as that library runs it: added tokens are cut out of the raw text, each remaining
// section is normalized, pre-tokenized into pieces and cut by the model into tokens, and the
// post-processor adds the template's special tokens. decode() runs the file's decoders.
//
// Components read (anything else is Error(BAD_FILE) naming the file, the component and its type):
//   model:          BPE (vocab, merges as "a b" strings or [a, b] pairs, unk_token, fuse_unk,
//                   byte_fallback "<0xAB>" tokens, ignore_merges)
//   normalizer:     NFC, Replace (string pattern), Prepend, Lowercase, Sequence, null
//   pre_tokenizer:  ByteLevel (add_prefix_space, use_regex), Split with one of the regexes of
//                   known_split_patterns() or a string, Metaspace, Digits (SmolLM2's),
//                   Sequence, null
//   post_processor: TemplateProcessing (single), ByteLevel, Sequence, null
//   decoder:        ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, Sequence, null
// A Split regex is recognised by its exact text and run by hand-written code (as llama.cpp's
// tokenizer does): a regex engine would be larger than the rest of the pipeline.
//
// The reference is Hugging Face's JS implementation, `@huggingface/tokenizers`
// (tests/js/tokenizer-json-parity.test.mjs compares ids on the tokenizers of Llama 3, Qwen 3 and
// Llama 2). Where it differs from the Rust `tokenizers`, this class follows the JS one except
// as noted:
//   - single_word added tokens match only between non-word characters (Rust; JS ignores it).
//   - Metaspace's split cuts before each replacement character (Rust; JS never splits).
//   - fuse_unk fuses unknown tokens within one piece (Rust; JS across a whole section).
//   - Digits splits at every \p{N} (Rust's char::is_numeric; JS at ASCII digits only).
// Offsets are byte offsets into the text given: a token covers the original characters its
// normalized bytes came from (a byte-level token that cuts a character covers that whole
// character); a template's special tokens cover nothing (begin == end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct TokenizerJsonToken {
  std::int32_t id = 0;
  std::size_t begin = 0;  // byte offsets into the encoded text, [begin, end)
  std::size_t end = 0;
  bool special = false;  // an added token marked "special", or a template's special token
};

// What tokenizer_config.json says about the special tokens transformers adds around a text.
// Unset values leave the tokenizer.json's post-processor as it is.
struct TokenizerJsonConfig {
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  std::string bos_token;  // empty when the file has none (or null)
  std::string eos_token;
};

// Reads add_bos_token, add_eos_token, bos_token and eos_token (a string or an object with a
// "content" string) of a tokenizer_config.json; other keys are ignored. Error(BAD_FILE) naming
// `file_name` and the key for a value of the wrong kind.
TokenizerJsonConfig read_tokenizer_config(std::string_view json, std::string_view file_name);

// The Split regexes known_split_patterns() recognises, as written in tokenizer.json.
std::vector<std::string> known_split_patterns();

class TokenizerJson {
 public:
  // Reads a tokenizer.json's text. `file_name` names the file in messages. Error(BAD_FILE)
  // naming the file and the field for anything malformed or unsupported (see above).
  static TokenizerJson from_json(std::string_view json,
                                 std::string_view file_name = "tokenizer.json");

  // Replaces the post-processor as transformers' LlamaTokenizerFast does when
  // tokenizer_config.json sets add_bos_token or add_eos_token: the template becomes
  // [bos if add_bos] text [eos if add_eos]. Error(BAD_FILE) naming `file_name` when a token to
  // add is unset or not in the vocabulary.
  void apply_config(const TokenizerJsonConfig& config, std::string_view file_name);

  // The tokens of `text` (UTF-8), with the template's special tokens when add_special_tokens.
  // Error(INVALID_UTF8) naming the offset of the first invalid sequence, Error(TOO_LARGE) over
  // kMaxBpeTextBytes (bpe.hpp).
  std::vector<TokenizerJsonToken> encode(std::string_view text,
                                         bool add_special_tokens = true) const;

  // The text of `ids` through the file's decoders (tokens joined by spaces when it has none);
  // invalid UTF-8 from byte tokens becomes U+FFFD. Error(BAD_ARGUMENT) naming the index of an
  // id that no token has.
  std::string decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens = false) const;

  // The id of a token as written in the file (vocabulary or added token), or -1.
  std::int32_t token_to_id(std::string_view token) const;
  // One more than the largest id.
  std::int32_t vocab_size() const noexcept;
  // One more than the largest id a model needs an embedding row for: the model vocabulary's, the
  // added tokens' and the template's, but not special added tokens past them that only a text
  // naming them produces. Gemma 3's text models ship the
  // multimodal models' file, whose <image_soft_token> is id 262 144 beside an embedding of
  // 262 144 rows; such a token appears only where a text names it, and its id is then refused
  // by the model's forward like any id past its vocabulary.
  std::int32_t embedded_size() const noexcept;
  // The model's unk_token id, or -1 when it names none.
  std::int32_t unk_id() const noexcept;
  // The special added tokens' ids, ascending.
  std::vector<std::int32_t> special_ids() const;
  // The byte-fallback tokens' ids ("<0x00>" .. "<0xFF>" in the vocabulary), ascending.
  std::vector<std::int32_t> byte_ids() const;

  struct Impl;

 private:
  // The file's tables, shared by copies and never changed after from_json().
  std::shared_ptr<const Impl> impl_;
  // The post-processor's template (special token ids, the text at text_at_), which
  // apply_config() may replace: each copy's own.
  std::vector<std::int32_t> template_ids_;
  std::size_t text_at_ = 0;
};

}  // namespace attnlens
