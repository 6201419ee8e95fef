// attnlens — a seeded, portable random generator.
//
// Results are bit-identical on every platform and standard library (native libstdc++, libc++,
// Emscripten): the engine is std::mt19937_64, which the C++ standard specifies exactly, and the
// distributions are written here with IEEE-exact arithmetic only (the standard library's
// distributions and libm's log/cos differ between implementations).
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace attnlens {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // 64 uniformly random bits.
  std::uint64_t next_u64() { return engine_(); }
  // Uniform on [0, 1), 53 random bits.
  double uniform();
  // Uniform on [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal N(0, 1) by the Box–Muller transform.
  double normal();

 private:
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Mixes two 64-bit values into a well-spread seed (SplitMix64 finaliser).
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) noexcept;

// A 64-bit hash of a byte string under a seed (FNV-1a, then mixed). Stable across platforms.
std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed) noexcept;

// Deterministic elementary functions used for generated data (weights, embeddings, positional
// encodings): the same bits on every platform, accurate to about 1e-15 relative.
namespace detmath {
double log(double x);  // x > 0
double exp(double x);  // |x| < 700
double sin(double x);  // any finite x
double cos(double x);  // any finite x
}  // namespace detmath

}  // namespace attnlens
