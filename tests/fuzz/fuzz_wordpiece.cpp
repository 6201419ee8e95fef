// The WordPiece tokenizer (attnlens/wordpiece.hpp) on arbitrary bytes, in four modes chosen by
// the first byte % 4:
//   0: the second byte picks the options (its bits: lower case, strip accents set / its value,
//      CJK, clean text, a small word limit); the rest is a text for a tokenizer over a fixed
//      vocabulary;
//   1: the rest is "vocab.txt\0text" for WordPieceTokenizer::from_vocab_txt, then the text;
//   2: the rest is a tokenizer.json for from_tokenizer_json;
//   3: the rest is a tokenizer_config.json for options_from_tokenizer_config, whose options then
//      load the fixed vocabulary.
//
// Oracles:
//   - tokens, encode and encode_pair throw INVALID_UTF8 exactly when the text is not valid UTF-8
//     (checked by an independent validator below), and nothing else;
//   - every token has a valid id and covers a non-empty range of whole characters of the text;
//     encode is [CLS] tokens [SEP] with types and segments 0; encode_pair's parts are those of
//     tokens(a) and tokens(b); decode accepts the ids;
//   - a text and a space and the same text again give the text's tokens twice (the second copy's
//     offsets shifted): words never reach across white space;
//   - the loaders succeed or throw BAD_FILE; a loaded vocabulary maps each token to its id.
#include "fuzz.hpp"

#include <attnlens/wordpiece.hpp>

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

bool continuation_byte(std::string_view s, std::size_t at) {
  return at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80;
}

const char* const kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\non\nmat\n##s\n##at\n##t\nc\n##a\na\n"
    "##e\ne\n##\xC3\xA9\n\xC3\xA9\ncaf\n.\n,\n!\n'\n\xE6\x97\xA5\n\xE6\x9C\xAC\n"
    "i\n##\xCC\x87\n\xE1\x84\x92\n##\xE1\x85\xA1\n##\xE1\x86\xAB\nx\n##x\n";

const char* const kSample =
    "The cat sat on the mat. It's the cat's mat! Caf\xC3\xA9 cafe\xCC\x81 \xE6\x97\xA5\xE6\x9C\xAC "
    "\xC4\xB0 \xED\x95\x9C \x05 \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB xxxxxxxxxxxxxxxxxx";

void check_tokens(const attnlens::WordPieceTokenizer& t, std::string_view text,
                  const std::vector<attnlens::WordPieceToken>& tokens, std::size_t shift) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const attnlens::WordPieceToken& tok = tokens[i];
    fuzz::check(tok.id >= 0 && tok.id < t.vocab_size(), "token %zu has id %d", i, tok.id);
    fuzz::check(tok.begin >= shift && tok.begin < tok.end && tok.end <= shift + text.size(),
                "token %zu covers %zu:%zu of a %zu-byte text", i, tok.begin, tok.end, text.size());
    fuzz::check(
        !continuation_byte(text, tok.begin - shift) && !continuation_byte(text, tok.end - shift),
        "token %zu (%zu:%zu) cuts a character", i, tok.begin, tok.end);
  }
}

void check_text(const attnlens::WordPieceTokenizer& t, std::string_view text) {
  const bool valid = valid_utf8(text);
  std::vector<attnlens::WordPieceToken> tokens;
  try {
    tokens = t.tokens(text);
  } catch (const attnlens::Error& e) {
    fuzz::expect_code(e, "tokens", attnlens::ErrorCode::INVALID_UTF8);
    fuzz::check(!valid, "tokens rejected valid UTF-8: %s", e.what());
    try {
      (void)t.encode_pair("ok", text);
      fuzz::check(false, "encode_pair accepted invalid UTF-8");
    } catch (const attnlens::Error& e2) {
      fuzz::expect_code(e2, "encode_pair", attnlens::ErrorCode::INVALID_UTF8);
    }
    return;
  }
  fuzz::check(valid, "tokens accepted invalid UTF-8 (%zu bytes)", text.size());
  check_tokens(t, text, tokens, 0);

  const attnlens::WordPieceEncoding e = t.encode(text);
  fuzz::check(e.ids.size() == tokens.size() + 2 && e.tokens.size() == e.ids.size() &&
                  e.token_types.size() == e.ids.size() && e.segments.size() == e.ids.size(),
              "encode gives %zu ids for %zu tokens", e.ids.size(), tokens.size());
  fuzz::check(e.ids.front() == t.cls_id() && e.ids.back() == t.sep_id(), "encode's specials");
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    fuzz::check(e.ids[i + 1] == tokens[i].id && e.tokens[i + 1].begin == tokens[i].begin &&
                    e.tokens[i + 1].end == tokens[i].end && e.token_types[i + 1] == 0 &&
                    e.segments[i + 1] == 0,
                "encode's token %zu differs from tokens()", i + 1);
  }
  (void)t.decode(e.ids);

  const attnlens::WordPieceEncoding pair = t.encode_pair(kSample, text);
  const std::vector<attnlens::WordPieceToken> first = t.tokens(kSample);
  fuzz::check(pair.ids.size() == first.size() + tokens.size() + 3, "encode_pair's length");
  const std::size_t second = first.size() + 2;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    fuzz::check(pair.ids[second + i] == tokens[i].id && pair.token_types[second + i] == 1 &&
                    pair.segments[second + i] == 1 &&
                    pair.tokens[second + i].begin == tokens[i].begin,
                "encode_pair's token %zu of b differs from tokens(b)", i);
  }

  // Words never reach across white space: text + " " + text is the tokens twice.
  if (text.size() < 2048) {
    const std::string twice = std::string(text) + " " + std::string(text);
    const std::vector<attnlens::WordPieceToken> both = t.tokens(twice);
    fuzz::check(both.size() == 2 * tokens.size(), "text + ' ' + text gives %zu tokens, not 2 x %zu",
                both.size(), tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const attnlens::WordPieceToken& a = both[i];
      const attnlens::WordPieceToken& b = both[tokens.size() + i];
      fuzz::check(a.id == tokens[i].id && a.begin == tokens[i].begin && a.end == tokens[i].end &&
                      b.id == tokens[i].id && b.begin == tokens[i].begin + text.size() + 1 &&
                      b.end == tokens[i].end + text.size() + 1,
                  "text + ' ' + text: token %zu differs", i);
    }
  }
}

void check_vocabulary(const attnlens::WordPieceTokenizer& t) {
  for (std::int32_t id = 0; id < t.vocab_size() && id < 4096; ++id) {
    fuzz::check(t.token_to_id(t.id_to_token(id)) == id, "token %d does not map back to its id", id);
  }
}

attnlens::WordPieceOptions options_from_byte(std::uint8_t b) {
  attnlens::WordPieceOptions o;
  o.lower_case = (b & 1) != 0;
  if ((b & 2) != 0) o.strip_accents = (b & 4) != 0;
  o.tokenize_chinese_chars = (b & 8) != 0;
  o.clean_text = (b & 16) != 0;
  if ((b & 32) != 0) o.max_input_chars_per_word = 3;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      if (rest.empty()) return 0;
      const attnlens::WordPieceTokenizer t = attnlens::WordPieceTokenizer::from_vocab_txt(
          kVocab, options_from_byte(static_cast<std::uint8_t>(rest[0])));
      check_text(t, rest.substr(1));
      break;
    }
    case 1: {
      const std::size_t zero = rest.find('\0');
      const std::string_view vocab = rest.substr(0, zero);
      const std::string_view text =
          zero == std::string_view::npos ? std::string_view() : rest.substr(zero + 1);
      try {
        const attnlens::WordPieceTokenizer t = attnlens::WordPieceTokenizer::from_vocab_txt(vocab);
        check_vocabulary(t);
        check_text(t, text);
      } catch (const attnlens::Error& e) {
        fuzz::expect_code(e, "from_vocab_txt", attnlens::ErrorCode::BAD_FILE);
      }
      break;
    }
    case 2: {
      try {
        const attnlens::WordPieceTokenizer t =
            attnlens::WordPieceTokenizer::from_tokenizer_json(rest);
        check_vocabulary(t);
        check_text(t, kSample);
      } catch (const attnlens::Error& e) {
        fuzz::expect_code(e, "from_tokenizer_json", attnlens::ErrorCode::BAD_FILE);
      }
      break;
    }
    default: {
      attnlens::WordPieceOptions o;
      try {
        bool said = false;
        o = attnlens::WordPieceTokenizer::options_from_tokenizer_config(rest, &said);
      } catch (const attnlens::Error& e) {
        fuzz::expect_code(e, "options_from_tokenizer_config", attnlens::ErrorCode::BAD_FILE);
        return 0;
      }
      try {
        check_text(attnlens::WordPieceTokenizer::from_vocab_txt(kVocab, o), kSample);
      } catch (const attnlens::Error& e) {
        // The file may name special tokens the fixed vocabulary lacks.
        fuzz::expect_code(e, "from_vocab_txt", attnlens::ErrorCode::BAD_FILE);
      }
    }
  }
  return 0;
}
