#include "io/json.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "text/unicode_utf8.hpp"

#include <algorithm>
#include <array>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <new>
#include <type_traits>

namespace attnlens::detail {
namespace {

// A byte of the text for a message: 'x' for printable ASCII, otherwise byte 0xNN.
void append_byte(std::string& out, std::string_view text, std::size_t pos) {
  if (pos >= text.size()) {
    out += "the end of the text";
    return;
  }
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c > 0x20 && c < 0x7F) {
    out += '\'';
    out += static_cast<char>(c);
    out += '\'';
  } else {
    out += "byte 0x";
    append(out, Hex{c});
  }
}

// At most 40 bytes of a member name for a message, cut at a character boundary.
std::string_view name_excerpt(std::string_view name) {
  if (name.size() <= 40) return name;
  std::size_t cut = 40;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
    --cut;
  return name.substr(0, cut);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exact powers of ten up to 10^22, the largest that a double holds exactly.
constexpr std::array<double, 23> kExactPowersOfTen = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

}  // namespace

class JsonParser {
 public:
  JsonParser(std::string_view text, std::string_view file_name)
      : text_(text), file_name_(file_name) {}

  JsonValue parse_document() {
    // RFC 8259 section 8.1: a parser may ignore a byte order mark.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    skip_whitespace();
    JsonValue root;
    parse_value(root, 0);
    skip_whitespace();
    if (pos_ != text_.size()) {
      fail_at(pos_, "unexpected ", Byte{pos_}, " after the JSON value");
    }
    return root;
  }

 private:
  // A byte of the text, printed by append_byte.
  struct Byte {
    std::size_t pos;
  };

  template <typename... Parts>
  [[noreturn]] void fail_at(std::size_t offset, const Parts&... parts) {
    std::string message;
    append(message, file_name_);
    append(message, ": ");
    (put(message, parts), ...);
    append(message, " at byte ");
    append(message, offset);
    throw_error(ErrorCode::BAD_FILE, std::move(message));
  }
  template <typename T>
  void put(std::string& out, const T& part) {
    if constexpr (std::is_same_v<T, Byte>) {
      append_byte(out, text_, part.pos);
    } else {
      append(out, part);
    }
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  void skip_whitespace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  void parse_value(JsonValue& out, int depth) {
    out.offset_ = pos_;
    if (at_end()) fail_at(pos_, "expected a value but found the end of the text");
    switch (text_[pos_]) {
      case '{':
        parse_object(out, depth + 1);
        return;
      case '[':
        parse_array(out, depth + 1);
        return;
      case '"': {
        std::string s;
        parse_string(s);
        out.value_ = std::move(s);
        return;
      }
      case 't':
        parse_literal("true");
        out.value_ = true;
        return;
      case 'f':
        parse_literal("false");
        out.value_ = false;
        return;
      case 'n':
        parse_literal("null");
        out.value_ = std::monostate{};
        return;
      default:
        if (text_[pos_] == '-' || is_digit(text_[pos_])) {
          parse_number(out);
          return;
        }
        fail_at(pos_, "expected a value but found ", Byte{pos_});
    }
  }

  void parse_literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      fail_at(pos_, "expected the literal ", word, " but found ", Byte{pos_});
    }
    pos_ += word.size();
  }

  void enter(std::size_t start, int depth) {
    if (depth > kMaxJsonDepth) {
      fail_at(start, "arrays and objects nest deeper than ", kMaxJsonDepth, " levels");
    }
  }

  void parse_array(JsonValue& out, int depth) {
    const std::size_t start = pos_;
    enter(start, depth);
    ++pos_;  // '['
    std::vector<JsonValue> items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      out.value_ = std::move(items);
      return;
    }
    for (;;) {
      skip_whitespace();
      items.emplace_back();
      parse_value(items.back(), depth);
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        skip_whitespace();
        if (peek() == ']') fail_at(pos_, "a trailing comma before ']'");
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        break;
      }
      fail_at(pos_, "expected ',' or ']' after an array element (the array starts at byte ", start,
              ") but found ", Byte{pos_});
    }
    out.value_ = std::move(items);
  }

  void parse_object(JsonValue& out, int depth) {
    const std::size_t start = pos_;
    enter(start, depth);
    ++pos_;  // '{'
    std::vector<JsonMember> members;
    std::vector<std::size_t> name_offsets;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      out.value_ = std::move(members);
      return;
    }
    for (;;) {
      skip_whitespace();
      if (peek() != '"') {
        fail_at(pos_, "expected a member name in double quotes but found ", Byte{pos_});
      }
      name_offsets.push_back(pos_);
      members.emplace_back();
      parse_string(members.back().name);
      skip_whitespace();
      if (peek() != ':') {
        fail_at(pos_, "expected ':' after the member name \"", name_excerpt(members.back().name),
                "\" but found ", Byte{pos_});
      }
      ++pos_;
      skip_whitespace();
      parse_value(members.back().value, depth);
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        skip_whitespace();
        if (peek() == '}') fail_at(pos_, "a trailing comma before '}'");
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        break;
      }
      fail_at(pos_, "expected ',' or '}' after an object member (the object starts at byte ", start,
              ") but found ", Byte{pos_});
    }
    reject_duplicate_names(members, name_offsets);
    out.value_ = std::move(members);
  }

  // Sorting is O(n log n) whatever the names are; a hash set could be driven quadratic by a
  // file of names chosen to collide.
  void reject_duplicate_names(const std::vector<JsonMember>& members,
                              const std::vector<std::size_t>& name_offsets) {
    if (members.size() < 2) return;
    struct Entry {
      std::string_view name;
      std::uint32_t index;
    };
    std::vector<Entry> order(members.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = Entry{members[i].name, static_cast<std::uint32_t>(i)};
    // Equal names sort by file order, so the later of two is reported.
    std::sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) {
      const int c = a.name.compare(b.name);
      return c != 0 ? c < 0 : a.index < b.index;
    });
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (order[i - 1].name == order[i].name) {
        fail_at(name_offsets[order[i].index], "the member name \"", name_excerpt(order[i].name),
                "\" appears a second time (first at byte ", name_offsets[order[i - 1].index], ")");
      }
    }
  }

  // Reads a string literal at pos_ (which is '"') into `out`, escapes resolved.
  void parse_string(std::string& out) {
    const std::size_t start = pos_;
    ++pos_;
    std::size_t run = pos_;  // start of the bytes not yet copied to `out`
    for (;;) {
      if (at_end()) fail_at(start, "a string that is never closed");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        out.append(text_.data() + run, pos_ - run);
        ++pos_;
        return;
      }
      if (c == '\\') {
        out.append(text_.data() + run, pos_ - run);
        parse_escape(out);
        run = pos_;
      } else if (c < 0x20) {
        fail_at(pos_, "a raw control character (byte 0x", Hex{c},
                ") inside a string; JSON needs it escaped");
      } else if (c < 0x80) {
        ++pos_;
      } else {
        const Utf8Char ch = decode_utf8_char(text_, pos_);
        if (ch.status != Utf8Status::Ok) {
          fail_at(pos_ + ch.bad_byte, "invalid UTF-8 (", utf8_status_phrase(ch.status),
                  ") inside a string");
        }
        pos_ += ch.length;
      }
    }
  }

  // Reads four hex digits at pos_.
  char32_t parse_hex4(std::size_t escape_start) {
    char32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = pos_ < text_.size() ? hex_value(text_[pos_]) : -1;
      if (h < 0) fail_at(escape_start, "a \\u escape that is not followed by four hex digits");
      value = (value << 4) | static_cast<char32_t>(h);
      ++pos_;
    }
    return value;
  }

  void parse_escape(std::string& out) {
    const std::size_t start = pos_;
    ++pos_;  // '\\'
    if (at_end()) fail_at(start, "a string that is never closed");
    const char c = text_[pos_++];
    switch (c) {
      case '"':
        out += '"';
        return;
      case '\\':
        out += '\\';
        return;
      case '/':
        out += '/';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u':
        break;
      default:
        fail_at(start, "a backslash followed by ", Byte{pos_ - 1}, ", which is no JSON escape");
    }
    char32_t cp = parse_hex4(start);
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      fail_at(start, "a \\u escape of a low surrogate (U+", Hex{cp}, ") without a high one");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") {
        fail_at(start, "a \\u escape of a high surrogate (U+", Hex{cp},
                ") not followed by a low one");
      }
      const std::size_t low_start = pos_;
      pos_ += 2;
      const char32_t low = parse_hex4(low_start);
      if (low < 0xDC00 || low > 0xDFFF) {
        fail_at(start, "a \\u escape of a high surrogate (U+", Hex{cp},
                ") not followed by a low one");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
  }

  // number = [ '-' ] ( '0' / [1-9] *DIGIT ) [ '.' 1*DIGIT ] [ ( 'e' / 'E' ) [ '+' / '-' ] 1*DIGIT ]
  void parse_number(JsonValue& out) {
    const std::size_t start = pos_;
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    if (!is_digit(peek())) fail_at(pos_, "expected a digit after '-' but found ", Byte{pos_});

    // The decimal significand's digits without leading zeros, at most 19 kept (fits uint64).
    std::uint64_t significand = 0;
    int kept_digits = 0;
    bool dropped_nonzero = false;  // a nonzero digit beyond the 19 kept
    int exponent_adjust = 0;       // power of ten the kept significand is off by
    const auto take_digit = [&](char d, bool fraction) {
      if (kept_digits == 0 && d == '0') {
        if (fraction) --exponent_adjust;
        return;
      }
      if (kept_digits < 19) {
        significand = significand * 10 + static_cast<std::uint64_t>(d - '0');
        ++kept_digits;
        if (fraction) --exponent_adjust;
      } else {
        if (d != '0') dropped_nonzero = true;
        if (!fraction) ++exponent_adjust;
      }
    };

    if (peek() == '0') {
      ++pos_;
      if (is_digit(peek())) fail_at(start, "a number with a leading zero");
    } else {
      while (is_digit(peek()))
        take_digit(text_[pos_++], false);
    }
    const std::size_t integer_end = pos_;
    bool is_integer_literal = true;
    if (peek() == '.') {
      is_integer_literal = false;
      ++pos_;
      if (!is_digit(peek())) fail_at(pos_, "expected a digit after '.' but found ", Byte{pos_});
      while (is_digit(peek()))
        take_digit(text_[pos_++], true);
    }
    long exponent = 0;
    if (peek() == 'e' || peek() == 'E') {
      is_integer_literal = false;
      ++pos_;
      bool exponent_negative = false;
      if (peek() == '+' || peek() == '-') exponent_negative = text_[pos_++] == '-';
      if (!is_digit(peek())) {
        fail_at(pos_, "expected a digit in the exponent but found ", Byte{pos_});
      }
      while (is_digit(peek())) {
        // Saturate: any exponent this large is out of range (or zero) anyway.
        if (exponent < 100000) exponent = exponent * 10 + (text_[pos_] - '0');
        ++pos_;
      }
      if (exponent_negative) exponent = -exponent;
    }

    JsonValue::Number number;
    if (is_integer_literal && integer_end - start - (negative ? 1 : 0) <= 19 &&
        exponent_adjust == 0 &&
        significand <= static_cast<std::uint64_t>(INT64_MAX) + (negative ? 1 : 0)) {
      number.is_integer = true;
      number.integer = negative ? static_cast<std::int64_t>(0 - significand)
                                : static_cast<std::int64_t>(significand);
    }

    const long power = exponent + exponent_adjust;
    if (!dropped_nonzero && significand <= (std::uint64_t{1} << 53) && power >= -22 &&
        power <= 22) {
      // Clinger's fast path: the significand and 10^|power| are exact doubles, so one
      // multiplication or division rounds correctly.
      double value = static_cast<double>(significand);
      value = power >= 0 ? value * kExactPowersOfTen[static_cast<std::size_t>(power)]
                         : value / kExactPowersOfTen[static_cast<std::size_t>(-power)];
      number.value = negative ? -value : value;
    } else {
      number.value = slow_number(start, pos_);
    }
    if (!std::isfinite(number.value)) {
      fail_at(start, "a number too large for a double");
    }
    out.value_ = number;
  }

  // Correctly rounded conversion by strtod, with '.' replaced by the locale's decimal point
  // (strtod reads numbers in the current C locale).
  double slow_number(std::size_t begin, std::size_t end) const {
    const std::string_view literal = text_.substr(begin, end - begin);
    const char* decimal_point = std::localeconv()->decimal_point;
    std::string buffer;
    buffer.reserve(literal.size() + 4);
    for (const char c : literal) {
      if (c == '.') {
        buffer += decimal_point;
      } else {
        buffer += c;
      }
    }
    char* parse_end = nullptr;
    const double value = std::strtod(buffer.c_str(), &parse_end);
    if (parse_end != buffer.c_str() + buffer.size()) {
      fail(ErrorCode::INTERNAL, file_name_, ": strtod did not read all of the number ", literal);
    }
    return value;
  }

  std::string_view text_;
  std::string_view file_name_;
  std::size_t pos_ = 0;
};

bool JsonValue::is_integer() const noexcept {
  const Number* n = std::get_if<Number>(&value_);
  return n != nullptr && n->is_integer;
}

namespace {

[[noreturn]] void wrong_kind(const JsonValue& v, const char* wanted) {
  fail(ErrorCode::BAD_FILE, "expected ", wanted, " but found ", v.kind_name(),
       " (the JSON value at byte ", v.offset(), ")");
}

}  // namespace

bool JsonValue::as_bool() const {
  if (!is_bool()) wrong_kind(*this, "a boolean");
  return std::get<bool>(value_);
}

double JsonValue::as_number() const {
  if (!is_number()) wrong_kind(*this, "a number");
  return std::get<Number>(value_).value;
}

std::int64_t JsonValue::as_integer() const {
  if (!is_integer()) wrong_kind(*this, "an integer");
  return std::get<Number>(value_).integer;
}

const std::string& JsonValue::as_string() const {
  if (!is_string()) wrong_kind(*this, "a string");
  return std::get<std::string>(value_);
}

const std::vector<JsonValue>& JsonValue::items() const {
  if (!is_array()) wrong_kind(*this, "an array");
  return std::get<std::vector<JsonValue>>(value_);
}

const std::vector<JsonMember>& JsonValue::members() const {
  if (!is_object()) wrong_kind(*this, "an object");
  return std::get<std::vector<JsonMember>>(value_);
}

const JsonValue* JsonValue::find(std::string_view key) const {
  const auto* members = std::get_if<std::vector<JsonMember>>(&value_);
  if (members == nullptr) return nullptr;
  for (const JsonMember& m : *members) {
    if (m.name == key) return &m.value;
  }
  return nullptr;
}

const char* JsonValue::kind_name() const noexcept {
  switch (kind()) {
    case Kind::Null:
      return "null";
    case Kind::Bool:
      return "a boolean";
    case Kind::Number:
      return "a number";
    case Kind::String:
      return "a string";
    case Kind::Array:
      return "an array";
    case Kind::Object:
      return "an object";
  }
  return "a value";
}

JsonValue parse_json(std::string_view text, std::string_view file_name) {
  try {
    return JsonParser(text, file_name).parse_document();
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, file_name, ": the parsed JSON of ", text.size(),
         " bytes does not fit in memory");
  }
}

void append_json_string(std::string& out, std::string_view utf8) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : utf8) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

}  // namespace attnlens::detail
