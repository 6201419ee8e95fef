// attnlens — GPT-2's byte-level BPE tokenizer: load from vocab.json + merges.txt, encode,
// decode, tokens with byte offsets, save, and a trainer for new vocabularies.
//
// How GPT-2 tokenizes (and so this class, bit for bit like the reference JS encoder
// `gpt-3-encoder`):
//   1. Pre-tokenization splits UTF-8 text with the regex
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      as JavaScript evaluates it with the `u` flag (\s is JS white space; the Unicode
//      classes come from tables generated from Node, see kBpeUnicodeVersion).
//   2. Each piece's bytes start as one token per byte; the merges (ranked by their line in
//      merges.txt) then join the adjacent pair of lowest rank, every non-overlapping
//      occurrence left to right, until no pair has a rank.
//   3. vocab.json maps each token to its id. Tokens are written there in GPT-2's byte-to-unicode
//      alphabet: printable bytes stand for themselves, the others (space, control bytes, ...)
//      for U+0100 onwards, e.g. a space is "Ġ" (U+0120).
// Special tokens such as <|endoftext|> have an id but are never produced by encode(): the
// text "<|endoftext|>" is encoded as ordinary characters, as the reference does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnlens {

// The Unicode version of the character tables behind pre-tokenization, e.g. "17.0".
const char* bpe_unicode_version() noexcept;

// Longest text encode() and tokens() accept, in bytes (64 MiB). Longer is Error(TOO_LARGE).
inline constexpr std::size_t kMaxBpeTextBytes = std::size_t{64} << 20;

// One token of a text: its id and where its bytes are.
struct BpeToken {
  std::int32_t id = 0;
  std::size_t begin = 0;  // byte offset of the token's first byte in the text
  std::size_t end = 0;    // one past its last byte; tokens tile the text
  std::string bytes;      // text[begin, end): may be part of a UTF-8 character
};

struct BpeTrainOptions;

class BpeTokenizer {
 public:
  // Loads GPT-2-style tokenizer files given as their text.
  //   vocab_json: a JSON object {token: id}. Ids must be the integers 0 .. n-1, each once;
  //               tokens are written in the byte-to-unicode alphabet (above), and each of the
  //               256 single-byte tokens must be present.
  //   merges_txt: one merge per line, "left right" (two tokens separated by one space), rank =
  //               line order; an optional first line starting with "#version"; empty lines at
  //               the end and "\r\n" line ends are accepted. Both parts and their concatenation
  //               must be tokens of vocab_json; a merge may not be listed twice.
  //   vocab_name, merges_name: the file names used in messages.
  // Throws Error(BAD_FILE) naming the file and the entry (or line) at fault.
  static BpeTokenizer from_files(std::string_view vocab_json, std::string_view merges_txt,
                                 std::string_view vocab_name = "vocab.json",
                                 std::string_view merges_name = "merges.txt");

  // Appends `tokens` (their raw bytes) with the next ids, e.g. an encoder's "[CLS]", "[SEP]",
  // "[MASK]" and "[PAD]". encode() never produces them (no merge makes them); token_to_id()
  // finds them and to_vocab_json() writes them. Throws Error(BAD_ARGUMENT) naming a token that
  // is empty or already in the vocabulary.
  void add_special_tokens(const std::vector<std::string>& tokens);

  // The token ids of `text` (UTF-8). Throws Error(INVALID_UTF8) naming the byte offset of the
  // first invalid sequence, Error(TOO_LARGE) over kMaxBpeTextBytes. Empty text gives no ids.
  std::vector<std::int32_t> encode(std::string_view text) const;

  // As encode(), with each token's byte range and bytes.
  std::vector<BpeToken> tokens(std::string_view text) const;

  // The bytes of the tokens, concatenated: decode(encode(text)) == text for any valid UTF-8.
  // The result need not be valid UTF-8 when `ids` cut a character. Throws Error(BAD_ARGUMENT)
  // naming the index of the first id outside [0, vocab_size()).
  std::string decode(const std::vector<std::int32_t>& ids) const;
  std::string decode(const std::int32_t* ids, std::size_t count) const;

  // Number of tokens (ids are 0 .. vocab_size() - 1).
  std::int32_t vocab_size() const noexcept { return static_cast<std::int32_t>(tokens_.size()); }

  // Number of merges (their ranks are 0 .. merge_count() - 1).
  std::size_t merge_count() const noexcept { return merges_.size(); }

  // The token as written in vocab.json (byte-to-unicode alphabet), e.g. "Ġthe". Throws
  // Error(BAD_ARGUMENT) for an id outside [0, vocab_size()).
  std::string id_to_token(std::int32_t id) const;

  // The token's raw bytes, e.g. " the". Throws Error(BAD_ARGUMENT) like id_to_token().
  const std::string& token_bytes(std::int32_t id) const;

  // The id of a token written as in vocab.json (e.g. "<|endoftext|>" or "Ġthe"), or -1.
  std::int32_t token_to_id(std::string_view token) const;

  // vocab.json text as GPT-2's encoder.json is written (Python's json.dumps: ids in order,
  // ", " and ": " separators, non-ASCII as \uXXXX escapes, no final newline), so loading
  // GPT-2's file and writing it back gives the same bytes.
  std::string to_vocab_json() const;

  // merges.txt text as GPT-2's: "#version: 0.2", then one "left right" line per merge, each
  // line ending in "\n".
  std::string to_merges_txt() const;

 private:
  friend BpeTokenizer train_bpe(const std::vector<std::string_view>& corpus,
                                std::int32_t vocab_size, const BpeTrainOptions& options);

  // Fills by_bytes_, pairs_ and byte_ids_ from tokens_ and merges_.
  void build_index();
  // Appends the ids of one pre-token (its bytes) to `out`.
  void encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const;

  std::vector<std::string> tokens_;                            // id -> raw bytes
  std::vector<std::pair<std::int32_t, std::int32_t>> merges_;  // rank -> (left id, right id)
  std::unordered_map<std::string, std::int32_t> by_bytes_;     // raw bytes -> id
  // (left id << 32 | right id) -> (rank << 32 | merged id)
  std::unordered_map<std::uint64_t, std::uint64_t> pairs_;
  std::array<std::int32_t, 256> byte_ids_{};  // byte -> id of its single-byte token
};

struct BpeTrainOptions {
  // A pair is merged only if it occurs at least this often (default 2): training stops early,
  // with fewer merges, when the corpus has no such pair left.
  std::int64_t min_frequency = 2;
  // The special token appended after the merges (its id is the last). Empty: none.
  std::string end_of_text = "<|endoftext|>";
};

// Learns a GPT-2-style vocabulary from `corpus` (UTF-8 texts): 256 byte tokens (ids 0..255 in
// GPT-2's order), then one new token per merge (a merge whose result is already a token, as
// "a"+"bc" after "ab"+"c", reuses its id), then options.end_of_text.
//   1. Each text is pre-tokenized as encode() does and identical pieces are counted.
//   2. Repeatedly the most frequent adjacent pair over all pieces (weighted by their counts)
//      is merged; ties go to the pair with the smaller (left id, right id). Pair counts are
//      updated only for the pieces that contain the merged pair.
//   3. This stops at vocab_size tokens, or when no pair occurs options.min_frequency times.
// vocab_size counts everything: 256 + merges + (1 if end_of_text is set). Throws
// Error(BAD_ARGUMENT) if vocab_size leaves no room for one merge or is over 2^24, if
// min_frequency < 1, or if end_of_text was learned as an ordinary token;
// Error(INVALID_UTF8) / Error(TOO_LARGE) for a text as encode() does.
BpeTokenizer train_bpe(const std::vector<std::string_view>& corpus, std::int32_t vocab_size,
                       const BpeTrainOptions& options = {});

}  // namespace attnlens
