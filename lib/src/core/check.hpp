// Private helpers for argument checks. Every failure throws attnlens::Error with a message that
// names the argument and what was wrong.
#pragma once

#include <attnlens/status.hpp>
#include <attnlens/tensor.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace attnlens::detail {

// A value to print in upper-case hexadecimal, e.g. Hex{0xFF} -> "FF".
struct Hex {
  std::uint32_t value;
};

// Message building without iostreams (<sstream> would add about 100 KB to the wasm module).
// The appends and the throw are out of line (check.cpp): each failure site then instantiates
// only a few calls, which keeps the 30-odd messages of the library small in WebAssembly.
void append(std::string& out, std::string_view text);
void append(std::string& out, char c);
void append(std::string& out, Hex h);
void append_integer(std::string& out, long long value);
void append_integer(std::string& out, unsigned long long value);
void append_number(std::string& out, double value);

template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char>, int> = 0>
void append(std::string& out, T value) {
  if constexpr (std::is_signed_v<T>) {
    append_integer(out, static_cast<long long>(value));
  } else {
    append_integer(out, static_cast<unsigned long long>(value));
  }
}
template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
void append(std::string& out, T value) {
  append_number(out, static_cast<double>(value));
}

[[noreturn]] void throw_error(ErrorCode code, std::string&& message);

template <typename... Parts>
[[noreturn]] void fail(ErrorCode code, const Parts&... parts) {
  std::string message;
  (append(message, parts), ...);
  throw_error(code, std::move(message));
}

// Throws `e` again with "<file>: " before its message, unless the message already names the
// file first (a safetensors reader names its file itself).
[[noreturn]] void fail_in_file(const Error& e, std::string_view file);

// The largest |x| of data[0, count) when all are finite (0 for none), otherwise NaN or
// infinity; vectorised, one pass with no early exit (kernels.cpp).
float finite_max_abs(const float* data, std::int64_t count);

// Throws NON_FINITE naming the first non-finite element of `data` (if any). Returns the largest
// |x| (for the float32 bounds of kernels.hpp).
inline float require_finite(const float* data, std::int64_t count, const char* name,
                            const Shape& shape) {
  const float max_abs = finite_max_abs(data, count);
  if (std::isfinite(max_abs)) return max_abs;
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(data[i])) {
      fail(ErrorCode::NON_FINITE, name, " holds ", data[i], " at flat index ", i, " (shape ",
           shape_to_string(shape), "); only finite values are allowed");
    }
  }
  return max_abs;
}

// Throws TOO_LARGE when `count` is over `limit`.
inline void require_at_most(std::int64_t count, std::int64_t limit, const char* what) {
  if (count > limit) {
    fail(ErrorCode::TOO_LARGE, what, " needs ", count, " elements, over the limit of ", limit);
  }
}

// The product of non-negative factors, or -1 when it does not fit in int64.
inline std::int64_t product_or_overflow(std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (std::int64_t f : factors) {
    if (f == 0) return 0;
  }
  for (std::int64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return -1;
  }
  return product;
}

// Throws TOO_LARGE when the product of non-negative `factors` is over `limit`, however large.
inline void require_product_at_most(std::initializer_list<std::int64_t> factors, std::int64_t limit,
                                    const char* what) {
  const std::int64_t count = product_or_overflow(factors);
  if (count < 0) {
    fail(ErrorCode::TOO_LARGE, what, " needs more than 2^63 elements, over the limit of ", limit);
  }
  require_at_most(count, limit, what);
}

}  // namespace attnlens::detail
