// Private: a strict JSON (RFC 8259) reader for the files attnlens reads (safetensors headers,
// config.json, vocab.json, corpora), and the string escaping its writers need.
//
// Strict means: exactly one value with optional whitespace (space, tab, LF, CR) around it; no
// comments, trailing commas, single quotes, NaN/Infinity, leading zeros or leading '+'; strings
// are valid UTF-8 with no raw control characters and only the escapes RFC 8259 lists; a \u escape
// of a surrogate must be half of a pair. Numbers must be finite as doubles. An object may not
// name a member twice (RFC 8259 leaves that to the reader; every format attnlens reads treats a
// repeated name as an error, so the reader refuses it for all of them). A UTF-8 byte order mark
// at the start is skipped, as RFC 8259 allows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attnlens::detail {

// Deepest nesting of arrays and objects parse_json() accepts; deeper text is Error(BAD_FILE).
// Real files nest 2-4 levels; the bound keeps the recursive parser's stack use small.
inline constexpr int kMaxJsonDepth = 128;

struct JsonMember;

// One parsed JSON value. About 48 bytes plus its text; copies are deep.
class JsonValue {
 public:
  enum class Kind : std::uint8_t { Null, Bool, Number, String, Array, Object };

  JsonValue() = default;

  Kind kind() const noexcept { return static_cast<Kind>(value_.index()); }
  bool is_null() const noexcept { return kind() == Kind::Null; }
  bool is_bool() const noexcept { return kind() == Kind::Bool; }
  bool is_number() const noexcept { return kind() == Kind::Number; }
  bool is_string() const noexcept { return kind() == Kind::String; }
  bool is_array() const noexcept { return kind() == Kind::Array; }
  bool is_object() const noexcept { return kind() == Kind::Object; }

  // True for a number written as an integer literal (no fraction, no exponent) whose value fits
  // in int64; as_integer() then gives it exactly (as_number() rounds above 2^53).
  bool is_integer() const noexcept;

  // The value. Each throws Error(BAD_FILE) naming the byte offset when the kind is different;
  // check the kind first where a message should name the file and the entry.
  bool as_bool() const;
  double as_number() const;                        // finite
  std::int64_t as_integer() const;                 // only when is_integer()
  const std::string& as_string() const;            // UTF-8, escapes resolved
  const std::vector<JsonValue>& items() const;     // array elements in file order
  const std::vector<JsonMember>& members() const;  // object members in file order

  // The member named `key` (compared byte by byte) of an object, or nullptr when there is none
  // or this is not an object. Linear in the number of members: iterate members() to look up
  // many names of a large object.
  const JsonValue* find(std::string_view key) const;

  // Byte offset of the value's first character in the parsed text (for error messages).
  std::size_t offset() const noexcept { return offset_; }

  // "null", "a boolean", "a number", "a string", "an array" or "an object".
  const char* kind_name() const noexcept;

 private:
  friend class JsonParser;

  struct Number {
    double value = 0.0;
    std::int64_t integer = 0;
    bool is_integer = false;
  };
  // Alternatives in the order of Kind.
  std::variant<std::monostate, bool, Number, std::string, std::vector<JsonValue>,
               std::vector<JsonMember>>
      value_;
  std::size_t offset_ = 0;
};

struct JsonMember {
  std::string name;  // UTF-8, escapes resolved
  JsonValue value;
};

// Parses `text` as one JSON value. `file_name` only names the file in messages. Errors are
// Error(BAD_FILE, "<file_name>: <what> at byte <offset>"); Error(OUT_OF_MEMORY) when the values
// do not fit in memory.
JsonValue parse_json(std::string_view text, std::string_view file_name);

// Appends `utf8` to `out` as a JSON string literal, quotes included: '"' and '\\' escaped,
// control characters as \n, \t, ... or \u00XX, everything else (non-ASCII too) as it is.
// The input is assumed to be valid UTF-8.
void append_json_string(std::string& out, std::string_view utf8);

}  // namespace attnlens::detail
