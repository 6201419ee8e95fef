// attnlens — BERT's WordPiece tokenizer (BERT, DistilBERT, MiniLM, Google's small BERTs): load
// from vocab.txt or a Hugging Face tokenizer.json, encode single texts and pairs with [CLS] and
// [SEP], tokens with byte offsets into the text, decode.
//
// How BERT tokenizes (google-research/bert's tokenization.py; Hugging Face's BertNormalizer,
// BertPreTokenizer and WordPiece model), step by step on the text's code points:
//   1. Cleaning (clean_text): U+0000, U+FFFD and controls (\p{Cc}, \p{Cf}; not \t \n \r) are
//      dropped; white space (\p{White_Space}) becomes a space.
//   2. Chinese characters (tokenize_chinese_chars): each code point of the CJK ideograph blocks
//      BERT lists (U+4E00..9FFF, 3400..4DBF, 20000..2A6DF, 2A700..2B73F, 2B740..2B81F,
//      2B820..2CEAF, F900..FAFF, 2F800..2FA1F) becomes a word of its own.
//   3. Words are split at white space.
//   4. Lower-casing (lower_case): each code point's full lower case (U+0130 "İ" becomes "i"
//      and U+0307). Accent stripping (strip_accents): NFD, then nonspacing marks (\p{Mn}) are
//      dropped ("é" -> "e", Hangul syllables -> their jamo, "ﬁ" stays: NFD is canonical only).
//   5. Punctuation (\p{P}, and ASCII 33-47, 58-64, 91-96, 123-126 such as $ + < ^ ` |) is split
//      off: each such character is a word of its own.
//   6. Each word is cut greedily into the longest vocabulary entries from its start; pieces
//      after the first are looked up with the continuing prefix ("##ing"). A word of more than
//      max_input_chars_per_word code points, or one with no match at some point, is one [UNK].
// The character data (white space, controls, punctuation, marks, lower case, NFD) comes from
// tables generated from Node (kWordPieceUnicodeVersion() names the Unicode version).
//
// Where implementations differ, this one follows Hugging Face's `tokenizers` (what
// BertTokenizerFast runs) except as noted:
//   - Controls are \p{Cc} and \p{Cf}, as google-research/bert; Hugging Face also drops private
//     use characters and unassigned code points (\p{Co}, \p{Cn} of its Unicode version).
//   - Lower-casing is per code point: a final capital sigma becomes σ, as `tokenizers` does; the
//     Python BertTokenizer (str.lower) and tokenizers.js (toLowerCase) give ς.
//   - CJK is exactly BERT's list above (`tokenizers` 0.x misses U+2B820..2B91F).
//   - No NFC step (newer Python BertTokenizers compose the text first; `tokenizers` does not).
//   - Special tokens written in the text ("[SEP]") are ordinary text, not their ids.
// Offsets are byte offsets into the text given, before any normalization.
#pragma once

#include <attnlens/bpe.hpp>  // kMaxBpeTextBytes

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// The Unicode version of the character tables behind normalization, e.g. "17.0".
const char* wordpiece_unicode_version() noexcept;

// The longest vocabulary token, special token or continuation prefix a WordPiece tokenizer reads,
// in bytes (BERT's longest are under 30): every text is searched for the special tokens and every
// word matched against the longest token at each of its characters, so a token's length
// multiplies the time of every text. Longer ones are Error(BAD_FILE) (BAD_ARGUMENT in options).
inline constexpr std::size_t kMaxWordPieceTokenBytes = 256;

struct WordPieceOptions {
  // Lower-case the text (BertTokenizer's default do_lower_case = true; "uncased" models).
  bool lower_case = true;
  // Strip accents (NFD, then drop \p{Mn}). Unset: the same as lower_case, as BERT does.
  std::optional<bool> strip_accents;
  // Make each CJK ideograph a word of its own.
  bool tokenize_chinese_chars = true;
  // Drop U+0000, U+FFFD and controls; turn white space into spaces. When false, controls stay
  // in the words and only white space separates them.
  bool clean_text = true;
  // A longer word (in code points, after normalization) is one [UNK]. At least 0.
  std::int32_t max_input_chars_per_word = 100;
  // Marks a piece that continues a word, in the vocabulary ("##ing").
  std::string continuing_prefix = "##";
  // The special tokens. unk, cls and sep must be in the vocabulary; pad and mask may be absent.
  std::string unk = "[UNK]";
  std::string cls = "[CLS]";
  std::string sep = "[SEP]";
  std::string pad = "[PAD]";
  std::string mask = "[MASK]";

  // strip_accents as it applies: its value, or lower_case when unset.
  bool strips_accents() const noexcept { return strip_accents.value_or(lower_case); }
};

// One token: its id and the bytes of the original text it came from, [begin, end).
//   - A piece covers the original characters its normalized characters came from: "##ing"
//     covers only its own bytes; "i" from "İ" covers both bytes of "İ".
//   - [UNK] covers its whole word.
//   - [CLS] and [SEP] (from encode) cover nothing: begin == end, at 0 for [CLS] and at the end
//     of their text for [SEP].
// Tokens come in text order and do not overlap, with two exceptions: when one character
// normalizes to several (a Hangul syllable to its 2 or 3 jamo when accents are stripped; "İ" to
// "i" and U+0307 when they are not) and piece boundaries fall between them, each of those pieces
// covers that whole character, as in Hugging Face's offsets; and when accent stripping's NFD
// reorders spacing marks that were not in canonical order (a few viramas and musical symbols),
// the pieces follow the reordered characters.
struct WordPieceToken {
  std::int32_t id = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// A model input: [CLS] A [SEP] for one text, [CLS] A [SEP] B [SEP] for a pair.
struct WordPieceEncoding {
  std::vector<std::int32_t> ids;
  // 0 for [CLS], A's tokens and the first [SEP]; 1 for B's tokens and the last [SEP].
  std::vector<std::int32_t> token_types;
  // One per id; offsets into the text given by `segments`.
  std::vector<WordPieceToken> tokens;
  // Which text each token's offsets refer to: 0 (A) or 1 (B).
  std::vector<std::int32_t> segments;
};

class WordPieceTokenizer {
 public:
  // Loads BERT's vocab.txt given as its text: one token per line, id = line number from 0;
  // lines end in "\n" or "\r\n", and the last line may end in one final line end or none.
  // `file_name` names the file in messages. Throws Error(BAD_FILE) naming the file and the line
  // for an empty line, a token already given on an earlier line (naming both lines) or a line
  // that is not valid UTF-8, and naming the token when options.unk, options.cls or options.sep
  // is not in the file; Error(BAD_ARGUMENT) for options.max_input_chars_per_word < 0, or over
  // 2^31 - 1 tokens.
  static WordPieceTokenizer from_vocab_txt(std::string_view vocab_txt,
                                           const WordPieceOptions& options = {},
                                           std::string_view file_name = "vocab.txt");

  // Loads a Hugging Face tokenizer.json given as its text. It must have
  //   "model": {"type": "WordPiece", "vocab": {token: id, ...}, "unk_token",
  //             "continuing_subword_prefix", "max_input_chars_per_word"} (the last three
  //             optional: "[UNK]", "##", 100), ids the integers 0 .. n-1, each once;
  //   "normalizer": a BertNormalizer {"clean_text", "handle_chinese_chars", "strip_accents"
  //             (null: follows "lowercase"), "lowercase"}, or null (no normalization at all);
  //   "pre_tokenizer": a BertPreTokenizer.
  // [CLS] and [SEP] are read from a "post_processor" of type BertProcessing ("cls", "sep") or
  // TemplateProcessing (the first and last special token of "single"); [PAD] from "padding"
  // ("pad_token") when given; the rest keep WordPieceOptions' defaults. "added_tokens" are not
  // read (their text is not matched in texts). Throws Error(BAD_FILE) naming the file and the
  // key (and the type, for a model, normalizer, pre-tokenizer or post-processor of another type)
  // for text that is not such JSON, and as from_vocab_txt for the vocabulary.
  static WordPieceTokenizer from_tokenizer_json(std::string_view tokenizer_json,
                                                std::string_view file_name = "tokenizer.json");

  // Reads the options of a Hugging Face tokenizer_config.json given as its text: the booleans
  // "do_lower_case", "strip_accents" (or null) and "tokenize_chinese_chars", and the special
  // tokens "unk_token", "cls_token", "sep_token", "pad_token", "mask_token" (a string, or an
  // object with a string "content"), each when present; the rest keep their defaults. When the
  // file has no "do_lower_case", BertTokenizer's default (true) applies; `said_lower_case`
  // (optional) reports whether the file said. Throws Error(BAD_FILE) naming the file and the key
  // for text that is not a JSON object or a value of the wrong type.
  static WordPieceOptions options_from_tokenizer_config(
      std::string_view json, bool* said_lower_case = nullptr,
      std::string_view file_name = "tokenizer_config.json");

  // The tokens of `text` (UTF-8), without [CLS] and [SEP]. Throws Error(INVALID_UTF8) naming the
  // byte offset of the first invalid sequence, Error(TOO_LARGE) over kMaxBpeTextBytes (64 MiB).
  // Time linear in the text's length.
  std::vector<WordPieceToken> tokens(std::string_view text) const;

  // [CLS] tokens(text) [SEP], with token types and segments. Errors as tokens().
  WordPieceEncoding encode(std::string_view text) const;

  // [CLS] tokens(a) [SEP] tokens(b) [SEP]. Errors as tokens(), for either text (the message says
  // which).
  WordPieceEncoding encode_pair(std::string_view a, std::string_view b) const;

  // The tokens' text joined by spaces, except that a token starting with the continuing prefix
  // joins the one before it without the prefix ("un ##want ##ed" -> "unwanted"; a first token
  // stays whole), as Hugging Face's decode with clean_up_tokenization_spaces=False. Special tokens
  // are written as themselves ("[CLS] hello [SEP]"). Throws Error(BAD_ARGUMENT) naming the index of
  // the first id outside [0, vocab_size()).
  std::string decode(const std::vector<std::int32_t>& ids) const;

  // Number of tokens (ids are 0 .. vocab_size() - 1).
  std::int32_t vocab_size() const noexcept { return static_cast<std::int32_t>(tokens_.size()); }

  // The id of a token as written in the vocabulary (e.g. "##ing", "[CLS]"), or -1.
  std::int32_t token_to_id(std::string_view token) const;

  // The token as written in the vocabulary. Throws Error(BAD_ARGUMENT) for an id outside
  // [0, vocab_size()).
  const std::string& id_to_token(std::int32_t id) const;

  // Ids of the special tokens; pad_id() and mask_id() are -1 when the vocabulary lacks them.
  std::int32_t unk_id() const noexcept { return unk_id_; }
  std::int32_t cls_id() const noexcept { return cls_id_; }
  std::int32_t sep_id() const noexcept { return sep_id_; }
  std::int32_t pad_id() const noexcept { return pad_id_; }
  std::int32_t mask_id() const noexcept { return mask_id_; }

  const WordPieceOptions& options() const noexcept { return options_; }

 private:
  // Tokenizers come from the loaders above only: every one has a vocabulary and its specials.
  WordPieceTokenizer() = default;
  // Builds the ids of the specials and the trie from tokens_ and options_; `file_name` names the
  // file in messages.
  void build(std::string_view file_name);
  // Appends the tokens of `text` to `out`; `what` names the text in messages ("text", "a", "b").
  void tokenize(std::string_view text, const char* what, std::vector<WordPieceToken>& out) const;

  WordPieceOptions options_;
  std::vector<std::string> tokens_;  // id -> token
  std::int32_t unk_id_ = -1, cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, mask_id_ = -1;

  // A byte trie of all tokens (token_to_id walks it too): node n's children are the edges
  // [first_edge[n], first_edge[n + 1]) with labels sorted; node_token[n] is the id of the token
  // that ends at n, or -1. Node 0 is the root; continuation_node_ is the node reached by
  // continuing_prefix (-1 when no token starts with it).
  std::vector<std::uint32_t> first_edge_;
  std::vector<std::int32_t> node_token_;
  std::vector<std::uint8_t> edge_label_;
  std::vector<std::uint32_t> edge_node_;
  std::int32_t continuation_node_ = -1;
};

}  // namespace attnlens
