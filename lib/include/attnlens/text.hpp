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
  std::string text;       // the token, ASCII letters lowercased, other characters unchanged
  std::size_t begin = 0;  // byte offset of the token's first byte in the input
  std::size_t end = 0;    // byte offset one past its last byte
};

// Splits UTF-8 text into word and punctuation tokens.
//   - Whitespace (ASCII and Unicode spaces) separates tokens and is dropped.
//   - Each punctuation character (ASCII punctuation, Unicode general and CJK punctuation,
//     quotes, dashes, ellipsis, inverted marks) is a token of its own.
//   - Everything else, including letters of any script, digits and emoji (with joiners and
//     variation selectors), forms words. A multi-byte character is never cut.
//   - ASCII letters are lowercased; other characters are kept as they are.
// Empty or whitespace-only text gives no tokens. Throws Error(INVALID_UTF8) naming the byte
// offset of the first invalid sequence (overlong forms, surrogates and code points above
// U+10FFFF are invalid), and Error(TOO_LARGE) over kMaxTextBytes.
std::vector<Token> tokenize(std::string_view text);

// The embedding of one token: `dim` values, bit-identical on every platform for the same
// (token, dim, seed). Tokens of a small built-in vocabulary share a direction with their word
// class (determiners, animals, places, verbs, ...), so related words sit near each other;
// every other token gets a vector derived from a hash of its bytes and the seed. Entries have
// mean 0 and variance 1. Throws Error(BAD_ARGUMENT) if dim < 1.
Eigen::VectorXf token_embedding(std::string_view token, int dim, std::uint64_t seed);

// Rows are token_embedding() of each token: [tokens.size(), dim].
RowMatrixXf token_embeddings(const std::vector<Token>& tokens, int dim, std::uint64_t seed);

// The built-in word class of a token ("animal", "verb", ...) or an empty view if it has none.
std::string_view word_class(std::string_view token) noexcept;

// Sinusoidal positional encoding of "Attention Is All You Need", [length, dim]:
//   P[pos, 2i] = sin(pos / 10000^(2i/dim)),  P[pos, 2i+1] = cos(pos / 10000^(2i/dim)).
// Bit-identical on every platform. Throws Error(BAD_ARGUMENT) if length < 0 or dim < 1.
RowMatrixXf sinusoidal_positions(std::int64_t length, int dim);

}  // namespace attnlens
