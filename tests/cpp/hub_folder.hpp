// Hub folders for the tests of the block's families: a safetensors file as the format's reference
// writer lays it out, numbers as config.json holds them, bfloat16 rounding, a folder loaded
// through the registry, random token ids.
#pragma once

#include <attnlens/model.hpp>
#include <attnlens/safetensors.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace testing {

inline float bf16_round(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // to nearest, ties to even
  float y;
  std::memcpy(&y, &u, 4);
  return y;
}

// A safetensors file as the format's reference writer lays it out (names sorted, the header
// padded to 8 bytes), in F32, F16 or BF16, with the given extra F32 tensors.
inline std::vector<std::uint8_t> safetensors(const std::map<std::string, std::vector<double>>& p,
                                             const std::map<std::string, attnlens::Shape>& shapes,
                                             attnlens::Dtype dtype) {
  using attnlens::Dtype;
  const int width = dtype == Dtype::F32 ? 4 : 2;
  const char* dtype_text = dtype == Dtype::F32 ? "F32" : dtype == Dtype::F16 ? "F16" : "BF16";
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t offset = 0;
  for (const auto& [name, values] : p) {
    const attnlens::Shape& shape = shapes.at(name);
    header += ",\"" + name + "\":{\"dtype\":\"" + dtype_text + "\",\"shape\":[";
    for (std::size_t i = 0; i < shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(shape[i]);
    const std::uint64_t bytes = values.size() * static_cast<std::uint64_t>(width);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<std::uint8_t> out;
  out.reserve(8 + header.size() + offset);
  // The header's length as 8 little-endian bytes (widened first: size_t is 32 bits in wasm).
  const std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  for (const char c : header)
    out.push_back(static_cast<std::uint8_t>(c));
  for (const auto& [name, values] : p) {
    for (double v : values) {
      const auto x = static_cast<float>(v);
      std::uint32_t u;
      std::memcpy(&u, &x, 4);
      if (dtype == Dtype::F16) u = attnlens::f32_to_f16(x);
      if (dtype == Dtype::BF16) u >>= 16;
      for (int b = 0; b < width; ++b)
        out.push_back(static_cast<std::uint8_t>(u >> (8 * b)));
    }
  }
  return out;
}

inline std::string number(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

// A checkpoint folder through the registry: config.json, model.safetensors and other text files.
inline attnlens::LoadedModel load(const std::string& config,
                                  const std::vector<std::uint8_t>& weights,
                                  const std::map<std::string, std::string>& extra = {}) {
  attnlens::ModelFiles files;
  files.weights = weights.data();
  files.weights_size = weights.size();
  files.texts["config.json"] = config;
  for (const auto& [name, text] : extra)
    files.texts[name] = text;
  return attnlens::load_model(files);
}

// n token ids drawn uniformly from [0, vocab).
inline std::vector<std::int32_t> random_ids(std::size_t n, int vocab, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, vocab - 1);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids)
    id = dist(gen);
  return ids;
}

}  // namespace testing
