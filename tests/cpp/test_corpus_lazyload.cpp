// zlib/gzip decompression with its size guard, and R lazy-load databases (.rdx + .rdb) built in
// memory the way R writes them.
#include "helpers.hpp"
#include "rdata_writer.hpp"

#include <corpus/inflate.hpp>
#include <corpus/lazyload.hpp>

using attnlens::ErrorCode;
using attnlens::corpus::gunzip;
using attnlens::corpus::inflate_zlib_exact;
using attnlens::corpus::LazyLoadDb;
using attnlens::corpus::RData;
using testing::require_error;
using testing::RWriter;

namespace {

const std::string kText = "It is a truth universally acknowledged, that a single man in possession";

// .rdx bytes: list(variables = list(<names> = c(offset, length) ...), references = list(),
// compressed = <compressed>), gzip-compressed as saveRDS() writes it.
std::string rdx(const std::vector<std::pair<std::string, std::pair<int, int>>>& entries,
                int compressed = 1) {
  RWriter w;
  w.flags(testing::kVecSxp, true).i32(3);
  w.flags(testing::kVecSxp, true).i32(static_cast<std::int32_t>(entries.size()));
  std::vector<std::string> names;
  for (const auto& [name, position] : entries) {
    w.integers({position.first, position.second});
    names.push_back(name);
  }
  w.names_attribute_start().strings(names).nil();
  w.flags(testing::kVecSxp).i32(0);
  w.integers({compressed}, compressed > 1 ? testing::kIntSxp : testing::kLglSxp);
  w.names_attribute_start(1).strings({"variables", "references", "compressed"}).nil();
  return testing::compress(w.bytes(), true);
}

}  // namespace

TEST_CASE("inflate: a zlib stream must inflate to exactly the declared size", "[corpus]") {
  const std::string z = testing::compress(kText, false);
  CHECK(inflate_zlib_exact(z, kText.size(), 1 << 20, "t") == kText);
  require_error([&] { inflate_zlib_exact(z, kText.size() - 1, 1 << 20, "rec"); },
                ErrorCode::BAD_FILE, {"rec: inflates to more than the declared 70 bytes"});
  require_error([&] { inflate_zlib_exact(z, kText.size() + 1, 1 << 20, "rec"); },
                ErrorCode::BAD_FILE, {"rec: inflates to 71 bytes, not the declared 72"});
  require_error([&] { inflate_zlib_exact(z + "xy", kText.size(), 1 << 20, "rec"); },
                ErrorCode::BAD_FILE, {"rec: 2 bytes follow the end of the zlib stream"});
  require_error([&] { inflate_zlib_exact(z.substr(0, z.size() - 5), kText.size(), 1 << 20, "r"); },
                ErrorCode::BAD_FILE, {"r: the compressed data is cut short"});
  std::string corrupt = z;
  corrupt[0] = 0x79;  // the header's method byte, 0x78 for deflate with a 32 KiB window
  require_error([&] { inflate_zlib_exact(corrupt, kText.size(), 1 << 20, "r"); },
                ErrorCode::BAD_FILE, {"r: the compressed data is corrupt"});
}

TEST_CASE("inflate: the bomb guard stops at the limit and at the declaration", "[corpus]") {
  // 64 MiB of zeros compress to about 64 KiB.
  const std::string zeros(std::size_t{64} << 20, '\0');
  const std::string bomb = testing::compress(zeros, false);
  REQUIRE(bomb.size() < std::size_t{1} << 17);
  // Declared over the limit: refused before anything is allocated or inflated.
  require_error([&] { inflate_zlib_exact(bomb, zeros.size(), 1 << 20, "bomb"); },
                ErrorCode::BAD_FILE, {"bomb: declares 67108864 bytes", "limit of 1048576 bytes"});
  // Declared small: inflating stops one byte past the declaration.
  require_error([&] { inflate_zlib_exact(bomb, 1000, 1 << 20, "bomb"); }, ErrorCode::BAD_FILE,
                {"more than the declared 1000 bytes"});
  // gzip has no declaration: the limit alone stops it.
  require_error([&] { gunzip(testing::compress(zeros, true), 1 << 20, "bomb.gz"); },
                ErrorCode::BAD_FILE, {"bomb.gz: inflates to more than the limit of 1048576"});
}

TEST_CASE("inflate: gunzip reads concatenated members and refuses other data", "[corpus]") {
  const std::string a = testing::compress("first ", true);
  const std::string b = testing::compress("second", true);
  CHECK(gunzip(a + b, 100, "t") == "first second");
  CHECK(gunzip(a, 6, "t") == "first ");
  require_error([&] { gunzip(a, 5, "t.gz"); }, ErrorCode::BAD_FILE, {"limit of 5 bytes"});
  require_error([&] { gunzip(a + "junk", 100, "t.gz"); }, ErrorCode::BAD_FILE,
                {"4 bytes after the end of the gzip data are not another gzip member"});
  require_error([] { gunzip("plain", 100, "p.gz"); }, ErrorCode::BAD_FILE, {"p.gz: not gzip data"});
  require_error([&] { gunzip(a.substr(0, a.size() - 3), 100, "t.gz"); }, ErrorCode::BAD_FILE,
                {"cut short"});
}

TEST_CASE("lazyload: objects load by name from the .rdb records the .rdx lists", "[corpus]") {
  const std::string first = RWriter().strings({"CHAPTER I", "", "It is a truth"}).bytes();
  const std::string second = RWriter().integers({1, 2, 3}).bytes();
  const std::string rec1 = testing::rdb_record(first, static_cast<std::uint32_t>(first.size()));
  const std::string rec2 = testing::rdb_record(second, static_cast<std::uint32_t>(second.size()));
  const int len1 = static_cast<int>(rec1.size());
  const int len2 = static_cast<int>(rec2.size());
  const LazyLoadDb db(rdx({{"novel", {0, len1}}, {"numbers", {len1, len2}}}), rec1 + rec2,
                      "pkg/data/Rdata.rdb");
  REQUIRE(db.variables().size() == 2);
  CHECK(db.variables()[0].name == "novel");
  CHECK(db.variables()[1].offset == static_cast<std::uint64_t>(len1));
  CHECK(db.variables()[1].length == static_cast<std::uint64_t>(len2));
  const RData novel = db.load("novel");
  CHECK(novel.utf8_strings(novel.root(), "novel") ==
        std::vector<std::string>{"CHAPTER I", "", "It is a truth"});
  CHECK(novel.what() == "pkg/data/Rdata.rdb, object 'novel'");
  const RData numbers = db.load("numbers");
  CHECK(numbers.node(numbers.root()).integers == std::vector<std::int32_t>{1, 2, 3});
  require_error([&] { db.load("emma"); }, ErrorCode::BAD_ARGUMENT,
                {"pkg/data/Rdata.rdb holds no object named 'emma'"});

  // compressed = FALSE: the records are plain serializations.
  const LazyLoadDb plain(rdx({{"numbers", {0, static_cast<int>(second.size())}}}, 0), second,
                         "plain.rdb");
  const RData plain_numbers = plain.load("numbers");
  CHECK(plain_numbers.node(plain_numbers.root()).integers == std::vector<std::int32_t>{1, 2, 3});
}

TEST_CASE("lazyload: a malformed index or record is BAD_FILE naming file and object", "[corpus]") {
  const std::string data = RWriter().strings({"x"}).bytes();
  const std::string rec = testing::rdb_record(data, static_cast<std::uint32_t>(data.size()));
  const int len = static_cast<int>(rec.size());

  require_error(
      [&] {
        (void)LazyLoadDb(rdx({{"a", {4, len}}}), rec, "d/Rdata.rdb");
      },
      ErrorCode::BAD_FILE, {"d/Rdata.rdx: the record of 'a'", "lies outside d/Rdata.rdb"});
  require_error(
      [&] {
        (void)LazyLoadDb(rdx({{"a", {-1, len}}}), rec, "d/Rdata.rdb");
      },
      ErrorCode::BAD_FILE, {"the offset of 'a' is -1"});
  require_error(
      [&] {
        (void)LazyLoadDb(rdx({{"a", {0, len}}}, 3), rec, "d/Rdata.rdb");
      },
      ErrorCode::BAD_FILE, {"compressed with xz; only zlib"});
  require_error([&] { (void)LazyLoadDb("not an index", rec, "d/Rdata.rdb"); }, ErrorCode::BAD_FILE,
                {"d/Rdata.rdx: not R serialization data"});

  // The record lies about its size: declared larger than the data inflates to.
  const std::string liar = testing::rdb_record(data, static_cast<std::uint32_t>(data.size() + 8));
  const LazyLoadDb lying(rdx({{"emma", {0, static_cast<int>(liar.size())}}}), liar, "d/R.rdb");
  require_error([&] { lying.load("emma"); }, ErrorCode::BAD_FILE,
                {"d/R.rdb, object 'emma': inflates to"});
  // A declared size over the limit is refused before inflating.
  const std::string huge = testing::rdb_record(data, 0xFFFFFFFFu);
  const LazyLoadDb bomb(rdx({{"emma", {0, static_cast<int>(huge.size())}}}), huge, "d/R.rdb",
                        1 << 20);
  require_error([&] { bomb.load("emma"); }, ErrorCode::BAD_FILE,
                {"d/R.rdb, object 'emma': declares 4294967295 bytes once inflated"});
  // A record too short to hold its length.
  const LazyLoadDb tiny(rdx({{"emma", {0, 3}}}), rec, "d/R.rdb");
  require_error([&] { tiny.load("emma"); }, ErrorCode::BAD_FILE, {"too short for its 4-byte"});
}

TEST_CASE("lazyload: open() reads the two files and names a missing one", "[corpus]") {
  require_error([] { LazyLoadDb::open("/nonexistent/attnlens/Rdata"); }, ErrorCode::BAD_FILE,
                {"/nonexistent/attnlens/Rdata.rdx: cannot open it"});
}
