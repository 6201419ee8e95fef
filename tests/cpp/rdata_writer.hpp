// Hand-made R serialization streams for the corpus tests: each call appends the bytes R's
// serialize() writes for one field, big-endian (XDR), so a test spells out a stream item by
// item. Also zlib and gzip compression, to build lazy-load records and .rds files.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace testing {

// Type codes as R writes them.
enum RCode : int {
  kNilSxp = 0,
  kSymSxp = 1,
  kListSxp = 2,
  kCloSxp = 3,
  kEnvSxp = 4,
  kLangSxp = 6,
  kBuiltinSxp = 8,
  kCharSxp = 9,
  kLglSxp = 10,
  kIntSxp = 13,
  kRealSxp = 14,
  kCplxSxp = 15,
  kStrSxp = 16,
  kVecSxp = 19,
  kExprSxp = 20,
  kBcodeSxp = 21,
  kExtPtrSxp = 22,
  kRawSxp = 24,
  kS4Sxp = 25,
  kAltrepSxp = 238,
  kBaseEnvSxp = 241,
  kEmptyEnvSxp = 242,
  kPersistSxp = 247,
  kGlobalEnvSxp = 253,
  kNilValueSxp = 254,
  kRefSxp = 255,
};

// CHARSXP encoding bits (levels).
enum RLevels : unsigned {
  kNative = 0,
  kBytes = 1u << 1,
  kLatin1 = 1u << 2,
  kUtf8 = 1u << 3,
  kAscii = 1u << 6,
};

class RWriter {
 public:
  // Starts a stream: "X\n", the version, R 4.2.1 as writer, 3.5.0 as oldest reader, and for
  // version 3 the native encoding.
  explicit RWriter(int version = 3, std::string_view encoding = "UTF-8") {
    raw("X\n").i32(version).i32(0x040201).i32(0x030500);
    if (version == 3) i32(static_cast<std::int32_t>(encoding.size())).raw(encoding);
  }
  // A stream without a header, to build bodies by hand.
  static RWriter bare() {
    RWriter w(2);
    w.bytes_.clear();
    return w;
  }

  RWriter& raw(std::string_view bytes) {
    bytes_.append(bytes.data(), bytes.size());
    return *this;
  }
  RWriter& u32(std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes_ += static_cast<char>((v >> shift) & 0xFF);
    return *this;
  }
  RWriter& i32(std::int32_t v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u32(u);
  }
  RWriter& f64(double v) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    u32(static_cast<std::uint32_t>(u >> 32));
    return u32(static_cast<std::uint32_t>(u));
  }
  // An item's flags: type, OBJECT bit 8, attributes bit 9, tag bit 10, levels from bit 12.
  RWriter& flags(int type, bool attributes = false, bool tag = false, bool object = false,
                 unsigned levels = 0) {
    return u32(static_cast<std::uint32_t>(type) | (object ? 1u << 8 : 0u) |
               (attributes ? 1u << 9 : 0u) | (tag ? 1u << 10 : 0u) | (levels << 12));
  }
  RWriter& nil() { return flags(kNilValueSxp); }
  RWriter& chars(std::string_view s, unsigned levels = kAscii) {
    flags(kCharSxp, false, false, false, levels).i32(static_cast<std::int32_t>(s.size()));
    return raw(s);
  }
  RWriter& na_chars() { return flags(kCharSxp).i32(-1); }
  RWriter& symbol(std::string_view name) { return flags(kSymSxp).chars(name); }
  // REFSXP with the index packed into the flags.
  RWriter& ref(std::uint32_t index) { return u32((index << 8) | kRefSxp); }
  RWriter& strings(const std::vector<std::string>& values, bool attributes = false) {
    flags(kStrSxp, attributes).i32(static_cast<std::int32_t>(values.size()));
    for (const auto& v : values)
      chars(v);
    return *this;
  }
  RWriter& integers(const std::vector<std::int32_t>& values, int type = kIntSxp,
                    bool attributes = false) {
    flags(type, attributes).i32(static_cast<std::int32_t>(values.size()));
    for (const auto v : values)
      i32(v);
    return *this;
  }
  RWriter& reals(const std::vector<double>& values, bool attributes = false) {
    flags(kRealSxp, attributes).i32(static_cast<std::int32_t>(values.size()));
    for (const auto v : values)
      f64(v);
    return *this;
  }
  // The start of an attribute pairlist holding `names` (the caller writes the STRSXP value and
  // then nil()). With `names_ref` the tag is a REFSXP to an earlier "names" symbol.
  RWriter& names_attribute_start(std::uint32_t names_ref = 0) {
    flags(kListSxp, false, true);
    return names_ref != 0 ? ref(names_ref) : symbol("names");
  }

  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// zlib (RFC 1950) or gzip (RFC 1952) compression at level 6.
inline std::string compress(std::string_view data, bool gzip) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

// A lazy-load record: the 4-byte big-endian `declared` size, then the zlib stream of `data`.
inline std::string rdb_record(std::string_view data, std::uint32_t declared) {
  std::string record;
  for (int shift = 24; shift >= 0; shift -= 8)
    record += static_cast<char>((declared >> shift) & 0xFF);
  return record + compress(data, false);
}

}  // namespace testing
