#include <attnlens/random.hpp>
#include <attnlens/text.hpp>

#include "core/check.hpp"
#include "text/unicode_tables.hpp"
#include "text/unicode_utf8.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>

namespace attnlens {
namespace {

// Decodes one UTF-8 sequence at text[pos]. Returns the code point and sets `length`; throws
// INVALID_UTF8 for truncated, overlong, surrogate or out-of-range sequences.
char32_t decode_utf8(std::string_view text, std::size_t pos, std::size_t& length) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  char32_t cp = 0;
  char32_t min = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    cp = lead & 0x1F;
    min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    cp = lead & 0x0F;
    min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    cp = lead & 0x07;
    min = 0x10000;
  } else {
    detail::fail(ErrorCode::INVALID_UTF8, "text is not valid UTF-8: byte 0x", detail::Hex{lead},
                 " at offset ", pos, " cannot start a character");
  }
  if (pos + length > text.size()) {
    detail::fail(ErrorCode::INVALID_UTF8, "text is not valid UTF-8: the character at offset ", pos,
                 " is cut off at the end of the text");
  }
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char c = byte(pos + i);
    if ((c & 0xC0) != 0x80) {
      detail::fail(ErrorCode::INVALID_UTF8, "text is not valid UTF-8: byte 0x", detail::Hex{c},
                   " at offset ", pos + i, " should continue the character at offset ", pos);
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    detail::fail(ErrorCode::INVALID_UTF8, "text is not valid UTF-8: the sequence at offset ", pos,
                 " encodes U+", detail::Hex{static_cast<std::uint32_t>(cp)},
                 cp < min ? " in an overlong form" : ", which is not a valid code point");
  }
  return cp;
}

bool is_apostrophe(char32_t c) {
  return c == U'\'' || c == 0x2019;
}

// Appends the UTF-8 encoding of a Unicode scalar value.
struct WordClass {
  std::string_view word;
  std::string_view cls;
};

// A small vocabulary with word classes, so that the picture of embeddings has structure: words
// of one class share a direction. Sorted by word for binary search.
constexpr std::array<WordClass, 128> kVocabulary = {{
    {"a", "determiner"},      {"about", "preposition"}, {"after", "preposition"},
    {"all", "determiner"},    {"an", "determiner"},     {"and", "conjunction"},
    {"animal", "animal"},     {"ate", "verb"},          {"attention", "abstract"},
    {"bank", "place"},        {"bark", "verb"},         {"barked", "verb"},
    {"bed", "object"},        {"big", "adjective"},     {"bird", "animal"},
    {"black", "adjective"},   {"book", "object"},       {"but", "conjunction"},
    {"car", "object"},        {"cat", "animal"},        {"cats", "animal"},
    {"chair", "object"},      {"chased", "verb"},       {"city", "place"},
    {"cold", "adjective"},    {"cow", "animal"},        {"dark", "adjective"},
    {"did", "verb"},          {"dog", "animal"},        {"dogs", "animal"},
    {"door", "object"},       {"ears", "body"},         {"eat", "verb"},
    {"every", "determiner"},  {"eyes", "body"},         {"fast", "adjective"},
    {"fish", "animal"},       {"for", "preposition"},   {"fox", "animal"},
    {"from", "preposition"},  {"garden", "place"},      {"good", "adjective"},
    {"green", "adjective"},   {"had", "verb"},          {"happy", "adjective"},
    {"has", "verb"},          {"have", "verb"},         {"he", "pronoun"},
    {"her", "pronoun"},       {"him", "pronoun"},       {"his", "pronoun"},
    {"horse", "animal"},      {"house", "place"},       {"i", "pronoun"},
    {"idea", "abstract"},     {"in", "preposition"},    {"is", "verb"},
    {"it", "pronoun"},        {"its", "pronoun"},       {"jumped", "verb"},
    {"jumps", "verb"},        {"lazy", "adjective"},    {"little", "adjective"},
    {"love", "abstract"},     {"mat", "object"},        {"meaning", "abstract"},
    {"mouse", "animal"},      {"my", "pronoun"},        {"near", "preposition"},
    {"new", "adjective"},     {"night", "time"},        {"not", "adverb"},
    {"of", "preposition"},    {"old", "adjective"},     {"on", "preposition"},
    {"or", "conjunction"},    {"over", "preposition"},  {"park", "place"},
    {"quick", "adjective"},   {"quickly", "adverb"},    {"ran", "verb"},
    {"read", "verb"},         {"red", "adjective"},     {"river", "place"},
    {"road", "place"},        {"room", "place"},        {"run", "verb"},
    {"sat", "verb"},          {"saw", "verb"},          {"she", "pronoun"},
    {"sit", "verb"},          {"sleeps", "verb"},       {"slept", "verb"},
    {"slowly", "adverb"},     {"small", "adjective"},   {"sofa", "object"},
    {"some", "determiner"},   {"street", "place"},      {"sun", "nature"},
    {"table", "object"},      {"tail", "body"},         {"that", "determiner"},
    {"the", "determiner"},    {"their", "pronoun"},     {"them", "pronoun"},
    {"they", "pronoun"},      {"this", "determiner"},   {"through", "preposition"},
    {"time", "time"},         {"to", "preposition"},    {"today", "time"},
    {"tomorrow", "time"},     {"too", "adverb"},        {"tree", "nature"},
    {"under", "preposition"}, {"very", "adverb"},       {"was", "verb"},
    {"water", "nature"},      {"we", "pronoun"},        {"went", "verb"},
    {"were", "verb"},         {"white", "adjective"},   {"window", "object"},
    {"with", "preposition"},  {"wrote", "verb"},        {"year", "time"},
    {"yesterday", "time"},    {"you", "pronoun"},
}};

// Fills `out` with `dim` standard normal values from a stream seeded by `seed`.
void normal_vector(std::uint64_t seed, Eigen::VectorXd& out) {
  Rng rng(seed);
  for (Eigen::Index i = 0; i < out.size(); ++i)
    out[i] = rng.normal();
}

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  if (text.size() > kMaxTextBytes) {
    detail::fail(ErrorCode::TOO_LARGE, "text has ", text.size(), " bytes, over the limit of ",
                 kMaxTextBytes);
  }
  // Decode everything first so that invalid UTF-8 anywhere is reported, not just before the
  // first token.
  struct Char {
    char32_t cp;
    std::size_t begin;
    std::size_t length;
  };
  std::vector<Char> chars;
  chars.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t length = 0;
    const char32_t cp = decode_utf8(text, pos, length);
    chars.push_back({cp, pos, length});
    pos += length;
  }

  using Cat = detail::WordCategory;
  const auto cat = [&](std::size_t at) { return detail::word_category(chars[at].cp); };
  // The characters of a keycap emoji starting at chars[at] (#, * or a digit, an optional
  // U+FE0F, then U+20E3: "#️⃣", "1️⃣"), or 0. Its # or * must not split off as punctuation.
  const auto keycap = [&](std::size_t at) -> std::size_t {
    const char32_t c = chars[at].cp;
    if (c != U'#' && c != U'*' && (c < U'0' || c > U'9')) return 0;
    std::size_t n = 1;
    if (at + n < chars.size() && chars[at + n].cp == 0xFE0F) ++n;
    return at + n < chars.size() && chars[at + n].cp == 0x20E3 ? n + 1 : 0;
  };
  // Index past the Extend characters (marks, joiners, selectors, modifiers) from chars[at].
  const auto skip_extend = [&](std::size_t at) {
    while (at < chars.size() && cat(at) == Cat::Extend)
      ++at;
    return at;
  };
  // Whether chars[at] may continue a run of letters of the run's category `run`.
  const auto continues = [&](Cat run, std::size_t at) {
    const Cat c = cat(at);
    if (c == Cat::Extend) return true;
    switch (run) {
      case Cat::Alpha:
        return c == Cat::Alpha && keycap(at) == 0;
      case Cat::Hiragana:
      case Cat::Katakana:
        return c == run || c == Cat::ProlongedSound;
      case Cat::SouthEastAsian:
        return c == Cat::SouthEastAsian;
      default:
        return false;
    }
  };

  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < chars.size()) {
    const Cat first = cat(i);
    if (first == Cat::Space) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    if (const std::size_t n = keycap(i)) {
      i = skip_extend(i + n);
    } else if (first == Cat::Emoji) {
      // One emoji grapheme: the pictograph, its Extend characters, and more pictographs each
      // joined by a ZWJ (U+200D) that ends the Extend characters before it (👨‍👩‍👧).
      i = skip_extend(i + 1);
      while (i < chars.size() && chars[i - 1].cp == 0x200D && cat(i) == Cat::Emoji)
        i = skip_extend(i + 1);
    } else if (first == Cat::RegionalIndicator) {
      // A flag is a pair of regional indicators; a third starts the next flag.
      ++i;
      if (i < chars.size() && cat(i) == Cat::RegionalIndicator) ++i;
      i = skip_extend(i);
    } else if (first == Cat::Alpha || first == Cat::Hiragana || first == Cat::Katakana ||
               first == Cat::ProlongedSound || first == Cat::SouthEastAsian) {
      const Cat run = first == Cat::ProlongedSound ? Cat::Katakana : first;
      ++i;
      while (i < chars.size()) {
        if (continues(run, i)) {
          ++i;
        } else if (run == Cat::Alpha && is_apostrophe(chars[i].cp) && i + 1 < chars.size() &&
                   cat(i + 1) == Cat::Alpha && keycap(i + 1) == 0) {
          ++i;  // "don't", "cat's": the character before is in the run
        } else {
          break;
        }
      }
    } else {
      // A Han ideograph, a punctuation mark or symbol, or a mark with no base: one character
      // and what extends it.
      i = skip_extend(i + 1);
    }
    Token token;
    token.begin = chars[start].begin;
    token.end = chars[i - 1].begin + chars[i - 1].length;
    token.text.assign(text.substr(token.begin, token.end - token.begin));
    token.key.reserve(token.text.size());
    for (std::size_t k = start; k < i; ++k)
      detail::append_utf8(token.key, detail::simple_case_fold(chars[k].cp));
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::string_view word_class(std::string_view token) noexcept {
  const auto it =
      std::lower_bound(kVocabulary.begin(), kVocabulary.end(), token,
                       [](const WordClass& e, std::string_view w) { return e.word < w; });
  if (it != kVocabulary.end() && it->word == token) return it->cls;
  return {};
}

Eigen::VectorXf token_embedding(std::string_view token, int dim, std::uint64_t seed) {
  if (dim < 1) detail::fail(ErrorCode::BAD_ARGUMENT, "dim must be at least 1; got ", dim);
  Eigen::VectorXd own(dim);
  normal_vector(hash_bytes(token, seed), own);
  const std::string_view cls = word_class(token);
  if (!cls.empty()) {
    // Mix a class direction (weight 0.7 of the variance) with the word's own (0.3): related
    // words share most of their vector and still differ.
    Eigen::VectorXd shared(dim);
    normal_vector(mix_seed(hash_bytes(cls, seed), 0x636c617373ULL), shared);
    own = std::sqrt(0.7) * shared + std::sqrt(0.3) * own;
  }
  return own.cast<float>();
}

RowMatrixXf token_embeddings(const std::vector<Token>& tokens, int dim, std::uint64_t seed) {
  if (dim < 1) detail::fail(ErrorCode::BAD_ARGUMENT, "dim must be at least 1; got ", dim);
  RowMatrixXf embeddings(static_cast<Eigen::Index>(tokens.size()), dim);
  // Each distinct key is generated once and kept for later calls with the same dim and seed:
  // explain() runs on every edit of a text, whose words are mostly the same as before, and each
  // generation is dim normals through log and cos (seeding a Mersenne twister first). One cache
  // per thread of at most 2^20 / (dim + 32) keys (about 4 MiB with each key's string, node and
  // vector counted as 32 floats), emptied when a new key would not fit.
  struct Cache {
    int dim = 0;
    std::uint64_t seed = 0;
    std::unordered_map<std::string, Eigen::VectorXf> rows;
  };
  thread_local Cache cache;
  if (cache.dim != dim || cache.seed != seed) {
    cache.rows.clear();
    cache.dim = dim;
    cache.seed = seed;
  }
  const std::size_t capacity = (std::size_t{1} << 20) / (static_cast<std::size_t>(dim) + 32);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    auto at = cache.rows.find(tokens[i].key);
    if (at == cache.rows.end()) {
      if (cache.rows.size() >= capacity) cache.rows.clear();
      at = cache.rows.emplace(tokens[i].key, token_embedding(tokens[i].key, dim, seed)).first;
    }
    embeddings.row(static_cast<Eigen::Index>(i)) = at->second.transpose();
  }
  return embeddings;
}

RowMatrixXf sinusoidal_positions(std::int64_t length, int dim) {
  if (length < 0) detail::fail(ErrorCode::BAD_ARGUMENT, "length must be >= 0; got ", length);
  if (dim < 1) detail::fail(ErrorCode::BAD_ARGUMENT, "dim must be at least 1; got ", dim);
  // Row p does not depend on `length`: the rows of the longest table made at this dim are kept
  // (one per thread) and the first `length` of them returned. explain() asks on every edit, and
  // the table's length · dim sines and cosines were about 5 % of it at 512 tokens. Tables of up
  // to 2^20 floats (4 MiB) are kept.
  struct Cache {
    int dim = 0;
    RowMatrixXf rows;
  };
  thread_local Cache cache;
  if (cache.dim == dim && cache.rows.rows() >= length) return cache.rows.topRows(length);
  RowMatrixXf positions(length, dim);
  const double log_base = detmath::log(10000.0);
  for (int i = 0; i < dim; i += 2) {
    const double inv_freq = detmath::exp(-log_base * i / dim);
    for (std::int64_t pos = 0; pos < length; ++pos) {
      const double angle = static_cast<double>(pos) * inv_freq;
      positions(pos, i) = static_cast<float>(detmath::sin(angle));
      if (i + 1 < dim) positions(pos, i + 1) = static_cast<float>(detmath::cos(angle));
    }
  }
  if (length * dim <= (1 << 20)) {
    cache.dim = dim;
    cache.rows = positions;
  }
  return positions;
}

}  // namespace attnlens
