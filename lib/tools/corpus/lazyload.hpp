// R's lazy-load databases: the `.rdx` index and `.rdb` records that an installed R package keeps
// its data sets (data/Rdata.rdx, data/Rdata.rdb) and functions in.
//
// The .rdx file is a serialized list (usually gzip-compressed, as saveRDS() writes it) with
//   variables:  a named list mapping each object's name to c(offset, length) in the .rdb file
//   references: a named list of the same kind for environments the objects refer to
//   compressed:  TRUE (zlib) or FALSE; R's 2 (bzip2) and 3 (xz) are not supported here.
// Each .rdb record is a 4-byte big-endian uncompressed length followed by a zlib stream of one
// serialized object.
#pragma once

#include "rdata.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

// Where one object's record lies in the .rdb file.
struct LazyLoadEntry {
  std::string name;          // the object's name, e.g. "emma"
  std::uint64_t offset = 0;  // byte offset of the record in the .rdb file
  std::uint64_t length = 0;  // the record's length in bytes (4-byte size + zlib stream)
};

class LazyLoadDb {
 public:
  // Reads `prefix`.rdx and `prefix`.rdb, e.g. prefix ".../janeaustenr/data/Rdata".
  //   max_size: the largest decompressed size of the index and of any one object, in bytes.
  // Throws Error(BAD_FILE) naming the file when a file cannot be read or the index is malformed.
  static LazyLoadDb open(const std::string& prefix, std::size_t max_size = kMaxInflatedBytes);

  // The same from bytes in memory.
  //   rdx, rdb:  the two files' contents.
  //   rdb_name:  names the .rdb file in error messages (the .rdx is named by rdb_name with the
  //              extension changed when it ends in ".rdb").
  //   max_size:  as for open().
  // Throws Error(BAD_FILE) when the index is malformed or an entry points outside the .rdb data.
  LazyLoadDb(std::string rdx, std::string rdb, std::string rdb_name,
             std::size_t max_size = kMaxInflatedBytes);

  // The objects the database holds, in the index's order.
  const std::vector<LazyLoadEntry>& variables() const { return variables_; }

  // Reads and parses the object `name`. Throws Error(BAD_ARGUMENT) when the database has no such
  // object, and Error(BAD_FILE) naming the .rdb file and the object when its record is malformed
  // (see inflate_zlib_exact() and parse_r_serialized()).
  RData load(std::string_view name) const;

 private:
  std::string rdb_;
  std::string rdb_name_;
  std::size_t max_size_;
  bool compressed_ = true;
  std::vector<LazyLoadEntry> variables_;
};

}  // namespace attnlens::corpus
