// Whole-file reads and writes for the corpus tools.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnlens::corpus {

// Reads a whole file.
//   path:     the file.
//   max_size: the largest size accepted, in bytes.
// Throws Error(BAD_FILE) naming `path` when it cannot be opened or read, and Error(TOO_LARGE)
// when it is larger than `max_size`.
std::string read_file(const std::string& path, std::size_t max_size);

// Writes `bytes` to `path`, replacing the file. Throws Error(BAD_FILE) naming `path` when it
// cannot be written.
void write_file(const std::string& path, std::string_view bytes);

}  // namespace attnlens::corpus
