// attnlens — error codes and the one error type the library throws.
//
// This file is the single list of error codes. The WebAssembly bindings export the names and
// descriptions from here, the JS package builds `AttnLensError.code` from them, and a test
// checks that the TypeScript declarations name exactly these codes.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace attnlens {

// X(name, description). Append new codes at the end; names are part of the public API.
#define ATTNLENS_ERROR_CODES(X)                                                               \
  X(SHAPE_MISMATCH, "tensor shapes do not fit together")                                      \
  X(NON_FINITE, "an input holds NaN or an infinity where only finite numbers are allowed")    \
  X(TOO_LARGE, "an input exceeds a configured size limit")                                    \
  X(BAD_ARGUMENT, "an argument has an invalid value")                                         \
  X(INVALID_UTF8, "text is not valid UTF-8")                                                  \
  X(EMPTY_INPUT, "an input that must hold at least one element is empty")                     \
  X(UNKNOWN_OPTION, "an option name is not recognised")                                       \
  X(OUT_OF_MEMORY, "memory could not be allocated")                                           \
  X(INTERNAL, "an unexpected internal error; please report it with the input that caused it") \
  X(BAD_FILE, "a file (checkpoint, tokenizer, attention export) is malformed or inconsistent")

enum class ErrorCode : int {
#define ATTNLENS_ENUM_ENTRY(name, description) name,
  ATTNLENS_ERROR_CODES(ATTNLENS_ENUM_ENTRY)
#undef ATTNLENS_ENUM_ENTRY
};

// Number of codes in ErrorCode; codes are 0 .. kErrorCodeCount - 1.
inline constexpr std::size_t kErrorCodeCount = 0
#define ATTNLENS_COUNT_ENTRY(name, description) +1
    ATTNLENS_ERROR_CODES(ATTNLENS_COUNT_ENTRY)
#undef ATTNLENS_COUNT_ENTRY
    ;

// The code's name as written in ATTNLENS_ERROR_CODES, e.g. "SHAPE_MISMATCH".
const char* error_code_name(ErrorCode code) noexcept;

// A one-line description of what the code means in general.
const char* error_code_description(ErrorCode code) noexcept;

// The only exception type attnlens throws on bad input. `what()` is a sentence that names the
// argument at fault and, for shape problems, the shapes involved. The library never aborts or
// exits on bad input, and it never returns NaN in place of an error.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace attnlens
