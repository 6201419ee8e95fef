#include "core/check.hpp"

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
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  out += buffer;
}

void throw_error(ErrorCode code, std::string&& message) {
  throw Error(code, std::move(message));
}

}  // namespace attnlens::detail
