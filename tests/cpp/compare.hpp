// Comparisons of computed values with expected ones that can fail. close() fails on a size
// mismatch, on a non-finite difference (NaN anywhere, or an infinity the other side does not
// hold at the same place) and on a difference over the tolerance; its report names the worst
// difference, where it is (flat index, and the multi-index when a shape is given) and both
// values. Use it inside CHECK or REQUIRE, which print the report when it fails:
//
//   CHECK(testing::close(r.output.data, expected.output, 1e-6));
//   REQUIRE(testing::close(r.weights.data, expected.weights, tol, r.weights.shape));
//
// Identical values have difference 0, so equal infinities (e.g. -inf where a key is masked)
// compare equal; NaN never equals anything.
#pragma once

#include <Eigen/Core>
#include <attnlens/tensor.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace testing {

// A read-only run of float or double values: a std::vector, a braced list of expected numbers,
// or any Eigen matrix or expression (read row by row, as attnlens stores matrices).
class Values {
 public:
  Values(const std::vector<float>& v) : f_(v.data()), n_(v.size()) {}
  Values(const std::vector<double>& v) : d_(v.data()), n_(v.size()) {}
  Values(std::initializer_list<double> v) : n_(v.size()), owned_(v) { d_ = owned_.data(); }
  template <typename Derived>
  Values(const Eigen::DenseBase<Derived>& m) {
    owned_.reserve(static_cast<std::size_t>(m.size()));
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index c = 0; c < m.cols(); ++c)
        owned_.push_back(static_cast<double>(m(r, c)));
    }
    d_ = owned_.data();
    n_ = owned_.size();
  }
  Values(const Values&) = delete;
  Values& operator=(const Values&) = delete;

  std::size_t size() const { return n_; }
  double operator[](std::size_t i) const { return f_ ? static_cast<double>(f_[i]) : d_[i]; }

 private:
  const float* f_ = nullptr;
  const double* d_ = nullptr;
  std::size_t n_ = 0;
  std::vector<double> owned_;
};

// The outcome of a comparison; true when the values are close. `report` says why not.
struct Closeness {
  bool ok = false;
  std::string report;
  explicit operator bool() const { return ok; }
};

namespace compare_detail {

inline std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

// "flat index 17 [0, 2, 1]" (the multi-index only when a shape is known).
inline std::string where(std::size_t flat, const attnlens::Shape& shape) {
  std::string text = "flat index " + std::to_string(flat);
  if (shape.empty()) return text;
  std::vector<std::int64_t> index(shape.size());
  auto rest = static_cast<std::int64_t>(flat);
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? rest % shape[d] : 0;
    rest = shape[d] > 0 ? rest / shape[d] : 0;
  }
  return text + " " + attnlens::shape_to_string(index);
}

}  // namespace compare_detail

// Compares `actual` with `expected` element by element: |actual - expected| <= tolerance
// everywhere, both the same length (and that length the product of `shape` when one is given).
inline Closeness close(const Values& actual, const Values& expected, double tolerance,
                       const attnlens::Shape& shape = {}) {
  using compare_detail::number;
  using compare_detail::where;
  Closeness c;
  if (!(tolerance >= 0.0)) {
    c.report = "the tolerance is " + compare_detail::number(tolerance) + ", not a number >= 0";
    return c;
  }
  if (actual.size() != expected.size()) {
    c.report = "size mismatch: actual has " + std::to_string(actual.size()) +
               " values, expected has " + std::to_string(expected.size());
    return c;
  }
  if (!shape.empty()) {
    std::int64_t count = 1;
    for (std::int64_t d : shape)
      count *= d;
    if (count != static_cast<std::int64_t>(actual.size())) {
      c.report = "shape " + attnlens::shape_to_string(shape) + " holds " + std::to_string(count) +
                 " values but " + std::to_string(actual.size()) + " were given";
      return c;
    }
  }
  double worst = 0.0;
  std::size_t worst_at = 0;
  std::size_t over = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i];
    const double e = expected[i];
    const double diff = a == e ? 0.0 : std::abs(a - e);
    if (!std::isfinite(diff)) {
      c.report = "non-finite difference at " + where(i, shape) + ": actual " + number(a) +
                 ", expected " + number(e);
      return c;
    }
    if (diff > tolerance) ++over;
    if (diff > worst || i == 0) {
      worst = diff;
      worst_at = i;
    }
  }
  const std::string worst_text =
      actual.size() == 0
          ? "no values"
          : "max |actual - expected| = " + number(worst) + " at " + where(worst_at, shape) +
                ": actual " + number(actual[worst_at]) + ", expected " + number(expected[worst_at]);
  c.ok = over == 0;
  c.report = worst_text + (c.ok ? " (within " : " (over ") + number(tolerance) + "; " +
             std::to_string(over) + " of " + std::to_string(actual.size()) + " values over)";
  return c;
}

// The largest |actual - expected|, for checks that two results differ (a change took effect):
// NaN anywhere or a size mismatch gives NaN, which fails any bound, above or below.
inline double max_abs_difference(const Values& actual, const Values& expected) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::quiet_NaN();
  double worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double d = std::abs(actual[i] - expected[i]);
    if (!(d <= worst)) worst = d;  // NaN sticks
    if (std::isnan(worst)) return worst;
  }
  return worst;
}

}  // namespace testing

namespace Catch {
template <>
struct StringMaker<testing::Closeness> {
  static std::string convert(const testing::Closeness& c) { return c.report; }
};
}  // namespace Catch

// REQUIRE (or CHECK) on a close() result, with its report (the worst element) as the failure's
// message.
#define ATTNLENS_ASSERT_CLOSE(assertion, cmp) \
  do {                                        \
    const auto c_ = (cmp);                    \
    INFO(c_.report);                          \
    assertion(c_.ok);                         \
  } while (false)
#define REQUIRE_CLOSE(cmp) ATTNLENS_ASSERT_CLOSE(REQUIRE, cmp)
#define CHECK_CLOSE(cmp) ATTNLENS_ASSERT_CLOSE(CHECK, cmp)
