// Compiled with -ffp-contract=off (see CMakeLists.txt) so that no multiply-add is fused: fused
// and unfused results differ in the last bit, and these functions must not.
#include <attnlens/random.hpp>

#include <cmath>

namespace attnlens {
namespace {

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrtHalf = 0.70710678118654752440;

// sin and cos of theta in [0, pi/2] by their Taylor series (22 terms: error below 1e-17).
double sin_reduced(double theta) {
  const double t2 = theta * theta;
  double term = theta;
  double sum = 0.0;
  for (int k = 1; k <= 21; k += 2) {
    sum += term;
    term *= -t2 / ((k + 1) * (k + 2));
  }
  return sum;
}

double cos_reduced(double theta) {
  const double t2 = theta * theta;
  double term = 1.0;
  double sum = 0.0;
  for (int k = 0; k <= 20; k += 2) {
    sum += term;
    term *= -t2 / ((k + 1) * (k + 2));
  }
  return sum;
}

// cos(2*pi*turns) and sin(2*pi*turns) for turns in [0, 1): quadrant by exact scaling by 4.
double cos_turns(double turns) {
  const double quarter = turns * 4.0;
  const double q = std::floor(quarter);
  const double theta = (quarter - q) * (kPi / 2.0);
  switch (static_cast<int>(q) & 3) {
    case 0:
      return cos_reduced(theta);
    case 1:
      return -sin_reduced(theta);
    case 2:
      return -cos_reduced(theta);
    default:
      return sin_reduced(theta);
  }
}

double fraction_of_turn(double x) {
  const double turns = x / (2.0 * kPi);
  return turns - std::floor(turns);
}

}  // namespace

namespace detmath {

double log(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s), s = (m - 1) / (m + 1).
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < kSqrtHalf) {
    m *= 2.0;
    e -= 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double term = s;
  double sum = 0.0;
  for (int k = 1; k <= 23; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum + e * kLn2;
}

double exp(double x) {
  // x = n ln2 + r with |r| <= ln2 / 2; exp(r) by its Taylor series; scale by 2^n exactly.
  const double n = std::floor(x / kLn2 + 0.5);
  const double r = x - n * kLn2;
  double term = 1.0;
  double sum = 0.0;
  for (int k = 1; k <= 22; ++k) {
    sum += term;
    term *= r / k;
  }
  return std::ldexp(sum, static_cast<int>(n));
}

double cos(double x) {
  return cos_turns(fraction_of_turn(x));
}

double sin(double x) {
  // sin(x) = cos(x - pi/2) = cos(2 pi (turns - 1/4)).
  double turns = fraction_of_turn(x) - 0.25;
  if (turns < 0.0) turns += 1.0;
  return cos_turns(turns);
}

}  // namespace detmath

double Rng::uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * detmath::log(u1));
  double sin_turn = u2 - 0.25;
  if (sin_turn < 0.0) sin_turn += 1.0;
  spare_ = radius * cos_turns(sin_turn);
  has_spare_ = true;
  return radius * cos_turns(u2);
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL + (b << 6) + (b >> 2) + b * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix_seed(h, seed);
}

}  // namespace attnlens
