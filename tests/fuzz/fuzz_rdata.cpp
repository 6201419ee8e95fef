// libFuzzer target for the R data readers (lib/tools/corpus/): R serialization, .rds (gzip),
// and lazy-load databases (.rdx index + .rdb records). Every input must end in success or
// attnlens::Error; anything else (a crash, a sanitizer report, another exception, a reference
// outside the node table) is a bug.
//
// Input: the first byte picks the reader (byte % 3), the rest is its data:
//   0  parse_r_serialized(rest)
//   1  parse_rds(rest): gzip or plain
//   2  a lazy-load database: 2-byte big-endian length n, then n bytes of .rdx, then the .rdb
//
// Build and run by hand (from the repository root; clang-14 and libclang-rt-14-dev):
//   mkdir -p build/fuzz/corpus
//   src="lib/tools/corpus/inflate.cpp lib/tools/corpus/io.cpp lib/tools/corpus/lazyload.cpp
//        lib/tools/corpus/rdata.cpp lib/tools/corpus/utf8.cpp lib/src/core/check.cpp"
//   flags="-std=c++17 -g -O1 -Ilib/include -Ilib/src -Ilib/tools -Itests/cpp -I/usr/include/eigen3"
//   clang++-14 $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
//     tests/fuzz/fuzz_rdata.cpp $src -lz -o build/fuzz/fuzz_rdata
//   clang++-14 $flags tests/fuzz/rdata_seeds.cpp -lz -o build/fuzz/rdata_seeds
//   build/fuzz/rdata_seeds tests/fuzz/corpus/rdata
//     (writes the committed seeds; npm test fuzzes from them)
//   build/fuzz/fuzz_rdata -max_total_time=300 -rss_limit_mb=2048 \
//     build/fuzz/corpus tests/fuzz/corpus/rdata
#include <attnlens/status.hpp>

#include <corpus/lazyload.hpp>
#include <corpus/rdata.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace attnlens::corpus;

// Small enough that one input stays fast, large enough for every structure.
constexpr std::size_t kLimit = std::size_t{16} << 20;

void require(bool condition) {
  if (!condition) std::abort();
}

// Checks that every reference stays inside the node table and runs the accessors, which may
// only throw attnlens::Error.
void walk(const RData& data) {
  const std::size_t count = data.nodes().size();
  require(data.root() < count);
  for (std::size_t i = 0; i < count; ++i) {
    const RNode& node = data.nodes()[i];
    require(node.attributes < count && node.tail < count);
    for (const RRef ref : node.items)
      require(ref < count);
    for (const RRef ref : node.tags)
      require(ref < count);
    const auto ref = static_cast<RRef>(i);
    try {
      data.utf8_strings(ref, "v");
    } catch (const attnlens::Error&) {
    }
    try {
      data.numbers(ref, "v");
    } catch (const attnlens::Error&) {
    }
    try {
      data.element(ref, "variables");
    } catch (const attnlens::Error&) {
    }
    require(data.attribute(ref, "names") < count);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  try {
    switch (bytes[0] % 3) {
      case 0:
        walk(parse_r_serialized(input, "fuzz"));
        break;
      case 1:
        walk(parse_rds(input, "fuzz.rds", kLimit));
        break;
      default: {
        if (input.size() < 2) return 0;
        const std::size_t n = (std::size_t{static_cast<unsigned char>(input[0])} << 8) |
                              static_cast<unsigned char>(input[1]);
        if (n > input.size() - 2) return 0;
        const LazyLoadDb db(std::string(input.substr(2, n)), std::string(input.substr(2 + n)),
                            "fuzz.rdb", kLimit);
        for (const LazyLoadEntry& entry : db.variables()) {
          try {
            walk(db.load(entry.name));
          } catch (const attnlens::Error&) {
          }
        }
      }
    }
  } catch (const attnlens::Error&) {
  }
  return 0;
}
