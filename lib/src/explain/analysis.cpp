#include <attnlens/analysis.hpp>

#include "core/check.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnlens {
namespace {

// Flips `v` so that its entry of largest magnitude (the first such, on ties) is positive.
void fix_sign(Eigen::Ref<Eigen::VectorXd> v) {
  Eigen::Index at = 0;
  v.cwiseAbs().maxCoeff(&at);
  if (v[at] < 0) v = -v;
}

// -p ln p for float weights p, 0 unless p > 0 (so 0, NaN and negative entries add nothing).
// No call into libm (WebAssembly has no log instruction; libm's log was 40 % of explain() at 512
// tokens) and no branch that depends on the data (a mispredicted one per entry cost more than
// the log). p = m 2^k with m in [sqrt(1/2), sqrt(2)), split from p's bits as musl's logf does;
// ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.1716, and the series to s^7 leaves
// 2 s^9 / 9 (1 - s^2) < 3.0e-8. In float each step rounds to within u = 2^-24 relative, so the
// error is at most p (3.0e-8 + 4u |ln p|) per entry: over a row of weights that sum to 1, under
// 3.0e-8 + 4u H. A denormal p (< 1.2e-38) comes out as some p ln q with q < 2^-125: its term
// is below 1e-36 either way. Four weights at once (SSE2 natively, SIMD128 in WebAssembly; GCC
// and Clang vector extensions, as in kernels.cpp).
using f4 = float __attribute__((vector_size(16)));
using i4 = std::int32_t __attribute__((vector_size(16)));
using u4 = std::uint32_t __attribute__((vector_size(16)));
using d2 = double __attribute__((vector_size(16)));

inline f4 neg_p_ln_p(f4 p) {
  u4 bits;
  std::memcpy(&bits, &p, sizeof bits);
  const u4 shifted = bits - 0x3f3504f3u;
  const i4 k = reinterpret_cast<const i4&>(shifted) >> 23;
  const u4 m_bits = (shifted & 0x007fffffu) + 0x3f3504f3u;
  f4 m;
  std::memcpy(&m, &m_bits, sizeof m);
  const f4 s = (m - 1.0f) / (m + 1.0f);
  const f4 s2 = s * s;
  const f4 ln_m = s * (2.0f + s2 * (2.0f / 3.0f + s2 * (2.0f / 5.0f + s2 * (2.0f / 7.0f))));
  const f4 ln_p = __builtin_convertvector(k, f4) * 0.693147181f + ln_m;
  const f4 term = -p * ln_p;
  i4 kept;
  std::memcpy(&kept, &term, sizeof kept);
  kept &= (p > 0.0f);  // all ones where p > 0; 0 (so +0.0f) elsewhere
  f4 out;
  std::memcpy(&out, &kept, sizeof out);
  return out;
}

}  // namespace

Pca2D pca_2d(const Eigen::Ref<const RowMatrixXf>& original,
             const Eigen::Ref<const RowMatrixXf>& contextual) {
  const Eigen::Index n = original.rows();
  const Eigen::Index e = original.cols();
  if (contextual.rows() != n || contextual.cols() != e) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "contextual is [", contextual.rows(), ", ",
                 contextual.cols(), "] but original is [", n, ", ", e, "]");
  }
  if (n == 0 || e == 0) {
    detail::fail(ErrorCode::EMPTY_INPUT, "PCA needs at least one row and one column; got [", n,
                 ", ", e, "]");
  }
  if (!original.allFinite() || !contextual.allFinite()) {
    detail::fail(ErrorCode::NON_FINITE, "PCA input holds NaN or an infinity");
  }
  const Eigen::MatrixXd x = original.cast<double>();
  const Eigen::RowVectorXd mean = x.colwise().mean();
  const Eigen::MatrixXd centred = x.rowwise() - mean;

  // Eigen-decompose the smaller of the covariance (E x E) and the Gram matrix (N x N); both have
  // the same non-zero eigenvalues, and a Gram eigenvector u gives the direction centredᵀ u.
  Eigen::MatrixXd directions(e, 2);
  directions.setZero();
  Eigen::Vector2d values = Eigen::Vector2d::Zero();
  const bool use_gram = n < e;
  const Eigen::MatrixXd m = use_gram ? Eigen::MatrixXd(centred * centred.transpose())
                                     : Eigen::MatrixXd(centred.transpose() * centred);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m);
  const double total = m.trace();
  const double tiny = 1e-12 * std::max(total, 1e-300);
  for (int c = 0; c < 2 && c < m.rows(); ++c) {
    const Eigen::Index idx = m.rows() - 1 - c;  // eigenvalues are ascending
    const double lambda = solver.eigenvalues()[idx];
    if (!(lambda > tiny)) break;
    Eigen::VectorXd dir =
        use_gram ? Eigen::VectorXd(centred.transpose() * solver.eigenvectors().col(idx))
                 : Eigen::VectorXd(solver.eigenvectors().col(idx));
    dir.normalize();
    fix_sign(dir);
    directions.col(c) = dir;
    values[c] = lambda;
  }

  Pca2D pca;
  pca.components = directions.transpose().cast<float>();
  pca.mean = mean.transpose().cast<float>();
  pca.explained =
      (total > 0 ? Eigen::Vector2d(values / total) : Eigen::Vector2d::Zero()).cast<float>();
  pca.original = (centred * directions).cast<float>();
  pca.contextual = ((contextual.cast<double>().rowwise() - mean) * directions).cast<float>();
  return pca;
}

double finite_variance(const float* data, std::int64_t count, const float* mask) {
  // Two passes over doubles (exact enough for any realistic score matrix), four entries at a
  // time without a branch: entry i goes to partial sum i mod 4, or adds +0 when it does not
  // count (NaN, an infinity, or a nonzero mask entry). The last 1-3 entries are padded with NaN.
  using l2 = std::int64_t __attribute__((vector_size(16)));
  const f4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
  const auto load = [&](std::int64_t i, f4& x, i4& keep) {
    f4 m = zero;
    if (i + 4 <= count) {
      std::memcpy(&x, data + i, sizeof x);
      if (mask != nullptr) std::memcpy(&m, mask + i, sizeof m);
    } else {
      x = f4{NAN, NAN, NAN, NAN};
      const auto n = static_cast<std::size_t>(count - i);
      std::memcpy(&x, data + i, n * sizeof(float));
      if (mask != nullptr) std::memcpy(&m, mask + i, n * sizeof(float));
    }
    keep = (x - x == zero) & (m == zero);  // x - x is NaN for NaN and the infinities
  };
  d2 low = {0.0, 0.0};
  d2 high = {0.0, 0.0};
  std::int64_t n = 0;
  // The lanes count in 32 bits: moved into n every 2^30 entries (2^28 per lane).
  constexpr std::int64_t kCountEvery = std::int64_t{1} << 30;
  for (std::int64_t start = 0; start < count; start += kCountEvery) {
    const std::int64_t stop = std::min(count, start + kCountEvery);
    i4 kept = {0, 0, 0, 0};
    for (std::int64_t i = start; i < stop; i += 4) {
      f4 x;
      i4 keep;
      load(i, x, keep);
      const f4 v = reinterpret_cast<f4>(reinterpret_cast<i4>(x) & keep);
      low += d2{v[0], v[1]};
      high += d2{v[2], v[3]};
      kept -= keep;  // keep is -1 where an entry counts
    }
    n += static_cast<std::int64_t>(kept[0]) + kept[1] + kept[2] + kept[3];
  }
  if (n == 0) return 0.0;
  const double mean = ((low[0] + low[1]) + (high[0] + high[1])) / static_cast<double>(n);
  low = high = d2{0.0, 0.0};
  for (std::int64_t i = 0; i < count; i += 4) {
    f4 x;
    i4 keep;
    load(i, x, keep);
    const d2 a = d2{x[0], x[1]} - mean;
    const d2 b = d2{x[2], x[3]} - mean;
    low += reinterpret_cast<d2>(reinterpret_cast<l2>(a * a) & l2{keep[0], keep[1]});
    high += reinterpret_cast<d2>(reinterpret_cast<l2>(b * b) & l2{keep[2], keep[3]});
  }
  return ((low[0] + low[1]) + (high[0] + high[1])) / static_cast<double>(n);
}

Tensor row_entropy(const ConstTensorView& weights) {
  if (weights.shape.empty()) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "weights must have at least one dimension");
  }
  const std::int64_t S = weights.shape.back();
  const std::int64_t count = shape_numel(weights.shape, "weights");
  Shape rows_shape(weights.shape.begin(), weights.shape.end() - 1);
  Tensor entropy(rows_shape);
  const std::int64_t rows = S == 0 ? 0 : count / S;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = weights.data + r * S;
    // The terms are >= 0 for weights in [0, 1]: summed in float64, no cancellation, in four
    // partial sums (entry j in sum j mod 4).
    d2 low = {0.0, 0.0};
    d2 high = {0.0, 0.0};
    std::int64_t j = 0;
    for (; j + 4 <= S; j += 4) {
      f4 p;
      std::memcpy(&p, row + j, sizeof p);
      const f4 t = neg_p_ln_p(p);
      low += d2{t[0], t[1]};
      high += d2{t[2], t[3]};
    }
    if (j < S) {  // the last 1-3 weights, padded with zeros (which add +0)
      f4 p = {0.0f, 0.0f, 0.0f, 0.0f};
      std::memcpy(&p, row + j, static_cast<std::size_t>(S - j) * sizeof(float));
      const f4 t = neg_p_ln_p(p);
      low += d2{t[0], t[1]};
      high += d2{t[2], t[3]};
    }
    entropy.data[static_cast<std::size_t>(r)] =
        static_cast<float>((low[0] + low[1]) + (high[0] + high[1]));
  }
  return entropy;
}

}  // namespace attnlens
