// The BPE tokenizer (attnlens/bpe.hpp) on arbitrary bytes, in three modes chosen by the first
// byte:
//   0: encode the rest with a tokenizer trained at start-up on a fixed text;
//   1: the rest is "vocab.json\0merges.txt" for BpeTokenizer::from_files;
//   2: train a small vocabulary on the rest.
//
// Oracles:
//   - encode and tokens throw INVALID_UTF8 exactly when the text is not valid UTF-8 (checked
//     by an independent validator below), and nothing else;
//   - decode(encode(text)) == text; tokens() tile the text with each token's bytes, and agree
//     with encode();
//   - from_files succeeds or throws BAD_FILE; a tokenizer it loads writes files that load into
//     a tokenizer with the same files and the same ids for a fixed text;
//   - train_bpe succeeds (or throws INVALID_UTF8 for invalid text); the result encodes its own
//     training text with a round trip, and saving and loading it keeps the ids.
#include "fuzz.hpp"

#include <attnlens/bpe.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

// Written from RFC 3629, independently of the library's decoder.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    char32_t cp = 0, min = 0;
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
    if (i + n >= s.size()) return false;
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

const char* const kSample =
    "The cat sat on the mat. It's the cat's mat; they've said so, and we'll see! "
    "Numbers 1, 22, 333 and 4444 - caf\xC3\xA9, na\xC3\xAFve, \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
    "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB   spaces\t\ttabs\n\nlines ";

void check_encoding(const attnlens::BpeTokenizer& t, std::string_view text) {
  const bool valid = valid_utf8(text);
  std::vector<std::int32_t> ids;
  try {
    ids = t.encode(text);
  } catch (const attnlens::Error& e) {
    fuzz::expect_code(e, "encode", attnlens::ErrorCode::INVALID_UTF8);
    fuzz::check(!valid, "encode rejected valid UTF-8: %s", e.what());
    return;
  }
  fuzz::check(valid, "encode accepted invalid UTF-8 (%zu bytes)", text.size());
  fuzz::check(t.decode(ids) == text, "decode(encode(text)) differs from the text");
  const std::vector<attnlens::BpeToken> tokens = t.tokens(text);
  fuzz::check(tokens.size() == ids.size(), "tokens() and encode() disagree on the count");
  std::size_t pos = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const attnlens::BpeToken& tok = tokens[i];
    fuzz::check(tok.id == ids[i] && tok.begin == pos && tok.end > tok.begin &&
                    tok.bytes == text.substr(tok.begin, tok.end - tok.begin) &&
                    tok.bytes == t.token_bytes(tok.id),
                "token %zu is inconsistent", i);
    pos = tok.end;
  }
  fuzz::check(pos == text.size(), "tokens cover %zu of %zu bytes", pos, text.size());
}

void check_save_load(const attnlens::BpeTokenizer& t) {
  const std::string vocab = t.to_vocab_json();
  const std::string merges = t.to_merges_txt();
  attnlens::BpeTokenizer loaded = attnlens::BpeTokenizer::from_files(vocab, merges);
  fuzz::check(loaded.to_vocab_json() == vocab && loaded.to_merges_txt() == merges,
              "saved files load into different files");
  fuzz::check(loaded.encode(kSample) == t.encode(kSample), "a saved tokenizer encodes differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const attnlens::BpeTokenizer trained = attnlens::train_bpe({kSample, kSample}, 400);
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      check_encoding(trained, rest);
      break;
    case 1: {
      const std::size_t zero = rest.find('\0');
      const std::string_view vocab = rest.substr(0, zero);
      const std::string_view merges =
          zero == std::string_view::npos ? std::string_view() : rest.substr(zero + 1);
      try {
        const attnlens::BpeTokenizer t = attnlens::BpeTokenizer::from_files(vocab, merges);
        check_save_load(t);
        check_encoding(t, kSample);
      } catch (const attnlens::Error& e) {
        fuzz::expect_code(e, "from_files", attnlens::ErrorCode::BAD_FILE);
      }
      break;
    }
    default: {
      attnlens::BpeTrainOptions options;
      options.min_frequency = 1;
      try {
        const attnlens::BpeTokenizer t = attnlens::train_bpe({rest}, 320, options);
        fuzz::check(valid_utf8(rest), "train_bpe accepted invalid UTF-8");
        check_encoding(t, rest);
        check_save_load(t);
      } catch (const attnlens::Error& e) {
        fuzz::expect_code(e, "train_bpe", attnlens::ErrorCode::INVALID_UTF8);
        fuzz::check(!valid_utf8(rest), "train_bpe rejected valid UTF-8: %s", e.what());
      }
    }
  }
  return 0;
}
