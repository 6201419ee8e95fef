#include "io.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace attnlens::corpus {
namespace {

using detail::fail;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

std::string read_file(const std::string& path, std::size_t max_size) {
  const File file(std::fopen(path.c_str(), "rb"));
  if (!file) fail(ErrorCode::BAD_FILE, path, ": cannot open it (", std::strerror(errno), ")");
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file.get());
    if (got > max_size - out.size()) {
      fail(ErrorCode::TOO_LARGE, path, ": larger than the limit of ", max_size, " bytes");
    }
    out.append(buffer, got);
    if (got < sizeof buffer) break;
  }
  if (std::ferror(file.get())) {
    fail(ErrorCode::BAD_FILE, path, ": reading failed after ", out.size(), " bytes");
  }
  return out;
}

void write_file(const std::string& path, std::string_view bytes) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    fail(ErrorCode::BAD_FILE, path, ": cannot create it (", std::strerror(errno), ")");
  }
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file.get()) == bytes.size();
  if (!written || std::fclose(file.release()) != 0) {
    fail(ErrorCode::BAD_FILE, path, ": writing ", bytes.size(), " bytes failed");
  }
}

}  // namespace attnlens::corpus
