// The strict JSON reader behind every file format attnlens reads.
#include "helpers.hpp"

#include "io/json.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>

using attnlens::ErrorCode;
using attnlens::detail::JsonValue;
using attnlens::detail::parse_json;
using testing::require_error;

namespace {

JsonValue parse(std::string_view text) {
  return parse_json(text, "t.json");
}

// Requires BAD_FILE whose message is "t.json: ... <what> ... at byte <offset>".
void require_bad(std::string_view text, const std::string& what, std::size_t offset) {
  INFO("text: " << text);
  require_error([&] { parse(text); }, ErrorCode::BAD_FILE,
                {"t.json: ", what, " at byte " + std::to_string(offset)});
}

// A number must come back as exactly the double the compiler makes of the same literal (C++
// compilers round decimal literals correctly, so this is an independent reference).
void require_number(std::string_view text, double expected) {
  INFO("text: " << text);
  const JsonValue v = parse(text);
  REQUIRE(v.is_number());
  CHECK(v.as_number() == expected);
  CHECK(std::signbit(v.as_number()) == std::signbit(expected));
}

}  // namespace

TEST_CASE("JSON literals, strings, arrays and objects", "[json]") {
  CHECK(parse("null").is_null());
  CHECK(parse("true").as_bool() == true);
  CHECK(parse(" \t\r\nfalse\n").as_bool() == false);
  CHECK(parse("\"abc\"").as_string() == "abc");
  CHECK(parse("[]").items().empty());
  CHECK(parse("{}").members().empty());

  const JsonValue v = parse(R"({"b": [1, "x", null, {"c": true}], "a": {}, "": -2})");
  REQUIRE(v.is_object());
  const auto& members = v.members();
  REQUIRE(members.size() == 3);
  // Members stay in file order, not sorted.
  CHECK(members[0].name == "b");
  CHECK(members[1].name == "a");
  CHECK(members[2].name == "");
  CHECK(members[2].value.as_integer() == -2);
  const auto& items = v.find("b")->items();
  REQUIRE(items.size() == 4);
  CHECK(items[0].as_number() == 1.0);
  CHECK(items[1].as_string() == "x");
  CHECK(items[2].is_null());
  CHECK(items[3].find("c")->as_bool());
  CHECK(v.find("a")->is_object());
  CHECK(v.find("zz") == nullptr);
  CHECK(items[0].find("b") == nullptr);  // find on a non-object
  // Offsets point at each value's first byte.
  CHECK(v.offset() == 0);
  CHECK(v.find("b")->offset() == 6);
  CHECK(items[1].offset() == 10);
}

TEST_CASE("JSON numbers are correctly rounded doubles and integer literals exact", "[json]") {
  require_number("0", 0.0);
  require_number("-0", -0.0);
  require_number("7", 7.0);
  require_number("-12.5", -12.5);
  require_number("0.1", 0.1);
  require_number("1e3", 1e3);
  require_number("1E+3", 1e3);
  require_number("25e-1", 2.5);
  require_number("123.456e-7", 123.456e-7);
  require_number("0.000001", 0.000001);
  // Slow path: more than 19 digits, exponents outside 10^±22, significands above 2^53.
  require_number("0.30000000000000000000000000000001", 0.30000000000000000000000000000001);
  require_number("3.141592653589793238462643383279", 3.141592653589793238462643383279);
  require_number("1.7976931348623157e308", DBL_MAX);
  require_number("2.2250738585072014e-308", DBL_MIN);
  require_number("4.9406564584124654e-324", 4.9406564584124654e-324);  // smallest subnormal
  require_number("1e-400", 0.0);                                       // underflows to zero
  require_number("123456789012345678901234567890", 123456789012345678901234567890.0);
  require_number("9007199254740993", 9007199254740992.0);  // 2^53 + 1: ties to even
  require_number("1e23", 1e23);
  require_number("8.98846567431158e307", 8.98846567431158e307);
  // 1 + 2^-53 is halfway between 1 and the next double: ties go to the even one, 1.
  require_number("1.00000000000000011102230246251565404236316680908203125", 1.0);
  require_number("1.00000000000000011102230246251565404236316680908203126", 1.0000000000000002);
  require_number("1.00000000000000011102230246251565404236316680908203124", 1.0);

  CHECK(parse("9007199254740993").as_integer() == 9007199254740993);
  CHECK(parse("9223372036854775807").as_integer() == INT64_MAX);
  CHECK(parse("-9223372036854775808").as_integer() == INT64_MIN);
  CHECK_FALSE(parse("9223372036854775808").is_integer());
  CHECK_FALSE(parse("-9223372036854775809").is_integer());
  CHECK_FALSE(parse("12345678901234567890123").is_integer());
  CHECK_FALSE(parse("1.0").is_integer());
  CHECK_FALSE(parse("1e2").is_integer());
  CHECK(parse("-0").as_integer() == 0);
  require_error([] { parse("1.5").as_integer(); }, ErrorCode::BAD_FILE,
                {"expected an integer", "byte 0"});
}

TEST_CASE("JSON strings: escapes, surrogate pairs and raw UTF-8", "[json]") {
  CHECK(parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse(R"("caf\u00e9 \u00E9")").as_string() == "caf\xC3\xA9 \xC3\xA9");
  CHECK(parse(R"("\u20ac")").as_string() == "\xE2\x82\xAC");
  CHECK(parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");  // U+1F600
  CHECK(parse("\"\xF0\x9F\x98\x80 \xE6\x97\xA5\"").as_string() == "\xF0\x9F\x98\x80 \xE6\x97\xA5");
  CHECK(parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  CHECK(parse(R"("\u0120the")").as_string() == "\xC4\xA0the");  // GPT-2's space marker
  // A byte order mark is skipped (RFC 8259 section 8.1).
  CHECK(parse("\xEF\xBB\xBF[1]").items().size() == 1);
}

TEST_CASE("JSON writer escapes what the reader needs escaped", "[json]") {
  std::string all;
  for (int c = 0; c < 0x80; ++c)
    all += static_cast<char>(c);
  all += "\xC3\xA9\xF0\x9F\x98\x80\xC4\xA0";
  std::string literal;
  attnlens::detail::append_json_string(literal, all);
  CHECK(literal.find('\n') == std::string::npos);
  CHECK(parse(literal).as_string() == all);
  literal.clear();
  attnlens::detail::append_json_string(literal, "a\"b\\\x01\xC3\xA9");
  CHECK(literal == "\"a\\\"b\\\\\\u0001\xC3\xA9\"");
}

TEST_CASE("JSON syntax errors name the file, the problem and the byte", "[json][errors]") {
  require_bad("", "expected a value but found the end of the text", 0);
  require_bad("   ", "expected a value but found the end of the text", 3);
  require_bad("[1,]", "a trailing comma before ']'", 3);
  require_bad(R"({"a":1,})", "a trailing comma before '}'", 7);
  require_bad("[1 2]", "expected ',' or ']' after an array element", 3);
  require_bad(R"({"a" 1})", "expected ':' after the member name \"a\" but found '1'", 5);
  require_bad(R"({"a":1 "b":2})", "expected ',' or '}' after an object member", 7);
  require_bad("{a:1}", "expected a member name in double quotes but found 'a'", 1);
  require_bad("{'a':1}", "expected a member name in double quotes but found '''", 1);
  require_bad("['a']", "expected a value but found '''", 1);
  require_bad("[1",
              "expected ',' or ']' after an array element (the array starts at byte 0) "
              "but found the end of the text",
              2);
  require_bad(R"({"a":1)", "found the end of the text", 6);
  require_bad("1 2", "unexpected '2' after the JSON value", 2);
  require_bad("{} x", "unexpected 'x' after the JSON value", 3);
  require_bad("[1] // comment", "unexpected '/' after the JSON value", 4);
  require_bad("/* c */ 1", "expected a value but found '/'", 0);
  require_bad("tru", "expected the literal true but found 't'", 0);
  require_bad("nul", "expected the literal null", 0);
  require_bad("True", "expected a value but found 'T'", 0);
  require_bad("NaN", "expected a value but found 'N'", 0);
  require_bad("Infinity", "expected a value but found 'I'", 0);
  require_bad("[-Infinity]", "expected a digit after '-' but found 'I'", 2);
  require_bad("\x01", "expected a value but found byte 0x1", 0);
}

TEST_CASE("JSON number errors", "[json][errors]") {
  require_bad("01", "a number with a leading zero", 0);
  require_bad("[-012]", "a number with a leading zero", 1);
  require_bad("+1", "expected a value but found '+'", 0);
  require_bad(".5", "expected a value but found '.'", 0);
  require_bad("1.", "expected a digit after '.' but found the end of the text", 2);
  require_bad("1.e3", "expected a digit after '.' but found 'e'", 2);
  require_bad("1e", "expected a digit in the exponent", 2);
  require_bad("1e+", "expected a digit in the exponent", 3);
  require_bad("-", "expected a digit after '-'", 1);
  require_bad("[1, 1e400]", "a number too large for a double", 4);
  require_bad("-1e99999999999999999999", "a number too large for a double", 0);
  require_bad("0x10", "unexpected 'x' after the JSON value", 1);
}

TEST_CASE("JSON string errors", "[json][errors]") {
  require_bad("\"abc", "a string that is never closed", 0);
  require_bad("[\"ab\\", "a string that is never closed", 4);
  require_bad("\"a\nb\"", "a raw control character (byte 0xA) inside a string", 2);
  require_bad("\"a\tb\"", "a raw control character (byte 0x9)", 2);
  require_bad(R"("\x41")", "a backslash followed by 'x', which is no JSON escape", 1);
  require_bad(R"("\u12")", "a \\u escape that is not followed by four hex digits", 1);
  require_bad(R"("\u12G4")", "a \\u escape that is not followed by four hex digits", 1);
  require_bad(R"(["\ud83d"])", "high surrogate (U+D83D) not followed by a low one", 2);
  require_bad(R"("\ud83d\u0041")", "high surrogate (U+D83D) not followed by a low one", 1);
  require_bad(R"("a\ude00")", "low surrogate (U+DE00) without a high one", 2);
  require_bad("\"\xFF\"", "invalid UTF-8 (a byte that cannot start a character)", 1);
  require_bad("\"ab\xC3\"", "invalid UTF-8 (a character whose continuation byte is missing)", 4);
  require_bad("\"\xE2\x82", "invalid UTF-8 (a character cut off by the end of the text)", 3);
  require_bad("\"\xC0\xAF\"", "invalid UTF-8 (an overlong encoding)", 1);
  require_bad("\"\xED\xA0\x80\"", "invalid UTF-8 (a surrogate or a code point above U+10FFFF)", 1);
  require_bad("\"\xF4\x90\x80\x80\"", "a surrogate or a code point above U+10FFFF", 1);
  // UTF-8 outside strings is never valid JSON.
  require_bad("\xC3\xA9", "expected a value but found byte 0xC3", 0);
}

TEST_CASE("JSON objects may not repeat a member name", "[json][errors]") {
  require_bad(R"({"a":1,"b":2,"a":3})",
              "the member name \"a\" appears a second time (first at byte 1)", 13);
  require_bad(R"({"x":{"k":1,"k":1}})", "the member name \"k\" appears a second time", 12);
  // Escapes are resolved before comparing: "\u0061" is "a".
  require_bad(R"({"a":1,"\u0061":2})", "the member name \"a\" appears a second time", 7);
  // Equal names in different objects are fine.
  CHECK(parse(R"([{"a":1},{"a":2}])").items().size() == 2);
}

TEST_CASE("JSON nesting is bounded", "[json][errors]") {
  const int max = attnlens::detail::kMaxJsonDepth;
  const std::string ok = std::string(static_cast<std::size_t>(max), '[') +
                         std::string(static_cast<std::size_t>(max), ']');
  CHECK(parse(ok).is_array());
  const std::string deep = "[" + ok + "]";
  require_bad(deep, "arrays and objects nest deeper than 128 levels",
              static_cast<std::size_t>(max));
  // Far deeper text stops at the bound, not with a stack overflow.
  const std::string very_deep(1000000, '[');
  require_bad(very_deep, "nest deeper than 128 levels", static_cast<std::size_t>(max));
  std::string objects;
  for (int i = 0; i <= max; ++i)
    objects += "{\"a\":";
  require_bad(objects, "nest deeper", static_cast<std::size_t>(max) * 5);
}

TEST_CASE("every truncation of a JSON document is an error", "[json][errors]") {
  const std::string doc =
      R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2, 3],)"
      R"( "data_offsets": [0, 24]}, "s": "caf\u00e9 \ud83d\ude00 é", "n": [-1.5e-3, true, null]})";
  CHECK(parse(doc).members().size() == 4);
  for (std::size_t n = 0; n < doc.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    require_error([&] { parse(std::string_view(doc).substr(0, n)); }, ErrorCode::BAD_FILE,
                  {"t.json: "});
  }
}

TEST_CASE("JSON accessors on the wrong kind are errors, not crashes", "[json][errors]") {
  const JsonValue v = parse(R"({"a": "text"})");
  require_error([&] { v.find("a")->as_number(); }, ErrorCode::BAD_FILE,
                {"expected a number but found a string", "byte 6"});
  require_error([&] { v.items(); }, ErrorCode::BAD_FILE, {"expected an array but found an object"});
  require_error([&] { v.find("a")->members(); }, ErrorCode::BAD_FILE, {"expected an object"});
  require_error([&] { v.as_bool(); }, ErrorCode::BAD_FILE, {"expected a boolean"});
  require_error([&] { v.as_string(); }, ErrorCode::BAD_FILE, {"expected a string"});
}
