#include <attnlens/safetensors.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "text/unicode_utf8.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

// Tensor bytes are little-endian in every safetensors file; they are copied with memcpy.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "attnlens reads and writes safetensors with memcpy and supports little-endian hosts only"
#endif

namespace attnlens {
namespace {

struct DtypeInfo {
  Dtype dtype;
  const char* name;
  int bits;
};

// In the order of the Dtype enum.
constexpr std::array<DtypeInfo, 22> kDtypes = {{
    {Dtype::BOOL, "BOOL", 8},
    {Dtype::F4, "F4", 4},
    {Dtype::F6_E2M3, "F6_E2M3", 6},
    {Dtype::F6_E3M2, "F6_E3M2", 6},
    {Dtype::U8, "U8", 8},
    {Dtype::I8, "I8", 8},
    {Dtype::F8_E5M2, "F8_E5M2", 8},
    {Dtype::F8_E4M3, "F8_E4M3", 8},
    {Dtype::F8_E8M0, "F8_E8M0", 8},
    {Dtype::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {Dtype::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {Dtype::I16, "I16", 16},
    {Dtype::U16, "U16", 16},
    {Dtype::F16, "F16", 16},
    {Dtype::BF16, "BF16", 16},
    {Dtype::I32, "I32", 32},
    {Dtype::U32, "U32", 32},
    {Dtype::F32, "F32", 32},
    {Dtype::C64, "C64", 64},
    {Dtype::F64, "F64", 64},
    {Dtype::I64, "I64", 64},
    {Dtype::U64, "U64", 64},
}};

constexpr std::size_t kLengthBytes = 8;  // the header length field

// A name for a message: quoted, at most 80 bytes, cut at a character boundary.
struct Quoted {
  std::string_view text;
};

void append_quoted(std::string& out, std::string_view text) {
  std::size_t cut = text.size();
  if (cut > 80) {
    cut = 80;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;
  }
  out += '"';
  out.append(text.data(), cut);
  if (cut < text.size()) out += "...";
  out += '"';
}

template <typename... Parts>
[[noreturn]] void fail_file(std::string_view file, const Parts&... parts) {
  std::string message;
  detail::append(message, file);
  detail::append(message, ": ");
  (
      [&] {
        if constexpr (std::is_same_v<Parts, Quoted>) {
          append_quoted(message, parts.text);
        } else {
          detail::append(message, parts);
        }
      }(),
      ...);
  detail::throw_error(ErrorCode::BAD_FILE, std::move(message));
}

std::string offsets_to_string(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// The first byte offset of invalid UTF-8 in `text`, or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, pos);
    if (c.status != detail::Utf8Status::Ok) return pos;
    pos += c.length;
  }
  return std::string_view::npos;
}

std::uint64_t read_u64_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

// The value of member `key` of a tensor entry; BAD_FILE if it is missing.
const detail::JsonValue& entry_field(std::string_view file, std::string_view tensor,
                                     const detail::JsonValue& entry, const char* key) {
  const detail::JsonValue* v = entry.find(key);
  if (v == nullptr)
    fail_file(file, "tensor ", Quoted{tensor}, " has no \"", key, "\" in the header");
  return *v;
}

// A JSON integer in [0, 2^63) or BAD_FILE saying what it is instead.
std::int64_t non_negative_integer(std::string_view file, std::string_view tensor,
                                  const detail::JsonValue& v, const char* what) {
  if (v.is_integer() && v.as_integer() >= 0) return v.as_integer();
  if (v.is_number()) {
    fail_file(file, "tensor ", Quoted{tensor}, " has ", what, " ", v.as_number(),
              "; it must be an integer from 0 to 2^63 - 1");
  }
  fail_file(file, "tensor ", Quoted{tensor}, " has ", what, " that is ", v.kind_name(),
            "; it must be an integer from 0 to 2^63 - 1");
}

SafetensorsEntry parse_entry(std::string_view file, const detail::JsonMember& member) {
  const std::string& name = member.name;
  const detail::JsonValue& value = member.value;
  if (!value.is_object()) {
    fail_file(file, "tensor ", Quoted{name}, " is described by ", value.kind_name(),
              " in the header, not by an object with dtype, shape and data_offsets");
  }
  SafetensorsEntry entry;
  entry.name = name;

  const detail::JsonValue& dtype = entry_field(file, name, value, "dtype");
  if (!dtype.is_string()) {
    fail_file(file, "tensor ", Quoted{name}, " has a dtype that is ", dtype.kind_name(),
              ", not a string");
  }
  const auto known = std::find_if(kDtypes.begin(), kDtypes.end(),
                                  [&](const DtypeInfo& d) { return dtype.as_string() == d.name; });
  if (known == kDtypes.end()) {
    fail_file(file, "tensor ", Quoted{name}, " has dtype ", Quoted{dtype.as_string()},
              ", which safetensors does not define (it defines BOOL, U8, I8, I16, U16, I32, U32, "
              "I64, U64, F16, BF16, F32, F64, C64, F4, F6_E2M3, F6_E3M2, F8_E5M2, F8_E4M3, "
              "F8_E8M0, F8_E4M3FNUZ and F8_E5M2FNUZ)");
  }
  entry.dtype = known->dtype;

  const detail::JsonValue& shape = entry_field(file, name, value, "shape");
  if (!shape.is_array()) {
    fail_file(file, "tensor ", Quoted{name}, " has a shape that is ", shape.kind_name(),
              ", not an array of integers");
  }
  // numel = product of the dimensions, checked before each multiplication. As in the reference
  // reader, an overflow on the way is an error even if a later dimension is 0.
  entry.numel = 1;
  for (const detail::JsonValue& d : shape.items()) {
    const std::int64_t dim = non_negative_integer(file, name, d, "a shape dimension");
    entry.shape.push_back(dim);
    if (dim != 0 && entry.numel > std::numeric_limits<std::int64_t>::max() / dim) {
      fail_file(file, "tensor ", Quoted{name},
                " has a shape whose element count overflows 64 "
                "bits (at dimension ",
                entry.shape.size() - 1, " = ", dim, ")");
    }
    entry.numel *= dim;
  }
  const auto bits = static_cast<std::uint64_t>(known->bits);
  if (static_cast<std::uint64_t>(entry.numel) > std::numeric_limits<std::uint64_t>::max() / bits) {
    fail_file(file, "tensor ", Quoted{name}, " has shape ", shape_to_string(entry.shape),
              ", whose size in bits overflows 64 bits");
  }
  const std::uint64_t total_bits = static_cast<std::uint64_t>(entry.numel) * bits;
  if (total_bits % 8 != 0) {
    fail_file(file, "tensor ", Quoted{name}, " holds ", entry.numel, " elements of ", known->bits,
              " bits (", known->name, "), which is not a whole number of bytes");
  }
  const std::uint64_t byte_count = total_bits / 8;

  const detail::JsonValue& offsets = entry_field(file, name, value, "data_offsets");
  if (!offsets.is_array() || offsets.items().size() != 2) {
    fail_file(file, "tensor ", Quoted{name},
              " has data_offsets that are not an array of two "
              "integers [BEGIN, END]");
  }
  entry.begin = static_cast<std::uint64_t>(
      non_negative_integer(file, name, offsets.items()[0], "a data_offsets BEGIN"));
  entry.end = static_cast<std::uint64_t>(
      non_negative_integer(file, name, offsets.items()[1], "a data_offsets END"));
  if (entry.end < entry.begin) {
    fail_file(file, "tensor ", Quoted{name}, " has data_offsets ",
              offsets_to_string(entry.begin, entry.end), ", which end before they begin");
  }
  if (entry.end - entry.begin != byte_count) {
    fail_file(file, "tensor ", Quoted{name}, " has data_offsets ",
              offsets_to_string(entry.begin, entry.end), " (", entry.end - entry.begin,
              " bytes), but dtype ", known->name, " and shape ", shape_to_string(entry.shape),
              " need ", byte_count, " bytes");
  }
  return entry;
}

void check_utf8(std::string_view file, std::string_view what, std::string_view text) {
  const std::size_t bad = invalid_utf8_at(text);
  if (bad != std::string_view::npos) {
    fail_file(file, what, " is not valid UTF-8 (byte ", bad, ")");
  }
}

}  // namespace

const char* dtype_name(Dtype dtype) noexcept {
  return kDtypes[static_cast<std::size_t>(dtype)].name;
}

int dtype_bits(Dtype dtype) noexcept {
  return kDtypes[static_cast<std::size_t>(dtype)].bits;
}

float f16_to_f32(std::uint16_t h) noexcept {
  // half: sign 1 | exponent 5 (bias 15) | mantissa 10; float: 1 | 8 (bias 127) | 23.
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1F;
  std::uint32_t mantissa = h & 0x3FF;
  std::uint32_t bits = 0;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000 | (mantissa << 13);  // infinity, or NaN with its payload
  } else if (exponent != 0) {
    bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: mantissa * 2^-24. Shift the leading 1 up to the implicit bit's place.
    std::uint32_t e = 127 - 15 + 1;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t f32_to_f16(float value) noexcept {
  std::uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t a = x & 0x7FFFFFFF;
  if (a > 0x7F800000) return static_cast<std::uint16_t>(sign | 0x7E00);  // NaN: quiet
  // 65520 = halfway between 65504 (the largest half) and 65536: ties to even go up, so from
  // here on (infinity included) the result is infinity.
  if (a >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);
  const std::uint32_t e = a >> 23;  // biased float exponent
  if (e >= 113) {
    // Normal half (|value| >= 2^-14): keep 10 of the 23 mantissa bits, round the other 13 to
    // nearest, ties to even. A carry out of the mantissa correctly bumps the exponent.
    std::uint32_t h = ((e - 127 + 15) << 10) | ((a >> 13) & 0x3FF);
    const std::uint32_t rest = a & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  // Subnormal half or zero: the result counts units of 2^-24. The float is m * 2^(e - 150)
  // with m the 24-bit significand, i.e. m * 2^(e - 126) units: shift m right by 126 - e.
  const std::uint32_t shift = 126 - e;
  if (e == 0 || shift >= 25) return sign;  // below half a unit: rounds to zero
  const std::uint32_t m = (a & 0x7FFFFF) | 0x800000;
  std::uint32_t h = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1) != 0)) ++h;  // 0x3FF + 1 becomes the smallest normal
  return static_cast<std::uint16_t>(sign | h);
}

float bf16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t b = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

SafetensorsView::SafetensorsView(const std::uint8_t* bytes, std::size_t size, std::string file_name)
    : file_name_(std::move(file_name)) {
  const std::string_view file = file_name_;
  if (bytes == nullptr && size != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, file, ": bytes is null but size is ", size);
  }
  if (size < kLengthBytes) {
    fail_file(file, "the file has ", size,
              " bytes, too few for a safetensors file (it starts with an 8-byte header length)");
  }
  const std::uint64_t header_length = read_u64_le(bytes);
  if (header_length > kMaxSafetensorsHeaderBytes) {
    fail_file(file, "the header length (first 8 bytes) is ", header_length, ", over the limit of ",
              kMaxSafetensorsHeaderBytes,
              " bytes: this is not a safetensors file or it is damaged");
  }
  if (header_length > size - kLengthBytes) {
    fail_file(file, "the header length (first 8 bytes) is ", header_length, " but only ",
              size - kLengthBytes,
              " bytes follow: the file is truncated or not a safetensors file");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes) + kLengthBytes,
                                static_cast<std::size_t>(header_length));
  if (header.empty() || header[0] != '{') {
    fail_file(file, "the header does not start with '{': this is not a safetensors file");
  }
  const std::size_t data_size = size - kLengthBytes - header.size();
  data_ = bytes + kLengthBytes + header.size();

  try {
    const detail::JsonValue root = detail::parse_json(header, file_name_ + " header");
    const std::vector<detail::JsonMember>& members = root.members();
    entries_.reserve(members.size());
    for (const detail::JsonMember& m : members) {
      if (m.name == "__metadata__") {
        if (m.value.is_null()) continue;
        if (!m.value.is_object()) {
          fail_file(file, "__metadata__ is ", m.value.kind_name(), ", not an object of strings");
        }
        for (const detail::JsonMember& kv : m.value.members()) {
          if (!kv.value.is_string()) {
            fail_file(file, "__metadata__ entry ", Quoted{kv.name}, " is ", kv.value.kind_name(),
                      ", not a string");
          }
          metadata_.emplace_back(kv.name, kv.value.as_string());
        }
        continue;
      }
      entries_.push_back(parse_entry(file, m));
    }

    // The tensors, in offset order, must tile the byte buffer: each begins where the previous
    // one ends, the first at 0, the last at its end. Ties (empty tensors) keep header order.
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                       return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                     });
    std::uint64_t covered = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const SafetensorsEntry& e = entries_[i];
      if (e.begin > covered) {
        fail_file(file, "bytes [", covered, ", ", e.begin,
                  ") of the data belong to no tensor (a gap before tensor ", Quoted{e.name}, " at ",
                  offsets_to_string(e.begin, e.end), ")");
      }
      if (e.begin < covered) {
        const SafetensorsEntry& prev = entries_[i - 1];
        fail_file(file, "tensor ", Quoted{e.name}, " at ", offsets_to_string(e.begin, e.end),
                  " overlaps tensor ", Quoted{prev.name}, " at ",
                  offsets_to_string(prev.begin, prev.end));
      }
      covered = e.end;
    }
    if (covered > data_size) {
      fail_file(file, "tensor ", Quoted{entries_.back().name}, " ends at byte ", covered,
                " of the data, but only ", data_size,
                " bytes follow the header: the file is truncated");
    }
    if (covered < data_size) {
      fail_file(file, data_size - covered,
                " bytes after the last tensor's data belong to no "
                "tensor (the tensors cover ",
                covered, " of the ", data_size, " bytes after the header)");
    }

    by_name_.resize(entries_.size());
    for (std::size_t i = 0; i < by_name_.size(); ++i)
      by_name_[i] = static_cast<std::uint32_t>(i);
    std::sort(by_name_.begin(), by_name_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return entries_[a].name < entries_[b].name;
    });
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, file, ": the header (", header.size(),
                 " bytes) does not fit in memory");
  }
}

const SafetensorsEntry* SafetensorsView::find(std::string_view name) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), name,
      [&](std::uint32_t i, std::string_view key) { return entries_[i].name < key; });
  if (it == by_name_.end() || entries_[*it].name != name) return nullptr;
  return &entries_[*it];
}

const SafetensorsEntry& SafetensorsView::at(std::string_view name) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) fail_file(file_name_, "no tensor named ", Quoted{name});
  return *e;
}

ByteSpan SafetensorsView::raw_bytes(const SafetensorsEntry& entry) const noexcept {
  return ByteSpan{data_ + entry.begin, static_cast<std::size_t>(entry.end - entry.begin)};
}

void SafetensorsView::read_f32_into(const SafetensorsEntry& entry, float* out) const {
  const std::uint8_t* src = data_ + entry.begin;
  const auto n = static_cast<std::size_t>(entry.numel);
  switch (entry.dtype) {
    case Dtype::F32:
      // An empty tensor's `out` may be null, which memcpy does not allow even for 0 bytes.
      if (n > 0) std::memcpy(out, src, n * sizeof(float));
      break;
    case Dtype::F16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, sizeof h);
        out[i] = f16_to_f32(h);
      }
      break;
    case Dtype::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, sizeof h);
        out[i] = bf16_to_f32(h);
      }
      break;
    default:
      fail_file(file_name_, "tensor ", Quoted{entry.name}, " has dtype ", dtype_name(entry.dtype),
                "; attnlens reads F32, F16 and BF16 tensors as float32 (use raw_bytes for others)");
  }
  if (!std::isfinite(detail::finite_max_abs(out, entry.numel))) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(out[i])) {
        fail_file(file_name_, "tensor ", Quoted{entry.name}, " (", dtype_name(entry.dtype), " ",
                  shape_to_string(entry.shape), ") holds ", out[i], " at flat index ", i,
                  "; attnlens loads finite values only");
      }
    }
  }
}

Tensor SafetensorsView::read_f32(const SafetensorsEntry& entry) const {
  Tensor t;
  try {
    t = Tensor(entry.shape);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, file_name_, ": tensor ", entry.name, " ",
                 shape_to_string(entry.shape), " does not fit in memory as float32");
  }
  read_f32_into(entry, t.data.data());
  return t;
}

std::vector<std::uint8_t> write_safetensors(const TensorList& tensors,
                                            const SafetensorsMetadata& metadata, Dtype dtype,
                                            std::string_view file_name) {
  if (dtype != Dtype::F32 && dtype != Dtype::F16) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "dtype is ", dtype_name(dtype),
                 "; write_safetensors writes F32 or F16");
  }
  const std::size_t item_bytes = dtype == Dtype::F32 ? 4 : 2;

  // Names and keys: valid, unique; then the reference writer's order (sorted by bytes).
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [name, tensor] = tensors[i];
    order[i] = i;
    if (name == "__metadata__") {
      fail_file(file_name, "a tensor may not be named \"__metadata__\" (the header's metadata)");
    }
    check_utf8(file_name, "the name of tensor " + std::to_string(i), name);
    if (static_cast<std::int64_t>(tensor.data.size()) != shape_numel(tensor.shape, "tensor")) {
      detail::fail(ErrorCode::BAD_ARGUMENT, file_name, ": tensor \"", name, "\" has ",
                   tensor.data.size(), " values but its shape ", shape_to_string(tensor.shape),
                   " needs ", shape_numel(tensor.shape, "tensor"));
    }
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return tensors[a].first < tensors[b].first; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (tensors[order[i]].first == tensors[order[i - 1]].first) {
      fail_file(file_name, "two tensors are named ", Quoted{tensors[order[i]].first});
    }
  }
  std::vector<std::size_t> key_order(metadata.size());
  for (std::size_t i = 0; i < key_order.size(); ++i) {
    key_order[i] = i;
    check_utf8(file_name, "metadata key " + std::to_string(i), metadata[i].first);
    check_utf8(file_name, "the metadata value of key " + std::to_string(i), metadata[i].second);
  }
  std::sort(key_order.begin(), key_order.end(),
            [&](std::size_t a, std::size_t b) { return metadata[a].first < metadata[b].first; });
  for (std::size_t i = 1; i < key_order.size(); ++i) {
    if (metadata[key_order[i]].first == metadata[key_order[i - 1]].first) {
      fail_file(file_name, "the metadata key ", Quoted{metadata[key_order[i]].first},
                " is given twice");
    }
  }

  try {
    // The header, compact, as serde_json writes it.
    std::string header = "{";
    if (!metadata.empty()) {
      header += "\"__metadata__\":{";
      for (std::size_t i = 0; i < key_order.size(); ++i) {
        if (i > 0) header += ',';
        detail::append_json_string(header, metadata[key_order[i]].first);
        header += ':';
        detail::append_json_string(header, metadata[key_order[i]].second);
      }
      header += '}';
    }
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto& [name, tensor] = tensors[order[i]];
      if (i > 0 || !metadata.empty()) header += ',';
      detail::append_json_string(header, name);
      header += ":{\"dtype\":\"";
      header += dtype_name(dtype);
      header += "\",\"shape\":[";
      for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
        if (d > 0) header += ',';
        header += std::to_string(tensor.shape[d]);
      }
      const std::uint64_t bytes = tensor.data.size() * item_bytes;
      header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
                std::to_string(offset + bytes) + "]}";
      offset += bytes;
    }
    header += '}';
    header.resize((header.size() + 7) / 8 * 8, ' ');
    if (header.size() > kMaxSafetensorsHeaderBytes) {
      fail_file(file_name, "the header would have ", header.size(), " bytes, over the limit of ",
                kMaxSafetensorsHeaderBytes);
    }
    const std::uint64_t total = kLengthBytes + header.size() + offset;
    if (total > std::numeric_limits<std::size_t>::max()) throw std::bad_alloc();

    std::vector<std::uint8_t> out(static_cast<std::size_t>(total));
    const std::uint64_t header_length = header.size();
    for (std::size_t i = 0; i < kLengthBytes; ++i)
      out[i] = static_cast<std::uint8_t>(header_length >> (8 * i));
    std::memcpy(out.data() + kLengthBytes, header.data(), header.size());
    std::uint8_t* dst = out.data() + kLengthBytes + header.size();
    for (const std::size_t t : order) {
      const auto& [name, tensor] = tensors[t];
      const std::size_t n = tensor.data.size();
      const float* src = tensor.data.data();
      if (!std::isfinite(detail::finite_max_abs(src, static_cast<std::int64_t>(n)))) {
        for (std::size_t i = 0; i < n; ++i) {
          if (!std::isfinite(src[i])) {
            fail_file(file_name, "tensor ", Quoted{name}, " holds ", src[i], " at flat index ", i,
                      "; attnlens writes finite values only");
          }
        }
      }
      if (dtype == Dtype::F32) {
        if (n > 0) std::memcpy(dst, src, n * sizeof(float));  // src is null when n == 0
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint16_t h = f32_to_f16(src[i]);
          if ((h & 0x7C00) == 0x7C00) {
            fail_file(file_name, "tensor ", Quoted{name}, " holds ", src[i], " at flat index ", i,
                      ", beyond the largest F16 value (65504); write it as F32");
          }
          std::memcpy(dst + 2 * i, &h, sizeof h);
        }
      }
      dst += n * item_bytes;
    }
    return out;
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, file_name, ": the file of ", tensors.size(),
                 " tensors does not fit in memory");
  }
}

}  // namespace attnlens
