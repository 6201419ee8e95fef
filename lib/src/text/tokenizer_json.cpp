#include "text/tokenizer_json.hpp"

#include <attnlens/bpe.hpp>  // kMaxBpeTextBytes
#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "text/byte_alphabet.hpp"
#include "text/unicode_nfc.hpp"
#include "text/unicode_pretokenize.hpp"
#include "text/unicode_tables.hpp"
#include "text/unicode_utf8.hpp"
#include "text/unicode_wordpiece_tables.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

namespace attnlens {
namespace {

using detail::JsonValue;

// Bytes of the original text, [begin, end). Texts are at most kMaxBpeTextBytes < 2^32 bytes.
struct Span {
  std::uint32_t begin;
  std::uint32_t end;
};

// Text on its way through the normalizers and pre-tokenizers: its bytes and, for each byte,
// the original character(s) it came from.
struct Aligned {
  std::string text;
  std::vector<Span> align;  // align.size() == text.size()

  void push(std::string_view bytes, Span from) {
    text += bytes;
    align.insert(align.end(), bytes.size(), from);
  }
  // The original bytes that text[b, e) (b < e) came from.
  Span span(std::size_t b, std::size_t e) const {
    Span s = align[b];
    for (std::size_t i = b + 1; i < e; ++i) {
      s.begin = std::min(s.begin, align[i].begin);
      s.end = std::max(s.end, align[i].end);
    }
    return s;
  }
  Aligned slice(std::size_t b, std::size_t e) const {
    Aligned out;
    out.text.assign(text, b, e - b);
    out.align.assign(align.begin() + static_cast<std::ptrdiff_t>(b),
                     align.begin() + static_cast<std::ptrdiff_t>(e));
    return out;
  }
};

// The character at `pos` of valid UTF-8 text.
detail::Utf8Char char_at(std::string_view text, std::size_t pos) {
  return detail::decode_utf8_char(text, pos);
}

// JavaScript's \s (what String.prototype.trim removes): the tables' Space class.
bool is_js_space(char32_t cp) {
  return detail::char_class(cp) == detail::CharClass::Space;
}

// ---------------------------------------------------------------------------------------------
// Reading the file.

// Reads the components of one file, naming it and the component in every message.
struct Reader {
  std::string_view file;

  template <typename... Parts>
  [[noreturn]] void fail(std::string_view where, const Parts&... parts) const {
    detail::fail(ErrorCode::BAD_FILE, file, ": ", where, ": ", parts...);
  }

  const JsonValue* member(const JsonValue& object, std::string_view key) const {
    return object.is_object() ? object.find(key) : nullptr;
  }
  void expect_object(const JsonValue& v, std::string_view where) const {
    if (!v.is_object()) fail(where, "is ", v.kind_name(), "; expected an object");
  }
  bool boolean(const JsonValue& object, std::string_view key, bool fallback,
               std::string_view where) const {
    const JsonValue* v = member(object, key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_bool()) fail(where, "\"", key, "\" is ", v->kind_name(), "; expected true or false");
    return v->as_bool();
  }
  // The string `key`, or `fallback` when absent or null.
  std::string string(const JsonValue& object, std::string_view key, std::string_view fallback,
                     std::string_view where) const {
    const JsonValue* v = member(object, key);
    if (v == nullptr || v->is_null()) return std::string(fallback);
    if (!v->is_string()) fail(where, "\"", key, "\" is ", v->kind_name(), "; expected a string");
    return v->as_string();
  }
  const std::string& required_string(const JsonValue& object, std::string_view key,
                                     std::string_view where) const {
    const JsonValue* v = member(object, key);
    if (v == nullptr || !v->is_string()) {
      fail(where, "\"", key, "\" is ", v == nullptr ? "missing" : v->kind_name(),
           "; expected a string");
    }
    return v->as_string();
  }
  std::int64_t integer(const JsonValue& object, std::string_view key, std::int64_t fallback,
                       std::int64_t max, std::string_view where) const {
    const JsonValue* v = member(object, key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_integer() || v->as_integer() < 0 || v->as_integer() > max) {
      fail(where, "\"", key, "\" must be an integer from 0 to ", max);
    }
    return v->as_integer();
  }
  const std::vector<JsonValue>& array(const JsonValue& object, std::string_view key,
                                      std::string_view where) const {
    const JsonValue* v = member(object, key);
    if (v == nullptr || !v->is_array()) {
      fail(where, "\"", key, "\" is ", v == nullptr ? "missing" : v->kind_name(),
           "; expected an array");
    }
    return v->items();
  }
  // A component's "type".
  const std::string& type(const JsonValue& component, std::string_view where) const {
    expect_object(component, where);
    return required_string(component, "type", where);
  }
  // A {"String": s} pattern; a {"Regex": r} one is refused here (see Split for known regexes).
  std::string string_pattern(const JsonValue& object, std::string_view where) const {
    const JsonValue* pattern = member(object, "pattern");
    if (pattern == nullptr) fail(where, "has no \"pattern\"");
    expect_object(*pattern, std::string(where) + ": pattern");
    if (member(*pattern, "Regex") != nullptr) {
      fail(where, "a Regex pattern (\"", string(*pattern, "Regex", "", where),
           "\") is not supported here; only {\"String\": ...}");
    }
    std::string s = required_string(*pattern, "String", std::string(where) + ": pattern");
    if (s.empty()) fail(where, "the pattern is the empty string");
    return s;
  }
};

// ---------------------------------------------------------------------------------------------
// Components.

enum class NormKind : std::uint8_t { Nfc, Replace, Prepend, Lowercase };
struct NormStep {
  NormKind kind;
  std::string pattern;  // Replace
  std::string content;  // Replace: the replacement; Prepend: the prefix
};

// The Split regexes written out by hand. Each tiles the text with its matches.
enum class SplitRegex : std::uint8_t { Gpt2, Llama3, Qwen2 };

constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Behavior : std::uint8_t {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};
enum class PrependScheme : std::uint8_t { Always, First, Never };

enum class PreKind : std::uint8_t { ByteLevel, SplitRegex, SplitString, Metaspace, Digits };
struct PreStep {
  PreKind kind;
  bool add_prefix_space = false;  // ByteLevel
  bool use_regex = true;          // ByteLevel
  SplitRegex regex = SplitRegex::Gpt2;
  std::string literal;  // SplitString: the pattern; Metaspace: the replacement
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  PrependScheme prepend = PrependScheme::Always;  // Metaspace
  bool split = true;                              // Metaspace
  bool individual_digits = false;                 // Digits: each digit a piece, not each run
};

enum class DecKind : std::uint8_t { ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace };
struct DecStep {
  DecKind kind;
  std::string pattern;  // Replace; Metaspace: the replacement; Strip: the character
  std::string content;  // Replace
  std::int64_t start = 0;
  std::int64_t stop = 0;
  bool strip_first = true;  // Metaspace: drop the first token's leading space
};

struct Added {
  std::string content;
  std::int32_t id;
  bool special, lstrip, rstrip, single_word, normalized;
};

// A byte trie of the added tokens, for longest-match search: at each text position one walk
// of at most the longest token's length, so a search is linear in the text for a given file.
class Trie {
 public:
  void insert(std::string_view key, std::int32_t value) {
    std::int32_t node = 0;
    for (const char c : key) {
      const auto [it, inserted] = edges_.emplace(edge(node, c), size());
      if (inserted) values_.push_back(-1);
      node = it->second;
    }
    values_[static_cast<std::size_t>(node)] = value;
  }
  bool empty() const noexcept { return values_.size() == 1; }
  // Calls f(end, value) for each key that starts at text[pos], shortest first.
  template <typename F>
  void walk(std::string_view text, std::size_t pos, F&& f) const {
    std::int32_t node = 0;
    for (std::size_t i = pos; i < text.size(); ++i) {
      const auto it = edges_.find(edge(node, text[i]));
      if (it == edges_.end()) return;
      node = it->second;
      if (values_[static_cast<std::size_t>(node)] >= 0)
        f(i + 1, values_[static_cast<std::size_t>(node)]);
    }
  }

 private:
  static std::uint64_t edge(std::int32_t node, char c) {
    return (static_cast<std::uint64_t>(node) << 8) | static_cast<unsigned char>(c);
  }
  std::int32_t size() const { return static_cast<std::int32_t>(values_.size()); }
  std::unordered_map<std::uint64_t, std::int32_t> edges_;
  std::vector<std::int32_t> values_{-1};  // node -> added token index, or -1
};

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

}  // namespace

// The longest added token read (bytes).
constexpr std::size_t kMaxAddedTokenBytes = 256;

struct TokenizerJson::Impl {
  std::string file;
  // The model.
  std::vector<std::string> tokens;  // id -> token as in the file (an added token's text wins)
  // id -> the model vocabulary's own text: the keys of `vocab` point into it, so it never
  // changes after the vocabulary is read (an added token may give an id another text).
  std::vector<std::string> model_tokens;
  std::vector<bool> assigned;                                // id -> some token has it
  std::vector<bool> is_special;                              // id -> a special added token
  std::unordered_map<std::string_view, std::int32_t> vocab;  // model token -> id
  std::unordered_map<std::uint64_t, std::uint64_t> merges;   // pair -> rank << 32 | merged id
  std::array<std::int32_t, 256> byte_tokens{};               // byte -> id of "<0xAB>", or -1
  std::int32_t unk = -1;
  std::int32_t embedded = 0;  // embedded_size()
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
  // The pipeline.
  std::vector<NormStep> normalizers;
  std::vector<PreStep> pre_tokenizers;
  std::vector<DecStep> decoders;
  bool has_decoder = false;
  // The template: special token ids, with the text at `text_at`.
  std::vector<std::int32_t> template_ids;
  std::size_t text_at = 0;
  std::vector<Added> added;
  Trie raw_trie;         // added tokens matched in the raw text
  Trie normalized_trie;  // added tokens matched in the normalized text

  void read_model(const Reader& r, const JsonValue& model, std::size_t added_count);
  void read_normalizer(const Reader& r, const JsonValue& n, const std::string& where);
  void read_pre_tokenizer(const Reader& r, const JsonValue& p, const std::string& where);
  void read_post_processor(const Reader& r, const JsonValue& p, const std::string& where);
  void read_decoder(const Reader& r, const JsonValue& d, const std::string& where);

  void normalize(Aligned& a) const;
  std::vector<Aligned> pre_tokenize(Aligned a, std::size_t section_index) const;
  void model(const Aligned& piece, std::vector<TokenizerJsonToken>& out) const;
  void encode_section(std::string_view text, std::size_t begin, std::size_t end,
                      std::size_t section_index, std::vector<TokenizerJsonToken>& out) const;
};

namespace {

using Impl = TokenizerJson::Impl;

// ---------------------------------------------------------------------------------------------
// Split regexes, by hand. Character kinds as the regexes see them after @huggingface/tokenizers
// rewrites them for JavaScript: \s is \p{White_Space} (JS's \s less U+FEFF, plus U+0085).
enum class Kind : std::uint8_t { Letter, Number, Space, Other };
struct Ch {
  Kind kind;
  char32_t cp;
  std::size_t end;
};

Ch ch_at(std::string_view text, std::size_t pos) {
  const detail::Utf8Char c = char_at(text, pos);
  Kind kind = Kind::Other;
  if (c.code_point == 0x85) {
    kind = Kind::Space;
  } else if (c.code_point != 0xFEFF) {
    switch (detail::char_class(c.code_point)) {
      case detail::CharClass::Letter:
        kind = Kind::Letter;
        break;
      case detail::CharClass::Number:
        kind = Kind::Number;
        break;
      case detail::CharClass::Space:
        kind = Kind::Space;
        break;
      case detail::CharClass::Other:
        break;
    }
  }
  return Ch{kind, c.code_point, pos + c.length};
}

// The end of the run of `kind` characters from `pos`.
std::size_t run_end(std::string_view text, std::size_t pos, Kind kind) {
  while (pos < text.size()) {
    const Ch c = ch_at(text, pos);
    if (c.kind != kind) break;
    pos = c.end;
  }
  return pos;
}

// The length of 's 't 're 've 'm 'll 'd at `pos` (ASCII letters, either case when `fold`), or 0.
std::size_t contraction(std::string_view text, std::size_t pos, bool fold) {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const auto lower = [&](std::size_t i) {
    const char c = text[i];
    return fold && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  const char a = lower(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const char b = lower(pos + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S)|\s+ at `pos`, a white space character: the run, less its last character when a
// non-space follows and more than one is left.
std::size_t trailing_space_end(std::string_view text, std::size_t pos) {
  std::size_t last_start = pos;
  std::size_t end = pos;
  while (end < text.size()) {
    const Ch c = ch_at(text, end);
    if (c.kind != Kind::Space) break;
    last_start = end;
    end = c.end;
  }
  if (end == text.size() || last_start == pos) return end;
  return last_start;
}

// GPT-2's regex (above, kGpt2Regex) at `pos`; the alternatives in order, as a backtracking
// engine tries them.
std::size_t gpt2_end(std::string_view text, std::size_t pos) {
  if (const std::size_t n = contraction(text, pos, false)) return pos + n;
  const Ch c = ch_at(text, pos);
  if (c.cp == ' ' && c.end < text.size()) {
    const Ch next = ch_at(text, c.end);
    if (next.kind != Kind::Space) return run_end(text, next.end, next.kind);
  }
  if (c.kind != Kind::Space) return run_end(text, c.end, c.kind);
  return trailing_space_end(text, pos);
}

// Llama 3's regex (kLlama3Regex), or Qwen 2's (the same with single digits) when max_digits
// is 1, at `pos`.
std::size_t llama3_end(std::string_view text, std::size_t pos, int max_digits) {
  if (const std::size_t n = contraction(text, pos, true)) return pos + n;
  const std::size_t size = text.size();
  const Ch c = ch_at(text, pos);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.kind == Kind::Letter) return run_end(text, c.end, Kind::Letter);
  if (c.kind != Kind::Number && c.cp != '\r' && c.cp != '\n' && c.end < size) {
    const Ch next = ch_at(text, c.end);
    if (next.kind == Kind::Letter) return run_end(text, next.end, Kind::Letter);
  }
  // \p{N}{1,3}
  if (c.kind == Kind::Number) {
    std::size_t end = c.end;
    for (int count = 1; count < max_digits && end < size; ++count) {
      const Ch next = ch_at(text, end);
      if (next.kind != Kind::Number) break;
      end = next.end;
    }
    return end;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  std::size_t other = c.kind == Kind::Other ? c.end : 0;
  if (c.cp == ' ' && c.end < size) {
    const Ch next = ch_at(text, c.end);
    if (next.kind == Kind::Other) other = next.end;
  }
  if (other != 0) {
    std::size_t end = run_end(text, other, Kind::Other);
    while (end < size && (text[end] == '\r' || text[end] == '\n'))
      ++end;
    return end;
  }
  // \s*[\r\n]+: \s* backs off to the run's last line break, which [\r\n]+ then takes.
  std::size_t after_break = 0;
  for (std::size_t at = pos; at < size;) {
    const Ch s = ch_at(text, at);
    if (s.kind != Kind::Space) break;
    if (s.cp == '\r' || s.cp == '\n') after_break = s.end;
    at = s.end;
  }
  if (after_break != 0) return after_break;
  return trailing_space_end(text, pos);
}

std::size_t regex_end(SplitRegex regex, std::string_view text, std::size_t pos) {
  switch (regex) {
    case SplitRegex::Gpt2:
      return gpt2_end(text, pos);
    case SplitRegex::Llama3:
      return llama3_end(text, pos, 3);
    case SplitRegex::Qwen2:
      return llama3_end(text, pos, 1);
  }
  return text.size();
}

// Cuts `piece` at `matches` (sorted, disjoint, non-empty) as the Split pre-tokenizer's
// behaviours say (the Rust `tokenizers`' SplitDelimiterBehavior).
void split_piece(const Aligned& piece,
                 const std::vector<std::pair<std::size_t, std::size_t>>& matches, Behavior behavior,
                 bool invert, std::vector<Aligned>& out) {
  struct Segment {
    std::size_t begin, end;
    bool match;
  };
  std::vector<Segment> segments;
  std::size_t at = 0;
  for (const auto& [b, e] : matches) {
    if (b > at) segments.push_back({at, b, invert});
    segments.push_back({b, e, !invert});
    at = e;
  }
  if (at < piece.text.size()) segments.push_back({at, piece.text.size(), invert});

  std::vector<std::pair<std::size_t, std::size_t>> cuts;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::Removed:
      for (const Segment& s : segments)
        if (!s.match) cuts.emplace_back(s.begin, s.end);
      break;
    case Behavior::Isolated:
      for (const Segment& s : segments)
        cuts.emplace_back(s.begin, s.end);
      break;
    case Behavior::MergedWithPrevious:
      for (const Segment& s : segments) {
        if (s.match && !previous_match && !cuts.empty()) {
          cuts.back().second = s.end;
        } else {
          cuts.emplace_back(s.begin, s.end);
        }
        previous_match = s.match;
      }
      break;
    case Behavior::MergedWithNext:
      for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
        if (s->match && !previous_match && !cuts.empty()) {
          cuts.back().first = s->begin;
        } else {
          cuts.emplace_back(s->begin, s->end);
        }
        previous_match = s->match;
      }
      std::reverse(cuts.begin(), cuts.end());
      break;
    case Behavior::Contiguous:
      for (const Segment& s : segments) {
        if (s.match && previous_match) {
          cuts.back().second = s.end;
        } else {
          cuts.emplace_back(s.begin, s.end);
        }
        previous_match = s.match;
      }
      break;
  }
  for (const auto& [b, e] : cuts)
    out.push_back(piece.slice(b, e));
}

// The non-overlapping occurrences of `literal` in `text`, left to right.
std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text,
                                                          std::string_view literal) {
  std::vector<std::pair<std::size_t, std::size_t>> found;
  for (std::size_t at = text.find(literal); at != std::string_view::npos;
       at = text.find(literal, at + literal.size())) {
    found.emplace_back(at, at + literal.size());
  }
  return found;
}

// `a` with each occurrence of `pattern` replaced by `content`, which takes the span of what it
// replaces.
Aligned replace_all(const Aligned& a, std::string_view pattern, std::string_view content) {
  Aligned out;
  out.text.reserve(a.text.size());
  out.align.reserve(a.text.size());
  std::size_t at = 0;
  for (const auto& [b, e] : find_all(a.text, pattern)) {
    out.text.append(a.text, at, b - at);
    out.align.insert(out.align.end(), a.align.begin() + static_cast<std::ptrdiff_t>(at),
                     a.align.begin() + static_cast<std::ptrdiff_t>(b));
    out.push(content, a.span(b, e));
    at = e;
  }
  out.text.append(a.text, at, std::string::npos);
  out.align.insert(out.align.end(), a.align.begin() + static_cast<std::ptrdiff_t>(at),
                   a.align.end());
  return out;
}

// `prefix` + a, the prefix taking the span of a's first byte (as the Rust `tokenizers` aligns a
// prepended string to the first character). `a` is not empty.
Aligned prepend(const Aligned& a, std::string_view prefix) {
  Aligned out;
  out.push(prefix, a.align[0]);
  out.text += a.text;
  out.align.insert(out.align.end(), a.align.begin(), a.align.end());
  return out;
}

SplitRegex known_regex(const Reader& r, const std::string& regex, const std::string& where) {
  if (regex == kGpt2Regex) return SplitRegex::Gpt2;
  if (regex == kLlama3Regex) return SplitRegex::Llama3;
  if (regex == kQwen2Regex) return SplitRegex::Qwen2;
  r.fail(where, "Split pattern \"", regex,
         "\" is not one attnlens knows (GPT-2's, Llama 3's or Qwen 2's regex)");
}

Behavior read_behavior(const Reader& r, const JsonValue& step, const std::string& where) {
  const std::string b = r.string(step, "behavior", "Isolated", where);
  if (b == "Removed") return Behavior::Removed;
  if (b == "Isolated") return Behavior::Isolated;
  if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::MergedWithNext;
  if (b == "Contiguous") return Behavior::Contiguous;
  r.fail(where, "unknown Split behavior \"", b, "\"");
}

PrependScheme read_prepend_scheme(const Reader& r, const JsonValue& step,
                                  const std::string& where) {
  // Files written before prepend_scheme existed say add_prefix_space instead.
  const bool add_prefix_space = r.boolean(step, "add_prefix_space", true, where);
  const std::string s =
      r.string(step, "prepend_scheme", add_prefix_space ? "always" : "never", where);
  if (s == "always") return PrependScheme::Always;
  if (s == "first") return PrependScheme::First;
  if (s == "never") return PrependScheme::Never;
  r.fail(where, "unknown prepend_scheme \"", s, "\"");
}

// The replacement character of a Metaspace step.
std::string read_replacement(const Reader& r, const JsonValue& step, const std::string& where) {
  std::string s = r.string(step, "replacement", "\xE2\x96\x81", where);  // ▁ U+2581
  if (s.empty()) r.fail(where, "\"replacement\" is the empty string");
  return s;
}

// Text decoded from bytes as WHATWG's TextDecoder does (what @huggingface/tokenizers' decoders
// use): each maximal invalid subpart becomes one U+FFFD.
std::string decode_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  while (i < bytes.size()) {
    const unsigned char lead = byte(i);
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead < 0x80) {
      out += static_cast<char>(lead);
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      need = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      need = 2;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      need = 3;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k <= need && i + k < bytes.size(); ++k) {
      const unsigned char c = byte(i + k);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) break;
    }
    if (k == need + 1) {
      out.append(bytes, i, k);
    } else {
      out += "\xEF\xBF\xBD";
    }
    i += k;
  }
  return out;
}

// One byte's "<0xAB>" token.
std::string byte_token(unsigned char b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s = "<0x";
  s += kHex[b >> 4];
  s += kHex[b & 15];
  s += '>';
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Loading.

void Impl::read_model(const Reader& r, const JsonValue& model, std::size_t added_count) {
  const std::string where = "model";
  const std::string& type = r.type(model, where);
  if (type == "Unigram") {
    r.fail(where, "\"Unigram\" (SentencePiece's unigram model, as XLM-RoBERTa, T5 and ALBERT use) ",
           "is not implemented; attnlens reads BPE tokenizers (and WordPiece for BERT)");
  }
  if (type != "BPE") r.fail(where, "unsupported model type \"", type, "\" (only BPE)");
  if (const JsonValue* dropout = r.member(model, "dropout");
      dropout != nullptr && !dropout->is_null() &&
      !(dropout->is_number() && dropout->as_number() == 0.0)) {
    r.fail(where, "\"dropout\" is set; BPE dropout is for training and not supported");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!r.string(model, key, "", where).empty()) {
      r.fail(where, "\"", key, "\" is set; only byte-level and SentencePiece-style BPE is read");
    }
  }
  fuse_unk = r.boolean(model, "fuse_unk", false, where);
  byte_fallback = r.boolean(model, "byte_fallback", false, where);
  ignore_merges = r.boolean(model, "ignore_merges", false, where);

  const JsonValue* v = r.member(model, "vocab");
  if (v == nullptr || !v->is_object()) {
    r.fail(where, "\"vocab\" is ", v == nullptr ? "missing" : v->kind_name(),
           "; expected an object {token: id}");
  }
  // Ids are dense in real files; bounding them by the number of entries bounds the tables.
  const std::size_t entries = v->members().size() + added_count;
  if (entries > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    r.fail(where, "has ", entries, " tokens, more than int32 ids can number");
  }
  tokens.assign(entries, std::string());
  std::vector<bool> seen(entries, false);
  for (const detail::JsonMember& m : v->members()) {
    if (!m.value.is_integer() || m.value.as_integer() < 0 ||
        m.value.as_integer() >= static_cast<std::int64_t>(entries)) {
      r.fail("model: vocab", "token \"", m.name, "\" has id ",
             m.value.is_number() ? "out of range" : m.value.kind_name(),
             "; ids must be integers from 0 to ", entries - 1);
    }
    const auto id = static_cast<std::size_t>(m.value.as_integer());
    if (seen[id]) {
      r.fail("model: vocab", "id ", id, " is given to two tokens, \"", tokens[id], "\" and \"",
             m.name, "\"");
    }
    seen[id] = true;
    tokens[id] = m.name;
  }
  assigned = seen;
  model_tokens = tokens;
  vocab.reserve(v->members().size());
  for (std::size_t id = 0; id < entries; ++id)
    if (seen[id]) vocab.emplace(model_tokens[id], static_cast<std::int32_t>(id));

  const std::string unk_token = r.string(model, "unk_token", "", where);
  if (!unk_token.empty()) {
    const auto it = vocab.find(unk_token);
    if (it == vocab.end()) r.fail(where, "unk_token \"", unk_token, "\" is not in the vocab");
    unk = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = vocab.find(byte_token(static_cast<unsigned char>(b)));
    byte_tokens[static_cast<std::size_t>(b)] = it == vocab.end() ? -1 : it->second;
  }

  const std::vector<JsonValue>& list = r.array(model, "merges", where);
  merges.reserve(list.size());
  std::string merged;
  for (std::size_t rank = 0; rank < list.size(); ++rank) {
    const JsonValue& m = list[rank];
    std::string_view left, right;
    if (m.is_string()) {
      // "left right": tokens of this form cannot hold a space (the pair form can).
      const std::string& s = m.as_string();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        r.fail("model: merges", "merge ", rank, " (\"", s,
               "\") is not two tokens separated by one space");
      }
      left = std::string_view(s).substr(0, space);
      right = std::string_view(s).substr(space + 1);
    } else if (m.is_array() && m.items().size() == 2 && m.items()[0].is_string() &&
               m.items()[1].is_string()) {
      left = m.items()[0].as_string();
      right = m.items()[1].as_string();
    } else {
      r.fail("model: merges", "merge ", rank, " is ", m.kind_name(),
             "; expected \"left right\" or [left, right]");
    }
    merged.assign(left);
    merged += right;
    const auto l = vocab.find(left);
    const auto rt = vocab.find(right);
    const auto to = vocab.find(merged);
    if (l == vocab.end() || rt == vocab.end() || to == vocab.end()) {
      r.fail("model: merges", "merge ", rank, " (\"", left, "\" \"", right, "\") names \"",
             l == vocab.end()    ? left
             : rt == vocab.end() ? right
                                 : std::string_view(merged),
             "\", which is not in the vocab");
    }
    // A repeated merge takes its later rank, as both Hugging Face implementations do.
    merges[pair_key(l->second, rt->second)] =
        (static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(to->second);
  }
}

void Impl::read_normalizer(const Reader& r, const JsonValue& n, const std::string& where) {
  if (n.is_null()) return;
  const std::string& type = r.type(n, where);
  if (type == "Sequence") {
    const std::vector<JsonValue>& list = r.array(n, "normalizers", where);
    for (std::size_t i = 0; i < list.size(); ++i)
      read_normalizer(r, list[i], where + ": normalizers[" + std::to_string(i) + "]");
  } else if (type == "NFC") {
    normalizers.push_back({NormKind::Nfc, {}, {}});
  } else if (type == "Lowercase") {
    normalizers.push_back({NormKind::Lowercase, {}, {}});
  } else if (type == "Prepend") {
    normalizers.push_back({NormKind::Prepend, {}, r.required_string(n, "prepend", where)});
  } else if (type == "Replace") {
    std::string pattern = r.string_pattern(n, where);
    normalizers.push_back(
        {NormKind::Replace, std::move(pattern), r.string(n, "content", "", where)});
  } else {
    r.fail(where, "unsupported normalizer \"", type, "\"");
  }
}

void Impl::read_pre_tokenizer(const Reader& r, const JsonValue& p, const std::string& where) {
  if (p.is_null()) return;
  const std::string& type = r.type(p, where);
  PreStep step{};
  if (type == "Sequence") {
    const std::vector<JsonValue>& list = r.array(p, "pretokenizers", where);
    for (std::size_t i = 0; i < list.size(); ++i)
      read_pre_tokenizer(r, list[i], where + ": pretokenizers[" + std::to_string(i) + "]");
    return;
  } else if (type == "ByteLevel") {
    step.kind = PreKind::ByteLevel;
    step.add_prefix_space = r.boolean(p, "add_prefix_space", false, where);
    step.use_regex = r.boolean(p, "use_regex", true, where);
  } else if (type == "Split") {
    const JsonValue* pattern = r.member(p, "pattern");
    if (pattern == nullptr) r.fail(where, "has no \"pattern\"");
    if (r.member(*pattern, "Regex") != nullptr) {
      step.kind = PreKind::SplitRegex;
      step.regex = known_regex(r, r.required_string(*pattern, "Regex", where + ": pattern"), where);
    } else {
      step.kind = PreKind::SplitString;
      step.literal = r.string_pattern(p, where);
    }
    step.behavior = read_behavior(r, p, where);
    step.invert = r.boolean(p, "invert", false, where);
  } else if (type == "Digits") {
    step.kind = PreKind::Digits;
    step.individual_digits = r.boolean(p, "individual_digits", false, where);
  } else if (type == "Metaspace") {
    step.kind = PreKind::Metaspace;
    step.literal = read_replacement(r, p, where);
    step.prepend = read_prepend_scheme(r, p, where);
    step.split = r.boolean(p, "split", true, where);
  } else {
    r.fail(where, "unsupported pre-tokenizer \"", type, "\"");
  }
  pre_tokenizers.push_back(std::move(step));
}

void Impl::read_post_processor(const Reader& r, const JsonValue& p, const std::string& where) {
  if (p.is_null()) return;
  const std::string& type = r.type(p, where);
  if (type == "Sequence") {
    const std::vector<JsonValue>& list = r.array(p, "processors", where);
    for (std::size_t i = 0; i < list.size(); ++i)
      read_post_processor(r, list[i], where + ": processors[" + std::to_string(i) + "]");
  } else if (type == "ByteLevel") {
    // Trims offsets only; ids are unchanged.
  } else if (type == "TemplateProcessing") {
    const JsonValue* specials = r.member(p, "special_tokens");
    std::vector<std::int32_t> ids;
    std::size_t text_index = std::numeric_limits<std::size_t>::max();
    const std::vector<JsonValue>& single = r.array(p, "single", where);
    for (std::size_t i = 0; i < single.size(); ++i) {
      const std::string item_where = where + ": single[" + std::to_string(i) + "]";
      r.expect_object(single[i], item_where);
      if (const JsonValue* seq = r.member(single[i], "Sequence")) {
        const std::string& id = r.required_string(*seq, "id", item_where + ": Sequence");
        if (id != "A" || text_index != std::numeric_limits<std::size_t>::max()) {
          r.fail(item_where, "a single text's template holds sequence \"A\" once; found \"", id,
                 "\"");
        }
        text_index = ids.size();
      } else if (const JsonValue* special = r.member(single[i], "SpecialToken")) {
        const std::string& name = r.required_string(*special, "id", item_where + ": SpecialToken");
        const JsonValue* entry = specials == nullptr ? nullptr : r.member(*specials, name);
        if (entry == nullptr) {
          r.fail(item_where, "special token \"", name, "\" is not in \"special_tokens\"");
        }
        for (const JsonValue& id : r.array(*entry, "ids", where + ": special_tokens: " + name)) {
          if (!id.is_integer() || id.as_integer() < 0 ||
              id.as_integer() >= static_cast<std::int64_t>(tokens.size())) {
            r.fail(where + ": special_tokens: " + name, "ids must be integers from 0 to ",
                   tokens.size() - 1);
          }
          ids.push_back(static_cast<std::int32_t>(id.as_integer()));
        }
      } else {
        r.fail(item_where, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
      }
    }
    if (text_index == std::numeric_limits<std::size_t>::max()) {
      r.fail(where, "\"single\" has no sequence \"A\"");
    }
    // A template after another wraps its result: its text is the earlier template's tokens.
    template_ids.insert(template_ids.begin() + static_cast<std::ptrdiff_t>(text_at), ids.begin(),
                        ids.end());
    text_at += text_index;
  } else {
    r.fail(where, "unsupported post-processor \"", type, "\"");
  }
}

void Impl::read_decoder(const Reader& r, const JsonValue& d, const std::string& where) {
  if (d.is_null()) return;
  has_decoder = true;
  const std::string& type = r.type(d, where);
  DecStep step{};
  if (type == "Sequence") {
    const std::vector<JsonValue>& list = r.array(d, "decoders", where);
    for (std::size_t i = 0; i < list.size(); ++i)
      read_decoder(r, list[i], where + ": decoders[" + std::to_string(i) + "]");
    return;
  } else if (type == "ByteLevel") {
    step.kind = DecKind::ByteLevel;
  } else if (type == "ByteFallback") {
    step.kind = DecKind::ByteFallback;
  } else if (type == "Fuse") {
    step.kind = DecKind::Fuse;
  } else if (type == "Metaspace") {
    step.kind = DecKind::Metaspace;
    step.pattern = read_replacement(r, d, where);
    step.strip_first = read_prepend_scheme(r, d, where) != PrependScheme::Never;
  } else if (type == "Replace") {
    step.kind = DecKind::Replace;
    step.pattern = r.string_pattern(d, where);
    step.content = r.string(d, "content", "", where);
  } else if (type == "Strip") {
    step.kind = DecKind::Strip;
    step.pattern = r.required_string(d, "content", where);
    const detail::Utf8Char c = step.pattern.empty() ? detail::Utf8Char{} : char_at(step.pattern, 0);
    if (step.pattern.empty() || c.length != step.pattern.size()) {
      r.fail(where, "\"content\" must be one character");
    }
    step.start = r.integer(d, "start", 0, std::numeric_limits<std::int32_t>::max(), where);
    step.stop = r.integer(d, "stop", 0, std::numeric_limits<std::int32_t>::max(), where);
  } else {
    r.fail(where, "unsupported decoder \"", type, "\"");
  }
  decoders.push_back(std::move(step));
}

std::vector<std::string> known_split_patterns() {
  return {std::string(kGpt2Regex), std::string(kLlama3Regex), std::string(kQwen2Regex)};
}

TokenizerJson TokenizerJson::from_json(std::string_view json, std::string_view file_name) {
  const JsonValue root = detail::parse_json(json, file_name);
  const Reader r{file_name};
  if (!root.is_object()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": expected an object but found ",
                 root.kind_name());
  }
  auto impl = std::make_shared<Impl>();
  impl->file = std::string(file_name);
  const JsonValue* model = root.find("model");
  if (model == nullptr) detail::fail(ErrorCode::BAD_FILE, file_name, ": has no \"model\"");
  const JsonValue* added = root.find("added_tokens");
  if (added != nullptr && !added->is_null() && !added->is_array()) {
    r.fail("added_tokens", "is ", added->kind_name(), "; expected an array");
  }
  const std::size_t added_count = added != nullptr && added->is_array() ? added->items().size() : 0;
  impl->read_model(r, *model, added_count);
  for (const char* key : {"truncation", "padding"}) {
    if (const JsonValue* v = root.find(key); v != nullptr && !v->is_null()) {
      r.fail(key, "is set; truncation and padding are the caller's");
    }
  }
  if (const JsonValue* n = root.find("normalizer")) impl->read_normalizer(r, *n, "normalizer");
  if (const JsonValue* p = root.find("pre_tokenizer")) {
    impl->read_pre_tokenizer(r, *p, "pre_tokenizer");
  }
  if (const JsonValue* p = root.find("post_processor")) {
    impl->read_post_processor(r, *p, "post_processor");
  }
  if (const JsonValue* d = root.find("decoder")) impl->read_decoder(r, *d, "decoder");

  impl->is_special.assign(impl->tokens.size(), false);
  for (std::size_t i = 0; i < added_count; ++i) {
    const JsonValue& a = added->items()[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    r.expect_object(a, where);
    Added t{};
    t.content = r.required_string(a, "content", where);
    if (t.content.empty()) r.fail(where, "\"content\" is the empty string");
    // Added tokens are matched at every position of a text, each match up to the longest
    // token's length: a bound keeps that linear (real files' longest are a few dozen bytes).
    if (t.content.size() > kMaxAddedTokenBytes) {
      r.fail(where, "\"content\" has ", t.content.size(),
             " bytes; an added token may have at most ", kMaxAddedTokenBytes);
    }
    t.id = static_cast<std::int32_t>(
        r.integer(a, "id", -1, static_cast<std::int64_t>(impl->tokens.size()) - 1, where));
    if (t.id < 0) r.fail(where, "has no \"id\"");
    t.special = r.boolean(a, "special", false, where);
    t.lstrip = r.boolean(a, "lstrip", false, where);
    t.rstrip = r.boolean(a, "rstrip", false, where);
    t.single_word = r.boolean(a, "single_word", false, where);
    t.normalized = r.boolean(a, "normalized", !t.special, where);
    const auto id = static_cast<std::size_t>(t.id);
    impl->tokens[id] = t.content;
    impl->assigned[id] = true;
    impl->is_special[id] = t.special;
    impl->added.push_back(std::move(t));
  }
  // Ids were sized for every added token being new; most files (Gemma's 6 415 of them, all but
  // one in the vocabulary already) reuse the model's ids. The tokenizer's size is its largest id
  // + 1, as Hugging Face counts it: the embedding rows a model needs.
  std::size_t size = impl->assigned.size();
  while (size > 0 && !impl->assigned[size - 1])
    --size;
  impl->tokens.resize(size);
  impl->assigned.resize(size);
  impl->is_special.resize(size);
  for (const auto& [token, id] : impl->vocab)
    impl->embedded = std::max(impl->embedded, id + 1);
  for (const Added& a : impl->added) {
    if (!a.special) impl->embedded = std::max(impl->embedded, a.id + 1);
  }
  for (std::size_t i = 0; i < impl->added.size(); ++i) {
    const Added& t = impl->added[i];
    const auto index = static_cast<std::int32_t>(i);
    if (t.normalized && !impl->normalizers.empty()) {
      Aligned a;
      a.push(t.content, Span{0, 0});
      impl->normalize(a);
      if (!a.text.empty()) impl->normalized_trie.insert(a.text, index);
    } else {
      impl->raw_trie.insert(t.content, index);
    }
  }
  TokenizerJson out;
  out.template_ids_ = impl->template_ids;
  out.text_at_ = impl->text_at;
  out.impl_ = std::move(impl);
  return out;
}

TokenizerJsonConfig read_tokenizer_config(std::string_view json, std::string_view file_name) {
  const JsonValue root = detail::parse_json(json, file_name);
  if (!root.is_object()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": expected an object but found ",
                 root.kind_name());
  }
  const Reader r{file_name};
  TokenizerJsonConfig c;
  for (const auto& [key, value] : {std::pair{"add_bos_token", &c.add_bos_token},
                                   std::pair{"add_eos_token", &c.add_eos_token}}) {
    const JsonValue* v = root.find(key);
    if (v == nullptr || v->is_null()) continue;
    if (!v->is_bool()) r.fail(key, "is ", v->kind_name(), "; expected true or false");
    *value = v->as_bool();
  }
  for (const auto& [key, value] :
       {std::pair{"bos_token", &c.bos_token}, std::pair{"eos_token", &c.eos_token}}) {
    const JsonValue* v = root.find(key);
    if (v == nullptr || v->is_null()) continue;
    if (v->is_string()) {
      *value = v->as_string();
    } else if (v->is_object() && r.member(*v, "content") != nullptr) {
      *value = r.required_string(*v, "content", key);
    } else {
      r.fail(key, "is ", v->kind_name(), "; expected a string or an object with a \"content\"");
    }
  }
  return c;
}

void TokenizerJson::apply_config(const TokenizerJsonConfig& config, std::string_view file_name) {
  if (!config.add_bos_token && !config.add_eos_token) return;
  const Reader r{file_name};
  const auto id_of = [&](const std::string& token, const char* key) {
    if (token.empty()) r.fail(key, "is needed to add it, but the file has none");
    const std::int32_t id = token_to_id(token);
    if (id < 0) r.fail(key, "\"", token, "\" is not a token of ", impl_->file);
    return id;
  };
  std::vector<std::int32_t> ids;
  std::size_t text_at = 0;
  if (config.add_bos_token.value_or(false)) {
    ids.push_back(id_of(config.bos_token, "bos_token"));
    text_at = 1;
  }
  if (config.add_eos_token.value_or(false)) ids.push_back(id_of(config.eos_token, "eos_token"));
  // This object's own template: copies of a tokenizer share the file's tables, not this.
  template_ids_ = std::move(ids);
  text_at_ = text_at;
}

std::int32_t TokenizerJson::token_to_id(std::string_view token) const {
  for (const Added& a : impl_->added)
    if (a.content == token) return a.id;
  const auto it = impl_->vocab.find(token);
  return it == impl_->vocab.end() ? -1 : it->second;
}

std::int32_t TokenizerJson::vocab_size() const noexcept {
  return static_cast<std::int32_t>(impl_->tokens.size());
}

std::int32_t TokenizerJson::embedded_size() const noexcept {
  // The tokens the template adds to every text need rows too.
  std::int32_t size = impl_->embedded;
  for (const std::int32_t id : template_ids_)
    size = std::max(size, id + 1);
  return size;
}

std::int32_t TokenizerJson::unk_id() const noexcept {
  return impl_->unk;
}

std::vector<std::int32_t> TokenizerJson::special_ids() const {
  std::vector<std::int32_t> out;
  for (std::size_t id = 0; id < impl_->is_special.size(); ++id)
    if (impl_->is_special[id]) out.push_back(static_cast<std::int32_t>(id));
  return out;
}

std::vector<std::int32_t> TokenizerJson::byte_ids() const {
  std::vector<std::int32_t> out;
  for (const std::int32_t id : impl_->byte_tokens)
    if (id >= 0) out.push_back(id);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoding.

void Impl::normalize(Aligned& a) const {
  for (const NormStep& step : normalizers) {
    if (a.text.empty()) return;
    switch (step.kind) {
      case NormKind::Replace:
        a = replace_all(a, step.pattern, step.content);
        break;
      case NormKind::Prepend:
        a = prepend(a, step.content);
        break;
      case NormKind::Nfc: {
        std::vector<detail::NfcChar> chars;
        chars.reserve(a.text.size());
        for (std::size_t pos = 0; pos < a.text.size();) {
          const detail::Utf8Char c = char_at(a.text, pos);
          const Span s = a.span(pos, pos + c.length);
          chars.push_back({c.code_point, s.begin, s.end});
          pos += c.length;
        }
        detail::nfc(chars);
        Aligned out;
        std::string bytes;
        for (const detail::NfcChar& c : chars) {
          bytes.clear();
          detail::append_utf8(bytes, c.cp);
          out.push(bytes, Span{c.begin, c.end});
        }
        a = std::move(out);
        break;
      }
      case NormKind::Lowercase: {
        // Code point by code point (the Rust `tokenizers`: no final-sigma rule).
        Aligned out;
        for (std::size_t pos = 0; pos < a.text.size();) {
          const detail::Utf8Char c = char_at(a.text, pos);
          char32_t lower[2];
          const int n = detail::wordpiece_tables().lower(c.code_point, lower);
          std::string bytes;
          for (int k = 0; k < n; ++k)
            detail::append_utf8(bytes, lower[k]);
          out.push(bytes, a.span(pos, pos + c.length));
          pos += c.length;
        }
        a = std::move(out);
        break;
      }
    }
  }
}

std::vector<Aligned> Impl::pre_tokenize(Aligned a, std::size_t section_index) const {
  std::vector<Aligned> pieces;
  pieces.push_back(std::move(a));
  std::vector<Aligned> next;
  for (const PreStep& step : pre_tokenizers) {
    next.clear();
    for (Aligned& piece : pieces) {
      if (piece.text.empty()) continue;
      switch (step.kind) {
        case PreKind::SplitRegex: {
          std::vector<std::pair<std::size_t, std::size_t>> matches;
          for (std::size_t pos = 0; pos < piece.text.size();) {
            const std::size_t end = regex_end(step.regex, piece.text, pos);
            matches.emplace_back(pos, end);
            pos = end;
          }
          split_piece(piece, matches, step.behavior, step.invert, next);
          break;
        }
        case PreKind::SplitString:
          split_piece(piece, find_all(piece.text, step.literal), step.behavior, step.invert, next);
          break;
        case PreKind::ByteLevel: {
          if (step.add_prefix_space && piece.text[0] != ' ') piece = prepend(piece, " ");
          std::vector<std::pair<std::size_t, std::size_t>> parts;
          if (step.use_regex) {
            parts = detail::gpt2_pieces(piece.text);
          } else {
            parts.emplace_back(0, piece.text.size());
          }
          const detail::ByteAlphabet& alphabet = detail::byte_alphabet();
          for (const auto& [b, e] : parts) {
            Aligned mapped;
            std::string ch;
            for (std::size_t i = b; i < e; ++i) {
              ch.clear();
              detail::append_utf8(ch,
                                  alphabet.char_of_byte[static_cast<unsigned char>(piece.text[i])]);
              mapped.push(ch, piece.align[i]);
            }
            next.push_back(std::move(mapped));
          }
          break;
        }
        case PreKind::Digits: {
          // Numbers (\p{N}) isolated from the text around them: each one alone, or each run.
          std::vector<std::pair<std::size_t, std::size_t>> matches;
          for (std::size_t pos = 0; pos < piece.text.size();) {
            const detail::Utf8Char c = char_at(piece.text, pos);
            if (detail::char_class(c.code_point) == detail::CharClass::Number) {
              if (!step.individual_digits && !matches.empty() && matches.back().second == pos) {
                matches.back().second = pos + c.length;
              } else {
                matches.emplace_back(pos, pos + c.length);
              }
            }
            pos += c.length;
          }
          split_piece(piece, matches, Behavior::Isolated, false, next);
          break;
        }
        case PreKind::Metaspace: {
          Aligned m = replace_all(piece, " ", step.literal);
          const bool starts = m.text.compare(0, step.literal.size(), step.literal) == 0;
          if (!starts && (step.prepend == PrependScheme::Always ||
                          (step.prepend == PrependScheme::First && section_index == 0))) {
            m = prepend(m, step.literal);
          }
          if (step.split) {
            split_piece(m, find_all(m.text, step.literal), Behavior::MergedWithNext, false, next);
          } else {
            next.push_back(std::move(m));
          }
          break;
        }
      }
    }
    pieces.swap(next);
  }
  return pieces;
}

void Impl::model(const Aligned& piece, std::vector<TokenizerJsonToken>& out) const {
  const std::size_t n = piece.text.size();
  const auto emit = [&](std::int32_t id, std::size_t b, std::size_t e) {
    const Span s = piece.span(b, e);
    out.push_back({id, s.begin, s.end, false});
  };
  if (ignore_merges) {
    const auto it = vocab.find(piece.text);
    if (it != vocab.end()) {
      emit(it->second, 0, n);
      return;
    }
  }
  // Symbols: one per character, linked; a symbol that absorbs its right neighbour keeps its
  // index. Merges go one at a time, lowest rank first and leftmost among equal ranks, as both
  // Hugging Face implementations do.
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct Symbol {
    std::int32_t id;  // -1: a character outside the vocab
    std::uint32_t begin, end, prev, next;
    bool alive;
  };
  std::vector<Symbol> sym;
  for (std::size_t pos = 0; pos < n;) {
    const std::size_t len = char_at(piece.text, pos).length;
    const auto it = vocab.find(std::string_view(piece.text).substr(pos, len));
    const auto i = static_cast<std::uint32_t>(sym.size());
    sym.push_back({it == vocab.end() ? -1 : it->second, static_cast<std::uint32_t>(pos),
                   static_cast<std::uint32_t>(pos + len), i == 0 ? kNone : i - 1, kNone, true});
    if (i > 0) sym[i - 1].next = i;
    pos += len;
  }
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> heap;
  const auto push = [&](std::uint32_t left) {
    if (left == kNone || sym[left].next == kNone) return;
    const std::int32_t a = sym[left].id, b = sym[sym[left].next].id;
    if (a < 0 || b < 0) return;
    const auto it = merges.find(pair_key(a, b));
    if (it != merges.end()) heap.push((it->second & 0xFFFFFFFF00000000u) | left);
  };
  for (std::uint32_t i = 0; i + 1 < sym.size(); ++i)
    push(i);
  while (!heap.empty()) {
    const std::uint64_t top = heap.top();
    heap.pop();
    const auto left = static_cast<std::uint32_t>(top);
    const std::uint32_t right = sym[left].next;
    // Entries go stale when a neighbour merges: check the pair still has this rank.
    if (!sym[left].alive || right == kNone || sym[left].id < 0 || sym[right].id < 0) continue;
    const auto it = merges.find(pair_key(sym[left].id, sym[right].id));
    if (it == merges.end() || (it->second >> 32) != (top >> 32)) continue;
    sym[left].id = static_cast<std::int32_t>(it->second & 0xFFFFFFFFu);
    sym[left].end = sym[right].end;
    sym[left].next = sym[right].next;
    sym[right].alive = false;
    if (sym[right].next != kNone) sym[sym[right].next].prev = left;
    push(sym[left].prev);
    push(left);
  }
  const std::size_t first = out.size();
  const auto emit_unk = [&](std::size_t b, std::size_t e) {
    if (unk < 0) return;  // no unk_token: the character is dropped, as both implementations do
    if (fuse_unk && out.size() > first && out.back().id == unk) {
      out.back().end = std::max<std::size_t>(out.back().end, piece.span(b, e).end);
      return;
    }
    emit(unk, b, e);
  };
  for (std::uint32_t i = sym.empty() ? kNone : 0; i != kNone; i = sym[i].next) {
    const Symbol& s = sym[i];
    if (s.id >= 0) {
      emit(s.id, s.begin, s.end);
      continue;
    }
    bool all_bytes = byte_fallback;
    for (std::uint32_t k = s.begin; all_bytes && k < s.end; ++k)
      all_bytes = byte_tokens[static_cast<unsigned char>(piece.text[k])] >= 0;
    if (!all_bytes) {
      emit_unk(s.begin, s.end);
      continue;
    }
    for (std::uint32_t k = s.begin; k < s.end; ++k)
      emit(byte_tokens[static_cast<unsigned char>(piece.text[k])], k, k + 1);
  }
}

namespace {

// Where added tokens are in `text`: leftmost first, the longest at each position (a
// single_word token only between non-word characters).
struct Cut {
  std::size_t begin, end;
  std::int32_t added;  // index into Impl::added, or -1 for text between added tokens
};

// The first byte of the character that holds text[pos].
std::size_t char_start(std::string_view text, std::size_t pos) {
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80)
    --pos;
  return pos;
}

bool is_word_char(std::string_view text, std::size_t pos) {
  const char32_t cp = char_at(text, pos).code_point;
  const detail::CharClass c = detail::char_class(cp);
  return cp == '_' || c == detail::CharClass::Letter || c == detail::CharClass::Number;
}

std::vector<Cut> cut_added(std::string_view text, const Trie& trie,
                           const std::vector<Added>& added) {
  std::vector<Cut> cuts;
  std::size_t text_from = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t best_end = 0;
    std::int32_t best = -1;
    trie.walk(text, pos, [&](std::size_t end, std::int32_t index) {
      if (added[static_cast<std::size_t>(index)].single_word &&
          ((pos > 0 && is_word_char(text, char_start(text, pos - 1))) ||
           (end < text.size() && is_word_char(text, end)))) {
        return;
      }
      best_end = end;
      best = index;
    });
    if (best < 0) {
      ++pos;
      continue;
    }
    if (pos > text_from) cuts.push_back({text_from, pos, -1});
    cuts.push_back({pos, best_end, best});
    pos = text_from = best_end;
  }
  if (text_from < text.size()) cuts.push_back({text_from, text.size(), -1});
  // lstrip / rstrip: the white space (JS's \s, as String.prototype.trim) next to the token
  // goes with it, offsets included (as the Rust tokenizers' added vocabulary widens the match).
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    if (cuts[i].added < 0) continue;
    const Added& a = added[static_cast<std::size_t>(cuts[i].added)];
    if (a.lstrip && i > 0 && cuts[i - 1].added < 0) {
      Cut& c = cuts[i - 1];
      while (c.end > c.begin) {
        const std::size_t start = char_start(text, c.end - 1);
        if (!is_js_space(char_at(text, start).code_point)) break;
        c.end = start;
      }
      cuts[i].begin = c.end;
    }
    if (a.rstrip && i + 1 < cuts.size() && cuts[i + 1].added < 0) {
      Cut& c = cuts[i + 1];
      while (c.begin < c.end) {
        const detail::Utf8Char ch = char_at(text, c.begin);
        if (!is_js_space(ch.code_point)) break;
        c.begin += ch.length;
      }
      cuts[i].end = c.begin;
    }
  }
  return cuts;
}

}  // namespace

void Impl::encode_section(std::string_view text, std::size_t begin, std::size_t end,
                          std::size_t section_index, std::vector<TokenizerJsonToken>& out) const {
  Aligned a;
  a.text.assign(text.substr(begin, end - begin));
  a.align.resize(a.text.size());
  for (std::size_t pos = 0; pos < a.text.size();) {
    const std::size_t len = char_at(a.text, pos).length;
    const Span s{static_cast<std::uint32_t>(begin + pos),
                 static_cast<std::uint32_t>(begin + pos + len)};
    std::fill_n(a.align.begin() + static_cast<std::ptrdiff_t>(pos), len, s);
    pos += len;
  }
  normalize(a);
  if (a.text.empty()) return;
  for (const Cut& c : cut_added(a.text, normalized_trie, added)) {
    if (c.begin == c.end) continue;
    if (c.added >= 0) {
      const Added& t = added[static_cast<std::size_t>(c.added)];
      const Span s = a.span(c.begin, c.end);
      out.push_back({t.id, s.begin, s.end, t.special});
      continue;
    }
    for (const Aligned& piece : pre_tokenize(a.slice(c.begin, c.end), section_index))
      if (!piece.text.empty()) model(piece, out);
  }
}

std::vector<TokenizerJsonToken> TokenizerJson::encode(std::string_view text,
                                                      bool add_special_tokens) const {
  if (text.size() > kMaxBpeTextBytes) {
    detail::fail(ErrorCode::TOO_LARGE, "text has ", text.size(), " bytes, over the limit of ",
                 kMaxBpeTextBytes);
  }
  for (std::size_t pos = 0; pos < text.size();) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, pos);
    if (c.status != detail::Utf8Status::Ok) {
      const std::size_t at =
          c.status == detail::Utf8Status::BadContinuation ? pos + c.bad_byte : pos;
      detail::fail(ErrorCode::INVALID_UTF8,
                   "text is not valid UTF-8: ", detail::utf8_status_phrase(c.status), " at offset ",
                   at);
    }
    pos += c.length;
  }
  std::vector<TokenizerJsonToken> out;
  const Impl& m = *impl_;
  const std::vector<Cut> sections = cut_added(text, m.raw_trie, m.added);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Cut& c = sections[i];
    if (c.added >= 0) {
      const Added& t = m.added[static_cast<std::size_t>(c.added)];
      out.push_back({t.id, c.begin, c.end, t.special});
    } else if (c.begin < c.end) {
      m.encode_section(text, c.begin, c.end, i, out);
    }
  }
  if (add_special_tokens && !template_ids_.empty()) {
    std::vector<TokenizerJsonToken> wrapped;
    wrapped.reserve(out.size() + template_ids_.size());
    for (std::size_t k = 0; k < text_at_; ++k)
      wrapped.push_back({template_ids_[k], 0, 0, true});
    wrapped.insert(wrapped.end(), out.begin(), out.end());
    for (std::size_t k = text_at_; k < template_ids_.size(); ++k)
      wrapped.push_back({template_ids_[k], text.size(), text.size(), true});
    out.swap(wrapped);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding.

std::string TokenizerJson::decode(const std::vector<std::int32_t>& ids,
                                  bool skip_special_tokens) const {
  const Impl& m = *impl_;
  std::vector<std::string> parts;
  parts.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int32_t id = ids[i];
    if (id < 0 || id >= vocab_size() || !m.assigned[static_cast<std::size_t>(id)]) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "ids[", i, "] is ", id, ", which no token of ", m.file,
                   " has");
    }
    if (skip_special_tokens && m.is_special[static_cast<std::size_t>(id)]) continue;
    parts.push_back(m.tokens[static_cast<std::size_t>(id)]);
  }
  if (!m.has_decoder) {
    std::string joined;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) joined += ' ';
      joined += parts[i];
    }
    return joined;
  }
  for (const DecStep& step : m.decoders) {
    switch (step.kind) {
      case DecKind::ByteLevel: {
        // All tokens to bytes, then one text: a character may span tokens. A character outside
        // the alphabet (an added token's) stands for its own UTF-8 bytes.
        const detail::ByteAlphabet& alphabet = detail::byte_alphabet();
        std::string bytes;
        for (const std::string& t : parts) {
          for (std::size_t pos = 0; pos < t.size();) {
            const detail::Utf8Char c = char_at(t, pos);
            const int b = c.code_point < 0x144 ? alphabet.byte_of_char[c.code_point] : -1;
            if (b >= 0) {
              bytes += static_cast<char>(b);
            } else {
              bytes.append(t, pos, c.length);
            }
            pos += c.length;
          }
        }
        parts.assign(1, decode_lossy(bytes));
        break;
      }
      case DecKind::ByteFallback: {
        std::vector<std::string> next;
        std::string bytes;
        bool in_bytes = false;
        const auto flush = [&] {
          if (in_bytes) next.push_back(decode_lossy(bytes));
          bytes.clear();
          in_bytes = false;
        };
        for (const std::string& t : parts) {
          const auto hex = [](char c) {
            return c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : -1;
          };
          if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex(t[3]) >= 0 &&
              hex(t[4]) >= 0) {
            bytes += static_cast<char>(hex(t[3]) * 16 + hex(t[4]));
            in_bytes = true;
          } else {
            flush();
            next.push_back(t);
          }
        }
        flush();
        parts.swap(next);
        break;
      }
      case DecKind::Fuse: {
        std::string all;
        for (const std::string& t : parts)
          all += t;
        parts.assign(1, std::move(all));
        break;
      }
      case DecKind::Replace:
        for (std::string& t : parts) {
          Aligned a;
          a.push(t, Span{0, 0});
          t = replace_all(a, step.pattern, step.content).text;
        }
        break;
      case DecKind::Metaspace:
        for (std::size_t i = 0; i < parts.size(); ++i) {
          Aligned a;
          a.push(parts[i], Span{0, 0});
          parts[i] = replace_all(a, step.pattern, " ").text;
          if (i == 0 && step.strip_first && !parts[i].empty() && parts[i][0] == ' ') {
            parts[i].erase(0, 1);
          }
        }
        break;
      case DecKind::Strip:
        for (std::string& t : parts) {
          const std::string& c = step.pattern;
          std::size_t b = 0, e = t.size();
          for (std::int64_t k = 0; k < step.start && t.compare(b, c.size(), c) == 0 && b < e; ++k)
            b += c.size();
          for (std::int64_t k = 0;
               k < step.stop && e >= b + c.size() && t.compare(e - c.size(), c.size(), c) == 0; ++k)
            e -= c.size();
          t = t.substr(b, e - b);
        }
        break;
    }
  }
  std::string text;
  for (const std::string& t : parts)
    text += t;
  return text;
}

}  // namespace attnlens
