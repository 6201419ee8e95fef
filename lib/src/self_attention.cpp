#include <attnlens/random.hpp>
#include <attnlens/self_attention.hpp>

#include "check.hpp"

#include <cmath>
#include <new>
#include <utility>

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

// y = x W (+ b)
RowMatrixXf project(const Eigen::Ref<const RowMatrixXf>& x, const RowMatrixXf& w,
                    const Eigen::VectorXf& b) {
  RowMatrixXf y = x * w;
  if (b.size() != 0) y.rowwise() += b.transpose();
  return y;
}

// Copies a [rows, cols] block into slot `index` of a tensor of such blocks.
template <typename Block>
void store(Tensor& t, std::int64_t index, const Block& block) {
  MutableMap(t.data.data() + index * block.rows() * block.cols(), block.rows(), block.cols()) =
      block;
}

Shape with_batch(bool batched, std::int64_t B, Shape inner) {
  if (batched) inner.insert(inner.begin(), B);
  return inner;
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
  detail::require_at_most(B * H * L * L, kDefaultMaxElements, "the attention weights");
  if (x.data == nullptr) detail::fail(ErrorCode::BAD_ARGUMENT, "x has no data");
  detail::require_finite(x.data, numel, "x", x.shape);
  const float scale = options.scale.value_or(1.0f / std::sqrt(static_cast<float>(d)));
  if (!std::isfinite(scale)) {
    detail::fail(ErrorCode::NON_FINITE, "scale is ", scale, "; it must be a finite number");
  }

  ForwardResult result;
  try {
    result.output = Tensor(x.shape);
    result.weights = Tensor(with_batch(batched, B, {H, L, L}));
    const RowMatrixXf mask = options.causal ? causal_mask(L, L) : RowMatrixXf::Zero(L, L);
    if (options.trace) {
      Trace t;
      t.scale = scale;
      t.x = Tensor(x.shape, std::vector<float>(x.data, x.data + numel));
      for (Tensor* s : {&t.q, &t.k, &t.v, &t.head_outputs})
        *s = Tensor(with_batch(batched, B, {H, L, d}));
      for (Tensor* s : {&t.scores, &t.scaled})
        *s = Tensor(with_batch(batched, B, {H, L, L}));
      t.mask = Tensor({L, L}, std::vector<float>(mask.data(), mask.data() + mask.size()));
      t.concat = Tensor(x.shape);
      result.trace = std::move(t);
    }
    RowMatrixXf scores(L, L);
    RowMatrixXf w_ll(L, L);
    RowMatrixXf concat(L, E);
    RowMatrixXf out_lE(L, E);
    for (std::int64_t b = 0; b < B; ++b) {
      // An aligned copy, so results do not depend on where the caller's memory sits.
      const RowMatrixXf x_lE = ConstMap(x.data + b * L * E, L, E);
      const RowMatrixXf q = project(x_lE, weights_.wq, weights_.bq);
      const RowMatrixXf k = project(x_lE, weights_.wk, weights_.bk);
      const RowMatrixXf v = project(x_lE, weights_.wv, weights_.bv);
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t slot = b * H + h;
        const auto q_h = q.middleCols(h * d, d);
        const auto k_h = k.middleCols(h * d, d);
        const auto v_h = v.middleCols(h * d, d);
        attention_scores(q_h, k_h, scores);
        w_ll = scores * scale;
        if (result.trace) {
          Trace& t = *result.trace;
          store(t.q, slot, q_h);
          store(t.k, slot, k_h);
          store(t.v, slot, v_h);
          store(t.scores, slot, scores);
          store(t.scaled, slot, w_ll);
        }
        w_ll += mask;
        softmax_rows(w_ll);
        store(result.weights, slot, w_ll);
        concat.middleCols(h * d, d).noalias() = w_ll * v_h;
        if (result.trace) store(result.trace->head_outputs, slot, concat.middleCols(h * d, d));
      }
      out_lE.noalias() = concat * weights_.wo;
      if (weights_.bo.size() != 0) out_lE.rowwise() += weights_.bo.transpose();
      store(result.output, b, out_lE);
      if (result.trace) store(result.trace->concat, b, concat);
    }
    if (result.trace) result.trace->output = result.output;
    if (result.trace) result.trace->weights = result.weights;
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the forward pass on x ", shape_to_string(x.shape),
                 " could not allocate its results");
  }
  return result;
}

}  // namespace attnlens
