// attnlens — safetensors files: read (validated, as untrusted input) and write.
//
// The format (https://github.com/huggingface/safetensors, README "Format"):
//   8 bytes   N, the header length, unsigned little-endian 64-bit
//   N bytes   a JSON object (UTF-8) starting with '{', maybe padded with spaces:
//             {"__metadata__": {"key": "value", ...},            (optional, strings only)
//              "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, ...}
//   the rest  the byte buffer; each tensor's bytes are [BEGIN, END) of it, row-major,
//             little-endian. The tensors cover the buffer exactly: no gaps, no overlaps.
//
// Reading checks everything before any tensor byte is used, as the reference implementation
// does: the header length (at most kMaxSafetensorsHeaderBytes and inside the file), strict
// JSON (a name given twice is an error), each entry's dtype (one the format defines), shape
// (non-negative integers; the element count and the byte count are computed without overflow),
// data_offsets (two integers, BEGIN <= END, END - BEGIN = the byte count), and that the
// tensors, sorted by offset, tile the byte buffer from 0 to its end. Every failure is
// Error(BAD_FILE) with a message that starts with the file name and names the tensor.
// Members of a tensor entry other than the three are ignored, as the reference reader does.
#pragma once

#include <attnlens/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlens {

// Longest header accepted or written, in bytes: the reference implementation's limit.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// The element types the safetensors format defines (its `Dtype` enum, same names).
enum class Dtype : std::uint8_t {
  BOOL,
  F4,       // 4-bit MX float
  F6_E2M3,  // 6-bit MX floats
  F6_E3M2,
  U8,
  I8,
  F8_E5M2,  // 8-bit floats
  F8_E4M3,
  F8_E8M0,
  F8_E4M3FNUZ,
  F8_E5M2FNUZ,
  I16,
  U16,
  F16,   // IEEE 754 half precision
  BF16,  // bfloat16: the upper half of a float32
  I32,
  U32,
  F32,
  C64,  // complex: two float32
  F64,
  I64,
  U64,
};

// The dtype's name as written in files, e.g. "BF16".
const char* dtype_name(Dtype dtype) noexcept;

// Bits per element (4 for F4, 6 for F6_*, 8 .. 64 for the others).
int dtype_bits(Dtype dtype) noexcept;

// `__metadata__`: string keys and values, in file order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

// Named float32 tensors, e.g. {"wte.weight", [V, d]}. The same alias as in gpt2.hpp.
using TensorList = std::vector<std::pair<std::string, Tensor>>;

// One tensor entry of a validated header.
struct SafetensorsEntry {
  std::string name;  // UTF-8, unique in the file
  Dtype dtype = Dtype::F32;
  Shape shape;              // every dimension >= 0; {} for a scalar
  std::int64_t numel = 0;   // product of shape (1 for a scalar, 0 if a dimension is 0)
  std::uint64_t begin = 0;  // data_offsets[0]: byte offset into the byte buffer
  std::uint64_t end = 0;    // data_offsets[1]: one past the last byte
};

// A tensor's bytes inside the file, as stored (little-endian, row-major).
struct ByteSpan {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

// A validated safetensors file over bytes the caller owns: the view keeps a pointer to them
// and never copies them, so a 500 MB checkpoint is not held twice. Keep the bytes alive and
// unchanged while the view or a ByteSpan from it is used.
class SafetensorsView {
 public:
  // Parses and validates the file held in bytes[0, size). `file_name` names the file in
  // messages (e.g. "model.safetensors"). Throws Error(BAD_FILE) for anything malformed (see the
  // top of this header), Error(OUT_OF_MEMORY) if the header cannot be held in memory.
  SafetensorsView(const std::uint8_t* bytes, std::size_t size, std::string file_name);

  const std::string& file_name() const noexcept { return file_name_; }

  // Every tensor of the file in data_offsets order (the order of their bytes).
  const std::vector<SafetensorsEntry>& tensors() const noexcept { return entries_; }

  // `__metadata__`, empty when the file has none (or has `null` there, as the reference
  // reader accepts).
  const SafetensorsMetadata& metadata() const noexcept { return metadata_; }

  // The entry named `name` (exact bytes), or nullptr. O(log n).
  const SafetensorsEntry* find(std::string_view name) const;

  // The entry named `name`; Error(BAD_FILE, "<file>: no tensor named \"<name>\"") if absent.
  const SafetensorsEntry& at(std::string_view name) const;

  // The stored bytes of one tensor, whatever its dtype (for U8 or F16 attention exports).
  // `entry` must come from this view.
  ByteSpan raw_bytes(const SafetensorsEntry& entry) const noexcept;

  // The tensor as float32, converted exactly from F32, F16 or BF16. Throws Error(BAD_FILE)
  // naming the file, the tensor and its dtype for any other dtype, and naming the flat index
  // for a NaN or an infinity (attnlens only loads finite values).
  Tensor read_f32(const SafetensorsEntry& entry) const;
  Tensor read_f32(std::string_view name) const { return read_f32(at(name)); }

  // As read_f32, into out[0, entry.numel) (no allocation). `out` must hold entry.numel floats.
  void read_f32_into(const SafetensorsEntry& entry, float* out) const;

 private:
  std::string file_name_;
  const std::uint8_t* data_ = nullptr;  // the byte buffer (after the header)
  std::vector<SafetensorsEntry> entries_;
  std::vector<std::uint32_t> by_name_;  // indices into entries_, sorted by name
  SafetensorsMetadata metadata_;
};

// Writes a safetensors file as the reference writer lays it out: tensors sorted by name (bytes)
// with contiguous offsets in that order, `__metadata__` first in the header (left out when
// `metadata` is empty) with its keys sorted, compact JSON, the header padded with spaces to a
// multiple of 8 bytes.
//   tensors:  names must be non-empty, valid UTF-8, unique and not "__metadata__"; values must
//             be finite. Each tensor's data.size() must equal the product of its shape.
//   metadata: keys unique; keys and values valid UTF-8.
//   dtype:    Dtype::F32 (exact) or Dtype::F16 (round to nearest, ties to even; a value whose
//             magnitude rounds beyond F16's largest finite value 65504 is an error).
//   file_name names the file in messages.
// Throws Error(BAD_FILE) naming the file and the tensor (or key) for anything the file cannot
// hold as asked, Error(BAD_ARGUMENT) for another dtype or a tensor whose data does not match its
// shape, Error(OUT_OF_MEMORY) when the result cannot be allocated.
std::vector<std::uint8_t> write_safetensors(const TensorList& tensors,
                                            const SafetensorsMetadata& metadata = {},
                                            Dtype dtype = Dtype::F32,
                                            std::string_view file_name = "model.safetensors");

// Exact conversions between IEEE half precision bits and float (NaN stays NaN, infinities and
// subnormals are exact), and float to half rounding to nearest, ties to even (overflow gives
// an infinity; NaN gives a quiet NaN).
float f16_to_f32(std::uint16_t bits) noexcept;
std::uint16_t f32_to_f16(float value) noexcept;

// bfloat16 bits to float: exact (the bits are the upper half of the float's).
float bf16_to_f32(std::uint16_t bits) noexcept;

}  // namespace attnlens
