// SafetensorsView (attnlens/safetensors.hpp) on arbitrary bytes.
//
// Input: if the first byte is odd, the rest is "header\0data" and the file is assembled with
// the right length field (so the fuzzer reaches header validation quickly); otherwise the rest
// is the whole file as it is.
//
// Oracles:
//   - the view is built, or BAD_FILE is thrown with a message that starts with the file name;
//   - a built view's tensors, in offset order, tile the bytes after the header exactly, every
//     tensor's bytes lie inside the input, and its byte count is numel * dtype bits / 8;
//   - find() gives each tensor back by name;
//   - read_f32 succeeds for F32/F16/BF16 unless a value is not finite, and fails with BAD_FILE
//     for other dtypes; F32 values are the stored bytes;
//   - the finite float tensors written with write_safetensors and read again are the same
//     (names, shapes, F32 values bit for bit).
#include "fuzz.hpp"

#include <attnlens/safetensors.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool readable(attnlens::Dtype d) {
  return d == attnlens::Dtype::F32 || d == attnlens::Dtype::F16 || d == attnlens::Dtype::BF16;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> file;
  if (data[0] & 1) {
    const std::uint8_t* rest = data + 1;
    const std::size_t rest_size = size - 1;
    const void* zero = std::memchr(rest, 0, rest_size);
    const std::size_t header =
        zero ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(zero) - rest) : rest_size;
    for (int i = 0; i < 8; ++i)
      file.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(header) >> (8 * i)));
    file.insert(file.end(), rest, rest + header);
    if (zero) file.insert(file.end(), rest + header + 1, rest + rest_size);
  } else {
    file.assign(data + 1, data + size);
  }

  try {
    const attnlens::SafetensorsView view(file.data(), file.size(), "fuzz.safetensors");
    std::uint64_t header_length = 0;
    for (int i = 7; i >= 0; --i)
      header_length = (header_length << 8) | file[static_cast<std::size_t>(i)];
    const std::uint64_t data_size = file.size() - 8 - header_length;
    std::uint64_t covered = 0;
    attnlens::TensorList floats;
    for (const attnlens::SafetensorsEntry& e : view.tensors()) {
      fuzz::check(e.begin == covered, "tensor %s begins at %llu, not at %llu", e.name.c_str(),
                  static_cast<unsigned long long>(e.begin),
                  static_cast<unsigned long long>(covered));
      covered = e.end;
      const std::uint64_t bits = static_cast<std::uint64_t>(e.numel) *
                                 static_cast<std::uint64_t>(attnlens::dtype_bits(e.dtype));
      fuzz::check(bits % 8 == 0 && e.end - e.begin == bits / 8, "tensor %s has the wrong size",
                  e.name.c_str());
      const attnlens::ByteSpan bytes = view.raw_bytes(e);
      fuzz::check(bytes.data >= file.data() && bytes.data + bytes.size <= file.data() + file.size(),
                  "tensor %s lies outside the input", e.name.c_str());
      fuzz::check(view.find(e.name) == &e, "find(%s) does not give the tensor", e.name.c_str());
      try {
        attnlens::Tensor t = view.read_f32(e);
        fuzz::check(readable(e.dtype), "read_f32 read a %s tensor", attnlens::dtype_name(e.dtype));
        fuzz::check(t.numel() == e.numel && t.shape == e.shape, "read_f32 changed the shape");
        for (const float x : t.data)
          fuzz::check(std::isfinite(x), "read_f32 returned a non-finite value");
        if (e.dtype == attnlens::Dtype::F32) {
          fuzz::check(bytes.size == 0 || std::memcmp(t.data.data(), bytes.data, bytes.size) == 0,
                      "F32 values differ from the stored bytes");
        }
        floats.emplace_back(e.name, std::move(t));
      } catch (const attnlens::Error& err) {
        fuzz::expect_code(err, "read_f32", attnlens::ErrorCode::BAD_FILE);
      }
    }
    fuzz::check(covered == data_size, "the tensors cover %llu of %llu bytes",
                static_cast<unsigned long long>(covered),
                static_cast<unsigned long long>(data_size));

    const std::vector<std::uint8_t> written = attnlens::write_safetensors(floats, view.metadata());
    const attnlens::SafetensorsView back(written.data(), written.size(), "written.safetensors");
    fuzz::check(back.tensors().size() == floats.size(), "write/read changed the tensor count");
    fuzz::check(back.metadata().size() == view.metadata().size(), "write/read lost metadata");
    for (const auto& [name, t] : floats) {
      const attnlens::Tensor again = back.read_f32(name);
      fuzz::check(again.shape == t.shape, "write/read changed the shape of %s", name.c_str());
      fuzz::check(t.data.empty() || std::memcmp(again.data.data(), t.data.data(),
                                                t.data.size() * sizeof(float)) == 0,
                  "write/read changed the values of %s", name.c_str());
    }
  } catch (const attnlens::Error& e) {
    fuzz::expect_code(e, "SafetensorsView", attnlens::ErrorCode::BAD_FILE);
    fuzz::check(std::strncmp(e.what(), "fuzz.safetensors: ", 18) == 0 ||
                    std::strncmp(e.what(), "fuzz.safetensors header: ", 25) == 0,
                "message without the file name: %s", e.what());
  }
  return 0;
}
