// Private helpers for argument checks. Every failure throws attnlens::Error with a message that
// names the argument and what was wrong.
#pragma once

#include <attnlens/status.hpp>
#include <attnlens/tensor.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

namespace attnlens::detail {

template <typename... Parts>
[[noreturn]] void fail(ErrorCode code, Parts&&... parts) {
  std::ostringstream message;
  (message << ... << std::forward<Parts>(parts));
  throw Error(code, message.str());
}

// Throws NON_FINITE naming the first non-finite element of `data` (if any).
inline void require_finite(const float* data, std::int64_t count, const char* name,
                           const Shape& shape) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(data[i])) {
      fail(ErrorCode::NON_FINITE, name, " holds ", data[i], " at flat index ", i, " (shape ",
           shape_to_string(shape), "); only finite values are allowed");
    }
  }
}

// Throws TOO_LARGE when `count` is over `limit`.
inline void require_at_most(std::int64_t count, std::int64_t limit, const char* what) {
  if (count > limit) {
    fail(ErrorCode::TOO_LARGE, what, " needs ", count, " elements, over the limit of ", limit);
  }
}

}  // namespace attnlens::detail
