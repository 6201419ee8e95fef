#include "utf8.hpp"

#include "text/unicode_utf8.hpp"

namespace attnlens::corpus {

std::size_t find_invalid_utf8(std::string_view text) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, pos);
    if (c.status != detail::Utf8Status::Ok) return pos;
    pos += c.length;
  }
  return std::string_view::npos;
}

std::string latin1_to_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::size_t count_code_points(std::string_view text) noexcept {
  std::size_t count = 0;
  for (const char ch : text) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++count;
  }
  return count;
}

}  // namespace attnlens::corpus
