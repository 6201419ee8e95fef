#include "nn/block.hpp"

#include "core/check.hpp"
#include "core/kernels.hpp"
#include "core/matmul.hpp"
#include "nn/ablation.hpp"
#include "nn/causal_rows.hpp"
#include "nn/layers.hpp"
#include "nn/lens.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>

namespace attnlens::detail {
namespace {

using Arr = Eigen::Map<Eigen::ArrayXf>;
using ConstArr = Eigen::Map<const Eigen::ArrayXf>;
using AlignedFloats = std::vector<float, Eigen::aligned_allocator<float>>;

constexpr double kPi = 3.14159265358979323846;

void require_positive(std::int64_t value, const char* field) {
  if (value < 1)
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec ", field, " is ", value, "; it must be >= 1");
}

void refuse(const char* what) {
  fail(ErrorCode::BAD_ARGUMENT, "the transformer block does not compute ", what,
       " yet (it computes RMSNorm or LayerNorm before attention and MLP or around each, rotary "
       "or no positions, separate q, k, v projections and a gated MLP)");
}

// out = x · w (+ b) (+ residual): x [N, in], w [in, out_dim]; b and residual may be null.
void project(float* out, const float* x, const float* w, const float* b, const float* residual,
             std::int64_t N, std::int64_t in, std::int64_t out_dim, WeightPanels* panels) {
  Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> o(out, N,
                                                                                      out_dim);
  if (residual != nullptr) {
    std::copy(residual, residual + N * out_dim, out);
  } else {
    o.setZero();
  }
  if (b != nullptr) o.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(b, out_dim);
  if (panels != nullptr) {
    panels->matmul(out, x, w, N, out_dim, in, true);
  } else {
    matmul(out, x, w, N, out_dim, in, false, false, true);
  }
}

// The buffers of one forward pass, 64-byte aligned so Eigen's reductions split the same elements
// into the same packets on every run.
struct Buffers {
  AlignedFloats x, xn, q, k, v, qh, kh, vh, merged, gate, up;
};

void grow(AlignedFloats& v, std::int64_t n) {
  if (static_cast<std::int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
}

void require_finite_stage(const float* data, std::int64_t n, const char* stage,
                          std::int64_t layer) {
  if (!std::isfinite(finite_max_abs(data, n))) {
    fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in ", stage, " of layer ",
         layer, " (the weights are too large for float32 arithmetic)");
  }
}

}  // namespace

const char* norm_kind_name(NormKind kind) noexcept {
  switch (kind) {
    case NormKind::LayerNorm:
      return "layernorm";
    case NormKind::RMSNorm:
      return "rmsnorm";
    case NormKind::RMSNormPlusOne:
      return "rmsnorm(1+w)";
  }
  return "";
}

const char* position_kind_name(PositionKind kind) noexcept {
  switch (kind) {
    case PositionKind::Learned:
      return "learned";
    case PositionKind::Rotary:
      return "rotary";
    case PositionKind::None:
      return "none";
  }
  return "";
}

const char* rope_scaling_name(RopeScaling scaling) noexcept {
  switch (scaling) {
    case RopeScaling::Default:
      return "default";
    case RopeScaling::Linear:
      return "linear";
    case RopeScaling::Llama3:
      return "llama3";
  }
  return "";
}

namespace {

// A rotary spec's numbers; `local` names DecoderSpec::local_rope in the message.
void check_rope(const RopeSpec& r, std::int64_t head_dim, bool local) {
  const char* which = local ? "DecoderSpec local_rope" : "DecoderSpec rope";
  if (head_dim % 2 != 0) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec head_dim is ", head_dim,
         "; rotary positions pair its halves, so it must be even");
  }
  if (!(r.theta > 1.0) || !std::isfinite(r.theta)) {
    fail(ErrorCode::BAD_ARGUMENT, which, " theta is ", r.theta, "; it must be a finite number > 1");
  }
  if (r.scaling != RopeScaling::Default && (!(r.factor > 0.0) || !std::isfinite(r.factor))) {
    fail(ErrorCode::BAD_ARGUMENT, which, " factor is ", r.factor,
         "; it must be a finite number > 0");
  }
  if (r.scaling == RopeScaling::Llama3 &&
      (!(r.low_freq_factor > 0.0) || !(r.high_freq_factor > r.low_freq_factor) ||
       !std::isfinite(r.high_freq_factor) || !(r.original_context > 0.0) ||
       !std::isfinite(r.original_context))) {
    fail(ErrorCode::BAD_ARGUMENT, which, " llama3 scaling needs 0 < low_freq_factor (",
         r.low_freq_factor, ") < high_freq_factor (", r.high_freq_factor,
         ") and original_context > 0 (", r.original_context, "), all finite");
  }
}

}  // namespace

void check_spec(const DecoderSpec& spec) {
  const BlockSpec& b = spec.block;
  require_positive(spec.layers, "layers");
  require_positive(spec.vocab_size, "vocab_size");
  require_positive(spec.context, "context");
  require_positive(b.d_model, "d_model");
  require_positive(b.intermediate, "intermediate");
  require_positive(b.heads, "heads");
  require_positive(b.kv_heads, "kv_heads");
  require_positive(b.head_dim, "head_dim");
  if (b.heads % b.kv_heads != 0) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec heads is ", b.heads,
         ", which is not a multiple of kv_heads = ", b.kv_heads);
  }
  if (!(b.norm_eps > 0.0f) || !std::isfinite(b.norm_eps)) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec norm_eps is ", b.norm_eps,
         "; it must be a finite number > 0");
  }
  if (!std::isfinite(b.scale) || b.scale < 0.0f) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec scale is ", b.scale,
         "; it must be finite and >= 0 (0: 1 / sqrt(head_dim))");
  }
  for (const auto& [cap, name] : {std::pair{b.attn_softcap, "attn_softcap"},
                                  std::pair{spec.final_softcap, "final_softcap"}}) {
    if (!std::isfinite(cap) || cap < 0.0f) {
      fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec ", name, " is ", cap,
           "; it must be finite and >= 0 (0: none)");
    }
  }
  if (!std::isfinite(spec.embedding_scale)) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec embedding_scale is ", spec.embedding_scale,
         "; it must be finite");
  }
  if (b.norm_bias && b.norm != NormKind::LayerNorm) {
    fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec norm_bias is set but the norm is ",
         norm_kind_name(b.norm), " (only LayerNorm has a bias)");
  }
  if (b.placement == NormPlacement::Post) refuse("post norm placement");
  if (b.positions == PositionKind::Learned) refuse("learned positions");
  if (b.fused_qkv) refuse("a fused qkv projection");
  if (b.mlp == MlpKind::GeluTanh || b.mlp == MlpKind::GeluErf) refuse("a plain GELU MLP");
  bool local_rope = false;
  if (!spec.layer_attention.empty()) {
    if (static_cast<std::int64_t>(spec.layer_attention.size()) != spec.layers) {
      fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec layer_attention has ", spec.layer_attention.size(),
           " entries for ", spec.layers, " layers");
    }
    for (std::size_t l = 0; l < spec.layer_attention.size(); ++l) {
      const LayerAttention& a = spec.layer_attention[l];
      if (a.window < 0) {
        fail(ErrorCode::BAD_ARGUMENT, "DecoderSpec layer_attention[", l, "] window is ", a.window,
             "; it must be >= 0 (0: every earlier key)");
      }
      local_rope = local_rope || a.local_rope;
    }
  }
  if (local_rope && b.positions != PositionKind::Rotary) {
    fail(ErrorCode::BAD_ARGUMENT,
         "DecoderSpec layer_attention asks for local rotary positions in a model without rotary "
         "positions");
  }
  if (b.positions == PositionKind::Rotary) {
    for (const RopeSpec* rope : {&b.rope, local_rope ? &spec.local_rope : nullptr}) {
      if (rope != nullptr) check_rope(*rope, b.head_dim, rope == &spec.local_rope);
    }
  }
}

void norm_forward(float* out, const float* x, const float* w, const float* b, std::int64_t N,
                  std::int64_t d, float eps, NormKind kind) {
  if (kind != NormKind::LayerNorm) {
    rmsnorm_forward(out, x, w, N, d, eps, kind == NormKind::RMSNormPlusOne);
    return;
  }
  layernorm_forward(out, nullptr, nullptr, x, w, b, N, d, eps);
}

void rmsnorm_forward(float* out, const float* x, const float* w, std::int64_t N, std::int64_t d,
                     float eps, bool plus_one) {
  const ConstArr wa(w, d);
  const float inv_d = 1.0f / static_cast<float>(d);
  for (std::int64_t n = 0; n < N; ++n) {
    const ConstArr xr(x + n * d, d);
    const float mean_square = xr.square().sum() * inv_d;
    const float rstd = 1.0f / std::sqrt(mean_square + eps);
    Arr o(out + n * d, d);
    if (plus_one) {
      o = (xr * rstd) * (wa + 1.0f);
    } else {
      o = (xr * rstd) * wa;
    }
  }
}

std::vector<double> rope_inv_freq(const RopeSpec& rope, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2;
  std::vector<double> inv(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    inv[static_cast<std::size_t>(i)] =
        1.0 / std::pow(rope.theta, static_cast<double>(2 * i) / static_cast<double>(head_dim));
  }
  if (rope.scaling == RopeScaling::Linear) {
    for (double& f : inv)
      f /= rope.factor;
  } else if (rope.scaling == RopeScaling::Llama3) {
    // transformers' _compute_llama3_parameters: wavelengths shorter than
    // original_context / high_freq_factor stay, longer than original_context / low_freq_factor
    // are divided by factor, and the ones between blend the two linearly in
    // original_context / wavelength.
    const double low_wavelen = rope.original_context / rope.low_freq_factor;
    const double high_wavelen = rope.original_context / rope.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2.0 * kPi / f;
      if (wavelen > low_wavelen) {
        f /= rope.factor;
      } else if (!(wavelen < high_wavelen)) {
        const double smooth = (rope.original_context / wavelen - rope.low_freq_factor) /
                              (rope.high_freq_factor - rope.low_freq_factor);
        f = (1.0 - smooth) * f / rope.factor + smooth * f;
      }
    }
  }
  return inv;
}

void rope_tables(std::vector<float>& cos, std::vector<float>& sin,
                 const std::vector<double>& inv_freq, std::int64_t T) {
  const auto half = static_cast<std::int64_t>(inv_freq.size());
  cos.resize(static_cast<std::size_t>(T * half));
  sin.resize(static_cast<std::size_t>(T * half));
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t i = 0; i < half; ++i) {
      // transformers keeps inv_freq in float32: the angle uses that rounded frequency.
      const double angle =
          static_cast<double>(t) *
          static_cast<double>(static_cast<float>(inv_freq[static_cast<std::size_t>(i)]));
      cos[static_cast<std::size_t>(t * half + i)] = static_cast<float>(std::cos(angle));
      sin[static_cast<std::size_t>(t * half + i)] = static_cast<float>(std::sin(angle));
    }
  }
}

void rope_apply(float* x, const float* cos, const float* sin, std::int64_t B, std::int64_t H,
                std::int64_t T, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t s = 0; s < B * H; ++s) {
    for (std::int64_t t = 0; t < T; ++t) {
      float* row = x + (s * T + t) * head_dim;
      const float* c = cos + t * half;
      const float* sn = sin + t * half;
      for (std::int64_t i = 0; i < half; ++i) {
        const float a = row[i], b = row[i + half];
        row[i] = a * c[i] - b * sn[i];
        row[i + half] = b * c[i] + a * sn[i];
      }
    }
  }
}

void swiglu_forward(float* out, const float* gate, const float* up, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu_forward(float* out, const float* gate, const float* up, std::int64_t n, bool exact) {
  // nn/layers' GELUs: the exact one (erf) or GPT-2's tanh approximation, the same formulas
  if (exact) {
    gelu_erf_forward(out, gate, n);
  } else {
    gelu_forward(out, gate, n);
  }
  for (std::int64_t i = 0; i < n; ++i)
    out[i] *= up[i];
}

AttentionResult grouped_attention(const float* q, const float* k, const float* v, std::int64_t B,
                                  std::int64_t heads, std::int64_t kv_heads, std::int64_t L,
                                  std::int64_t S, std::int64_t hd, float scale, bool causal,
                                  bool keep_weights, std::int64_t window, float softcap) {
  AttentionOptions options;
  if (softcap > 0.0f) options.softcap = softcap;
  options.causal = causal;
  options.causal_align = CausalAlign::BottomRight;
  options.scale = scale;
  options.return_weights = keep_weights;
  // Query i stands at position i + S - L; the window hides keys j <= that - W. Only when the
  // oldest key is out of the newest query's reach is there anything to hide.
  std::vector<std::uint8_t> visible;
  if (window > 0 && S > window) {
    try {
      visible.assign(static_cast<std::size_t>(L * S), 1);
    } catch (const std::bad_alloc&) {
      fail(ErrorCode::OUT_OF_MEMORY, "the sliding window's mask of ", L, " x ", S,
           " could not be allocated");
    }
    for (std::int64_t i = 0; i < L; ++i) {
      const std::int64_t at = i + S - L;
      const std::int64_t first = std::clamp<std::int64_t>(at - window + 1, 0, S);
      std::fill_n(visible.begin() + i * S, first, std::uint8_t{0});
      // Bidirectional: the keys after the query's reach too.
      const std::int64_t past = std::clamp<std::int64_t>(at + window, 0, S);
      if (!causal) std::fill(visible.begin() + i * S + past, visible.begin() + (i + 1) * S, 0);
    }
    options.mask = MaskView::boolean(visible.data(), {L, S});
  }
  return attention(ConstTensorView{q, {B, heads, L, hd}}, ConstTensorView{k, {B, kv_heads, S, hd}},
                   ConstTensorView{v, {B, kv_heads, S, hd}}, options);
}

void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w,
                      std::int64_t N, std::int64_t d, float eps, bool plus_one) {
  const float inv_d = 1.0f / static_cast<float>(d);
  const float shift = plus_one ? 1.0f : 0.0f;
  for (std::int64_t n = 0; n < N; ++n) {
    const float* xr = x + n * d;
    const float* g = dout + n * d;
    const float mean_square = ConstArr(xr, d).square().sum() * inv_d;
    const float r = 1.0f / std::sqrt(mean_square + eps);
    double dot = 0.0;  // Σ g ⊙ w' ⊙ x
    for (std::int64_t i = 0; i < d; ++i)
      dot += static_cast<double>(g[i]) * (w[i] + shift) * xr[i];
    const auto coef = static_cast<float>(dot * r * r * r * inv_d);
    for (std::int64_t i = 0; i < d; ++i) {
      dx[n * d + i] += r * g[i] * (w[i] + shift) - xr[i] * coef;
      dw[i] += g[i] * xr[i] * r;
    }
  }
}

void rope_backward(float* grad, const float* cos, const float* sin, std::int64_t B, std::int64_t H,
                   std::int64_t T, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t s = 0; s < B * H; ++s) {
    for (std::int64_t t = 0; t < T; ++t) {
      float* row = grad + (s * T + t) * head_dim;
      const float* c = cos + t * half;
      const float* sn = sin + t * half;
      for (std::int64_t i = 0; i < half; ++i) {
        const float a = row[i], b = row[i + half];
        row[i] = a * c[i] + b * sn[i];
        row[i + half] = b * c[i] - a * sn[i];
      }
    }
  }
}

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float sigma = 1.0f / (1.0f + std::exp(-g));
    dup[i] = dout[i] * g * sigma;
    dgate[i] = dout[i] * up[i] * sigma * (1.0f + g * (1.0f - sigma));
  }
}

void grouped_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                const float* k, const float* v, const float* weights,
                                std::int64_t B, std::int64_t heads, std::int64_t kv_heads,
                                std::int64_t T, std::int64_t hd, float scale, bool causal) {
  const std::int64_t group = heads / kv_heads, slice = T * hd;
  std::vector<float> k_rep(static_cast<std::size_t>(B * heads * slice));
  std::vector<float> v_rep(k_rep.size()), dk_rep(k_rep.size()), dv_rep(k_rep.size());
  std::vector<float> scratch(static_cast<std::size_t>(T * T));
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t from = (b * kv_heads + h / group) * slice, to = (b * heads + h) * slice;
      std::copy(k + from, k + from + slice, k_rep.begin() + to);
      std::copy(v + from, v + from + slice, v_rep.begin() + to);
    }
  }
  attention_backward(dq, dk_rep.data(), dv_rep.data(), scratch.data(), dout, q, k_rep.data(),
                     v_rep.data(), weights, B, heads, T, hd, scale, causal);
  std::fill(dk, dk + B * kv_heads * slice, 0.0f);
  std::fill(dv, dv + B * kv_heads * slice, 0.0f);
  // In query-head order, so the sum's order (hence its bits) is fixed.
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t to = (b * kv_heads + h / group) * slice, from = (b * heads + h) * slice;
      add_into(dk + to, dk_rep.data() + from, slice);
      add_into(dv + to, dv_rep.data() + from, slice);
    }
  }
}

namespace {

// The checks of a forward's options for rows = B · T rows.
void check_options(const DecoderSpec& spec, const DecoderWeights& weights,
                   const DecoderForward& options, std::int64_t B, std::int64_t T) {
  const BlockSpec& bs = spec.block;
  const std::int64_t N = B * T, L = spec.layers, V = spec.vocab_size;
  const std::int64_t H = bs.heads, d = bs.d_model;
  const bool some_rows = options.logits && !options.logit_rows.empty();
  const auto R = static_cast<std::int64_t>(options.logit_rows.size());
  if (options.logits) {
    if (weights.head == nullptr) {
      fail(ErrorCode::BAD_ARGUMENT, "this model has no prediction head, so no logits");
    }
    for (std::size_t r = 0; r < options.logit_rows.size(); ++r) {
      if (options.logit_rows[r] < 0 || options.logit_rows[r] >= N) {
        fail(ErrorCode::BAD_ARGUMENT, "logit_rows[", r, "] = ", options.logit_rows[r],
             " is outside [0, ", N, ") (rows are b · T + t)");
      }
    }
    require_product_at_most(
        {some_rows ? R : N, V}, options.max_elements,
        some_rows ? "the logits [rows, vocab_size]" : "the logits [B, T, vocab_size]");
  }
  for (std::int64_t l = 0; l < L; ++l) {
    const bool none = weights.blocks[static_cast<std::size_t>(l)].attn_norm_w == nullptr;
    if (none != (l == 0 && !spec.first_attn_norm)) {
      fail(ErrorCode::BAD_ARGUMENT, "DecoderWeights blocks[", l, "] ",
           none ? "has no attention norm weight" : "has an attention norm weight", " but the spec ",
           spec.first_attn_norm || l > 0 ? "has" : "has none in layer 0", " (first_attn_norm ",
           spec.first_attn_norm ? "true" : "false", ")");
    }
  }
  check_attention_from(options.attention_from, T);
  check_ablation(options.ablation, L, H);
  check_head_output_rows(options.head_output_rows, N);
  require_product_at_most({L, static_cast<std::int64_t>(options.head_output_rows.size()), H, d},
                          options.max_elements, "the heads' writes [layers, rows, heads, d_model]");
  if (options.value_weighted) {
    require_product_at_most({L, B, T, T}, options.max_elements,
                            "the value-weighted attention [layers, B, T, T]");
    require_product_at_most({B, H, T, T}, options.max_elements,
                            "one layer's attention weights [B, heads, T, T] (value weighting)");
  }
  if (options.attention) {
    require_product_at_most({L, B, H, T, T}, options.max_elements,
                            "the attention weights [layers, B, heads, T, T]");
  }
  if (options.hidden_states) {
    require_product_at_most({L + 1, N, d}, options.max_elements,
                            "the hidden states [layers + 1, B, T, d_model]");
  }
  require_product_at_most({N, std::max({d, H * bs.head_dim, bs.intermediate})}, kDefaultMaxElements,
                          "one layer's activations [B, T, width]");
}

// The rows [start, start + Tq) of B sequences through the blocks: a plain forward computes
// every row (start 0), a cached one the rows after the kept prefix. Keys and values of the
// rows it computes go into `keys[l]` and `values[l]` [B, kv_heads, S, hd] at rows [start, S),
// S = start + Tq, which must already hold the rows before; the queries attend over all S.
struct Rows {
  std::int64_t B = 1, Tq = 0, start = 0;
  std::vector<float*> keys, values;    // one per layer
  const Ablation* ablation = nullptr;  // heads switched off (start 0 only: means run from row 0)
  // Called after each layer's attention with its weights [B, heads, Tq, S] (when kept) and
  // after each layer with the stream x [B · Tq, d].
  std::function<void(std::int64_t layer, const AttentionResult&)> on_attention;
  std::function<void(std::int64_t layer, const float* x)> on_layer;
  // Called after each layer's heads are merged (and ablated) with merged [B · Tq, heads · hd].
  std::function<void(std::int64_t layer, const float* merged)> on_merged;
};

// x [B · Tq, d] (the rows' embeddings) becomes the stream after the last block.
void run_blocks(const DecoderSpec& spec, const DecoderWeights& weights, Buffers& buf,
                const Rows& rows, bool keep_weights, WeightPanels* panels) {
  const BlockSpec& bs = spec.block;
  const std::int64_t B = rows.B, Tq = rows.Tq, S = rows.start + Tq, N = B * Tq;
  const std::int64_t d = bs.d_model, H = bs.heads, Hkv = bs.kv_heads, hd = bs.head_dim;
  const std::int64_t I = bs.intermediate;
  grow(buf.xn, N * d);
  grow(buf.q, N * H * hd);
  grow(buf.qh, N * H * hd);
  grow(buf.merged, N * H * hd);
  grow(buf.k, N * Hkv * hd);
  grow(buf.v, N * Hkv * hd);
  grow(buf.kh, N * Hkv * hd);
  grow(buf.vh, N * Hkv * hd);
  grow(buf.gate, N * I);
  grow(buf.up, N * I);
  const bool rotary = bs.positions == PositionKind::Rotary;
  const bool sandwich = bs.placement == NormPlacement::Sandwich;
  const auto layer_attention = [&spec](std::int64_t l) {
    return spec.layer_attention.empty() ? LayerAttention{}
                                        : spec.layer_attention[static_cast<std::size_t>(l)];
  };
  bool local_rope = false;
  for (std::int64_t l = 0; l < spec.layers; ++l)
    local_rope = local_rope || layer_attention(l).local_rope;
  // Index 0: the block's rotary positions; 1: the local layers' (when some layer has them).
  std::vector<float> cos[2], sin[2];
  if (rotary) rope_tables(cos[0], sin[0], rope_inv_freq(bs.rope, hd), S);
  if (rotary && local_rope) rope_tables(cos[1], sin[1], rope_inv_freq(spec.local_rope, hd), S);
  const float scale = bs.scale > 0.0f ? bs.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const auto norm = [&bs](float* out, const float* in, const float* w, const float* b,
                          std::int64_t n, std::int64_t width) {
    norm_forward(out, in, w, b, n, width, bs.norm_eps, bs.norm);
  };
  for (std::int64_t l = 0; l < spec.layers; ++l) {
    const BlockWeights& w = weights.blocks[static_cast<std::size_t>(l)];
    const LayerAttention la = layer_attention(l);
    // The fresh rows' positions start at `start`.
    const int table = la.local_rope ? 1 : 0;
    const float* cos_rows = rotary ? cos[table].data() + rows.start * (hd / 2) : nullptr;
    const float* sin_rows = rotary ? sin[table].data() + rows.start * (hd / 2) : nullptr;
    float* x = buf.x.data();
    // Attention: x += o(attention(rope(q(norm(x))), rope(k(norm(x))), v(norm(x))))
    if (w.attn_norm_w != nullptr) {
      norm(buf.xn.data(), x, w.attn_norm_w, w.attn_norm_b, N, d);
    } else {
      std::copy(x, x + N * d, buf.xn.data());
    }
    project(buf.q.data(), buf.xn.data(), w.q_w, w.q_b, nullptr, N, d, H * hd, panels);
    project(buf.k.data(), buf.xn.data(), w.k_w, w.k_b, nullptr, N, d, Hkv * hd, panels);
    project(buf.v.data(), buf.xn.data(), w.v_w, w.v_b, nullptr, N, d, Hkv * hd, panels);
    if (bs.qk_norm) {
      // Per head: rows of head_dim whichever layout they sit in.
      norm(buf.q.data(), buf.q.data(), w.q_norm_w, nullptr, N * H, hd);
      norm(buf.k.data(), buf.k.data(), w.k_norm_w, nullptr, N * Hkv, hd);
    }
    unmerge_heads(buf.qh.data(), buf.q.data(), B, Tq, H, hd);
    unmerge_heads(buf.kh.data(), buf.k.data(), B, Tq, Hkv, hd);
    unmerge_heads(buf.vh.data(), buf.v.data(), B, Tq, Hkv, hd);
    if (rotary) {
      rope_apply(buf.qh.data(), cos_rows, sin_rows, B, H, Tq, hd);
      rope_apply(buf.kh.data(), cos_rows, sin_rows, B, Hkv, Tq, hd);
    }
    float* keys = rows.keys[static_cast<std::size_t>(l)];
    float* values = rows.values[static_cast<std::size_t>(l)];
    for (std::int64_t g = 0; g < B * Hkv; ++g) {
      std::copy(buf.kh.begin() + g * Tq * hd, buf.kh.begin() + (g + 1) * Tq * hd,
                keys + (g * S + rows.start) * hd);
      std::copy(buf.vh.begin() + g * Tq * hd, buf.vh.begin() + (g + 1) * Tq * hd,
                values + (g * S + rows.start) * hd);
    }
    AttentionResult a;
    try {
      a = grouped_attention(buf.qh.data(), keys, values, B, H, Hkv, Tq, S, hd, scale, spec.causal,
                            keep_weights, la.window, bs.attn_softcap);
    } catch (const Error& e) {
      fail(e.code(), "layer ", l, " attention: ", e.what());
    }
    if (rows.on_attention) rows.on_attention(l, a);
    merge_heads(buf.merged.data(), a.output.data.data(), B, Tq, H, hd);
    if (rows.ablation != nullptr) {
      ablate_heads(buf.merged.data(), *rows.ablation, l, B, Tq, H, hd, spec.causal, nullptr);
    }
    if (rows.on_merged) rows.on_merged(l, buf.merged.data());
    // Pre: x + o(...). Sandwich: x + norm(o(...)), the sum in the same order as transformers'
    // residual + hidden_states.
    if (sandwich) {
      project(buf.xn.data(), buf.merged.data(), w.o_w, w.o_b, nullptr, N, H * hd, d, panels);
      norm(buf.xn.data(), buf.xn.data(), w.post_attn_norm_w, w.post_attn_norm_b, N, d);
      add_into(x, buf.xn.data(), N * d);
    } else {
      project(buf.xn.data(), buf.merged.data(), w.o_w, w.o_b, x, N, H * hd, d, panels);
      std::swap(buf.x, buf.xn);
      x = buf.x.data();
    }
    require_finite_stage(x, N * d, "the attention", l);

    // MLP: x += down(act(gate(norm(x))) · up(norm(x))), act SiLU or a GELU
    norm(buf.xn.data(), x, w.mlp_norm_w, w.mlp_norm_b, N, d);
    project(buf.gate.data(), buf.xn.data(), w.gate_w, w.gate_b, nullptr, N, d, I, panels);
    project(buf.up.data(), buf.xn.data(), w.up_w, w.up_b, nullptr, N, d, I, panels);
    if (bs.mlp == MlpKind::GatedGelu || bs.mlp == MlpKind::GatedGeluErf) {
      geglu_forward(buf.gate.data(), buf.gate.data(), buf.up.data(), N * I,
                    bs.mlp == MlpKind::GatedGeluErf);
    } else {
      swiglu_forward(buf.gate.data(), buf.gate.data(), buf.up.data(), N * I);
    }
    if (sandwich) {
      project(buf.xn.data(), buf.gate.data(), w.down_w, w.down_b, nullptr, N, I, d, panels);
      norm(buf.xn.data(), buf.xn.data(), w.post_mlp_norm_w, w.post_mlp_norm_b, N, d);
      add_into(x, buf.xn.data(), N * d);
    } else {
      project(buf.xn.data(), buf.gate.data(), w.down_w, w.down_b, x, N, I, d, panels);
      std::swap(buf.x, buf.xn);
      x = buf.x.data();
    }
    require_finite_stage(x, N * d, "the MLP", l);
    if (rows.on_layer) rows.on_layer(l, x);
  }
}

// Writes the embeddings of ids[0, n) into x [n, d].
void embed(const DecoderSpec& spec, const DecoderWeights& weights, const std::int32_t* ids,
           std::int64_t n, float* x) {
  const std::int64_t d = spec.block.d_model;
  for (std::int64_t r = 0; r < n; ++r) {
    Arr(x + r * d, d) =
        ConstArr(weights.embed + std::int64_t{ids[r]} * d, d) * spec.embedding_scale;
  }
  if (spec.embedding_norm) {
    norm_forward(x, x, weights.embed_norm_w, weights.embed_norm_b, n, d, spec.block.norm_eps,
                 spec.block.norm);
  }
}

// Rows [R, d] of the stream, in place, through the final norm and (head_transform) the head's
// dense layer, exact GELU and norm: what the head multiplies.
void head_input(const DecoderSpec& spec, const DecoderWeights& weights, float* rows,
                std::int64_t R) {
  const BlockSpec& bs = spec.block;
  const std::int64_t d = bs.d_model;
  norm_forward(rows, rows, weights.final_norm_w, weights.final_norm_b, R, d, bs.norm_eps, bs.norm);
  if (!spec.head_transform) return;
  AlignedFloats dense;
  try {
    dense.resize(static_cast<std::size_t>(R * d));
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the head's dense layer could not allocate ", R, " rows of ", d);
  }
  project(dense.data(), rows, weights.head_dense_w, weights.head_dense_b, nullptr, R, d, d,
          nullptr);
  gelu_erf_forward(dense.data(), dense.data(), R * d);
  norm_forward(rows, dense.data(), weights.head_norm_w, weights.head_norm_b, R, d, bs.norm_eps,
               bs.norm);
}

// out [R, V] = rows [R, d] (after head_input) · headᵀ (+ the head's bias). Its callers check the
// logits for overflow, then cap them (cap_logits): a cap would turn inf into c and hide it.
void head_product(const DecoderSpec& spec, const DecoderWeights& weights, const float* rows,
                  std::int64_t R, float* out) {
  const std::int64_t V = spec.vocab_size, d = spec.block.d_model;
  matmul(out, rows, weights.head, R, V, d, false, true, false);
  if (weights.head_bias != nullptr) {
    Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(out, R, V)
        .rowwise() += Eigen::Map<const Eigen::RowVectorXf>(weights.head_bias, V);
  }
}

// The spec's soft cap on logits [n], after they are checked to be finite.
void cap_logits(const DecoderSpec& spec, float* out, std::int64_t n) {
  if (spec.final_softcap > 0.0f) soft_cap_row(out, n, spec.final_softcap);
}

// out[k, :] = head · norm(stream[rows[k], :]) for every k: only the rows asked for go through
// the final norm and the head (the vocabulary product is the largest share of a small model's
// forward). out is [rows.size(), V].
void head_rows(const DecoderSpec& spec, const DecoderWeights& weights, const float* stream,
               const std::vector<std::int64_t>& rows, float* out) {
  const BlockSpec& bs = spec.block;
  const std::int64_t d = bs.d_model, V = spec.vocab_size;
  const auto R = static_cast<std::int64_t>(rows.size());
  if (R == 0) return;
  AlignedFloats gathered;
  try {
    gathered.resize(static_cast<std::size_t>(R * d));
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the forward pass could not allocate ", R, " rows for the head");
  }
  for (std::int64_t r = 0; r < R; ++r) {
    const std::int64_t n = rows[static_cast<std::size_t>(r)];
    std::copy(stream + n * d, stream + (n + 1) * d, gathered.begin() + r * d);
  }
  head_input(spec, weights, gathered.data(), R);
  head_product(spec, weights, gathered.data(), R, out);
  if (!std::isfinite(finite_max_abs(out, R * V))) {
    fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in the logits");
  }
  cap_logits(spec, out, R * V);
}

// Rows [0, keep) of a [groups, n, width] array, re-laid as [groups, n_new, width] with room for
// rows [keep, n_new) (left zero).
std::vector<float> regroup(const std::vector<float>& old, std::int64_t groups, std::int64_t n,
                           std::int64_t keep, std::int64_t n_new, std::int64_t width) {
  std::vector<float> out(static_cast<std::size_t>(groups * n_new * width), 0.0f);
  for (std::int64_t g = 0; g < groups; ++g) {
    std::copy(old.begin() + g * n * width, old.begin() + (g * n + keep) * width,
              out.begin() + g * n_new * width);
  }
  return out;
}

}  // namespace

ModelOutput decoder_forward(const DecoderSpec& spec, const DecoderWeights& weights,
                            const std::int32_t* ids, std::int64_t B, std::int64_t T,
                            const DecoderForward& options, WeightPanels* panels) {
  check_options(spec, weights, options, B, T);
  const BlockSpec& bs = spec.block;
  const std::int64_t N = B * T, d = bs.d_model, L = spec.layers, V = spec.vocab_size;
  const std::int64_t H = bs.heads, Hkv = bs.kv_heads, hd = bs.head_dim;
  const bool some_rows = options.logits && !options.logit_rows.empty();
  const auto R = static_cast<std::int64_t>(options.logit_rows.size());

  ModelOutput out;
  Buffers buf;
  AlignedFloats keys, values;  // one layer's at a time: a plain forward keeps none
  try {
    if (some_rows) {
      out.logits = Tensor({R, V});
    } else if (options.logits) {
      out.logits = Tensor({B, T, V});
    }
    if (options.attention) out.attention = Tensor({L, B, H, T, T});
    if (options.hidden_states) out.hidden_states = Tensor({L + 1, B, T, d});
    if (options.value_weighted) {
      out.value_norms = Tensor({L, B, H, T});
      out.value_weighted = Tensor({L, B, T, T});
    }
    if (!options.head_output_rows.empty()) {
      out.head_outputs =
          Tensor({L, static_cast<std::int64_t>(options.head_output_rows.size()), H, d});
    }
    grow(buf.x, N * d);
    grow(keys, N * Hkv * hd);
    grow(values, N * Hkv * hd);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the forward pass could not allocate its buffers for ", B, " x ",
         T, " tokens");
  }
  embed(spec, weights, ids, N, buf.x.data());
  if (options.hidden_states)
    std::copy(buf.x.data(), buf.x.data() + N * d, out.hidden_states.data.data());

  Rows rows;
  rows.B = B;
  rows.Tq = T;
  rows.ablation = &options.ablation;
  rows.keys.assign(static_cast<std::size_t>(L), keys.data());
  rows.values.assign(static_cast<std::size_t>(L), values.data());
  if (options.attention || options.value_weighted) {
    rows.on_attention = [&](std::int64_t l, const AttentionResult& a) {
      if (options.attention) {
        std::copy(a.weights.data.begin(), a.weights.data.end(),
                  out.attention.data.begin() + l * B * H * T * T);
      }
      // (A plain forward's values are this layer's, [B, kv_heads, T, hd], until the next.)
      if (options.value_weighted) {
        value_weighted(out.value_norms.data.data() + l * B * H * T,
                       out.value_weighted.data.data() + l * B * T * T, values.data(),
                       weights.blocks[static_cast<std::size_t>(l)].o_w, a.weights.data.data(), B, H,
                       Hkv, T, hd, d, &options.ablation, l);
      }
    };
  }
  if (options.hidden_states) {
    rows.on_layer = [&](std::int64_t l, const float* x) {
      std::copy(x, x + N * d, out.hidden_states.data.begin() + (l + 1) * N * d);
    };
  }
  if (!options.head_output_rows.empty()) {
    rows.on_merged = [&](std::int64_t l, const float* merged) {
      const auto HR = static_cast<std::int64_t>(options.head_output_rows.size());
      head_writes(out.head_outputs.data.data() + l * HR * H * d, merged,
                  weights.blocks[static_cast<std::size_t>(l)].o_w, options.head_output_rows, H, hd,
                  d);
    };
  }
  try {
    run_blocks(spec, weights, buf, rows, options.attention || options.value_weighted, panels);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the forward pass could not allocate its buffers for ", B, " x ",
         T, " tokens");
  }

  if (options.logits) {
    std::vector<std::int64_t> all;
    if (!some_rows) {
      all.resize(static_cast<std::size_t>(N));
      for (std::int64_t n = 0; n < N; ++n)
        all[static_cast<std::size_t>(n)] = n;
    }
    head_rows(spec, weights, buf.x.data(), some_rows ? options.logit_rows : all,
              out.logits.data.data());
  }
  release_scratch();
  out.attention = attention_rows_from(std::move(out.attention), options.attention_from);
  return out;
}

Tensor decoder_unembed(const DecoderSpec& spec, const DecoderWeights& weights, const Tensor& rows) {
  const std::int64_t d = spec.block.d_model, V = spec.vocab_size;
  if (weights.head == nullptr) {
    fail(ErrorCode::BAD_ARGUMENT, "this model has no prediction head, so nothing to unembed");
  }
  check_stream_rows(rows, d, V);
  const std::int64_t R = rows.shape[0];
  Tensor out;
  AlignedFloats x;
  try {
    out = Tensor({R, V});
    x.assign(rows.data.begin(), rows.data.end());
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "unembed could not allocate the logits of ", R, " rows");
  }
  head_input(spec, weights, x.data(), R);
  head_product(spec, weights, x.data(), R, out.data.data());
  if (!std::isfinite(finite_max_abs(out.data.data(), R * V))) {
    fail(ErrorCode::NON_FINITE, "unembed overflowed float32 in the logits");
  }
  cap_logits(spec, out.data.data(), R * V);
  return out;
}

Readout decoder_readout(const DecoderSpec& spec, const DecoderWeights& weights) {
  const BlockSpec& bs = spec.block;
  Readout r;
  r.layernorm = bs.norm == NormKind::LayerNorm;
  r.plus_one = bs.norm == NormKind::RMSNormPlusOne;
  r.eps = bs.norm_eps;
  r.norm_w = weights.final_norm_w;
  r.norm_b = weights.final_norm_b;
  r.unembedding = weights.head;
  r.bias = weights.head_bias;
  r.layers = spec.layers;
  r.heads = bs.heads;
  r.d = bs.d_model;
  r.vocab = spec.vocab_size;
  for (const BlockWeights& b : weights.blocks)
    r.o_bias.push_back(b.o_b);
  return r;
}

struct DecoderCache::Data {
  std::vector<std::int32_t> ids;
  // Per layer, keys (after RoPE) and values [kv_heads, n, hd] of the n cached tokens.
  std::vector<std::vector<float>> keys, values;
  // Kept rows (each only if every call so far asked for them): attention (in `rows`, each
  // layer·head's), hidden states [layers + 1, n, d].
  bool attention_kept = false, hidden_kept = false;
  std::vector<float> hidden;
  // Every row's stream after the last block [n, d]; in `rows`, the logits of the rows some call
  // asked for (a row's logits are computed when a call first asks for them).
  std::vector<float> stream;
  CausalRows rows;
  std::int64_t reused = 0;
};

DecoderCache::DecoderCache() : data_(std::make_unique<Data>()) {}
DecoderCache::~DecoderCache() = default;

std::int64_t DecoderCache::tokens() const noexcept {
  return static_cast<std::int64_t>(data_->ids.size());
}

std::int64_t DecoderCache::reused() const noexcept {
  return data_->reused;
}

ModelOutput decoder_forward(const DecoderSpec& spec, const DecoderWeights& weights,
                            const std::int32_t* ids, std::int64_t T, const DecoderForward& options,
                            DecoderCache& cache, WeightPanels* panels) {
  check_options(spec, weights, options, 1, T);
  const BlockSpec& bs = spec.block;
  const std::int64_t d = bs.d_model, L = spec.layers, V = spec.vocab_size;
  const std::int64_t H = bs.heads, Hkv = bs.kv_heads, hd = bs.head_dim;
  DecoderCache::Data& c = *cache.data_;
  // A bidirectional row depends on every token: nothing carries over from an earlier sentence.
  if (!spec.causal) {
    c = DecoderCache::Data{};
    return decoder_forward(spec, weights, ids, 1, T, options, panels);
  }
  if (computes_without_cache(options)) {
    ModelOutput out = decoder_forward(spec, weights, ids, 1, T, options, panels);
    c.reused = 0;
    return out;
  }

  // How many rows can be kept: the common prefix with what the cache computed, when it kept
  // every kind of row this call asks for.
  std::int64_t keep = 0;
  std::int64_t n = static_cast<std::int64_t>(c.ids.size());
  if ((!options.attention || c.attention_kept) && (!options.hidden_states || c.hidden_kept)) {
    while (keep < std::min(n, T) && c.ids[static_cast<std::size_t>(keep)] == ids[keep])
      ++keep;
  }
  if (keep == 0) {
    n = 0;
    c = DecoderCache::Data{};
    c.attention_kept = options.attention;
    c.hidden_kept = options.hidden_states;
    c.keys.assign(static_cast<std::size_t>(L), {});
    c.values.assign(static_cast<std::size_t>(L), {});
    c.rows.reset(c.attention_kept ? L * H : 0, V);
  }
  const std::int64_t fresh = T - keep;
  c.reused = keep;

  // A throw part-way would leave rows half computed under the new ids: the cache starts over
  // instead, never serving them.
  try {
    if (keep < n || T != n) {
      for (std::size_t l = 0; l < c.keys.size(); ++l) {
        c.keys[l] = regroup(c.keys[l], Hkv, n, keep, T, hd);
        c.values[l] = regroup(c.values[l], Hkv, n, keep, T, hd);
      }
      c.stream = regroup(c.stream, 1, n, keep, T, d);
      c.rows.resize(keep, T);
      if (c.hidden_kept) c.hidden = regroup(c.hidden, L + 1, n, keep, T, d);
    }
    c.ids.assign(ids, ids + T);

    if (fresh > 0) {
      Buffers buf;
      grow(buf.x, fresh * d);
      embed(spec, weights, ids + keep, fresh, buf.x.data());
      if (c.hidden_kept)
        std::copy(buf.x.begin(), buf.x.begin() + fresh * d, c.hidden.begin() + keep * d);
      Rows rows;
      rows.Tq = fresh;
      rows.start = keep;
      for (std::size_t l = 0; l < c.keys.size(); ++l) {
        rows.keys.push_back(c.keys[l].data());
        rows.values.push_back(c.values[l].data());
      }
      if (c.attention_kept) {
        rows.on_attention = [&](std::int64_t l, const AttentionResult& a) {
          for (std::int64_t head = 0; head < H; ++head)
            for (std::int64_t r = 0; r < fresh; ++r)
              c.rows.set_attention(l * H + head, keep + r,
                                   a.weights.data.data() + (head * fresh + r) * T);
        };
      }
      if (c.hidden_kept) {
        rows.on_layer = [&](std::int64_t l, const float* x) {
          std::copy(x, x + fresh * d, c.hidden.begin() + ((l + 1) * T + keep) * d);
        };
      }
      run_blocks(spec, weights, buf, rows, c.attention_kept, panels);
      std::copy(buf.x.begin(), buf.x.begin() + fresh * d, c.stream.begin() + keep * d);
    }

    // The logits asked for that no call computed yet, in one product.
    std::vector<std::int64_t> missing;
    if (options.logits) {
      if (options.logit_rows.empty()) {
        for (std::int64_t t = 0; t < T; ++t)
          if (!c.rows.has_logits(t)) missing.push_back(t);
      } else {
        for (const std::int64_t t : options.logit_rows)
          if (!c.rows.has_logits(t)) missing.push_back(t);
        std::sort(missing.begin(), missing.end());
        missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
      }
    }
    if (!missing.empty()) {
      std::vector<float> computed(static_cast<std::size_t>(missing.size()) * V);
      head_rows(spec, weights, c.stream.data(), missing, computed.data());
      for (std::size_t k = 0; k < missing.size(); ++k) {
        std::copy(computed.begin() + static_cast<std::int64_t>(k) * V,
                  computed.begin() + static_cast<std::int64_t>(k + 1) * V,
                  c.rows.logits(missing[k]));
      }
    }
  } catch (const std::bad_alloc&) {
    c = DecoderCache::Data{};
    fail(ErrorCode::OUT_OF_MEMORY, "the cached forward pass could not allocate its buffers for ", T,
         " tokens");
  } catch (...) {
    c = DecoderCache::Data{};
    throw;
  }
  release_scratch();

  ModelOutput out;
  try {
    if (options.logits && !options.logit_rows.empty()) {
      const auto R = static_cast<std::int64_t>(options.logit_rows.size());
      out.logits = Tensor({R, V});
      for (std::int64_t k = 0; k < R; ++k) {
        const float* row = c.rows.logits(options.logit_rows[static_cast<std::size_t>(k)]);
        std::copy(row, row + V, out.logits.data.begin() + k * V);
      }
    } else if (options.logits) {
      out.logits = Tensor({1, T, V});
      for (std::int64_t t = 0; t < T; ++t)
        std::copy(c.rows.logits(t), c.rows.logits(t) + V, out.logits.data.begin() + t * V);
    }
    if (options.attention) {
      out.attention = Tensor({L, 1, H, T - options.attention_from, T});
      c.rows.copy_attention(out.attention.data.data(), options.attention_from, T);
    }
    if (options.hidden_states) out.hidden_states = Tensor({L + 1, 1, T, d}, c.hidden);
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the cached forward pass could not allocate its results");
  }
  return out;
}

}  // namespace attnlens::detail
