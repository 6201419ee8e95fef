// The comparison helper itself: it must fail on NaN, on infinities, on size mismatches and on
// differences over the tolerance, and say where.
#include "compare.hpp"

#include <cmath>
#include <limits>
#include <vector>

using Catch::Matchers::Contains;
using testing::close;

TEST_CASE("close: equal values pass, including equal infinities", "[compare]") {
  const std::vector<float> a = {1.0f, -2.5f, -INFINITY, 0.0f};
  const auto c = close(a, {1.0, -2.5, -INFINITY, 0.0}, 0.0);
  CHECK(c.ok);
  CHECK_THAT(c.report, Contains("max |actual - expected| = 0"));
  CHECK(close(std::vector<float>{}, std::vector<double>{}, 0.0).ok);
}

TEST_CASE("close: a difference over the tolerance fails and is located", "[compare]") {
  const std::vector<float> a = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<double> e = {0.0, 1e-7, 0.0, 0.0, 0.0, -3e-3};
  const auto within = close(a, e, 1e-2, {2, 3});
  CHECK(within.ok);
  const auto c = close(a, e, 1e-6, {2, 3});
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("max |actual - expected| = 0.003"));
  CHECK_THAT(c.report, Contains("flat index 5 [1, 2]"));
  CHECK_THAT(c.report, Contains("actual 0, expected -0.003"));
  CHECK_THAT(c.report, Contains("1 of 6 values over"));
}

TEST_CASE("close: NaN on either side fails, wherever it is", "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1.0f, nan, 3.0f};
  const auto c = close(a, {1.0, 2.0, 3.0}, 1e9);
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("non-finite difference at flat index 1"));
  CHECK_THAT(c.report, Contains("actual nan"));
  const std::vector<float> ok = {1.0f, 2.0f, 3.0f};
  const std::vector<double> expected_nan = {1.0, 2.0, std::nan("")};
  CHECK_FALSE(close(ok, expected_nan, 1e9).ok);
  const std::vector<float> both = {nan};
  CHECK_FALSE(close(both, {std::nan("")}, 1e9).ok);
}

TEST_CASE("close: an infinity the other side does not hold fails", "[compare]") {
  const std::vector<float> a = {0.5f, INFINITY};
  const auto c = close(a, {0.5, 1e30}, 1e9, {2});
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("non-finite difference at flat index 1 [1]"));
  CHECK_FALSE(close(a, {0.5, -INFINITY}, 1e9).ok);
}

TEST_CASE("close: a NaN or negative tolerance fails", "[compare]") {
  const std::vector<float> a = {1.0f};
  const auto c = close(a, {1.0}, std::nan(""));
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("the tolerance is nan"));
  CHECK_FALSE(close(a, {1.0}, -1.0).ok);
}

TEST_CASE("close: a short or long result fails", "[compare]") {
  const std::vector<float> a = {1.0f, 2.0f};
  const auto c = close(a, {1.0, 2.0, 3.0}, 1.0);
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("size mismatch: actual has 2 values, expected has 3"));
  CHECK_FALSE(close(std::vector<float>{1.0f, 2.0f, 3.0f}, {1.0, 2.0}, 1.0).ok);
  const auto shaped = close(a, {1.0, 2.0}, 1.0, {3});
  CHECK_FALSE(shaped.ok);
  CHECK_THAT(shaped.report, Contains("shape [3] holds 3 values but 2 were given"));
}

TEST_CASE("close: Eigen matrices and expressions are read row by row", "[compare]") {
  attnlens::RowMatrixXf m(2, 2);
  m << 1, 2, 3, 4;
  const Eigen::MatrixXf column_major = m;
  CHECK(close(column_major, {1.0, 2.0, 3.0, 4.0}, 0.0).ok);
  CHECK(close(m.col(1), {2.0, 4.0}, 0.0).ok);
  const auto c = close(m - column_major, {0.0, 0.0, 0.0, 1.0}, 0.5, {2, 2});
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.report, Contains("[1, 1]"));
}

TEST_CASE("max_abs_difference: the largest difference, and NaN for a NaN or a size mismatch",
          "[compare]") {
  CHECK(testing::max_abs_difference(std::vector<float>{1, 2, 3}, {1.0, 2.5, 2.0}) == 1.0);
  CHECK(testing::max_abs_difference(std::vector<float>{}, std::vector<double>{}) == 0.0);
  // A NaN anywhere (even before a larger difference) and a size mismatch fail any bound.
  const double nan = std::nan("");
  CHECK(std::isnan(testing::max_abs_difference(std::vector<double>{nan, 0}, {0.0, 9.0})));
  CHECK(std::isnan(testing::max_abs_difference(std::vector<double>{0, 1}, {0.0})));
  CHECK_FALSE(testing::max_abs_difference(std::vector<double>{0, nan}, {0.0, 0.0}) > 0.05);
}
