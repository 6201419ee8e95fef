// Small UTF-8 helpers for the corpus readers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnlens::corpus {

// The byte offset of the first byte that does not start a valid UTF-8 sequence (truncated,
// overlong, surrogate or above U+10FFFF), or std::string_view::npos when `text` is valid.
std::size_t find_invalid_utf8(std::string_view text) noexcept;

// `text` read as ISO-8859-1 (Latin-1), encoded as UTF-8.
std::string latin1_to_utf8(std::string_view text);

// The number of code points in valid UTF-8 `text` (bytes that are not continuation bytes).
std::size_t count_code_points(std::string_view text) noexcept;

}  // namespace attnlens::corpus
