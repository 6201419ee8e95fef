// Shared by the libFuzzer targets: checks that fail loudly. A failed check prints what was wrong
// and aborts; libFuzzer then saves the input as a crash file (scripts/fuzz.sh says where), which
// becomes a regression case. Targets decode their input with LLVM's FuzzedDataProvider.
#pragma once

#include <attnlens/status.hpp>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace fuzz {

// Aborts with the message when `ok` is false.
__attribute__((format(printf, 2, 3))) inline void check(bool ok, const char* format, ...) {
  if (ok) return;
  std::va_list args;
  va_start(args, format);
  std::fputs("fuzz check failed: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::abort();
}

// Aborts unless `error` has one of the codes the function under test documents.
template <typename... Codes>
void expect_code(const attnlens::Error& error, const char* function, Codes... allowed) {
  const bool ok = ((error.code() == allowed) || ...);
  check(ok, "%s threw %s, which it does not document for this input: %s", function,
        attnlens::error_code_name(error.code()), error.what());
}

}  // namespace fuzz
