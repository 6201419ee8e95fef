// safetensors: the reference layout, round trips, exact F16/BF16 conversions, bad files.
#include "helpers.hpp"

#include <attnlens/safetensors.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using attnlens::Dtype;
using attnlens::ErrorCode;
using attnlens::SafetensorsView;
using attnlens::Tensor;
using attnlens::TensorList;
using testing::require_error;

namespace {

using Bytes = std::vector<std::uint8_t>;

// A file laid out by the spec: 8-byte little-endian header length, header, data.
Bytes make_file(const std::string& header, const Bytes& data = {}) {
  Bytes out;
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

SafetensorsView open(const Bytes& b) {
  return SafetensorsView(b.data(), b.size(), "m.safetensors");
}

// BAD_FILE whose message starts with the file name and contains each needle.
void require_bad(const Bytes& file, std::vector<std::string> needles) {
  needles.push_back("m.safetensors");
  require_error([&] { open(file); }, ErrorCode::BAD_FILE, needles);
}

// A header with one F32 tensor "t" of shape [2] at [0, 8] plus `extra` members.
std::string one_tensor(const std::string& entry) {
  return "{\"t\":" + entry + "}";
}

Bytes floats_le(const std::vector<float>& v) {
  Bytes out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string as_text(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

}  // namespace

TEST_CASE("safetensors: the writer reproduces the reference layout byte for byte",
          "[safetensors]") {
  // Written by hand as the reference (Rust/Python) writer emits it: tensors sorted by name
  // with offsets in that order, "__metadata__" first with sorted keys, compact JSON, spaces up
  // to a multiple of 8 bytes, little-endian data.
  const std::string header = R"({"__metadata__":{"a_key":"x","format":"pt"},)"
                             R"("a":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  REQUIRE(header.size() == 153);  // padded to 160
  const Bytes expected = [&] {
    Bytes b = {160, 0, 0, 0, 0, 0, 0, 0};
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), 7, ' ');
    const Bytes data = {0x00, 0x00, 0x00, 0x3F,   // 0.5f
                        0x00, 0x00, 0x40, 0x40,   // 3.0f
                        0x00, 0x00, 0x80, 0x3F,   // 1.0f
                        0x00, 0x00, 0x00, 0xC0};  // -2.0f
    b.insert(b.end(), data.begin(), data.end());
    return b;
  }();
  // Given out of order: the writer sorts names and metadata keys.
  const TensorList tensors = {{"b", Tensor({2}, {1.0f, -2.0f})},
                              {"a", Tensor({1, 2}, {0.5f, 3.0f})}};
  const Bytes written = attnlens::write_safetensors(tensors, {{"format", "pt"}, {"a_key", "x"}});
  CHECK(as_text(written) == as_text(expected));

  const SafetensorsView f = open(expected);
  REQUIRE(f.tensors().size() == 2);
  CHECK(f.metadata() == attnlens::SafetensorsMetadata{{"a_key", "x"}, {"format", "pt"}});
  const Tensor a = f.read_f32("a");
  CHECK(a.shape == attnlens::Shape{1, 2});
  CHECK(a.data == std::vector<float>{0.5f, 3.0f});
  CHECK(f.read_f32("b").data == std::vector<float>{1.0f, -2.0f});

  // The same tensors as F16: 0.5 = 0x3800, 3 = 0x4200, 1 = 0x3C00, -2 = 0xC000.
  const std::string header16 = R"({"a":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"F16","shape":[2],"data_offsets":[4,8]}})";
  REQUIRE(header16.size() == 109);  // padded to 112
  Bytes expected16 = {112, 0, 0, 0, 0, 0, 0, 0};
  expected16.insert(expected16.end(), header16.begin(), header16.end());
  expected16.insert(expected16.end(), 3, ' ');
  for (std::uint8_t b : {0x00, 0x38, 0x00, 0x42, 0x00, 0x3C, 0x00, 0xC0})
    expected16.push_back(b);
  CHECK(as_text(attnlens::write_safetensors(tensors, {}, Dtype::F16)) == as_text(expected16));
  CHECK(open(expected16).read_f32("b").data == std::vector<float>{1.0f, -2.0f});
}

TEST_CASE("safetensors: a file from the reference crate's documentation", "[safetensors]") {
  // The example in safetensors' src/tensor.rs (SafeTensors::deserialize): header of 60 bytes,
  // not padded, one I32 [2, 2] tensor of zeros.
  const std::string header = R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})";
  REQUIRE(header.size() == 60);
  const Bytes file = make_file(header, Bytes(16, 0));
  REQUIRE(file[0] == '<');
  const SafetensorsView f = open(file);
  REQUIRE(f.tensors().size() == 1);
  const auto& e = f.tensors()[0];
  CHECK(e.name == "test");
  CHECK(e.dtype == Dtype::I32);
  CHECK(e.shape == attnlens::Shape{2, 2});
  CHECK(e.numel == 4);
  CHECK(f.raw_bytes(e).size == 16);
  CHECK(f.raw_bytes(e).data == file.data() + 8 + 60);
  // Listed, but not readable as float.
  require_error([&] { f.read_f32("test"); }, ErrorCode::BAD_FILE,
                {"m.safetensors", "\"test\"", "dtype I32"});
}

TEST_CASE("safetensors: write then read gives the tensors back", "[safetensors]") {
  const TensorList tensors = {
      {"wte.weight", Tensor({3, 2}, {0.1f, -0.2f, 1e-8f, 3e4f, -65504.0f, 7.0f})},
      {"scalar", Tensor(attnlens::Shape{}, {2.5f})},
      {"empty", Tensor({0, 3})},
      {"h.0.ln_1.bias", Tensor({1}, {-0.0f})},
      {"caf\xC3\xA9 \"quoted\"", Tensor({2}, {1.0f, 2.0f})},
  };
  const attnlens::SafetensorsMetadata meta = {{"format", "pt"},
                                              {"note", "line\nbreak \xE2\x9C\x93"}};
  for (Dtype dtype : {Dtype::F32, Dtype::F16}) {
    INFO("dtype " << attnlens::dtype_name(dtype));
    const Bytes file = attnlens::write_safetensors(tensors, meta, dtype);
    const std::uint64_t header_length = file[0] | (std::uint64_t{file[1]} << 8);
    CHECK(header_length % 8 == 0);
    const SafetensorsView f = open(file);
    CHECK(f.tensors().size() == tensors.size());
    CHECK(f.metadata() == meta);
    for (const auto& [name, t] : tensors) {
      INFO("tensor " << name);
      const Tensor back = f.read_f32(name);
      CHECK(back.shape == t.shape);
      REQUIRE(back.data.size() == t.data.size());
      for (std::size_t i = 0; i < t.data.size(); ++i) {
        const float want =
            dtype == Dtype::F32 ? t.data[i] : attnlens::f16_to_f32(attnlens::f32_to_f16(t.data[i]));
        CHECK(back.data[i] == want);
        CHECK(std::signbit(back.data[i]) == std::signbit(want));
      }
    }
    CHECK(f.at("empty").numel == 0);
    CHECK(f.at("scalar").numel == 1);
    CHECK(f.find("nope") == nullptr);
    require_error([&] { f.at("nope"); }, ErrorCode::BAD_FILE,
                  {"m.safetensors: no tensor named \"nope\""});
  }
}

TEST_CASE("safetensors: header order, empty tensors and offsets beyond 2^53", "[safetensors]") {
  // Entries in any header order; tensors() lists them by offset.
  const std::string header = R"({"z":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                             R"("e":{"dtype":"F32","shape":[4,0],"data_offsets":[2,2]},)"
                             R"("a":{"dtype":"BF16","shape":[2],"data_offsets":[2,6]},)"
                             R"("__metadata__":null,)"
                             R"("m":{"dtype":"F4","shape":[2],"data_offsets":[6,7],"extra":[1]}})";
  // BF16 0x3F80 = 1.0, 0xC0A0 = -5.0; F4 packs two elements in a byte.
  const SafetensorsView f = open(make_file(header, {7, 9, 0x80, 0x3F, 0xA0, 0xC0, 0x12}));
  REQUIRE(f.tensors().size() == 4);
  CHECK(f.tensors()[0].name == "z");
  CHECK(f.tensors()[1].name == "e");
  CHECK(f.tensors()[2].name == "a");
  CHECK(f.tensors()[3].name == "m");
  CHECK(f.metadata().empty());
  CHECK(f.read_f32("a").data == std::vector<float>{1.0f, -5.0f});
  CHECK(f.read_f32("e").data.empty());
  const attnlens::ByteSpan z = f.raw_bytes(f.at("z"));
  REQUIRE(z.size == 2);
  CHECK(z.data[0] == 7);
  CHECK(z.data[1] == 9);
  CHECK(attnlens::dtype_bits(f.at("m").dtype) == 4);

  // An END past 2^53 is kept exactly (as an integer, not a double) in the message.
  require_bad(make_file(one_tensor(R"({"dtype":"U8","shape":[9007199254740993],)"
                                   R"("data_offsets":[0,9007199254740993]})")),
              {"tensor \"t\" ends at byte 9007199254740993 of the data, but only 0 bytes follow"});
}

TEST_CASE("F16 conversions are exact and round to nearest even", "[safetensors]") {
  // Every half against its definition, computed in double: (-1)^s 2^(e-15) (1 + m/1024), or
  // 2^-14 (m/1024) for subnormals.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const int e = (bits >> 10) & 0x1F;
    const int m = bits & 0x3FF;
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    const float f = attnlens::f16_to_f32(h);
    if (e == 31) {
      CHECK((m == 0 ? std::isinf(f) : std::isnan(f)));
      continue;
    }
    const double want =
        e == 0 ? sign * std::ldexp(m / 1024.0, -14) : sign * std::ldexp(1.0 + m / 1024.0, e - 15);
    if (static_cast<double>(f) != want || std::signbit(f) != (sign < 0)) {
      FAIL("f16_to_f32(0x" << std::hex << bits << ") = " << f << ", want " << want);
    }
    // Every finite half converts back to itself.
    if (attnlens::f32_to_f16(f) != h) {
      FAIL("f32_to_f16(f16_to_f32(0x" << std::hex << bits << ")) = 0x" << attnlens::f32_to_f16(f));
    }
  }
  // Between two neighbouring positive halves a and b, the midpoint (exact in float: halves
  // have 11 significant bits) goes to the one with an even mantissa; a float just below or
  // above it goes to the nearer one.
  for (std::uint16_t a = 0; a < 0x7BFF; ++a) {
    const std::uint16_t b = static_cast<std::uint16_t>(a + 1);
    const float fa = attnlens::f16_to_f32(a), fb = attnlens::f16_to_f32(b);
    const float mid = (fa + fb) / 2;  // exact: fa + fb has at most 12 significant bits
    const std::uint16_t even = (a & 1) == 0 ? a : b;
    const std::uint16_t got = attnlens::f32_to_f16(mid);
    const std::uint16_t below = attnlens::f32_to_f16(std::nextafter(mid, 0.0f));
    const std::uint16_t above = attnlens::f32_to_f16(std::nextafter(mid, 1e9f));
    if (got != even || below != a || above != b) {
      FAIL("rounding between 0x" << std::hex << a << " and 0x" << b << ": mid -> 0x" << got
                                 << ", below -> 0x" << below << ", above -> 0x" << above);
    }
  }
  CHECK(attnlens::f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(attnlens::f32_to_f16(65519.996f) == 0x7BFF);  // just below the halfway point
  CHECK(attnlens::f32_to_f16(65520.0f) == 0x7C00);    // the tie goes up to infinity
  CHECK(attnlens::f32_to_f16(-1e10f) == 0xFC00);
  CHECK(attnlens::f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);  // half of the smallest: to even
  CHECK(attnlens::f32_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(attnlens::f32_to_f16(1e-30f) == 0x0000);
  CHECK(attnlens::f32_to_f16(-0.0f) == 0x8000);
  CHECK(attnlens::f32_to_f16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK((attnlens::f32_to_f16(std::nanf("")) & 0x7FFF) == 0x7E00);
  CHECK(attnlens::bf16_to_f32(0x3F80) == 1.0f);
  CHECK(attnlens::bf16_to_f32(0xC2F7) == -123.5f);
  CHECK(attnlens::bf16_to_f32(0x0001) == std::ldexp(1.0f, -133));  // subnormal
}

TEST_CASE("safetensors: bad length fields and headers", "[safetensors][errors]") {
  for (std::size_t n = 0; n < 8; ++n) {
    require_bad(Bytes(n, 0), {"has " + std::to_string(n) + " bytes, too few"});
  }
  Bytes huge = make_file("{}");
  huge[3] = 0x10;  // 2^28 + 2
  require_bad(huge, {"header length (first 8 bytes) is 268435458, over the limit of 100000000"});
  Bytes past = make_file(R"({"a":1})");
  past[0] = 9;
  require_bad(past, {"header length (first 8 bytes) is 9 but only 7 bytes follow", "truncated"});
  require_bad(make_file(""), {"does not start with '{'"});
  require_bad(make_file(" {}"), {"does not start with '{'"});
  require_bad(make_file("[]"), {"does not start with '{'"});
  require_bad(make_file("{\"t\":"), {"m.safetensors header: expected a value", "at byte 5"});
  require_bad(make_file("{}x"), {"m.safetensors header: unexpected 'x'"});
  require_bad(make_file("{\"caf\xC3\"}"), {"m.safetensors header: invalid UTF-8"});
  // An empty file body is fine: no tensors.
  CHECK(open(make_file("{}")).tensors().empty());
  CHECK(open(make_file("{}      ")).tensors().empty());
}

TEST_CASE("safetensors: bad tensor entries name the tensor", "[safetensors][errors]") {
  const Bytes d8(8, 0);
  require_bad(make_file(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                        d8),
              {"the member name \"t\" appears a second time"});
  require_bad(make_file(one_tensor("[1]")), {"tensor \"t\" is described by an array"});
  require_bad(make_file(one_tensor(R"({"shape":[2],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has no \"dtype\""});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has no \"shape\""});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[2]})"), d8),
              {"tensor \"t\" has no \"data_offsets\""});
  require_bad(make_file(one_tensor(R"({"dtype":"Q4_K","shape":[2],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has dtype \"Q4_K\", which safetensors does not define"});
  require_bad(make_file(one_tensor(R"({"dtype":"f32","shape":[2],"data_offsets":[0,8]})"), d8),
              {"dtype \"f32\", which safetensors does not define"});
  require_bad(make_file(one_tensor(R"({"dtype":32,"shape":[2],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has a dtype that is a number"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has a shape that is a number"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has a shape dimension -2"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has a shape dimension 2; it must be an integer"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":["2"],"data_offsets":[0,8]})"), d8),
              {"a shape dimension that is a string"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[18446744073709551616],)"
                                   R"("data_offsets":[0,8]})"),
                        d8),
              {"a shape dimension 1.84467e+19"});
  require_bad(make_file(one_tensor(R"({"dtype":"U8","shape":[4294967296,4294967296,0],)"
                                   R"("data_offsets":[0,0]})")),
              {"tensor \"t\" has a shape whose element count overflows 64 bits (at dimension 1"});
  require_bad(make_file(one_tensor(R"({"dtype":"F64","shape":[2305843009213693952],)"
                                   R"("data_offsets":[0,0]})")),
              {"whose size in bits overflows 64 bits"});
  require_bad(make_file(one_tensor(R"({"dtype":"F4","shape":[3],"data_offsets":[0,2]})"), {0, 0}),
              {"holds 3 elements of 4 bits (F4), which is not a whole number of bytes"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"), d8),
              {"tensor \"t\" has data_offsets that are not an array of two integers"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8,8]})"), d8),
              {"not an array of two integers"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})"), d8),
              {"has a data_offsets BEGIN -8"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[0],"data_offsets":[8,0]})"), d8),
              {"has data_offsets [8, 0], which end before they begin"});
  require_bad(make_file(one_tensor(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), d8),
              {"tensor \"t\" has data_offsets [0, 8] (8 bytes), but dtype F32 and shape [3] need "
               "12 bytes"});
  require_bad(
      make_file(R"({"__metadata__":[],"t":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})"),
      {"__metadata__ is an array, not an object of strings"});
  require_bad(make_file(R"({"__metadata__":{"format":"pt","n":1}})"),
              {"__metadata__ entry \"n\" is a number, not a string"});
}

TEST_CASE("safetensors: tensors must tile the byte buffer", "[safetensors][errors]") {
  const auto u8 = [](const char* name, int b, int e) {
    return "\"" + std::string(name) + "\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(e - b) +
           "],\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
  };
  require_bad(make_file("{" + u8("a", 0, 2) + "," + u8("b", 3, 4) + "}", Bytes(4, 0)),
              {"bytes [2, 3) of the data belong to no tensor (a gap before tensor \"b\""});
  require_bad(make_file("{" + u8("a", 1, 2) + "}", Bytes(2, 0)),
              {"bytes [0, 1) of the data belong to no tensor"});
  require_bad(make_file("{" + u8("a", 0, 3) + "," + u8("b", 2, 4) + "}", Bytes(4, 0)),
              {"tensor \"b\" at [2, 4] overlaps tensor \"a\" at [0, 3]"});
  require_bad(
      make_file("{" + u8("a", 0, 2) + "," + u8("b", 2, 4) + "}", Bytes(3, 0)),
      {"tensor \"b\" ends at byte 4 of the data, but only 3 bytes follow the header", "truncated"});
  require_bad(make_file("{" + u8("a", 0, 2) + "}", Bytes(5, 0)),
              {"3 bytes after the last tensor's data belong to no tensor"});
  require_bad(make_file("{}", Bytes(1, 0)), {"1 bytes after the last tensor's data"});
  CHECK(open(make_file("{" + u8("b", 2, 4) + "," + u8("a", 0, 2) + "}", Bytes(4, 0)))
            .tensors()
            .size() == 2);
}

TEST_CASE("safetensors: every truncation of a valid file is an error", "[safetensors][errors]") {
  const Bytes file = attnlens::write_safetensors(
      {{"a", Tensor({2, 2}, {1, 2, 3, 4})}, {"b", Tensor({3}, {5, 6, 7})}}, {{"k", "v"}});
  CHECK(open(file).tensors().size() == 2);
  for (std::size_t n = 0; n < file.size(); ++n) {
    INFO("first " << n << " of " << file.size() << " bytes");
    const Bytes cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
    require_error([&] { open(cut); }, ErrorCode::BAD_FILE, {"m.safetensors"});
  }
  Bytes longer = file;
  longer.push_back(0);
  require_bad(longer, {"1 bytes after the last tensor's data belong to no tensor"});
}

TEST_CASE("safetensors: non-finite values are refused with their index", "[safetensors][errors]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string h32 = one_tensor(R"({"dtype":"F32","shape":[3],"data_offsets":[0,12]})");
  const Bytes f32 = make_file(h32, floats_le({1.0f, 2.0f, nan}));
  require_error([&] { open(f32).read_f32("t"); }, ErrorCode::BAD_FILE,
                {"m.safetensors: tensor \"t\" (F32 [3]) holds nan at flat index 2"});
  const std::string h16 = one_tensor(R"({"dtype":"F16","shape":[2],"data_offsets":[0,4]})");
  require_error(
      [&] {
        open(make_file(h16, {0x00, 0x3C, 0x00, 0xFC})).read_f32("t");
      },
      ErrorCode::BAD_FILE, {"tensor \"t\" (F16 [2]) holds -inf at flat index 1"});
}

TEST_CASE("safetensors: the writer refuses what the file cannot hold", "[safetensors][errors]") {
  const auto write = [](const TensorList& t, Dtype dtype = Dtype::F32,
                        const attnlens::SafetensorsMetadata& m = {}) {
    attnlens::write_safetensors(t, m, dtype, "out.safetensors");
  };
  require_error(
      [&] {
        write({{"w", Tensor({2}, {1.0f, 70000.0f})}}, Dtype::F16);
      },
      ErrorCode::BAD_FILE,
      {"out.safetensors: tensor \"w\" holds 70000 at flat index 1, beyond the largest F16"});
  require_error(
      [&] {
        write({{"w", Tensor({1}, {65520.0f})}}, Dtype::F16);
      },
      ErrorCode::BAD_FILE, {"tensor \"w\" holds 65520"});
  CHECK_NOTHROW(write({{"w", Tensor({1}, {65519.0f})}}, Dtype::F16));
  require_error(
      [&] {
        write({{"w", Tensor({2}, {1.0f, std::numeric_limits<float>::infinity()})}});
      },
      ErrorCode::BAD_FILE, {"tensor \"w\" holds inf at flat index 1"});
  require_error(
      [&] {
        write({{"a", Tensor({1})}, {"a", Tensor({1})}});
      },
      ErrorCode::BAD_FILE, {"out.safetensors: two tensors are named \"a\""});
  require_error(
      [&] {
        write({{"", Tensor({1})}});
      },
      ErrorCode::BAD_FILE, {"tensor 0 has an empty name"});
  require_error(
      [&] {
        write({{"__metadata__", Tensor({1})}});
      },
      ErrorCode::BAD_FILE, {"may not be named \"__metadata__\""});
  require_error(
      [&] {
        write({{"ok", Tensor({1})}, {"bad\xFF", Tensor({1})}});
      },
      ErrorCode::BAD_FILE, {"the name of tensor 1 is not valid UTF-8 (byte 3)"});
  require_error(
      [&] {
        write({{"a", Tensor({1})}}, Dtype::F32, {{"k", "1"}, {"k", "2"}});
      },
      ErrorCode::BAD_FILE, {"the metadata key \"k\" is given twice"});
  require_error(
      [&] {
        write({{"a", Tensor({1})}}, Dtype::I32);
      },
      ErrorCode::BAD_ARGUMENT, {"dtype is I32"});
  Tensor broken({2, 2});
  broken.data.pop_back();
  require_error(
      [&] {
        write({{"b", broken}});
      },
      ErrorCode::BAD_ARGUMENT, {"tensor \"b\" has 3 values but its shape [2, 2] needs 4"});
}
