// GPT-2-style tokenizer files written by hand for tests (test_bpe.cpp, test_warm_start.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace testing {

// GPT-2's byte-to-unicode alphabet, written again from its definition (encoder.py): printable
// bytes stand for themselves, the others in byte order for U+0100, U+0101, ...
inline std::string byte_char(unsigned char b) {
  const auto printable = [](int c) {
    return (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
  };
  char32_t cp = b;
  if (!printable(b)) {
    int index = 0;
    for (int c = 0; c < b; ++c)
      index += !printable(c);
    cp = static_cast<char32_t>(0x100 + index);
  }
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

inline std::string alphabet(std::string_view bytes) {
  std::string out;
  for (const char c : bytes)
    out += byte_char(static_cast<unsigned char>(c));
  return out;
}

// vocab.json with the 256 byte tokens (ids in byte order) and then `extra` (raw bytes).
inline std::string small_vocab(const std::vector<std::string>& extra) {
  std::string json = "{";
  int id = 0;
  const auto add = [&](const std::string& token) {
    if (id > 0) json += ", ";
    std::string escaped;
    for (const char c : token) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    json += "\"" + escaped + "\": " + std::to_string(id++);
  };
  for (int b = 0; b < 256; ++b)
    add(byte_char(static_cast<unsigned char>(b)));
  for (const auto& t : extra)
    add(alphabet(t));
  return json + "}";
}

}  // namespace testing
