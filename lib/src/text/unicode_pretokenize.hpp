// Private: GPT-2's pre-tokenization, the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// evaluated as JavaScript does with the `u` flag, written out by hand over the character classes
// of unicode_tables.hpp. Used by the BPE tokenizer and its trainer (bpe.cpp).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlens::detail {

// The end (byte offset) of the piece the regex matches at byte offset `pos` < text.size().
// The pieces tile the text. Throws Error(INVALID_UTF8) naming the offset of an invalid
// sequence it reads; scanning from offset 0 piece by piece reads every character in order, so
// the first error is the text's first invalid sequence.
std::size_t gpt2_piece_end(std::string_view text, std::size_t pos);

// All pieces of `text` as (begin, end) byte offsets.
std::vector<std::pair<std::size_t, std::size_t>> gpt2_pieces(std::string_view text);

}  // namespace attnlens::detail
