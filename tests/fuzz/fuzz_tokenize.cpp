// tokenize() on arbitrary bytes.
//
// Oracles, from text.hpp's contract:
//   - an independent UTF-8 validator (below): tokenize() throws INVALID_UTF8 exactly when the
//     bytes are not valid UTF-8 (overlong forms, surrogates and code points above U+10FFFF are
//     invalid), and throws nothing else under kMaxTextBytes;
//   - tokens are non-empty, ordered, non-overlapping, inside the text, start and end on
//     character boundaries, and each token's text is exactly its bytes of the input;
//   - a key is never empty, and the key of an all-ASCII token is its text with ASCII letters
//     lowercased (the hash keys of ASCII words are what they always were);
//   - ASCII whitespace never ends up inside a token, and no ASCII byte other than whitespace
//     and control characters (which separate tokens) is dropped.
#include "fuzz.hpp"

#include <attnlens/text.hpp>

#include <string>
#include <vector>

namespace {

// Written from RFC 3629, independently of lib/src/text/words.cpp.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 1, cp = b & 0x1F, min = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2, cp = b & 0x0F, min = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3, cp = b & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (std::size_t j = 1; j <= n; ++j) {
      const auto c = static_cast<unsigned char>(s[i + j]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

bool ascii_space(unsigned char c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20;
}

bool continuation(std::string_view s, std::size_t at) {
  return at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool valid = valid_utf8(text);
  std::vector<attnlens::Token> tokens;
  try {
    tokens = attnlens::tokenize(text);
  } catch (const attnlens::Error& e) {
    fuzz::expect_code(e, "tokenize", attnlens::ErrorCode::INVALID_UTF8);
    fuzz::check(!valid, "tokenize rejected valid UTF-8: %s", e.what());
    return 0;
  }
  fuzz::check(valid, "tokenize accepted invalid UTF-8 (%zu bytes)", size);

  std::vector<bool> covered(size, false);
  std::size_t previous_end = 0;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const attnlens::Token& token = tokens[t];
    fuzz::check(token.begin < token.end && token.end <= size,
                "token %zu spans [%zu, %zu) of %zu bytes", t, token.begin, token.end, size);
    fuzz::check(token.begin >= previous_end, "token %zu starts at %zu, before the previous end %zu",
                t, token.begin, previous_end);
    fuzz::check(!continuation(text, token.begin) && !continuation(text, token.end),
                "token %zu [%zu, %zu) cuts a multi-byte character", t, token.begin, token.end);
    const std::string_view bytes = text.substr(token.begin, token.end - token.begin);
    fuzz::check(token.text == bytes, "token %zu is \"%s\", its bytes are \"%.*s\"", t,
                token.text.c_str(), static_cast<int>(bytes.size()), bytes.data());
    fuzz::check(!token.key.empty(), "token %zu (\"%s\") has an empty key", t, token.text.c_str());
    bool ascii = true;
    std::string lowered(bytes);
    for (char& c : lowered) {
      if (static_cast<unsigned char>(c) >= 0x80) ascii = false;
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    fuzz::check(!ascii || token.key == lowered,
                "token %zu is ASCII \"%s\" but its key is \"%s\", not \"%s\"", t,
                token.text.c_str(), token.key.c_str(), lowered.c_str());
    for (std::size_t i = token.begin; i < token.end; ++i) {
      fuzz::check(!ascii_space(data[i]), "token %zu holds ASCII whitespace at byte %zu", t, i);
      covered[i] = true;
    }
    previous_end = token.end;
  }
  for (std::size_t i = 0; i < size; ++i) {
    const bool control = data[i] < 0x20 || data[i] == 0x7F;
    fuzz::check(covered[i] || data[i] >= 0x80 || ascii_space(data[i]) || control,
                "byte %zu (0x%02x) is in no token and is neither whitespace nor a control", i,
                data[i]);
  }
  return 0;
}
