#include "normalize.hpp"

#include <array>
#include <utility>

namespace attnlens::corpus {

std::string normalize_typography(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kReplacements = {{
      {"\xE2\x80\x98", "'"},
      {"\xE2\x80\x99", "'"},
      {"\xE2\x80\x9C", "\""},
      {"\xE2\x80\x9D", "\""},
      {"\xE2\x80\x94", "--"},
      {"\xE2\x80\x93", "-"},
      {"\xE2\x80\x91", "-"},
      {"\xC2\xA0", " "},
  }};
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      for (const auto& [from, to] : kReplacements) {
        if (text.substr(i, from.size()) == from) {
          out += to;
          i += from.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::string collapse_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t') {
      pending_space = true;
      continue;
    }
    if (c == '\n') {
      pending_space = false;
      out += c;
      continue;
    }
    if (pending_space && !out.empty() && out.back() != '\n') out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

}  // namespace attnlens::corpus
