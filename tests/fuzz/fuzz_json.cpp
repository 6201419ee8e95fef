// The strict JSON reader (lib/src/io/json.hpp) on arbitrary bytes.
//
// Oracles:
//   - it either returns a value or throws BAD_FILE (OUT_OF_MEMORY only for inputs far larger
//     than a fuzzer makes), and every message starts with the file name;
//   - a value it returns survives a round trip: written back as JSON (strings with
//     append_json_string, numbers with 17 significant digits, which identify a double) and
//     parsed again, it gives the same tree: kinds, booleans, numbers bit for bit, strings,
//     member names and order;
//   - every string and name it returns is valid UTF-8 (checked through the round trip: the
//     reader refuses invalid UTF-8).
#include "fuzz.hpp"

#include "io/json.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using attnlens::detail::JsonValue;

void write(const JsonValue& v, std::string& out) {
  switch (v.kind()) {
    case JsonValue::Kind::Null:
      out += "null";
      return;
    case JsonValue::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case JsonValue::Kind::Number: {
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "%.17g", v.as_number());
      out += buffer;
      return;
    }
    case JsonValue::Kind::String:
      attnlens::detail::append_json_string(out, v.as_string());
      return;
    case JsonValue::Kind::Array:
      out += '[';
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        if (i > 0) out += ',';
        write(v.items()[i], out);
      }
      out += ']';
      return;
    case JsonValue::Kind::Object:
      out += '{';
      for (std::size_t i = 0; i < v.members().size(); ++i) {
        if (i > 0) out += ',';
        attnlens::detail::append_json_string(out, v.members()[i].name);
        out += ':';
        write(v.members()[i].value, out);
      }
      out += '}';
      return;
  }
}

void same(const JsonValue& a, const JsonValue& b) {
  fuzz::check(a.kind() == b.kind(), "round trip changed %s into %s", a.kind_name(), b.kind_name());
  switch (a.kind()) {
    case JsonValue::Kind::Null:
      return;
    case JsonValue::Kind::Bool:
      fuzz::check(a.as_bool() == b.as_bool(), "round trip changed a boolean");
      return;
    case JsonValue::Kind::Number: {
      const double x = a.as_number(), y = b.as_number();
      fuzz::check(std::memcmp(&x, &y, sizeof x) == 0, "round trip changed %.17g into %.17g", x, y);
      return;
    }
    case JsonValue::Kind::String:
      fuzz::check(a.as_string() == b.as_string(), "round trip changed a string");
      return;
    case JsonValue::Kind::Array:
      fuzz::check(a.items().size() == b.items().size(), "round trip changed an array's size");
      for (std::size_t i = 0; i < a.items().size(); ++i)
        same(a.items()[i], b.items()[i]);
      return;
    case JsonValue::Kind::Object:
      fuzz::check(a.members().size() == b.members().size(), "round trip changed an object's size");
      for (std::size_t i = 0; i < a.members().size(); ++i) {
        fuzz::check(a.members()[i].name == b.members()[i].name, "round trip changed a name");
        fuzz::check(b.find(a.members()[i].name) == &b.members()[i].value,
                    "find() does not give the member");
        same(a.members()[i].value, b.members()[i].value);
      }
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  JsonValue value;
  try {
    value = attnlens::detail::parse_json(text, "fuzz.json");
  } catch (const attnlens::Error& e) {
    fuzz::expect_code(e, "parse_json", attnlens::ErrorCode::BAD_FILE);
    fuzz::check(std::strncmp(e.what(), "fuzz.json: ", 11) == 0, "message without the file name: %s",
                e.what());
    return 0;
  }
  std::string written;
  write(value, written);
  JsonValue again;
  try {
    again = attnlens::detail::parse_json(written, "written.json");
  } catch (const attnlens::Error& e) {
    fuzz::check(false, "the written-back JSON does not parse: %s", e.what());
  }
  same(value, again);
  return 0;
}
