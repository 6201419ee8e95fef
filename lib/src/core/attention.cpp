#include <attnlens/analysis.hpp>
#include <attnlens/attention.hpp>
#include <attnlens/random.hpp>

#include "core/check.hpp"
#include "core/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace attnlens {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using ConstMap = Eigen::Map<const RowMatrixXf>;
using MutableMap = Eigen::Map<RowMatrixXf>;

// The sizes of one attention call, with ranks 2 and 3 lifted to rank 4 (B = H = 1 where absent).
struct Dims {
  int rank = 0;
  std::int64_t B = 1, Hq = 1, Hkv = 1, L = 0, S = 0, E = 0, Ev = 0;
};

void require_view(const ConstTensorView& t, const char* name, std::int64_t limit) {
  const std::int64_t n = shape_numel(t.shape, name);
  detail::require_at_most(n, limit, name);
  if (n > 0 && t.data == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, name, " has shape ", shape_to_string(t.shape),
                 " but no data");
  }
}

Dims check_shapes(const ConstTensorView& q, const ConstTensorView& k, const ConstTensorView& v) {
  const int rank = static_cast<int>(q.shape.size());
  if (rank < 2 || rank > 4) {
    detail::fail(ErrorCode::SHAPE_MISMATCH,
                 "q must have rank 2 [L, E], 3 [B, L, E] or 4 [B, H, L, E]; got shape ",
                 shape_to_string(q.shape));
  }
  if (k.shape.size() != q.shape.size() || v.shape.size() != q.shape.size()) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "q, k and v must have the same rank; got q ",
                 shape_to_string(q.shape), ", k ", shape_to_string(k.shape), ", v ",
                 shape_to_string(v.shape));
  }
  const auto& qs = q.shape;
  const auto& ks = k.shape;
  const auto& vs = v.shape;
  Dims d;
  d.rank = rank;
  d.L = qs[rank - 2];
  d.E = qs[rank - 1];
  d.S = ks[rank - 2];
  d.Ev = vs[rank - 1];
  if (ks[rank - 1] != d.E) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "k has last dimension ", ks[rank - 1], " but q has ",
                 d.E, " (q ", shape_to_string(qs), ", k ", shape_to_string(ks), ")");
  }
  if (vs[rank - 2] != d.S) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "v has ", vs[rank - 2], " rows (keys) but k has ", d.S,
                 " (k ", shape_to_string(ks), ", v ", shape_to_string(vs), ")");
  }
  if (rank >= 3) {
    d.B = qs[0];
    if (ks[0] != d.B || vs[0] != d.B) {
      detail::fail(ErrorCode::SHAPE_MISMATCH, "batch sizes differ: q ", shape_to_string(qs), ", k ",
                   shape_to_string(ks), ", v ", shape_to_string(vs));
    }
  }
  if (rank == 4) {
    d.Hq = qs[1];
    d.Hkv = ks[1];
    if (vs[1] != d.Hkv) {
      detail::fail(ErrorCode::SHAPE_MISMATCH, "k has ", d.Hkv, " heads but v has ", vs[1], " (k ",
                   shape_to_string(ks), ", v ", shape_to_string(vs), ")");
    }
    if (d.Hkv == 0 || d.Hq % d.Hkv != 0) {
      detail::fail(ErrorCode::SHAPE_MISMATCH, "q has ", d.Hq,
                   " heads, which is not a multiple of the ", d.Hkv,
                   " heads of k and v (grouped-query attention needs Hq % Hkv == 0)");
    }
  }
  for (const auto* t : {&q, &k, &v}) {
    for (std::int64_t dim : t->shape) {
      if (dim == 0) {
        const char* name = t == &q ? "q" : (t == &k ? "k" : "v");
        detail::fail(ErrorCode::EMPTY_INPUT, name, " has shape ", shape_to_string(t->shape),
                     "; every dimension must be at least 1");
      }
    }
  }
  return d;
}

// Where each (batch, head) slice of a broadcast mask starts, and the range of its finite
// additive values (for the float32 bounds).
struct MaskLayout {
  std::int64_t stride_b = 0;
  std::int64_t stride_h = 0;
  double above = 0.0;  // largest finite value, if positive
  double below = 0.0;  // largest magnitude of a negative finite value
  std::int64_t offset(std::int64_t b, std::int64_t h) const { return b * stride_b + h * stride_h; }
};

MaskLayout check_mask(const MaskView& mask, const Dims& d, std::int64_t limit) {
  MaskLayout layout;
  if (mask.kind == MaskKind::None) return layout;
  const auto& ms = mask.shape;
  const int mrank = static_cast<int>(ms.size());
  // The shape the mask broadcasts to: the score tensor's, at q's rank.
  Shape target;
  if (d.rank == 4) target = {d.B, d.Hq, d.L, d.S};
  if (d.rank == 3) target = {d.B, d.L, d.S};
  if (d.rank == 2) target = {d.L, d.S};
  if (mrank < 2 || mrank > d.rank) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "mask has shape ", shape_to_string(ms),
                 " but must be [L, S] or broadcastable to the scores ", shape_to_string(target));
  }
  for (int i = 1; i <= mrank; ++i) {
    const std::int64_t m = ms[mrank - i];
    const std::int64_t t = target[target.size() - i];
    const bool trailing = i <= 2;
    if (m != t && (trailing || m != 1)) {
      detail::fail(ErrorCode::SHAPE_MISMATCH, "mask has shape ", shape_to_string(ms),
                   ", which does not broadcast to the scores ", shape_to_string(target),
                   " (its last two dimensions must be [L, S] = [", d.L, ", ", d.S,
                   "], the others 1 or equal)");
    }
  }
  const std::int64_t n = shape_numel(ms, "mask");
  detail::require_at_most(n, limit, "mask");
  if (n > 0 && mask.bool_data == nullptr && mask.float_data == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "mask has shape ", shape_to_string(ms), " but no data");
  }
  if (mask.kind == MaskKind::Boolean && mask.bool_data == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "mask is boolean but holds no boolean data");
  }
  if (mask.kind == MaskKind::Additive) {
    if (mask.float_data == nullptr) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "mask is additive but holds no float data");
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const float x = mask.float_data[i];
      if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
        detail::fail(ErrorCode::NON_FINITE, "mask holds ", x, " at flat index ", i, " (shape ",
                     shape_to_string(ms),
                     "); an additive mask may hold finite values and -inf only");
      }
      if (x != kNegInf) {
        layout.above = std::max(layout.above, static_cast<double>(x));
        layout.below = std::max(layout.below, -static_cast<double>(x));
      }
    }
  }
  // Strides of the mask's batch and head dimensions; 0 where it broadcasts.
  const std::int64_t slice = d.L * d.S;
  if (d.rank == 4) {
    const std::int64_t mh = mrank >= 3 ? ms[mrank - 3] : 1;
    const std::int64_t mb = mrank >= 4 ? ms[mrank - 4] : 1;
    layout.stride_h = mh == 1 ? 0 : slice;
    layout.stride_b = mb == 1 ? 0 : slice * mh;
  } else if (d.rank == 3) {
    const std::int64_t mb = mrank >= 3 ? ms[mrank - 3] : 1;
    layout.stride_b = mb == 1 ? 0 : slice;
  }
  return layout;
}

}  // namespace

void attention_scores(const Eigen::Ref<const RowMatrixXf>& q,
                      const Eigen::Ref<const RowMatrixXf>& k, Eigen::Ref<RowMatrixXf> scores) {
  scores.noalias() = q * k.transpose();
}

RowMatrixXf causal_mask(std::int64_t L, std::int64_t S, CausalAlign align) {
  if (L < 0 || S < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "causal_mask needs L >= 0 and S >= 0; got L = ", L,
                 ", S = ", S);
  }
  detail::ScoreRule rule;
  rule.causal = true;
  rule.causal_shift = align == CausalAlign::BottomRight ? S - L : 0;
  RowMatrixXf mask = RowMatrixXf::Zero(L, S);
  detail::fill_causal_mask(rule, mask.data(), L, S);
  return mask;
}

void softmax_rows(Eigen::Ref<RowMatrixXf> logits) {
  // Work on an aligned copy of each row: Eigen's vectorised exp() and sum() peel scalar
  // iterations until the data is aligned, so working in place would make the last bit depend
  // on where the caller's memory happens to sit. Here it depends on the values only.
  Eigen::ArrayXf row(logits.cols());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    row = logits.row(i).transpose().array();
    // Pass 1: the row maximum. Subtracting it keeps exp() in range for any finite logits.
    const float max = row.maxCoeff();
    if (max == kNegInf) {
      // Every key is masked: no distribution exists. Zero weights, never NaN.
      logits.row(i).setZero();
      continue;
    }
    if (!std::isfinite(max)) {
      detail::fail(ErrorCode::NON_FINITE, "attention scores overflowed float32 (row ", i,
                   " has a maximum of ", max, "); scale the inputs down");
    }
    // Pass 2: exponentiate. Masked entries (-inf) become exactly 0, not a tiny denormal.
    row = (row == kNegInf).select(0.0f, (row - max).exp());
    // Pass 3: normalise. The sum is at least 1 (the maximum contributes exp(0)).
    logits.row(i) = (row * (1.0f / row.sum())).transpose().matrix();
  }
}

namespace {

// Everything attention() and attention_reference() check before computing.
struct Checked {
  Dims d;
  MaskLayout mask_layout;
  detail::ScoreRule rule;  // scale and causal; each slice adds its mask slice
  bool exact = false;      // float32 intermediates could overflow: Schedule::Exact
  Shape out_shape;
  Shape weights_shape;
};

Checked check_call(const ConstTensorView& q, const ConstTensorView& k, const ConstTensorView& v,
                   const AttentionOptions& options) {
  const std::int64_t limit = options.max_elements;
  if (limit < 1 || options.max_work < 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "maxElements and maxWork must be at least 1; got ", limit,
                 " and ", options.max_work);
  }
  require_view(q, "q", limit);
  require_view(k, "k", limit);
  require_view(v, "v", limit);
  Checked c;
  c.d = check_shapes(q, k, v);
  const Dims& d = c.d;
  c.mask_layout = check_mask(options.mask, d, limit);
  if (options.streaming && options.return_weights) {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "streaming never holds the L x S weights, so it cannot return them; "
                 "set returnWeights or streaming, not both");
  }
  if (!options.streaming) {
    detail::require_product_at_most({d.L, d.S}, limit,
                                    "the score matrix of one (batch, head) slice");
  }
  if (options.return_weights) {
    detail::require_product_at_most({d.B, d.Hq, d.L, d.S}, limit, "the attention weights");
  }
  detail::require_product_at_most({d.B, d.Hq, d.L, d.Ev}, limit, "the output");
  detail::require_work(d.B * d.Hq, d.L, d.S, d.E, d.Ev, options.max_work);
  detail::InputBounds bounds;
  bounds.q = detail::require_finite(q.data, shape_numel(q.shape), "q", q.shape);
  bounds.k = detail::require_finite(k.data, shape_numel(k.shape), "k", k.shape);
  bounds.v = detail::require_finite(v.data, shape_numel(v.shape), "v", v.shape);
  c.rule.scale = options.scale.value_or(1.0f / std::sqrt(static_cast<float>(d.E)));
  if (!std::isfinite(c.rule.scale)) {
    detail::fail(ErrorCode::NON_FINITE, "scale is ", c.rule.scale, "; it must be a finite number");
  }
  if (options.softcap) {
    const float cap = *options.softcap;
    if (!(std::isfinite(cap) && cap > 0.0f)) {
      detail::fail(std::isfinite(cap) ? ErrorCode::BAD_ARGUMENT : ErrorCode::NON_FINITE,
                   "softcap is ", cap, "; it must be a finite number > 0 (unset: none)");
    }
    c.rule.softcap = *options.softcap;
  }
  c.rule.causal = options.causal;
  c.rule.causal_shift = options.causal_align == CausalAlign::BottomRight ? d.S - d.L : 0;
  bounds.D = d.E;
  bounds.S = d.S;
  bounds.scale = c.rule.scale;
  bounds.mask_above = c.mask_layout.above;
  bounds.mask_below = c.mask_layout.below;
  c.exact = !detail::fits_float32(bounds);
  c.out_shape = q.shape;
  c.out_shape.back() = d.Ev;
  c.weights_shape = q.shape;
  c.weights_shape.back() = d.S;
  return c;
}

// c · tanh(x / c) in double: tanh(y) = sign(y) (1 − e^(−2|y|)) / (1 + e^(−2|y|)) with the
// library's own exp() (detmath, as the float64 softmax below; libm's tanh would add its code to
// the element's module, which is on a byte budget), within about 1e−12 relative (the
// cancellation in 1 − e just above 2^−12, and exp's reduction), far below float32's 6e−8;
// y (1 − y²/3) for |y| < 2^−12, where the next term (2y⁵/15) is below 1e−15 of y; 1 for
// |y| > 20, where e^(−2|y|) < 1e−17 is below half an ulp of 1. NaN stays NaN.
[[gnu::noinline]] double soft_cap(double x, double c) {
  const double y = x / c;
  if (std::isnan(y)) return y;
  const double a = std::abs(y);
  double t = 1.0;
  if (a < 0x1p-12) {
    t = a * (1.0 - a * a / 3.0);
  } else if (a <= 20.0) {
    const double e = detmath::exp(-2.0 * a);
    t = (1.0 - e) / (1.0 + e);
  }
  return c * (y < 0 ? -t : t);
}

// Checks a call, allocates its results and runs every (batch, query head) slice through the
// slice routine by `schedule`. Query head h reads key/value head h / (Hq / Hkv) (GQA).
AttentionResult run_slices(const ConstTensorView& q, const ConstTensorView& k,
                           const ConstTensorView& v, const AttentionOptions& options,
                           detail::Schedule schedule) {
  const Checked c = check_call(q, k, v, options);
  const Dims& d = c.d;
  if (c.exact) schedule = detail::Schedule::Exact;
  detail::SliceProblem p;
  p.L = d.L;
  p.S = d.S;
  p.D = d.E;
  p.Dv = d.Ev;
  p.ldq = p.ldk = d.E;
  p.ldv = p.ldo = d.Ev;
  p.rule = c.rule;
  p.rule.mask_stride = d.S;
  AttentionResult result;
  try {
    result.output = Tensor(c.out_shape);
    if (options.return_weights) result.weights = Tensor(c.weights_shape);
    const std::int64_t group = d.Hq / d.Hkv;
    for (std::int64_t b = 0; b < d.B; ++b) {
      for (std::int64_t h = 0; h < d.Hq; ++h) {
        const std::int64_t qh = b * d.Hq + h;
        const std::int64_t kvh = b * d.Hkv + h / group;
        p.q = q.data + qh * d.L * d.E;
        p.k = k.data + kvh * d.S * d.E;
        p.v = v.data + kvh * d.S * d.Ev;
        p.out = result.output.data.data() + qh * d.L * d.Ev;
        p.weights = options.return_weights ? result.weights.data.data() + qh * d.L * d.S : nullptr;
        const std::int64_t offset = c.mask_layout.offset(b, h);
        if (options.mask.kind == MaskKind::Boolean) {
          p.rule.bool_mask = options.mask.bool_data + offset;
        }
        if (options.mask.kind == MaskKind::Additive) {
          p.rule.add_mask = options.mask.float_data + offset;
        }
        detail::attend_slice(p, schedule);
      }
    }
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "attention could not allocate its output ",
                 shape_to_string(c.out_shape), options.return_weights ? " and weights " : "",
                 options.return_weights ? shape_to_string(c.weights_shape) : "");
  }
  return result;
}

// The reference schedule: the three steps as written, with Eigen products and a separate
// softmax. Scores [L, S] are formed in full (masked keys included), then the score rule.
[[gnu::noinline]] void attend_reference(const detail::SliceProblem& p) {
  using Strided = Eigen::Map<const RowMatrixXf, 0, Eigen::OuterStride<>>;
  using StridedOut = Eigen::Map<RowMatrixXf, 0, Eigen::OuterStride<>>;
  // q is (L, D), k is (S, D), v is (S, Dv); aligned copies, so that the last bit does not depend
  // on where the caller's memory sits.
  const RowMatrixXf q_lD = Strided(p.q, p.L, p.D, Eigen::OuterStride<>(p.ldq));
  const RowMatrixXf k_sD = Strided(p.k, p.S, p.D, Eigen::OuterStride<>(p.ldk));
  const RowMatrixXf v_sDv = Strided(p.v, p.S, p.Dv, Eigen::OuterStride<>(p.ldv));
  RowMatrixXf w_lS = q_lD * k_sD.transpose();
  for (std::int64_t i = 0; i < p.L; ++i) {
    float* row = w_lS.row(i).data();
    const std::int64_t visible = p.rule.causal_visible(i, 0, p.S);
    detail::apply_score_rule(p.rule, row, i, 0, visible, true);
    std::fill(row + visible, row + p.S, kNegInf);
  }
  softmax_rows(w_lS);
  StridedOut(p.out, p.L, p.Dv, Eigen::OuterStride<>(p.ldo)).noalias() = w_lS * v_sDv;
  if (p.weights) MutableMap(p.weights, p.L, p.S) = w_lS;
}

// The float64 schedule, for inputs where float32 intermediates could overflow. Finite float32
// inputs give scores of at most D · (3.4e38)^2 and logits of at most that times 3.4e38 (plus a
// mask), far inside float64's range (1.8e308); exp() of a logit minus its row maximum is in
// (0, 1]; and the output, a convex combination of value rows, is at most max |v|: it rounds to
// a finite float32. One row of S logits at a time: O(S) memory, like streaming.
[[gnu::noinline]] void attend_exact(const detail::SliceProblem& p) {
  std::vector<double> logits(static_cast<std::size_t>(p.S));
  std::vector<double> out(static_cast<std::size_t>(p.Dv));
  for (std::int64_t i = 0; i < p.L; ++i) {
    const float* q = p.q + i * p.ldq;
    const std::int64_t visible = p.rule.causal_visible(i, 0, p.S);
    for (std::int64_t j = 0; j < visible; ++j) {
      const float* k = p.k + j * p.ldk;
      double dot = 0.0;
      for (std::int64_t e = 0; e < p.D; ++e)
        dot += static_cast<double>(q[e]) * static_cast<double>(k[e]);
      logits[static_cast<std::size_t>(j)] = dot;
    }
    detail::apply_score_rule(p.rule, logits.data(), i, 0, visible, true);
    // Pass 1: the row maximum; -inf when every key is masked (zero weights and output).
    double max = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < visible; ++j)
      max = std::max(max, logits[static_cast<std::size_t>(j)]);
    // Pass 2: exponentiate below the maximum and sum. Masked keys give exactly 0, and so do
    // logits more than 700 below the maximum (e^-700 = 1e-304 next to the maximum's 1), which
    // keeps detmath::exp in its domain; it gives the same bits on every platform.
    double sum = 0.0;
    for (std::int64_t j = 0; j < visible; ++j) {
      double& x = logits[static_cast<std::size_t>(j)];
      const double gap = x - max;  // <= 0; NaN when every key is masked (max = -inf)
      x = gap >= -700.0 ? detmath::exp(gap) : 0.0;
      sum += x;
    }
    // Pass 3: normalise and sum the weighted values.
    const double inv = sum > 0.0 ? 1.0 / sum : 0.0;
    std::fill(out.begin(), out.end(), 0.0);
    for (std::int64_t j = 0; j < visible; ++j) {
      const double w = logits[static_cast<std::size_t>(j)] * inv;
      const float* v = p.v + j * p.ldv;
      for (std::int64_t e = 0; e < p.Dv; ++e)
        out[static_cast<std::size_t>(e)] += w * static_cast<double>(v[e]);
      if (p.weights) p.weights[i * p.S + j] = static_cast<float>(w);
    }
    if (p.weights) std::fill(p.weights + i * p.S + visible, p.weights + (i + 1) * p.S, 0.0f);
    for (std::int64_t e = 0; e < p.Dv; ++e)
      p.out[i * p.ldo + e] = static_cast<float>(out[static_cast<std::size_t>(e)]);
  }
}

}  // namespace

namespace detail {

void soft_cap_row(float* row, std::int64_t n, float cap) {
  for (std::int64_t k = 0; k < n; ++k)
    row[k] = static_cast<float>(soft_cap(row[k], cap));
}

void soft_cap_row(double* row, std::int64_t n, float cap) {
  for (std::int64_t k = 0; k < n; ++k)
    row[k] = soft_cap(row[k], cap);
}

void require_work(std::int64_t slices, std::int64_t L, std::int64_t S, std::int64_t D,
                  std::int64_t Dv, std::int64_t limit) {
  const std::int64_t per_score = D + Dv + kScoreWork;
  const std::int64_t work = product_or_overflow({slices, L, S, per_score});
  if (work >= 0 && work <= limit) return;
  const std::string count = work >= 0 ? std::to_string(work) : "more than 2^63";
  fail(ErrorCode::TOO_LARGE, "the call needs ", count, " multiply-adds (B*H ", slices, " x L ", L,
       " x S ", S, " x (E ", D, " + Ev ", Dv, " + ", kScoreWork,
       " for the softmax)), over the limit maxWork = ", limit, "; raise maxWork to run it");
}

// With u = 2^-24 and every bound below at most T = 2^124, the float32 schedules stay finite
// (float32's largest value is about 2^128):
//   - a score is a sum of D products, each at most q k: its magnitude, in any order and with or
//     without fused multiply-adds, is at most D q k (1 + D u) < 2 T while D u < 1 (D < 2^24);
//   - a logit adds |scale| times that and a mask value: at most 2 T + T;
//   - a logit minus its row maximum is then at most about 8 T < 2^128, and exp() of it is in
//     [0, 1], also with the scale folded into exp();
//   - a very negative mask value m (such as -3.4e38, PyTorch's finfo.min) must not push a
//     visible logit past -3.4e38 into -inf: |scale| D q k + |m| <= 3.4e38 + 2^102 ensures it
//     (the sum then rounds to at least -3.4e38);
//   - weights · v, normalised or not (unnormalised weights are at most 1), sums S terms of at
//     most |v|: at most S v (1 + S u) < 2 T.
bool fits_float32(const InputBounds& b) {
  const double T = std::ldexp(1.0, 124);
  const double score = static_cast<double>(b.D) * b.q * b.k;
  const double logit = std::abs(b.scale) * score;
  const double largest = static_cast<double>(std::numeric_limits<float>::max());
  return score <= T && logit + b.mask_above <= T &&
         logit + b.mask_below <= largest + std::ldexp(1.0, 102) &&
         static_cast<double>(b.S) * b.v <= T && static_cast<double>(b.D) < std::ldexp(1.0, 23) &&
         static_cast<double>(b.S) < std::ldexp(1.0, 23);
}

// The schedules stay separate functions (noinline above): inlined here, the rarely used ones made
// this dispatch a large function, and the blocked schedule's calls measurably slower (2 µs of
// 50 at the page's shape in WebAssembly).
void attend_slice(const SliceProblem& p, Schedule schedule) {
  if (p.entropy && p.weights == nullptr) {
    fail(ErrorCode::BAD_ARGUMENT, "row entropy needs the attention weights of the slice");
  }
  switch (schedule) {
    case Schedule::Blocked:
      attend_blocked(p);  // fills p.entropy from its own sums
      return;
    case Schedule::Streaming:
      attend_streaming(p);
      break;
    case Schedule::Reference:
      attend_reference(p);
      break;
    case Schedule::Exact:
      attend_exact(p);
      break;
  }
  if (p.entropy) {
    const Tensor entropy = row_entropy(ConstTensorView{p.weights, {p.L, p.S}});
    std::copy(entropy.data.begin(), entropy.data.end(), p.entropy);
  }
}

}  // namespace detail

AttentionResult attention(const ConstTensorView& q, const ConstTensorView& k,
                          const ConstTensorView& v, const AttentionOptions& options) {
  struct ReleaseScratch {
    ~ReleaseScratch() { detail::release_scratch(); }
  } release_on_exit;  // also when a check throws
  return run_slices(q, k, v, options,
                    options.streaming ? detail::Schedule::Streaming : detail::Schedule::Blocked);
}

AttentionResult attention_reference(const ConstTensorView& q, const ConstTensorView& k,
                                    const ConstTensorView& v, const AttentionOptions& options) {
  return run_slices(q, k, v, options, detail::Schedule::Reference);
}

}  // namespace attnlens
