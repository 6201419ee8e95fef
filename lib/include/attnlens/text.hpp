// attnlens — text to vectors: a UTF-8 tokenizer, hashed token embeddings and sinusoidal
// positional encodings.
#pragma once

#include <attnlens/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// Longest text tokenize() accepts, in bytes (1 MiB). Longer text is Error(TOO_LARGE).
inline constexpr std::size_t kMaxTextBytes = std::size_t{1} << 20;

struct Token {
  std::string text;       // the token as typed: the input's bytes [begin, end)
  std::string key;        // its case-folded form (simple Unicode case folding, UTF-8), which
                          // token_embeddings() hashes: "ÉCOLE" and "école" both have "école"
  std::size_t begin = 0;  // byte offset of the token's first byte in the input
  std::size_t end = 0;    // byte offset one past its last byte
};

// Splits UTF-8 text into word, punctuation and emoji tokens, after Unicode's word boundaries
// (UAX #29) without a dictionary. Character categories come from Unicode 17 tables.
//   - Whitespace (JS \s and Unicode White_Space), control characters and U+200B (zero-width
//     space) separate tokens and are dropped.
//   - Combining marks, joiners, variation selectors, emoji modifiers and other format
//     characters stay with the character before them (a mark after a space is a token alone;
//     marks of one script, like Devanagari vowel signs, count as that script's letters).
//   - Letters and numbers of alphabetic scripts (Latin, Greek, Cyrillic, Hangul, Arabic,
//     Devanagari, ...) form words; an apostrophe (' or U+2019) between two of them stays inside
//     ("don't"). Scripts are not split from each other, as in UAX #29.
//   - Each Han ideograph is a token of its own (as UAX #29 without a dictionary, and BERT's
//     Chinese tokenization): a run of ideographs would make a whole Chinese clause one token.
//   - A run of Hiragana is a token, and so is a run of Katakana; ー (prolonged sound mark)
//     continues either: 猫がマットの上に座った -> 猫 が マット の 上 に 座 った.
//   - Thai, Lao, Khmer, Myanmar and the Tai scripts need a dictionary to find words: a run of
//     them (what lies between spaces and punctuation, often a phrase) is one token.
//   - Each emoji is a token of its own, as one grapheme: with its modifiers (skin tones),
//     variation selectors and ZWJ sequences (a family is one token), a pair of regional
//     indicators (a flag; two flags are two tokens), tag sequences, and keycaps (#, * or a
//     digit, an optional U+FE0F, then U+20E3). Adjacent emoji are never merged.
//   - Every other character (punctuation, symbols, private use) is a token of its own.
// `text` keeps the input as typed; `key` is it with simple Unicode case folding applied to each
// code point (ASCII letters lowercased exactly as before, 'É' -> 'é', 'Σ'/'ς' -> 'σ').
// Empty or whitespace-only text gives no tokens. Throws Error(INVALID_UTF8) naming the byte
// offset of the first invalid sequence (overlong forms, surrogates and code points above
// U+10FFFF are invalid), and Error(TOO_LARGE) over kMaxTextBytes.
std::vector<Token> tokenize(std::string_view text);

// The embedding of one token: `dim` values, bit-identical on every platform for the same
// (token, dim, seed). Tokens of a small built-in vocabulary share a direction with their word
// class (determiners, animals, places, verbs, ...), so related words sit near each other;
// every other token gets a vector derived from a hash of its bytes and the seed. `token` is a
// hash key: pass a Token's `key` so that case variants share a vector. Entries have
// mean 0 and variance 1. Throws Error(BAD_ARGUMENT) if dim < 1.
Eigen::VectorXf token_embedding(std::string_view token, int dim, std::uint64_t seed);

// Rows are token_embedding() of each token's key: [tokens.size(), dim].
RowMatrixXf token_embeddings(const std::vector<Token>& tokens, int dim, std::uint64_t seed);

// The built-in word class of a token key ("animal", "verb", ...) or an empty view if it has
// none.
std::string_view word_class(std::string_view token) noexcept;

// Sinusoidal positional encoding of "Attention Is All You Need", [length, dim]:
//   P[pos, 2i] = sin(pos / 10000^(2i/dim)),  P[pos, 2i+1] = cos(pos / 10000^(2i/dim)).
// Bit-identical on every platform. Throws Error(BAD_ARGUMENT) if length < 0 or dim < 1.
RowMatrixXf sinusoidal_positions(std::int64_t length, int dim);

}  // namespace attnlens
