#include "inflate.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace attnlens::corpus {
namespace {

using detail::fail;

// One zlib inflate state, ended on every path out.
class Inflater {
 public:
  // window_bits: 15 for a zlib stream, 15 + 16 for a gzip member.
  Inflater(int window_bits, std::string_view input, std::string_view what)
      : input_(input), what_(what) {
    if (inflateInit2(&stream_, window_bits) != Z_OK) {
      fail(ErrorCode::OUT_OF_MEMORY, what_, ": zlib could not allocate its inflate state");
    }
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates into out[0, capacity) and returns the bytes written. Stops at the end of the
  // stream (then stream_ended() is true) or when the output is full.
  std::size_t fill(char* out, std::size_t capacity) {
    std::size_t written = 0;
    while (written < capacity && !ended_) {
      feed();
      const uInt chunk = static_cast<uInt>(std::min<std::size_t>(capacity - written, UINT_MAX));
      stream_.next_out = reinterpret_cast<Bytef*>(out + written);
      stream_.avail_out = chunk;
      const int status = inflate(&stream_, Z_NO_FLUSH);
      written += chunk - stream_.avail_out;
      if (status == Z_STREAM_END) {
        ended_ = true;
      } else if (status == Z_BUF_ERROR) {
        // No progress was possible with room to write: every input byte is used up, and the
        // stream has not ended.
        fail(ErrorCode::BAD_FILE, what_, ": the compressed data is cut short after ", consumed_,
             " bytes (the stream does not end)");
      } else if (status == Z_MEM_ERROR) {
        fail(ErrorCode::OUT_OF_MEMORY, what_, ": zlib ran out of memory while inflating");
      } else if (status != Z_OK) {
        fail(ErrorCode::BAD_FILE, what_, ": the compressed data is corrupt (zlib: ",
             stream_.msg != nullptr ? stream_.msg : "error", ")");
      }
    }
    return written;
  }

  bool stream_ended() const { return ended_; }

  // Input bytes after the end of the stream.
  std::string_view rest() const { return input_.substr(consumed_ - stream_.avail_in); }

  // Starts a new stream on rest() (the next gzip member).
  void restart() {
    input_ = rest();
    consumed_ = 0;
    stream_.avail_in = 0;
    ended_ = false;
    if (inflateReset(&stream_) != Z_OK) {
      fail(ErrorCode::INTERNAL, what_, ": zlib could not reset its inflate state");
    }
  }

 private:
  // zlib counts input in uInt: hand it at most UINT_MAX bytes at a time.
  void feed() {
    if (stream_.avail_in != 0 || consumed_ == input_.size()) return;
    const std::size_t chunk = std::min<std::size_t>(input_.size() - consumed_, UINT_MAX);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data() + consumed_));
    stream_.avail_in = static_cast<uInt>(chunk);
    consumed_ += chunk;
  }

  z_stream stream_{};
  std::string_view input_;
  std::string_view what_;
  std::size_t consumed_ = 0;  // bytes of input_ handed to zlib so far
  bool ended_ = false;
};

}  // namespace

std::string inflate_zlib_exact(std::string_view compressed, std::size_t expected_size,
                               std::size_t max_size, std::string_view what) {
  if (expected_size > max_size) {
    fail(ErrorCode::BAD_FILE, what, ": declares ", expected_size,
         " bytes once inflated, over the limit of ", max_size, " bytes");
  }
  Inflater inflater(MAX_WBITS, compressed, what);
  std::string out(expected_size, '\0');
  const std::size_t written = inflater.fill(out.data(), out.size());
  if (!inflater.stream_ended()) {
    // The declared size is reached: one more byte shows whether the stream holds more.
    char probe = 0;
    if (inflater.fill(&probe, 1) != 0) {
      fail(ErrorCode::BAD_FILE, what, ": inflates to more than the declared ", expected_size,
           " bytes");
    }
  }
  if (written != expected_size) {
    fail(ErrorCode::BAD_FILE, what, ": inflates to ", written, " bytes, not the declared ",
         expected_size);
  }
  if (!inflater.rest().empty()) {
    fail(ErrorCode::BAD_FILE, what, ": ", inflater.rest().size(),
         " bytes follow the end of the zlib stream");
  }
  return out;
}

bool is_gzip(std::string_view bytes) noexcept {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
         static_cast<unsigned char>(bytes[1]) == 0x8B;
}

std::string gunzip(std::string_view compressed, std::size_t max_size, std::string_view what) {
  if (!is_gzip(compressed)) {
    fail(ErrorCode::BAD_FILE, what, ": not gzip data (it does not start with 1F 8B)");
  }
  Inflater inflater(MAX_WBITS + 16, compressed, what);
  std::string out;
  constexpr std::size_t kStep = std::size_t{1} << 20;
  while (true) {
    // Grow by at most kStep, and to one byte past the limit so that going over it shows.
    const std::size_t room = std::min(kStep, max_size + 1 - out.size());
    const std::size_t old_size = out.size();
    out.resize(old_size + room);
    out.resize(old_size + inflater.fill(out.data() + old_size, room));
    if (out.size() > max_size) {
      fail(ErrorCode::BAD_FILE, what, ": inflates to more than the limit of ", max_size, " bytes");
    }
    if (!inflater.stream_ended()) continue;
    if (inflater.rest().empty()) return out;
    if (!is_gzip(inflater.rest())) {
      fail(ErrorCode::BAD_FILE, what, ": ", inflater.rest().size(),
           " bytes after the end of the gzip data are not another gzip member");
    }
    inflater.restart();
  }
}

}  // namespace attnlens::corpus
