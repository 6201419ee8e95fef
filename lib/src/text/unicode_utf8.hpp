// Private: strict UTF-8 decoding of one character, shared by the file readers and the BPE
// tokenizer. Strict as RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF, no truncated sequences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnlens::detail {

enum class Utf8Status : std::uint8_t {
  Ok,
  BadLead,          // the first byte cannot start a character (0x80..0xBF, 0xF8..0xFF)
  Truncated,        // the text ends inside the character
  BadContinuation,  // a byte after the first is not 10xxxxxx
  Overlong,         // the character is encoded with more bytes than it needs
  NotScalar,        // a surrogate or a value above U+10FFFF
};

struct Utf8Char {
  char32_t code_point = 0;  // valid when status == Ok
  std::uint8_t length = 0;  // bytes taken when status == Ok
  Utf8Status status = Utf8Status::Ok;
  // The offset (from the character's first byte) of the byte at fault; for Overlong and
  // NotScalar, 0 (the whole sequence is at fault).
  std::uint8_t bad_byte = 0;
};

// Decodes the character starting at text[pos]; pos < text.size().
inline Utf8Char decode_utf8_char(std::string_view text, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  const unsigned char lead = byte(0);
  Utf8Char r;
  if (lead < 0x80) {
    r.code_point = lead;
    r.length = 1;
    return r;
  }
  char32_t min = 0;
  if ((lead & 0xE0) == 0xC0) {
    r.length = 2;
    r.code_point = lead & 0x1F;
    min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    r.length = 3;
    r.code_point = lead & 0x0F;
    min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    r.length = 4;
    r.code_point = lead & 0x07;
    min = 0x10000;
  } else {
    r.status = Utf8Status::BadLead;
    return r;
  }
  for (std::uint8_t i = 1; i < r.length; ++i) {
    if (pos + i >= text.size()) {
      r.status = Utf8Status::Truncated;
      r.bad_byte = i;
      return r;
    }
    const unsigned char c = byte(i);
    if ((c & 0xC0) != 0x80) {
      r.status = Utf8Status::BadContinuation;
      r.bad_byte = i;
      return r;
    }
    r.code_point = (r.code_point << 6) | (c & 0x3F);
  }
  if (r.code_point < min) {
    r.status = Utf8Status::Overlong;
  } else if (r.code_point > 0x10FFFF || (r.code_point >= 0xD800 && r.code_point <= 0xDFFF)) {
    r.status = Utf8Status::NotScalar;
  }
  return r;
}

// What went wrong, as a noun phrase for messages, e.g. "an overlong encoding".
inline const char* utf8_status_phrase(Utf8Status status) noexcept {
  switch (status) {
    case Utf8Status::Ok:
      return "valid";
    case Utf8Status::BadLead:
      return "a byte that cannot start a character";
    case Utf8Status::Truncated:
      return "a character cut off by the end of the text";
    case Utf8Status::BadContinuation:
      return "a character whose continuation byte is missing";
    case Utf8Status::Overlong:
      return "an overlong encoding";
    case Utf8Status::NotScalar:
      return "a surrogate or a code point above U+10FFFF";
  }
  return "invalid";
}

// Appends the UTF-8 encoding of the scalar value cp (at most U+10FFFF, not a surrogate).
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace attnlens::detail
