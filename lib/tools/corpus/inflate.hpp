// zlib and gzip decompression for untrusted files, with a size guard against decompression bombs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnlens::corpus {

// Largest decompressed size accepted by default, in bytes (256 MiB). The biggest object in the
// corpora (one Jane Austen novel) inflates to about 1 MB.
inline constexpr std::size_t kMaxInflatedBytes = std::size_t{256} << 20;

// Inflates one zlib stream (RFC 1950) that must decompress to exactly `expected_size` bytes.
//   compressed:    the whole stream; bytes after its end are an error.
//   expected_size: the size the container declares for the result, in bytes.
//   max_size:      the largest `expected_size` accepted, in bytes; no buffer is allocated for a
//                  declaration over it.
//   what:          names the data in error messages, e.g. "Rdata.rdb, object 'emma'".
// Throws Error(BAD_FILE) naming `what` when the declaration is over `max_size`, the stream is
// corrupt or cut short, inflates to fewer or more bytes than declared (decompression stops at
// the declared size), or is followed by extra bytes.
std::string inflate_zlib_exact(std::string_view compressed, std::size_t expected_size,
                               std::size_t max_size, std::string_view what);

// True when `bytes` starts with the gzip magic number 1F 8B.
bool is_gzip(std::string_view bytes) noexcept;

// Decompresses a gzip file (RFC 1952; several members are concatenated, as gzip does).
//   compressed: the whole file.
//   max_size:   the largest decompressed size accepted, in bytes; decompression stops there.
//   what:       names the data in error messages (usually the file name).
// Throws Error(BAD_FILE) naming `what` when the data is not gzip, is corrupt or cut short, or
// inflates to more than `max_size` bytes.
std::string gunzip(std::string_view compressed, std::size_t max_size, std::string_view what);

}  // namespace attnlens::corpus
