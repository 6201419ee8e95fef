#include "core/check.hpp"

#include <cmath>
#include <cstdio>

namespace attnlens::detail {

void append(std::string& out, std::string_view text) {
  out += text;
}

void append(std::string& out, char c) {
  out += c;
}

void append(std::string& out, Hex h) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%X", static_cast<unsigned>(h.value));
  out += buffer;
}

void append_integer(std::string& out, long long value) {
  out += std::to_string(value);
}

void append_integer(std::string& out, unsigned long long value) {
  out += std::to_string(value);
}

void append_number(std::string& out, double value) {
  // A NaN's sign bit means nothing to a reader ("-nan" looked like a different value).
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  out += buffer;
}

void fail_in_file(const Error& e, std::string_view file) {
  const std::string_view message = e.what();
  if (message.size() > file.size() && message.substr(0, file.size()) == file &&
      message.substr(file.size(), 2) == ": ") {
    throw e;
  }
  fail(e.code(), file, ": ", message);
}

void throw_error(ErrorCode code, std::string&& message) {
  throw Error(code, std::move(message));
}

}  // namespace attnlens::detail
