#include <attnlens/gpt2.hpp>

#include "core/check.hpp"
#include "core/matmul.hpp"
#include "models/gpt2/layout.hpp"
#include "models/gpt2/workspace.hpp"
#include "nn/ablation.hpp"
#include "nn/causal_rows.hpp"
#include "nn/layers.hpp"
#include "nn/lens.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <thread>

namespace attnlens {
namespace {

using detail::Gpt2Activations;
using detail::Gpt2Block;
using detail::Gpt2BlockActivations;
using detail::Gpt2Workspace;

void require_range(int value, int lo, int hi, const char* field) {
  if (value < lo || value > hi) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "Gpt2Config ", field, " is ", value, "; it must be in [",
                 lo, ", ", hi, "]");
  }
}

// Checks ids [B, T] against the model: non-empty, T within the context, every id in
// [0, vocab_size) (or -1 when `allow_ignore`, for targets).
void check_ids(const TokenIds& ids, const char* name, const Gpt2Config& config, bool allow_ignore) {
  if (ids.batch < 0 || ids.length < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, name, " has shape [", ids.batch, ", ", ids.length,
                 "]; dimensions must be >= 0");
  }
  if (ids.batch == 0 || ids.length == 0) {
    detail::fail(ErrorCode::EMPTY_INPUT, name, " has shape [", ids.batch, ", ", ids.length,
                 "]; the model needs at least one sequence of at least one token");
  }
  if (ids.length > config.context) {
    detail::fail(ErrorCode::TOO_LARGE, name, " has ", ids.length,
                 " tokens per sequence, more than the model's context of ", config.context);
  }
  detail::require_at_most(ids.batch * ids.length, kDefaultMaxElements, name);
  if (ids.data == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, name, " has shape [", ids.batch, ", ", ids.length,
                 "] but no data");
  }
  const std::int64_t n = ids.batch * ids.length;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t id = ids.data[i];
    if ((id < 0 || id >= config.vocab_size) && !(allow_ignore && id == -1)) {
      detail::fail(ErrorCode::BAD_ARGUMENT, name, "[", i / ids.length, ", ", i % ids.length,
                   "] is ", id, ", outside the vocabulary [0, ", config.vocab_size, ")",
                   allow_ignore ? " (-1 marks a position to ignore)" : "");
    }
  }
}

void check_targets(const TokenIds& inputs, const TokenIds& targets, const Gpt2Config& config) {
  check_ids(inputs, "inputs", config, false);
  if (targets.batch != inputs.batch || targets.length != inputs.length) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "targets have shape [", targets.batch, ", ",
                 targets.length, "] but inputs have [", inputs.batch, ", ", inputs.length,
                 "]; they must be equal");
  }
  check_ids(targets, "targets", config, true);
}

std::int64_t count_targets(const TokenIds& targets) {
  const std::int64_t n = targets.batch * targets.length;
  const std::int64_t counted = n - std::count(targets.data, targets.data + n, std::int32_t{-1});
  if (counted == 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "every one of the ", n,
                 " targets is -1 (ignored); the loss needs at least one target");
  }
  return counted;
}

float attention_scale(const Gpt2Config& config) {
  // attention()'s default, written out because the backward pass needs the same number.
  return 1.0f / std::sqrt(static_cast<float>(config.d_model / config.heads));
}

// One block forward: x (B, T, d) -> a.res3. `x` may be a.res3 itself (single-slot inference):
// it is read only before a.res3 is written.
void block_forward(const Gpt2Config& config, const Gpt2Block<const float>& p,
                   Gpt2BlockActivations& a, float* qkv, const float* x, std::int64_t B,
                   std::int64_t T, bool keep_weights, int layer,
                   detail::WeightPanels* panels = nullptr, const Ablation* ablation = nullptr) {
  const std::int64_t N = B * T, d = config.d_model, H = config.heads, hd = d / H;
  const float* attn_in = x;
  if (config.attention_norm) {
    detail::layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, x, p.ln1_w, p.ln1_b, N, d);
    attn_in = a.ln1;
  }
  detail::linear_forward(qkv, attn_in, p.attn_w, p.attn_b, nullptr, N, d, 3 * d, panels);
  detail::split_heads(a.q, a.k, a.v, qkv, B, T, H, hd);
  AttentionOptions options;
  options.causal = true;
  options.return_weights = keep_weights;
  const Shape heads = {B, H, T, hd};
  try {
    a.attention = attention(ConstTensorView{a.q, heads}, ConstTensorView{a.k, heads},
                            ConstTensorView{a.v, heads}, options);
  } catch (const Error& e) {
    detail::fail(e.code(), "GPT-2 block ", layer, " attention: ", e.what());
  }
  detail::merge_heads(a.atty, a.attention.output.data.data(), B, T, H, hd);
  if (ablation != nullptr)
    detail::ablate_heads(a.atty, *ablation, layer, B, T, H, hd, true, nullptr);
  detail::linear_forward(a.res2, a.atty, p.attn_proj_w, p.attn_proj_b, x, N, d, d, panels);
  detail::layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, p.ln2_w, p.ln2_b, N, d);
  detail::linear_forward(a.fch, a.ln2, p.fc_w, p.fc_b, nullptr, N, d, 4 * d, panels);
  detail::gelu_forward(a.fch_gelu, a.fch, N * 4 * d);
  detail::linear_forward(a.res3, a.fch_gelu, p.fc_proj_w, p.fc_proj_b, a.res2, N, 4 * d, d, panels);
}

// One block backward: on entry ws.dres is dL/d(block output), on exit dL/d(block input x).
void block_backward(const Gpt2Config& config, const Gpt2Block<const float>& p,
                    const Gpt2Block<float>& g, const Gpt2BlockActivations& a, Gpt2Activations& ws,
                    const float* x) {
  const std::int64_t B = ws.B, T = ws.T, N = B * T, d = config.d_model, H = config.heads;
  const std::int64_t hd = d / H;
  // MLP: res3 = res2 + gelu(ln2(res2) W_fc + b_fc) W_proj + b_proj
  detail::linear_backward(ws.dfch, g.fc_proj_w, g.fc_proj_b, ws.dres, a.fch_gelu, p.fc_proj_w, N,
                          4 * d, d);
  detail::gelu_backward(ws.dfch, a.fch, N * 4 * d);
  detail::linear_backward(ws.dln, g.fc_w, g.fc_b, ws.dfch, a.ln2, p.fc_w, N, d, 4 * d);
  detail::layernorm_backward(ws.dres, g.ln2_w, g.ln2_b, ws.dln, a.res2, p.ln2_w, a.ln2_mean,
                             a.ln2_rstd, N, d);
  // Attention: res2 = x + attention(ln1(x) W_attn + b_attn) W_proj + b_proj, with x in place of
  // ln1(x) without attention_norm
  detail::linear_backward(ws.datty, g.attn_proj_w, g.attn_proj_b, ws.dres, a.atty, p.attn_proj_w, N,
                          d, d);
  detail::unmerge_heads(ws.dheads, ws.datty, B, T, H, hd);
  detail::attention_backward(ws.dq, ws.dk, ws.dv, ws.dscores, ws.dheads, a.q, a.k, a.v,
                             a.attention.weights.data.data(), B, H, T, hd, attention_scale(config));
  detail::join_heads(ws.dqkv, ws.dq, ws.dk, ws.dv, B, T, H, hd);
  if (!config.attention_norm) {
    // x feeds c_attn directly: its gradient from there adds to the residual's.
    detail::linear_backward(ws.dln, g.attn_w, g.attn_b, ws.dqkv, x, p.attn_w, N, d, 3 * d);
    detail::add_into(ws.dres, ws.dln, N * d);
    return;
  }
  detail::linear_backward(ws.dln, g.attn_w, g.attn_b, ws.dqkv, a.ln1, p.attn_w, N, d, 3 * d);
  detail::layernorm_backward(ws.dres, g.ln1_w, g.ln1_b, ws.dln, x, p.ln1_w, a.ln1_mean, a.ln1_rstd,
                             N, d);
}

const float* block_input(const Gpt2Activations& ws, std::size_t slot, int layer) {
  return layer == 0 ? ws.encoded : ws.blocks[slot - 1].res3;
}

// Forward and backward over B x T tokens (a batch or one thread's share of it): writes the
// gradients into G (zeroed here) and returns the summed cross-entropy of the counted targets.
// `grad_scale` is 1 / (targets counted in the whole batch).
double gradient_pass(const Gpt2Config& config, const detail::Gpt2Layout& layout, const float* P,
                     float* G, std::int64_t param_count, Gpt2Activations& ws,
                     const std::int32_t* inputs, const std::int32_t* targets, std::int64_t B,
                     std::int64_t T, float grad_scale) {
  const std::int64_t N = B * T, d = config.d_model, V = config.vocab_size;
  const int layers = config.layers;
  ws.prepare(config, B, T, layers, true, true);

  // Forward, keeping every block's activations and attention weights.
  detail::embed_forward(ws.encoded, inputs, P + layout.wte, P + layout.wpe, B, T, d);
  for (int l = 0; l < layers; ++l) {
    const std::size_t slot = static_cast<std::size_t>(l);
    block_forward(config, detail::gpt2_block(layout.blocks[l], P), ws.blocks[slot], ws.qkv,
                  block_input(ws, slot, l), B, T, true, l);
  }
  const float* last = ws.blocks.back().res3;
  detail::layernorm_forward(ws.lnf, ws.lnf_mean, ws.lnf_rstd, last, P + layout.lnf_w,
                            P + layout.lnf_b, N, d);
  detail::matmul(ws.logits, ws.lnf, P + layout.wte, N, V, d, false, true, false);
  const double total = detail::cross_entropy(ws.logits, targets, N, V, true, grad_scale);

  // Backward. ws.logits now holds dL/dlogits (N, V).
  std::fill(G, G + param_count, 0.0f);
  detail::matmul(ws.dln, ws.logits, P + layout.wte, N, d, V, false, false, false);  // dlnf
  detail::matmul(G + layout.wte, ws.logits, ws.lnf, V, d, N, true, false, true);    // tied wte
  std::fill(ws.dres, ws.dres + N * d, 0.0f);
  detail::layernorm_backward(ws.dres, G + layout.lnf_w, G + layout.lnf_b, ws.dln, last,
                             P + layout.lnf_w, ws.lnf_mean, ws.lnf_rstd, N, d);
  for (int l = layers - 1; l >= 0; --l) {
    const std::size_t slot = static_cast<std::size_t>(l);
    block_backward(config, detail::gpt2_block(layout.blocks[l], P),
                   detail::gpt2_block(layout.blocks[l], G), ws.blocks[slot], ws,
                   block_input(ws, slot, l));
  }
  detail::embed_backward(G + layout.wte, G + layout.wpe, ws.dres, inputs, B, T, d);
  return total;
}

std::vector<float>& grow(std::vector<float>& v, std::size_t n, const char* what) {
  if (v.size() == n) return v;
  try {
    v.resize(n);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the GPT-2 model could not allocate ", what, " for ", n,
                 " parameters");
  }
  return v;
}

}  // namespace

void validate(const Gpt2Config& c) {
  require_range(c.layers, 1, kGpt2MaxLayers, "layers");
  require_range(c.heads, 1, kGpt2MaxHeads, "heads");
  require_range(c.d_model, 1, kGpt2MaxModelDim, "d_model");
  require_range(c.context, 1, kGpt2MaxContext, "context");
  require_range(c.vocab_size, 1, kGpt2MaxVocab, "vocab_size");
  if (c.d_model % c.heads != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "Gpt2Config d_model is ", c.d_model,
                 ", which is not a multiple of heads = ", c.heads);
  }
  const std::int64_t n = gpt2_parameter_count(c);
  if (n > kGpt2MaxParameters) {
    detail::fail(ErrorCode::TOO_LARGE, "Gpt2Config gives ", n, " parameters, over the limit of ",
                 kGpt2MaxParameters);
  }
}

std::int64_t gpt2_parameter_count(const Gpt2Config& c) {
  const std::int64_t d = c.d_model;
  return (static_cast<std::int64_t>(c.vocab_size) + c.context) * d +
         c.layers * (12 * d * d + (c.attention_norm ? 13 : 11) * d) + 2 * d;
}

Gpt2Model::Gpt2Model(const Gpt2Config& config)
    : config_(config), stamp_(detail::next_model_stamp()) {
  validate(config);
  work_ = std::make_unique<Gpt2Workspace>();
  work_->layout = detail::gpt2_layout(config);
  const std::int64_t n = work_->layout.total;
  if (static_cast<std::uint64_t>(n) > params_.max_size()) {
    detail::fail(ErrorCode::TOO_LARGE, "the GPT-2 model has ", n,
                 " parameters, more float32 values than this platform's address space holds (",
                 params_.max_size(), ")");
  }
  try {
    params_.assign(static_cast<std::size_t>(n), 0.0f);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the GPT-2 model could not allocate its ", n,
                 " parameters");
  }
  for (const detail::Gpt2TensorInfo& t : work_->layout.tensors) {
    segments_.push_back(ParamSegment{t.offset, t.count, t.shape.size() == 2});
  }
}

Gpt2Model::Gpt2Model(Gpt2Model&&) noexcept = default;
Gpt2Model& Gpt2Model::operator=(Gpt2Model&&) noexcept = default;
Gpt2Model::~Gpt2Model() = default;

std::int64_t Gpt2Model::steps() const noexcept {
  return adamw_ ? adamw_->steps() : 0;
}

AdamWState Gpt2Model::optimizer_state() const {
  return adamw_ ? adamw_->state() : AdamWState{};
}

void Gpt2Model::set_optimizer_state(const AdamWState& state) {
  if (state.m.empty() && state.v.empty() && state.steps == 0) {
    adamw_.reset();
    return;
  }
  auto adamw = std::make_unique<AdamW>(adamw_config_, num_parameters());
  adamw->set_state(state);
  adamw_ = std::move(adamw);
}

void Gpt2Model::set_optimizer(const AdamWConfig& config) {
  validate(config);
  adamw_config_ = config;
  if (adamw_) adamw_->set_config(config);
}

Gpt2Output Gpt2Model::forward(const TokenIds& ids, const Gpt2ForwardOptions& options) {
  check_ids(ids, "ids", config_, false);
  const std::int64_t B = ids.batch, T = ids.length, N = B * T;
  const std::int64_t L = config_.layers, H = config_.heads, d = config_.d_model;
  const std::int64_t V = config_.vocab_size;
  detail::check_logit_rows(options, N);
  detail::check_attention_from(options.attention_from, T);
  detail::check_ablation(options.ablation, config_.layers, config_.heads);
  detail::check_head_output_rows(options.head_output_rows, N);
  const bool some_rows = options.logits && !options.logit_rows.empty();
  const auto R = static_cast<std::int64_t>(options.logit_rows.size());
  const auto HR = static_cast<std::int64_t>(options.head_output_rows.size());
  detail::require_at_most(L * HR * H * d, options.max_elements,
                          "the heads' writes [layers, rows, heads, d_model]");
  if (options.logits) {
    detail::require_at_most(
        some_rows ? R * V : N * V, options.max_elements,
        some_rows ? "the logits [rows, vocab_size]" : "the logits [B, T, vocab_size]");
  }
  if (options.attention) {
    detail::require_at_most(L * B * H * T * T, options.max_elements,
                            "the attention weights [layers, B, heads, T, T]");
  }
  if (options.residuals) {
    detail::require_at_most((L + 1) * N * d, options.max_elements,
                            "the residual streams [layers + 1, B, T, d_model]");
  }
  if (options.value_weighted) {
    detail::require_at_most(L * B * T * T, options.max_elements,
                            "the value-weighted attention [layers, B, T, T]");
    detail::require_at_most(B * H * T * T, options.max_elements,
                            "one layer's attention weights [B, heads, T, T] (value weighting)");
  }
  Gpt2Output out;
  Gpt2Activations& ws = work_->parts[0];
  work_->panels.sync(stamp_);
  try {
    if (some_rows) {
      out.logits = Tensor({R, V});
    } else if (options.logits) {
      out.logits = Tensor({B, T, V});
    }
    if (options.attention) out.attention = Tensor({L, B, H, T, T});
    if (options.residuals) out.residuals = Tensor({L + 1, B, T, d});
    if (options.value_weighted) {
      out.value_norms = Tensor({L, B, H, T});
      out.value_weighted = Tensor({L, B, T, T});
    }
    if (HR > 0) out.head_outputs = Tensor({L, HR, H, d});
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the GPT-2 forward pass could not allocate its results",
                 " for ", B, " x ", T, " tokens");
  }
  ws.prepare(config_, B, T, 1, false, false);
  const float* P = params_.data();
  const detail::Gpt2Layout& layout = work_->layout;
  detail::embed_forward(ws.encoded, ids.data, P + layout.wte, P + layout.wpe, B, T, d);
  if (options.residuals) std::copy(ws.encoded, ws.encoded + N * d, out.residuals.data.data());
  // Finite weights can still overflow float32 (say, weights of 1e30): each stage's output is
  // checked, so such a model is an error naming where, never NaN logits.
  const auto require_finite_stage = [](const float* data, std::int64_t n, const auto&... where) {
    if (!std::isfinite(detail::finite_max_abs(data, n))) {
      detail::fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in ", where...,
                   ": the weights are finite but too large for these inputs");
    }
  };
  // A LayerNorm whose input varies beyond float32 (variance overflowing to infinity) would give
  // a reciprocal deviation of 0, i.e. its bias alone, silently: caught by its rstd.
  const auto require_layernorm = [&](const float* rstd, const auto&... where) {
    for (std::int64_t n = 0; n < N; ++n) {
      if (!(rstd[n] > 0.0f) || !std::isfinite(rstd[n])) {
        detail::fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in ", where...,
                     ": the LayerNorm's input at token ", n % T,
                     " varies beyond float32's "
                     "range; the weights are finite but too large for these inputs");
      }
    }
  };
  require_finite_stage(ws.encoded, N * d, "the embeddings (wte + wpe)");
  Gpt2BlockActivations& a = ws.blocks[0];
  for (int l = 0; l < config_.layers; ++l) {
    const float* x = l == 0 ? ws.encoded : a.res3;
    const auto block = detail::gpt2_block(layout.blocks[l], P);
    block_forward(config_, block, a, ws.qkv, x, B, T, options.attention || options.value_weighted,
                  l, &work_->panels, &options.ablation);
    if (options.value_weighted) {
      detail::value_weighted(out.value_norms.data.data() + l * B * H * T,
                             out.value_weighted.data.data() + l * B * T * T, a.v, block.attn_proj_w,
                             a.attention.weights.data.data(), B, H, H, T, d / H, d,
                             &options.ablation, l);
    }
    if (HR > 0) {
      detail::head_writes(out.head_outputs.data.data() + l * HR * H * d, a.atty, block.attn_proj_w,
                          options.head_output_rows, H, d / H, d);
    }
    if (config_.attention_norm) require_layernorm(a.ln1_rstd, "block ", l, " (h.", l, ".ln_1)");
    require_layernorm(a.ln2_rstd, "block ", l, " (h.", l, ".ln_2)");
    require_finite_stage(a.res3, N * d, "block ", l, " (h.", l, ")");
    if (options.attention) {
      const std::vector<float>& w = a.attention.weights.data;
      std::copy(w.begin(), w.end(), out.attention.data.begin() + l * B * H * T * T);
    }
    if (options.residuals) {
      std::copy(a.res3, a.res3 + N * d, out.residuals.data.data() + (l + 1) * N * d);
    }
  }
  detail::layernorm_forward(ws.lnf, ws.lnf_mean, ws.lnf_rstd, a.res3, P + layout.lnf_w,
                            P + layout.lnf_b, N, d);
  require_layernorm(ws.lnf_rstd, "the final LayerNorm (ln_f)");
  require_finite_stage(ws.lnf, N * d, "the final LayerNorm (ln_f)");
  if (some_rows) {
    detail::unembed_rows(out.logits.data.data(), ws.lnf, P + layout.wte, options.logit_rows, d, V);
  } else if (options.logits) {
    detail::matmul(out.logits.data.data(), ws.lnf, P + layout.wte, N, V, d, false, true, false);
  }
  require_finite_stage(out.logits.data.data(), static_cast<std::int64_t>(out.logits.data.size()),
                       "the logits");
  out.attention = detail::attention_rows_from(std::move(out.attention), options.attention_from);
  return out;
}

detail::Readout Gpt2Model::readout() const {
  const float* P = params_.data();
  const detail::Gpt2Layout& layout = work_->layout;
  detail::Readout r;
  r.layernorm = true;
  r.eps = detail::kLayerNormEps;
  r.norm_w = P + layout.lnf_w;
  r.norm_b = P + layout.lnf_b;
  r.unembedding = P + layout.wte;  // tied
  r.layers = config_.layers;
  r.heads = config_.heads;
  r.d = config_.d_model;
  r.vocab = config_.vocab_size;
  for (int l = 0; l < config_.layers; ++l)
    r.o_bias.push_back(P + layout.blocks[static_cast<std::size_t>(l)].attn_proj_b);
  return r;
}

Tensor Gpt2Model::unembed(const Tensor& rows) const {
  return detail::unembed_prenorm(readout(), rows);
}

LogitAttribution Gpt2Model::attribute(const TokenIds& ids, std::int64_t row, std::int32_t token,
                                      const Ablation& ablation) {
  check_ids(ids, "ids", config_, false);
  detail::check_attribution(row, token, ids.batch * ids.length, config_.vocab_size);
  Gpt2ForwardOptions o;
  o.residuals = true;
  o.logit_rows = {row};
  o.head_output_rows = {row};
  o.ablation = ablation;
  Gpt2Output f = forward(ids, o);
  ModelOutput m;
  m.hidden_states = std::move(f.residuals);
  m.head_outputs = std::move(f.head_outputs);
  m.logits = std::move(f.logits);
  return detail::attribute_prenorm(readout(), m, row, token);
}

float Gpt2Model::loss(const TokenIds& inputs, const TokenIds& targets) {
  check_targets(inputs, targets, config_);
  const std::int64_t counted = count_targets(targets);
  const std::int64_t B = inputs.batch, T = inputs.length, N = B * T;
  const std::int64_t d = config_.d_model, V = config_.vocab_size;
  detail::require_at_most(N * V, kDefaultMaxElements, "the logits [B, T, vocab_size]");
  Gpt2Activations& ws = work_->parts[0];
  ws.prepare(config_, B, T, 1, true, false);
  const float* P = params_.data();
  const detail::Gpt2Layout& layout = work_->layout;
  detail::embed_forward(ws.encoded, inputs.data, P + layout.wte, P + layout.wpe, B, T, d);
  Gpt2BlockActivations& a = ws.blocks[0];
  for (int l = 0; l < config_.layers; ++l) {
    block_forward(config_, detail::gpt2_block(layout.blocks[l], P), a, ws.qkv,
                  l == 0 ? ws.encoded : a.res3, B, T, false, l);
  }
  detail::layernorm_forward(ws.lnf, ws.lnf_mean, ws.lnf_rstd, a.res3, P + layout.lnf_w,
                            P + layout.lnf_b, N, d);
  detail::matmul(ws.logits, ws.lnf, P + layout.wte, N, V, d, false, true, false);
  const double total = detail::cross_entropy(ws.logits, targets.data, N, V, false, 0.0f);
  return static_cast<float>(total / static_cast<double>(counted));
}

float Gpt2Model::loss_and_gradients(const TokenIds& inputs, const TokenIds& targets) {
  check_targets(inputs, targets, config_);
  const std::int64_t counted = count_targets(targets);
  const std::int64_t B = inputs.batch, T = inputs.length;
  detail::require_at_most(B * T * config_.vocab_size, kDefaultMaxElements,
                          "the logits [B, T, vocab_size]");
  detail::require_at_most(B * config_.heads * T * T, kDefaultMaxElements,
                          "one layer's attention weights [B, heads, T, T]");
  Gpt2Workspace& ws = *work_;
  const std::size_t n = params_.size();
  grow(grads_, n, "gradients");
  // The loss is the mean over counted targets, so each one's gradient carries 1 / counted.
  const float grad_scale = static_cast<float>(1.0 / static_cast<double>(counted));
  // Rows of the batch in `parts` contiguous shares, the first ones one row larger.
  const std::int64_t parts = std::min<std::int64_t>(threads_, B);
  auto run = [&](std::int64_t p, float* G) {
    const std::int64_t begin = p * (B / parts) + std::min(p, B % parts);
    const std::int64_t rows = B / parts + (p < B % parts ? 1 : 0);
    return gradient_pass(config_, ws.layout, params_.data(), G, num_parameters(),
                         ws.parts[static_cast<std::size_t>(p)], inputs.data + begin * T,
                         targets.data + begin * T, rows, T, grad_scale);
  };
  if (parts == 1) {
    return static_cast<float>(run(0, grads_.data()) / static_cast<double>(counted));
  }

  ws.parts.resize(static_cast<std::size_t>(parts));
  ws.part_grads.resize(static_cast<std::size_t>(parts - 1));
  for (auto& g : ws.part_grads)
    grow(g, n, "a training thread's gradients");
  std::vector<double> totals(static_cast<std::size_t>(parts), 0.0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  auto work = [&](std::int64_t p) {
    const auto i = static_cast<std::size_t>(p);
    try {
      totals[i] = run(p, p == 0 ? grads_.data() : ws.part_grads[i - 1].data());
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  {
    std::vector<std::thread> helpers;
    for (std::int64_t p = 1; p < parts; ++p)
      helpers.emplace_back(work, p);
    work(0);
    for (std::thread& t : helpers)
      t.join();
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  // A fixed order of summation: the result depends on the thread count, never on timing.
  double total = totals[0];
  for (std::size_t p = 1; p < totals.size(); ++p) {
    total += totals[p];
    const std::vector<float>& g = ws.part_grads[p - 1];
    for (std::size_t i = 0; i < n; ++i)
      grads_[i] += g[i];
  }
  return static_cast<float>(total / static_cast<double>(counted));
}

void Gpt2Model::set_threads(int threads) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  if (threads != 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "threads is ", threads,
                 "; this WebAssembly build has no threads, so it must be 1");
  }
#endif
  if (threads < 1 || threads > kGpt2MaxThreads) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "threads is ", threads, "; it must be in [1, ",
                 kGpt2MaxThreads, "]");
  }
  threads_ = threads;
}

TensorList Gpt2Model::gradients() const {
  TensorList out;
  for (const detail::Gpt2TensorInfo& t : work_->layout.tensors) {
    if (grads_.empty()) {
      out.emplace_back(t.name, Tensor(t.shape));
      continue;
    }
    const auto begin = grads_.begin() + t.offset;
    out.emplace_back(t.name, Tensor(t.shape, std::vector<float>(begin, begin + t.count)));
  }
  return out;
}

float Gpt2Model::train_step(const TokenIds& inputs, const TokenIds& targets, float lr) {
  if (!std::isfinite(lr) || lr < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "learning rate is ", lr, "; it must be finite and >= 0");
  }
  const float loss = loss_and_gradients(inputs, targets);
  last_grad_norm_ = clip_grad_norm(grads_.data(), num_parameters(), adamw_config_.max_grad_norm);
  if (!adamw_) adamw_ = std::make_unique<AdamW>(adamw_config_, num_parameters());
  adamw_->step(params_.data(), grads_.data(), segments_, lr);
  stamp_ = detail::next_model_stamp();
  work_->panels.clear();  // packed from the weights before this step
  return loss;
}

float Gpt2Model::train_step(const TokenIds& batch, float lr) {
  if (batch.length == 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "batch has 1 token per sequence; train_step needs T + 1 >= 2 (inputs are "
                 "batch[:, :T], targets batch[:, 1:])");
  }
  if (batch.length - 1 > config_.context) {
    detail::fail(ErrorCode::TOO_LARGE, "batch has ", batch.length, " tokens per sequence, i.e. ",
                 batch.length - 1, " inputs, more than the model's context of ", config_.context);
  }
  const TokenIds whole{batch.data, batch.batch, batch.length};
  // Every batch entry is an input or a target, so all must be real ids (no -1). The context
  // limit applies to the T inputs (checked above), not to the T + 1 columns.
  Gpt2Config wider = config_;
  wider.context = config_.context + 1;
  check_ids(whole, "batch", wider, false);
  const std::int64_t B = batch.batch, T = batch.length - 1;
  Gpt2Workspace& ws = *work_;
  ws.inputs.resize(static_cast<std::size_t>(B * T));
  ws.targets.resize(static_cast<std::size_t>(B * T));
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int32_t* row = batch.data + b * (T + 1);
    std::copy(row, row + T, ws.inputs.begin() + b * T);
    std::copy(row + 1, row + T + 1, ws.targets.begin() + b * T);
  }
  return train_step(TokenIds{ws.inputs.data(), B, T}, TokenIds{ws.targets.data(), B, T}, lr);
}

}  // namespace attnlens
