#include <attnlens/random.hpp>
#include <attnlens/self_attention.hpp>

#include "core/check.hpp"
#include "core/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <utility>
#include <vector>

namespace attnlens {
namespace {

using ConstMap = Eigen::Map<const RowMatrixXf>;
using MutableMap = Eigen::Map<RowMatrixXf>;

void check_dims(int model_dim, int num_heads) {
  if (model_dim < 1 || model_dim > kMaxModelDim) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "modelDim must be between 1 and ", kMaxModelDim, "; got ",
                 model_dim);
  }
  if (num_heads < 1 || num_heads > kMaxHeads) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "numHeads must be between 1 and ", kMaxHeads, "; got ",
                 num_heads);
  }
  if (model_dim % num_heads != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "modelDim ", model_dim, " is not divisible by numHeads ",
                 num_heads, "; each head needs modelDim / numHeads columns");
  }
}

RowMatrixXf init_matrix(int dim, Init init, std::uint64_t seed, std::uint64_t which) {
  RowMatrixXf w(dim, dim);
  if (init == Init::Identity) {
    w.setIdentity();
    return w;
  }
  Rng rng(mix_seed(seed, which));
  const double n = static_cast<double>(dim);
  const double std_normal = 1.0 / std::sqrt(n);
  const double xavier_bound = std::sqrt(6.0 / (n + n));
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    const double value =
        init == Init::Normal ? rng.normal() * std_normal : rng.uniform(-xavier_bound, xavier_bound);
    w.data()[i] = static_cast<float>(value);
  }
  return w;
}

void check_matrix(const RowMatrixXf& w, int dim, const char* name) {
  if (w.rows() != dim || w.cols() != dim) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, name, " has shape [", w.rows(), ", ", w.cols(),
                 "] but must be [modelDim, modelDim] = [", dim, ", ", dim, "]");
  }
  detail::require_finite(w.data(), w.size(), name, {w.rows(), w.cols()});
}

void check_bias(const Eigen::VectorXf& b, int dim, const char* name) {
  if (b.size() != 0 && b.size() != dim) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, name, " has ", b.size(),
                 " values but must have modelDim = ", dim, " (or none)");
  }
  detail::require_finite(b.data(), b.size(), name, {b.size()});
}

// A float64 value rounded to float32; NON_FINITE naming `what` and where when it is beyond
// float32's range (the trace and the projections hold float32 values only).
float to_float(double value, const char* what, std::int64_t row, std::int64_t col) {
  const auto f = static_cast<float>(value);
  if (std::isinf(f) && std::isfinite(value)) {
    detail::fail(ErrorCode::NON_FINITE, what, " is ", value, " at row ", row, ", column ", col,
                 ", beyond float32's range (largest ", std::numeric_limits<float>::max(),
                 "); scale the input or the weights down");
  }
  return f;
}

// y (L, E) = x (L, E) W (E, E) + b, with |x| <= x_max. In float32 by the kernels' product when no
// partial sum can overflow in any order (E x_max max|W| + max|b| <= 2^124, the bound fits_float32
// uses for scores); otherwise in float64, rounded once. Throws NON_FINITE naming `what` when a
// value of y itself is beyond float32.
RowMatrixXf project(const Eigen::Ref<const RowMatrixXf>& x, double x_max, const RowMatrixXf& w,
                    const Eigen::VectorXf& b, const char* what) {
  const double w_max = detail::finite_max_abs(w.data(), w.size());
  const double b_max = detail::finite_max_abs(b.data(), b.size());
  if (static_cast<double>(x.cols()) * x_max * w_max + b_max <= std::ldexp(1.0, 124)) {
    RowMatrixXf y(x.rows(), w.cols());
    detail::matmul(x.data(), x.outerStride(), w.data(), w.cols(), y.data(), y.cols(), x.rows(),
                   x.cols(), w.cols());
    if (b.size() != 0) y.rowwise() += b.transpose();
    return y;
  }
  // Plain loops: this path is for extreme inputs only, and Eigen's float64 product would add
  // its whole GEMM kernel to the WebAssembly module.
  RowMatrixXf y(x.rows(), w.cols());
  for (Eigen::Index i = 0; i < y.rows(); ++i) {
    for (Eigen::Index c = 0; c < y.cols(); ++c) {
      double sum = b.size() != 0 ? static_cast<double>(b[c]) : 0.0;
      for (Eigen::Index e = 0; e < x.cols(); ++e)
        sum += static_cast<double>(x(i, e)) * static_cast<double>(w(e, c));
      y(i, c) = to_float(sum, what, i, c);
    }
  }
  return y;
}

// Copies the [rows, cols] block at `from` (rows `stride` floats apart), times `factor`, into slot
// `index` of a tensor of such blocks. Plain loops rather than an Eigen expression per caller:
// one copy of this code in the WebAssembly module instead of one per block type.
void store(Tensor& t, std::int64_t index, const float* from, std::int64_t stride, std::int64_t rows,
           std::int64_t cols, float factor = 1.0f) {
  float* to = t.data.data() + index * rows * cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c)
      to[r * cols + c] = from[r * stride + c] * factor;
  }
}

void store(Tensor& t, std::int64_t index, const RowMatrixXf& m) {
  store(t, index, m.data(), m.cols(), m.rows(), m.cols());
}

// [B, H, n, m] for a batched x, else [H, n, m].
Shape per_head(bool batched, std::int64_t B, std::int64_t H, std::int64_t n, std::int64_t m) {
  return batched ? Shape{B, H, n, m} : Shape{H, n, m};
}

// Fills slot `slot` of the trace's per-head stages for the head whose columns start at `col`:
// its projections and its output (already in `concat`), and, unless `score_slot` is negative
// (a head the trace leaves out), slot `score_slot` of the score stages: its raw scores and their
// scaled and masked forms by the same score rule the slice routine applied. With `exact` (the
// slice took Schedule::Exact) the score stages are computed in float64 and rounded once, and a
// value beyond float32 is NON_FINITE.
void trace_head(Trace& t, std::int64_t slot, std::int64_t score_slot, const detail::ScoreRule& rule,
                const RowMatrixXf& q, const RowMatrixXf& k, const RowMatrixXf& v,
                const RowMatrixXf& concat, std::int64_t col, std::int64_t d, bool exact) {
  const std::int64_t L = q.rows();
  const std::int64_t E = q.cols();
  store(t.q, slot, q.data() + col, E, L, d);
  store(t.k, slot, k.data() + col, E, L, d);
  store(t.v, slot, v.data() + col, E, L, d);
  store(t.head_outputs, slot, concat.data() + col, E, L, d);
  if (score_slot < 0) return;
  slot = score_slot;
  // scores, scaled and masked are (L, L), written in place; the scores by the kernels' product
  // (SIMD in WebAssembly, where Eigen's is scalar).
  if (!exact) {
    float* scores = t.scores.data.data() + slot * L * L;
    float* scaled = t.scaled.data.data() + slot * L * L;
    float* logits = t.masked.data.data() + slot * L * L;
    detail::matmul_transposed(q.data() + col, E, k.data() + col, E, scores, L, L, d, L);
    for (std::int64_t c = 0; c < L * L; ++c)
      scaled[c] = scores[c] * rule.scale;
    // The logits are the scaled scores by the rule (the same multiplication, so the same bits).
    std::copy(scaled, scaled + L * L, logits);
    for (std::int64_t i = 0; i < L; ++i) {
      float* row = logits + i * L;
      const std::int64_t visible = rule.causal_visible(i, 0, L);
      detail::apply_score_rule(rule, row, i, 0, visible, false);
      std::fill(row + visible, row + L, -std::numeric_limits<float>::infinity());
    }
    return;
  }
  float* scores = t.scores.data.data() + slot * L * L;
  float* scaled = t.scaled.data.data() + slot * L * L;
  float* logits = t.masked.data.data() + slot * L * L;
  std::vector<double> raw(static_cast<std::size_t>(L));
  std::vector<double> masked(static_cast<std::size_t>(L));
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) {
      double dot = 0.0;
      for (std::int64_t e = 0; e < d; ++e)
        dot += static_cast<double>(q(i, col + e)) * static_cast<double>(k(j, col + e));
      raw[static_cast<std::size_t>(j)] = dot;
    }
    masked = raw;
    const std::int64_t visible = rule.causal_visible(i, 0, L);
    detail::apply_score_rule(rule, masked.data(), i, 0, visible, true);
    std::fill(masked.begin() + visible, masked.end(), -std::numeric_limits<double>::infinity());
    for (std::int64_t j = 0; j < L; ++j) {
      const auto at = static_cast<std::size_t>(j);
      scores[i * L + j] = to_float(raw[at], "the trace's scores", i, j);
      scaled[i * L + j] = to_float(raw[at] * rule.scale, "the trace's scaled scores", i, j);
      logits[i * L + j] = to_float(masked[at], "the trace's masked scores", i, j);
    }
  }
}

}  // namespace

SelfAttention::SelfAttention(const SelfAttentionConfig& config)
    : model_dim_(config.model_dim), num_heads_(config.num_heads) {
  check_dims(model_dim_, num_heads_);
  weights_.wq = init_matrix(model_dim_, config.init, config.seed, 1);
  weights_.wk = init_matrix(model_dim_, config.init, config.seed, 2);
  weights_.wv = init_matrix(model_dim_, config.init, config.seed, 3);
  weights_.wo = init_matrix(model_dim_, config.init, config.seed, 4);
  if (config.bias) {
    for (auto* b : {&weights_.bq, &weights_.bk, &weights_.bv, &weights_.bo}) {
      b->setZero(model_dim_);
    }
  }
}

SelfAttention::SelfAttention(int model_dim, int num_heads, SelfAttentionWeights weights)
    : model_dim_(model_dim), num_heads_(num_heads), weights_(std::move(weights)) {
  check_dims(model_dim_, num_heads_);
  check_matrix(weights_.wq, model_dim_, "wq");
  check_matrix(weights_.wk, model_dim_, "wk");
  check_matrix(weights_.wv, model_dim_, "wv");
  check_matrix(weights_.wo, model_dim_, "wo");
  check_bias(weights_.bq, model_dim_, "bq");
  check_bias(weights_.bk, model_dim_, "bk");
  check_bias(weights_.bv, model_dim_, "bv");
  check_bias(weights_.bo, model_dim_, "bo");
}

ForwardResult SelfAttention::forward(const ConstTensorView& x,
                                     const ForwardOptions& options) const {
  // x is [L, E] or [B, L, E]; E = model_dim_, H = num_heads_, d = E / H.
  const int rank = static_cast<int>(x.shape.size());
  if (rank != 2 && rank != 3) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "x must be [L, E] or [B, L, E]; got shape ",
                 shape_to_string(x.shape));
  }
  const bool batched = rank == 3;
  const std::int64_t B = batched ? x.shape[0] : 1;
  const std::int64_t L = x.shape[rank - 2];
  const std::int64_t E = model_dim_;
  const std::int64_t H = num_heads_;
  const std::int64_t d = E / H;
  if (x.shape[rank - 1] != E) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "x has last dimension ", x.shape[rank - 1],
                 " but the model dimension is ", E, " (x ", shape_to_string(x.shape), ")");
  }
  if (B == 0 || L == 0) {
    detail::fail(ErrorCode::EMPTY_INPUT, "x has shape ", shape_to_string(x.shape),
                 "; it needs at least one token");
  }
  const std::int64_t numel = shape_numel(x.shape, "x");
  detail::require_at_most(numel, kDefaultMaxElements, "x");
  detail::require_product_at_most({B, H, L, L}, kDefaultMaxElements, "the attention weights");
  detail::require_work(B * H, L, L, d, d, kDefaultMaxWork);
  if (x.data == nullptr) detail::fail(ErrorCode::BAD_ARGUMENT, "x has no data");
  const double x_max = detail::require_finite(x.data, numel, "x", x.shape);
  if (options.trace_head && (*options.trace_head < 0 || *options.trace_head >= H)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "trace_head must be between 0 and ", H - 1,
                 " (the layer has ", H, " heads); got ", *options.trace_head);
  }
  const float scale = options.scale.value_or(1.0f / std::sqrt(static_cast<float>(d)));
  if (!std::isfinite(scale)) {
    detail::fail(ErrorCode::NON_FINITE, "scale is ", scale, "; it must be a finite number");
  }

  struct ReleaseScratch {
    ~ReleaseScratch() { detail::release_scratch(); }
  } release_on_exit;
  ForwardResult result;
  try {
    result.output = Tensor(x.shape);
    result.weights = Tensor(per_head(batched, B, H, L, L));
    if (options.entropy) result.entropy = Tensor(batched ? Shape{B, H, L} : Shape{H, L});
    if (options.trace) {
      Trace& t = result.trace.emplace();
      t.scale = scale;
      t.x = Tensor(x.shape, std::vector<float>(x.data, x.data + numel));
      for (Tensor* s : {&t.q, &t.k, &t.v, &t.head_outputs})
        *s = Tensor(per_head(batched, B, H, L, d));
      for (Tensor* s : {&t.scores, &t.scaled, &t.masked})
        *s = Tensor(per_head(batched, B, options.trace_head ? 1 : H, L, L));
      // Written in place: causal_mask()'s numbers without its [L, L] temporary and copy.
      t.mask = Tensor({L, L});
      detail::ScoreRule rule;
      rule.causal = options.causal;
      detail::fill_causal_mask(rule, t.mask.data.data(), L, L);
      t.concat = Tensor(x.shape);
    }
    // Each head is a slice of the projections: columns h*d .. h*d + d - 1, rows E apart.
    detail::SliceProblem p;
    p.L = p.S = L;
    p.D = p.Dv = d;
    p.ldq = p.ldk = p.ldv = p.ldo = E;
    p.rule.scale = scale;
    p.rule.causal = options.causal;
    RowMatrixXf concat(L, E);
    for (std::int64_t b = 0; b < B; ++b) {
      // x_b is (L, E); an aligned copy, so results do not depend on where the caller's memory sits.
      const RowMatrixXf x_lE = ConstMap(x.data + b * L * E, L, E);
      // q, k, v are (L, E): H heads of d columns each.
      const RowMatrixXf q = project(x_lE, x_max, weights_.wq, weights_.bq, "x W_Q + b_Q");
      const RowMatrixXf k = project(x_lE, x_max, weights_.wk, weights_.bk, "x W_K + b_K");
      const RowMatrixXf v = project(x_lE, x_max, weights_.wv, weights_.bv, "x W_V + b_V");
      // The same overflow rule as attention(): float64 slices when float32 could overflow.
      detail::InputBounds bounds;
      bounds.D = d;
      bounds.S = L;
      bounds.q = detail::finite_max_abs(q.data(), q.size());
      bounds.k = detail::finite_max_abs(k.data(), k.size());
      bounds.v = detail::finite_max_abs(v.data(), v.size());
      bounds.scale = scale;
      const bool exact = !detail::fits_float32(bounds);
      const auto schedule = exact ? detail::Schedule::Exact : detail::Schedule::Blocked;
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t slot = b * H + h;
        p.q = q.data() + h * d;
        p.k = k.data() + h * d;
        p.v = v.data() + h * d;
        p.out = concat.data() + h * d;
        p.weights = result.weights.data.data() + slot * L * L;
        if (options.entropy) p.entropy = result.entropy.data.data() + slot * L;
        detail::attend_slice(p, schedule);
        if (result.trace) {
          const std::int64_t score_slot =
              !options.trace_head ? slot : (h == *options.trace_head ? b : -1);
          trace_head(*result.trace, slot, score_slot, p.rule, q, k, v, concat, h * d, d, exact);
        }
      }
      // Each row of concat is a convex combination of rows of v: at most max |v|.
      store(result.output, b,
            project(concat, bounds.v, weights_.wo, weights_.bo, "concat W_O + b_O"));
      if (result.trace) store(result.trace->concat, b, concat);
    }
    if (result.trace && options.trace_results) {
      result.trace->weights = result.weights;
      result.trace->output = result.output;
    }
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the forward pass on x ", shape_to_string(x.shape),
                 " could not allocate its results");
  }
  return result;
}

}  // namespace attnlens
