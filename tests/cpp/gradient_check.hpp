// Gradient checks by central differences, shared by the layer tests (test_layers.cpp) and the
// block's (test_block.cpp): random inputs, a weighted sum as the loss, and the comparison that
// names the worst element.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace testing {

inline std::vector<float> randoms(std::size_t n, std::mt19937& gen, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(gen);
  return v;
}

inline double weighted_sum(const std::vector<float>& out, const std::vector<float>& r) {
  double s = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i)
    s += static_cast<double>(out[i]) * r[i];
  return s;
}

// Compares `analytic` (the backward's gradient of `x`) with central differences of `loss`
// with respect to each element of x; reports every element over the tolerance, naming `what`.
inline void check_gradient(const std::string& what, std::vector<float>& x,
                           const std::vector<float>& analytic,
                           const std::function<double()>& loss) {
  REQUIRE(analytic.size() == x.size());
  double scale = 0.0;
  for (const float g : analytic)
    scale = std::max(scale, std::abs(static_cast<double>(g)));
  const double h = 1e-2, tolerance = 2e-3 + 1e-3 * scale;
  int failures = 0;
  double worst = 0.0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    x[i] = saved + static_cast<float>(h);
    const double up = loss();
    x[i] = saved - static_cast<float>(h);
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * h);
    const double diff = std::abs(numeric - analytic[i]);
    if (!(diff <= tolerance)) ++failures;
    if (!(diff <= worst)) {
      worst = diff;
      worst_at = i;
    }
  }
  INFO(what << ": " << failures << " of " << x.size() << " elements off; worst at " << worst_at
            << " by " << worst << " (tolerance " << tolerance << ")");
  CHECK(failures == 0);
}

}  // namespace testing
