#include "text/unicode_pretokenize.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "text/unicode_tables.hpp"
#include "text/unicode_utf8.hpp"

namespace attnlens::detail {
namespace {

// A character of the text: its code point's class and where it ends.
struct Char {
  CharClass cls;
  char32_t cp;
  std::size_t end;
};

// Decodes the character at `pos` (< text.size()); INVALID_UTF8 naming the offset otherwise.
Char char_at(std::string_view text, std::size_t pos) {
  const unsigned char lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) {
    // ASCII: the classes are fixed; no table lookup.
    CharClass cls = CharClass::Other;
    if ((lead >= 'a' && lead <= 'z') || (lead >= 'A' && lead <= 'Z')) {
      cls = CharClass::Letter;
    } else if (lead >= '0' && lead <= '9') {
      cls = CharClass::Number;
    } else if (lead == ' ' || (lead >= 0x09 && lead <= 0x0D)) {
      cls = CharClass::Space;
    }
    return Char{cls, lead, pos + 1};
  }
  const Utf8Char c = decode_utf8_char(text, pos);
  if (c.status != Utf8Status::Ok) {
    // The offset of the byte at fault for a bad continuation byte, else of the sequence's start.
    const std::size_t at = c.status == Utf8Status::BadContinuation ? pos + c.bad_byte : pos;
    fail(ErrorCode::INVALID_UTF8, "text is not valid UTF-8: ", utf8_status_phrase(c.status),
         " at offset ", at);
  }
  return Char{char_class(c.code_point), c.code_point, pos + c.length};
}

// The end of the run of characters of class `cls` that starts at `pos`.
std::size_t run_end(std::string_view text, std::size_t pos, CharClass cls) {
  while (pos < text.size()) {
    const Char c = char_at(text, pos);
    if (c.cls != cls) break;
    pos = c.end;
  }
  return pos;
}

// See unicode_pretokenize.hpp. The end of the piece that GPT-2's regex matches at `pos`:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// The alternatives are tried in this order, as a backtracking regex engine does.
}  // namespace

std::size_t gpt2_piece_end(std::string_view text, std::size_t pos) {
  const Char first = char_at(text, pos);
  const std::size_t n = text.size();
  // 's 't 're 've 'm 'll 'd (ASCII apostrophe and lower-case letters only).
  if (first.cp == '\'' && pos + 1 < n) {
    const char a = text[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if (pos + 2 < n) {
      const char b = text[pos + 2];
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        return pos + 3;
      }
    }
  }
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': a space may lead a run of one class.
  if (first.cp == ' ' && first.end < n) {
    const Char next = char_at(text, first.end);
    if (next.cls != CharClass::Space) return run_end(text, next.end, next.cls);
  }
  if (first.cls != CharClass::Space) return run_end(text, first.end, first.cls);
  // '\s+(?!\S)': the white space run, less its last character when a non-space follows;
  // '\s+' when that leaves nothing (a single white space character before a non-space).
  std::size_t last_start = pos;
  std::size_t end = first.end;
  while (end < n) {
    const Char c = char_at(text, end);
    if (c.cls != CharClass::Space) break;
    last_start = end;
    end = c.end;
  }
  if (end == n || last_start == pos) return end;
  return last_start;
}

std::vector<std::pair<std::size_t, std::size_t>> gpt2_pieces(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = gpt2_piece_end(text, pos);
    pieces.emplace_back(pos, end);
    pos = end;
  }
  return pieces;
}

}  // namespace attnlens::detail
