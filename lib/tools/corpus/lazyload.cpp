#include "lazyload.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "inflate.hpp"
#include "io.hpp"

#include <cmath>
#include <utility>

namespace attnlens::corpus {
namespace {

using detail::fail;

// A .rdx name from a .rdb name ("data/Rdata.rdb" -> "data/Rdata.rdx").
std::string index_name(const std::string& rdb_name) {
  const std::string_view suffix = ".rdb";
  if (rdb_name.size() >= suffix.size() &&
      rdb_name.compare(rdb_name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return rdb_name.substr(0, rdb_name.size() - suffix.size()) + ".rdx";
  }
  return rdb_name + " (index)";
}

// An offset or a length in the index: a whole, non-negative number (R writes integers, or
// doubles for files over 2 GiB).
std::uint64_t whole_number(double value, const std::string& rdx_name, const std::string& entry,
                           const char* field) {
  if (!(value >= 0) || value != std::floor(value) || value > 9.0e15) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": the ", field, " of '", entry, "' is ", value,
         ", not a whole number of bytes");
  }
  return static_cast<std::uint64_t>(value);
}

}  // namespace

LazyLoadDb LazyLoadDb::open(const std::string& prefix, std::size_t max_size) {
  std::string rdx = read_file(prefix + ".rdx", max_size);
  std::string rdb = read_file(prefix + ".rdb", max_size);
  return LazyLoadDb(std::move(rdx), std::move(rdb), prefix + ".rdb", max_size);
}

LazyLoadDb::LazyLoadDb(std::string rdx, std::string rdb, std::string rdb_name, std::size_t max_size)
    : rdb_(std::move(rdb)), rdb_name_(std::move(rdb_name)), max_size_(max_size) {
  const std::string rdx_name = index_name(rdb_name_);
  const RData index = parse_rds(rdx, rdx_name, max_size);

  const RNode& compressed = index.node(index.element(index.root(), "compressed"));
  if ((compressed.type != RType::Logical && compressed.type != RType::Integer) ||
      compressed.integers.size() != 1) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": 'compressed' is not a single logical or integer");
  }
  const std::int32_t method = compressed.integers[0];
  if (method == 2 || method == 3) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": the records are compressed with ",
         method == 2 ? "bzip2" : "xz", "; only zlib (compressed = TRUE) is supported");
  }
  if (method != 0 && method != 1) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": 'compressed' is ", method,
         "; TRUE, FALSE, 2 (bzip2) or 3 (xz) were expected");
  }
  compressed_ = method == 1;

  const RRef variables = index.element(index.root(), "variables");
  const RNode& list = index.node(variables);
  if (list.type != RType::List) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": 'variables' is not a list");
  }
  const RNode& names = index.node(index.attribute(variables, "names"));
  if (list.items.empty()) return;
  if (names.type != RType::String || names.strings.size() != list.items.size()) {
    fail(ErrorCode::BAD_FILE, rdx_name, ": 'variables' has no names of its length (",
         list.items.size(), ")");
  }
  const std::vector<std::string> utf8_names =
      index.utf8_strings(index.attribute(variables, "names"), "the names of 'variables'");
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    LazyLoadEntry entry;
    entry.name = utf8_names[i];
    const std::vector<double> position =
        index.numbers(list.items[i], "the position of '" + entry.name + "'");
    if (position.size() != 2) {
      fail(ErrorCode::BAD_FILE, rdx_name, ": the position of '", entry.name, "' holds ",
           position.size(), " numbers, not 2 (offset, length)");
    }
    entry.offset = whole_number(position[0], rdx_name, entry.name, "offset");
    entry.length = whole_number(position[1], rdx_name, entry.name, "length");
    if (entry.offset > rdb_.size() || entry.length > rdb_.size() - entry.offset) {
      fail(ErrorCode::BAD_FILE, rdx_name, ": the record of '", entry.name, "' (", entry.length,
           " bytes at offset ", entry.offset, ") lies outside ", rdb_name_, " (", rdb_.size(),
           " bytes)");
    }
    variables_.push_back(std::move(entry));
  }
}

RData LazyLoadDb::load(std::string_view name) const {
  for (const LazyLoadEntry& entry : variables_) {
    if (entry.name != name) continue;
    const std::string what = rdb_name_ + ", object '" + entry.name + "'";
    const std::string_view record = std::string_view(rdb_).substr(
        static_cast<std::size_t>(entry.offset), static_cast<std::size_t>(entry.length));
    if (!compressed_) return parse_r_serialized(record, what);
    if (record.size() < 4) {
      fail(ErrorCode::BAD_FILE, what, ": the record is ", record.size(),
           " bytes, too short for its 4-byte length");
    }
    const auto* p = reinterpret_cast<const unsigned char*>(record.data());
    const std::size_t declared = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                                 (std::size_t{p[2]} << 8) | std::size_t{p[3]};
    return parse_r_serialized(inflate_zlib_exact(record.substr(4), declared, max_size_, what),
                              what);
  }
  fail(ErrorCode::BAD_ARGUMENT, rdb_name_, " holds no object named '", name, "'");
}

}  // namespace attnlens::corpus
