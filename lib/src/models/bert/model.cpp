#include <attnlens/bert.hpp>
#include <attnlens/random.hpp>

#include "core/check.hpp"
#include "core/matmul.hpp"
#include "models/bert/layout.hpp"
#include "models/bert/workspace.hpp"
#include "nn/ablation.hpp"
#include "nn/layers.hpp"
#include "nn/lens.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <new>
#include <thread>

namespace attnlens {

namespace detail {

void grow_to(BertFloats& buffer, std::int64_t n, const char* what) {
  if (static_cast<std::int64_t>(buffer.size()) >= n) return;
  try {
    buffer.resize(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the BERT model could not allocate ", n, " floats for ", what);
  }
}

}  // namespace detail

namespace {

using detail::BertActivations;
using detail::BertFloats;
using detail::BertLayerActivations;
using detail::BertLayerOffsets;
using detail::BertLayout;
using detail::grow_to;

void require_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const char* field) {
  if (value < lo || value > hi) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "BertConfig ", field, " is ", value, "; it must be in [",
                 lo, ", ", hi, "]");
  }
}

// Checks ids [B, T] (and types and the mask when given) against the model.
void check_inputs(const BertInputs& in, const BertConfig& c) {
  const TokenIds& ids = in.ids;
  if (ids.batch < 0 || ids.length < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "ids has shape [", ids.batch, ", ", ids.length,
                 "]; dimensions must be >= 0");
  }
  if (ids.batch == 0 || ids.length == 0) {
    detail::fail(ErrorCode::EMPTY_INPUT, "ids has shape [", ids.batch, ", ", ids.length,
                 "]; the model needs at least one sequence of at least one token");
  }
  if (ids.length > c.context - c.position_offset) {
    detail::fail(ErrorCode::TOO_LARGE, "ids has ", ids.length,
                 " tokens per sequence, more than the model's context of ",
                 c.context - c.position_offset, " (max_position_embeddings",
                 c.position_offset > 0 ? " less the position ids before the first token)" : ")");
  }
  detail::require_at_most(ids.batch * ids.length, kDefaultMaxElements, "ids");
  if (ids.data == nullptr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "ids has shape [", ids.batch, ", ", ids.length,
                 "] but no data");
  }
  const std::int64_t n = ids.batch * ids.length;
  for (std::int64_t i = 0; i < n; ++i) {
    if (ids.data[i] < 0 || ids.data[i] >= c.vocab_size) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "ids[", i / ids.length, ", ", i % ids.length, "] is ",
                   ids.data[i], ", outside the vocabulary [0, ", c.vocab_size, ")");
    }
  }
  if (in.token_types != nullptr) {
    const std::int32_t types = std::max(c.type_vocab_size, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      if (in.token_types[i] < 0 || in.token_types[i] >= types) {
        detail::fail(
            ErrorCode::BAD_ARGUMENT, "token_types[", i / ids.length, ", ", i % ids.length, "] is ",
            in.token_types[i], "; this model has ",
            c.type_vocab_size == 0 ? "no token types (only 0 is accepted)" : "token types 0 .. ",
            c.type_vocab_size == 0 ? "" : std::to_string(c.type_vocab_size - 1));
      }
    }
  }
  if (in.attention_mask != nullptr) {
    for (std::int64_t b = 0; b < ids.batch; ++b) {
      std::int64_t tokens = 0;
      for (std::int64_t t = 0; t < ids.length; ++t) {
        const std::int32_t m = in.attention_mask[b * ids.length + t];
        if (m != 0 && m != 1) {
          detail::fail(ErrorCode::BAD_ARGUMENT, "attention_mask[", b, ", ", t, "] is ", m,
                       "; it must be 1 (a token) or 0 (padding)");
        }
        tokens += m;
      }
      if (tokens == 0) {
        detail::fail(ErrorCode::BAD_ARGUMENT, "attention_mask row ", b,
                     " is all 0: the sequence has no token to attend to");
      }
    }
  }
}

float attention_scale(const BertConfig& c) {
  return 1.0f / std::sqrt(static_cast<float>(c.d_model / c.heads));
}

// Points a layer slot's buffers at sizes for B x T tokens (attention's are its own results).
void prepare_layer(BertLayerActivations& a, const BertConfig& c, std::int64_t N) {
  const std::int64_t d = c.d_model, I = c.intermediate;
  for (BertFloats* b : {&a.q, &a.k, &a.v, &a.atty, &a.r1, &a.h1, &a.r2, &a.out})
    grow_to(*b, N * d, "a layer's activations");
  for (BertFloats* b : {&a.h1_mean, &a.h1_rstd, &a.out_mean, &a.out_rstd})
    grow_to(*b, N, "a layer's LayerNorm statistics");
  grow_to(a.f, N * I, "the feed-forward activations");
  grow_to(a.g, N * I, "the feed-forward activations");
}

void prepare(BertActivations& ws, const BertConfig& c, std::int64_t B, std::int64_t T, int slots,
             bool backward) {
  const std::int64_t N = B * T, d = c.d_model;
  for (BertFloats* b : {&ws.emb_sum, &ws.emb})
    grow_to(*b, N * d, "the embeddings");
  grow_to(ws.emb_mean, N, "the embeddings' LayerNorm");
  grow_to(ws.emb_rstd, N, "the embeddings' LayerNorm");
  grow_to(ws.qkv, N * 3 * d, "the query, key and value projections");
  if (static_cast<int>(ws.layers.size()) < slots) ws.layers.resize(static_cast<std::size_t>(slots));
  for (int s = 0; s < slots; ++s)
    prepare_layer(ws.layers[static_cast<std::size_t>(s)], c, N);
  if (backward) {
    for (BertFloats* b : {&ws.dres, &ws.dtmp, &ws.datty, &ws.dheads, &ws.dq, &ws.dk, &ws.dv})
      grow_to(*b, N * d, "the backward pass");
    grow_to(ws.dqkv, N * 3 * d, "the backward pass");
    grow_to(ws.dfc, N * c.intermediate, "the backward pass");
    grow_to(ws.dscores, T * T, "the backward pass");
  }
}

// The boolean key mask [B, 1, T, T] of padded sequences (query rows repeat the key row), or an
// empty mask when nothing is padding.
MaskView key_mask(BertActivations& ws, const std::int32_t* attention_mask, std::int64_t B,
                  std::int64_t T) {
  if (attention_mask == nullptr ||
      std::all_of(attention_mask, attention_mask + B * T, [](std::int32_t m) { return m == 1; })) {
    return MaskView::none();
  }
  ws.mask.resize(static_cast<std::size_t>(B * T * T));
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t i = 0; i < T; ++i) {
      for (std::int64_t j = 0; j < T; ++j)
        ws.mask[static_cast<std::size_t>((b * T + i) * T + j)] =
            static_cast<std::uint8_t>(attention_mask[b * T + j]);
    }
  }
  return MaskView::boolean(ws.mask.data(), {B, 1, T, T});
}

// RoBERTa's position ids (modeling_roberta.py, create_position_ids_from_input_ids): a token that
// is not the padding token takes pad + (how many such tokens end at it), the padding token pad.
// Empty for BERT and DistilBERT (position t).
std::vector<std::int32_t> position_ids(const BertConfig& c, const TokenIds& ids) {
  std::vector<std::int32_t> out;
  if (c.position_offset == 0) return out;
  const std::int32_t pad = c.position_offset - 1;
  out.resize(static_cast<std::size_t>(ids.batch * ids.length));
  for (std::int64_t b = 0; b < ids.batch; ++b) {
    std::int32_t count = 0;
    for (std::int64_t t = 0; t < ids.length; ++t) {
      const std::int64_t n = b * ids.length + t;
      out[static_cast<std::size_t>(n)] = ids.data[n] == pad ? pad : pad + ++count;
    }
  }
  return out;
}

void embed(const BertConfig& c, const BertLayout& l, const float* P, BertActivations& ws,
           const BertInputs& in, std::int64_t B, std::int64_t T) {
  const std::int64_t N = B * T, d = c.d_model;
  const float* types_table = l.token_type >= 0 ? P + l.token_type : nullptr;
  // Without token types given, every token is type 0 (BERT's default).
  std::vector<std::int32_t> zeros;
  const std::int32_t* types = in.token_types;
  if (types_table != nullptr && types == nullptr) {
    zeros.assign(static_cast<std::size_t>(N), 0);
    types = zeros.data();
  }
  const std::vector<std::int32_t> positions = position_ids(c, in.ids);
  detail::embed_forward(ws.emb_sum.data(), in.ids.data, P + l.word, P + l.position, B, T, d,
                        types_table != nullptr ? types : nullptr, types_table,
                        positions.empty() ? nullptr : positions.data());
  detail::layernorm_forward(ws.emb.data(), ws.emb_mean.data(), ws.emb_rstd.data(),
                            ws.emb_sum.data(), P + l.emb_ln_w, P + l.emb_ln_b, N, d,
                            c.layer_norm_eps);
}

// One layer forward: x (N, d) -> a.out. `x` may be a.out itself (one slot reused in inference):
// it is read before a.out is written.
void layer_forward(const BertConfig& c, const BertLayerOffsets& o, const float* P,
                   BertLayerActivations& a, float* qkv, const float* x, std::int64_t B,
                   std::int64_t T, const MaskView& mask, bool keep_weights, int layer,
                   detail::WeightPanels* panels = nullptr, const Ablation* ablation = nullptr,
                   const std::int32_t* attention_mask = nullptr) {
  const std::int64_t N = B * T, d = c.d_model, H = c.heads, hd = d / H, I = c.intermediate;
  const float eps = c.layer_norm_eps;
  detail::linear_forward(qkv, x, P + o.qkv_w, P + o.qkv_b, nullptr, N, d, 3 * d, panels);
  detail::split_heads(a.q.data(), a.k.data(), a.v.data(), qkv, B, T, H, hd);
  AttentionOptions options;
  options.scale = attention_scale(c);
  options.mask = mask;
  options.return_weights = keep_weights;
  const Shape heads = {B, H, T, hd};
  try {
    a.attention = attention(ConstTensorView{a.q.data(), heads}, ConstTensorView{a.k.data(), heads},
                            ConstTensorView{a.v.data(), heads}, options);
  } catch (const Error& e) {
    detail::fail(e.code(), "BERT layer ", layer, " attention: ", e.what());
  }
  detail::merge_heads(a.atty.data(), a.attention.output.data.data(), B, T, H, hd);
  if (ablation != nullptr) {
    detail::ablate_heads(a.atty.data(), *ablation, layer, B, T, H, hd, false, attention_mask);
  }
  detail::linear_forward(a.r1.data(), a.atty.data(), P + o.ao_w, P + o.ao_b, x, N, d, d, panels);
  detail::layernorm_forward(a.h1.data(), a.h1_mean.data(), a.h1_rstd.data(), a.r1.data(),
                            P + o.ln1_w, P + o.ln1_b, N, d, eps);
  detail::linear_forward(a.f.data(), a.h1.data(), P + o.fc1_w, P + o.fc1_b, nullptr, N, d, I,
                         panels);
  detail::gelu_erf_forward(a.g.data(), a.f.data(), N * I);
  detail::linear_forward(a.r2.data(), a.g.data(), P + o.fc2_w, P + o.fc2_b, a.h1.data(), N, I, d,
                         panels);
  detail::layernorm_forward(a.out.data(), a.out_mean.data(), a.out_rstd.data(), a.r2.data(),
                            P + o.ln2_w, P + o.ln2_b, N, d, eps);
}

// One layer backward: on entry ws.dres is dL/d(a.out), on exit dL/dx.
void layer_backward(const BertConfig& c, const BertLayerOffsets& o, const float* P, float* G,
                    const BertLayerActivations& a, BertActivations& ws, const float* x,
                    std::int64_t B, std::int64_t T) {
  const std::int64_t N = B * T, d = c.d_model, H = c.heads, hd = d / H, I = c.intermediate;
  float* dres = ws.dres.data();
  float* dtmp = ws.dtmp.data();
  // out = LN2(r2): dr2 into dtmp.
  std::fill(dtmp, dtmp + N * d, 0.0f);
  detail::layernorm_backward(dtmp, G + o.ln2_w, G + o.ln2_b, dres, a.r2.data(), P + o.ln2_w,
                             a.out_mean.data(), a.out_rstd.data(), N, d);
  // r2 = h1 + g W2 + b2: dh1 = dr2 (residual) + the feed-forward's gradient.
  detail::linear_backward(ws.dfc.data(), G + o.fc2_w, G + o.fc2_b, dtmp, a.g.data(), P + o.fc2_w, N,
                          I, d);
  detail::gelu_erf_backward(ws.dfc.data(), a.f.data(), N * I);
  detail::linear_backward(dres, G + o.fc1_w, G + o.fc1_b, ws.dfc.data(), a.h1.data(), P + o.fc1_w,
                          N, d, I);
  detail::add_into(dres, dtmp, N * d);  // dres = dh1
  // h1 = LN1(r1): dr1 into dtmp.
  std::fill(dtmp, dtmp + N * d, 0.0f);
  detail::layernorm_backward(dtmp, G + o.ln1_w, G + o.ln1_b, dres, a.r1.data(), P + o.ln1_w,
                             a.h1_mean.data(), a.h1_rstd.data(), N, d);
  // r1 = x + atty Wo + bo.
  detail::linear_backward(ws.datty.data(), G + o.ao_w, G + o.ao_b, dtmp, a.atty.data(), P + o.ao_w,
                          N, d, d);
  detail::unmerge_heads(ws.dheads.data(), ws.datty.data(), B, T, H, hd);
  detail::attention_backward(ws.dq.data(), ws.dk.data(), ws.dv.data(), ws.dscores.data(),
                             ws.dheads.data(), a.q.data(), a.k.data(), a.v.data(),
                             a.attention.weights.data.data(), B, H, T, hd, attention_scale(c),
                             false);
  detail::join_heads(ws.dqkv.data(), ws.dq.data(), ws.dk.data(), ws.dv.data(), B, T, H, hd);
  detail::linear_backward(dres, G + o.qkv_w, G + o.qkv_b, ws.dqkv.data(), x, P + o.qkv_w, N, d,
                          3 * d);
  detail::add_into(dres, dtmp, N * d);  // dx = dr1 (residual) + the projections' gradient
}

// The masked-LM head over the rows ws.rows of `hidden` (N, d): ws.logits (R, V).
void head_forward(const BertConfig& c, const BertLayout& l, const float* P, BertActivations& ws,
                  const float* hidden) {
  const std::int64_t R = static_cast<std::int64_t>(ws.rows.size()), d = c.d_model, V = c.vocab_size;
  for (BertFloats* b : {&ws.head_in, &ws.head_t, &ws.head_u, &ws.head_v})
    grow_to(*b, R * d, "the masked-LM head");
  grow_to(ws.head_mean, R, "the masked-LM head");
  grow_to(ws.head_rstd, R, "the masked-LM head");
  grow_to(ws.logits, R * V, "the masked-LM logits");
  for (std::int64_t r = 0; r < R; ++r)
    std::copy(hidden + ws.rows[static_cast<std::size_t>(r)] * d,
              hidden + (ws.rows[static_cast<std::size_t>(r)] + 1) * d, ws.head_in.data() + r * d);
  detail::linear_forward(ws.head_t.data(), ws.head_in.data(), P + l.head_w, P + l.head_b, nullptr,
                         R, d, d);
  detail::gelu_erf_forward(ws.head_u.data(), ws.head_t.data(), R * d);
  detail::layernorm_forward(ws.head_v.data(), ws.head_mean.data(), ws.head_rstd.data(),
                            ws.head_u.data(), P + l.head_ln_w, P + l.head_ln_b, R, d,
                            c.layer_norm_eps);
  detail::matmul(ws.logits.data(), ws.head_v.data(), P + l.word, R, V, d, false, true, false);
  for (std::int64_t r = 0; r < R; ++r)
    detail::add_into(ws.logits.data() + r * V, P + l.decoder_b, V);
}

// Forward with every layer's activations, the masked-LM loss over the labelled rows, and the
// backward pass into G (zeroed here). Returns the summed loss (float64).
double gradient_pass(const BertConfig& c, const BertLayout& l, const float* P, float* G,
                     std::int64_t param_count, BertActivations& ws, const BertInputs& in,
                     const std::int32_t* labels, std::int64_t B, std::int64_t T, float grad_scale) {
  const std::int64_t N = B * T, d = c.d_model, V = c.vocab_size;
  prepare(ws, c, B, T, c.layers, true);
  const MaskView mask = key_mask(ws, in.attention_mask, B, T);
  embed(c, l, P, ws, in, B, T);
  for (int i = 0; i < c.layers; ++i) {
    const float* x = i == 0 ? ws.emb.data() : ws.layers[static_cast<std::size_t>(i - 1)].out.data();
    layer_forward(c, l.layers[static_cast<std::size_t>(i)], P,
                  ws.layers[static_cast<std::size_t>(i)], ws.qkv.data(), x, B, T, mask, true, i);
  }
  const float* last = ws.layers[static_cast<std::size_t>(c.layers - 1)].out.data();
  ws.rows.clear();
  ws.row_labels.clear();
  for (std::int64_t n = 0; n < N; ++n) {
    if (labels[n] < 0) continue;
    ws.rows.push_back(n);
    ws.row_labels.push_back(labels[n]);
  }
  std::fill(G, G + param_count, 0.0f);
  const std::int64_t R = static_cast<std::int64_t>(ws.rows.size());
  double total = 0.0;
  std::fill(ws.dres.data(), ws.dres.data() + N * d, 0.0f);
  if (R > 0) {
    head_forward(c, l, P, ws, last);
    total = detail::cross_entropy(ws.logits.data(), ws.row_labels.data(), R, V, true, grad_scale);
    // Backward of the head; ws.logits holds dL/dlogits (R, V).
    grow_to(ws.dhead_a, R * d, "the head's backward pass");
    grow_to(ws.dhead_b, R * d, "the head's backward pass");
    float* da = ws.dhead_a.data();
    float* db = ws.dhead_b.data();
    detail::matmul(da, ws.logits.data(), P + l.word, R, d, V, false, false, false);  // dv
    detail::matmul(G + l.word, ws.logits.data(), ws.head_v.data(), V, d, R, true, false, true);
    for (std::int64_t r = 0; r < R; ++r)
      detail::add_into(G + l.decoder_b, ws.logits.data() + r * V, V);
    std::fill(db, db + R * d, 0.0f);
    detail::layernorm_backward(db, G + l.head_ln_w, G + l.head_ln_b, da, ws.head_u.data(),
                               P + l.head_ln_w, ws.head_mean.data(), ws.head_rstd.data(), R, d);
    detail::gelu_erf_backward(db, ws.head_t.data(), R * d);
    detail::linear_backward(da, G + l.head_w, G + l.head_b, db, ws.head_in.data(), P + l.head_w, R,
                            d, d);
    for (std::int64_t r = 0; r < R; ++r)
      detail::add_into(ws.dres.data() + ws.rows[static_cast<std::size_t>(r)] * d, da + r * d, d);
  }
  for (int i = c.layers - 1; i >= 0; --i) {
    const float* x = i == 0 ? ws.emb.data() : ws.layers[static_cast<std::size_t>(i - 1)].out.data();
    layer_backward(c, l.layers[static_cast<std::size_t>(i)], P, G,
                   ws.layers[static_cast<std::size_t>(i)], ws, x, B, T);
  }
  // The embeddings: x = LN(word + position + type).
  std::fill(ws.dtmp.data(), ws.dtmp.data() + N * d, 0.0f);
  detail::layernorm_backward(ws.dtmp.data(), G + l.emb_ln_w, G + l.emb_ln_b, ws.dres.data(),
                             ws.emb_sum.data(), P + l.emb_ln_w, ws.emb_mean.data(),
                             ws.emb_rstd.data(), N, d);
  std::vector<std::int32_t> zeros;
  const std::int32_t* types = in.token_types;
  if (l.token_type >= 0 && types == nullptr) {
    zeros.assign(static_cast<std::size_t>(N), 0);
    types = zeros.data();
  }
  const std::vector<std::int32_t> positions = position_ids(c, in.ids);
  detail::embed_backward(G + l.word, G + l.position, ws.dtmp.data(), in.ids.data, B, T, d,
                         l.token_type >= 0 ? types : nullptr,
                         l.token_type >= 0 ? G + l.token_type : nullptr,
                         positions.empty() ? nullptr : positions.data());
  return total;
}

std::vector<float>& grow(std::vector<float>& v, std::size_t n, const char* what) {
  if (v.size() == n) return v;
  try {
    v.resize(n);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the BERT model could not allocate ", what, " for ", n,
                 " parameters");
  }
  return v;
}

}  // namespace

void validate(const BertConfig& c) {
  require_range(c.layers, 1, kGpt2MaxLayers, "layers");
  require_range(c.heads, 1, kGpt2MaxHeads, "heads");
  require_range(c.d_model, 1, kGpt2MaxModelDim, "d_model");
  require_range(c.intermediate, 1, 4 * kGpt2MaxModelDim, "intermediate");
  require_range(c.context, 1, kGpt2MaxContext, "context");
  require_range(c.vocab_size, 1, kGpt2MaxVocab, "vocab_size");
  require_range(c.type_vocab_size, 0, c.flavor == BertFlavor::DistilBert ? 0 : 1024,
                "type_vocab_size");
  // RoBERTa's positions start past its padding id; BERT's and DistilBERT's at 0 (a config
  // saved with another offset would read back as another model).
  if (c.flavor == BertFlavor::Roberta) {
    require_range(c.position_offset, 1, c.context - 1, "position_offset");
  } else {
    require_range(c.position_offset, 0, 0, "position_offset");
  }
  if (c.d_model % c.heads != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "BertConfig d_model is ", c.d_model,
                 ", which is not a multiple of heads = ", c.heads);
  }
  if (!std::isfinite(c.layer_norm_eps) || c.layer_norm_eps <= 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "BertConfig layer_norm_eps is ", c.layer_norm_eps,
                 "; it must be finite and > 0");
  }
  const std::int64_t n = bert_parameter_count(c);
  if (n > kGpt2MaxParameters) {
    detail::fail(ErrorCode::TOO_LARGE, "BertConfig gives ", n, " parameters, over the limit of ",
                 kGpt2MaxParameters);
  }
}

std::int64_t bert_parameter_count(const BertConfig& c) {
  const std::int64_t d = c.d_model, I = c.intermediate, V = c.vocab_size;
  const std::int64_t embeddings = (V + c.context + c.type_vocab_size) * d + 2 * d;
  const std::int64_t layer = 3 * d * d + 3 * d + d * d + d + 2 * d + d * I + I + I * d + d + 2 * d;
  const std::int64_t head = c.mlm_head ? d * d + d + 2 * d + V : 0;
  return embeddings + c.layers * layer + head;
}

BertModel::BertModel(const BertConfig& config) : config_(config) {
  validate(config);
  work_ = std::make_unique<detail::BertWorkspace>();
  work_->layout = detail::bert_layout(config);
  const std::int64_t n = work_->layout.total;
  if (static_cast<std::uint64_t>(n) > params_.max_size()) {
    detail::fail(ErrorCode::TOO_LARGE, "the BERT model has ", n,
                 " parameters, more float32 values than this platform's address space holds");
  }
  try {
    params_.assign(static_cast<std::size_t>(n), 0.0f);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the BERT model could not allocate its ", n,
                 " parameters");
  }
  for (const detail::BertParam& p : work_->layout.params)
    segments_.push_back(ParamSegment{p.offset, p.count, p.role == detail::BertRole::Matrix});
}

BertModel::BertModel(BertModel&&) noexcept = default;
BertModel& BertModel::operator=(BertModel&&) noexcept = default;
BertModel::~BertModel() = default;

BertModel BertModel::random(const BertConfig& config, std::uint64_t seed) {
  BertModel model(config);
  Rng rng(seed);
  for (const detail::BertParam& p : model.work_->layout.params) {
    float* x = model.params_.data() + p.offset;
    switch (p.role) {
      case detail::BertRole::NormWeight:
        std::fill(x, x + p.count, 1.0f);
        break;
      case detail::BertRole::Bias:
        std::fill(x, x + p.count, 0.0f);
        break;
      case detail::BertRole::Matrix:
        for (std::int64_t i = 0; i < p.count; ++i)
          x[i] = static_cast<float>(0.02 * rng.normal());
        break;
    }
  }
  return model;
}

BertOutput BertModel::forward(const BertInputs& in, const BertForwardOptions& options) {
  check_inputs(in, config_);
  const BertConfig& c = config_;
  const std::int64_t B = in.ids.batch, T = in.ids.length, N = B * T;
  const std::int64_t L = c.layers, H = c.heads, d = c.d_model, V = c.vocab_size;
  detail::check_ablation(options.ablation, L, H);
  detail::check_head_output_rows(options.head_output_rows, N);
  const auto HR = static_cast<std::int64_t>(options.head_output_rows.size());
  detail::require_at_most(L * HR * H * d, options.max_elements,
                          "the heads' writes [layers, rows, heads, d_model]");
  const BertLayout& l = work_->layout;
  BertActivations& ws = work_->parts[0];
  ws.rows.clear();
  if (options.logits) {
    if (l.decoder_b < 0) {
      detail::fail(ErrorCode::BAD_ARGUMENT,
                   "this checkpoint has no masked-LM head (cls.predictions / vocab_projector), so "
                   "it gives no logits; load a *ForMaskedLM checkpoint");
    }
    if (options.logit_rows.empty()) {
      for (std::int64_t n = 0; n < N; ++n)
        ws.rows.push_back(n);
    } else {
      for (std::int64_t r : options.logit_rows) {
        if (r < 0 || r >= N) {
          detail::fail(ErrorCode::BAD_ARGUMENT, "logit row ", r, " is outside [0, ", N,
                       ") (rows are b · T + t)");
        }
        ws.rows.push_back(r);
      }
    }
    detail::require_at_most(static_cast<std::int64_t>(ws.rows.size()) * V, options.max_elements,
                            "the logits [rows, vocab_size]");
  }
  if (options.attention) {
    detail::require_at_most(L * B * H * T * T, options.max_elements,
                            "the attention weights [layers, B, heads, T, T]");
  }
  if (options.hidden_states) {
    detail::require_at_most((L + 1) * N * d, options.max_elements,
                            "the hidden states [layers + 1, B, T, d]");
  }
  BertOutput out;
  try {
    if (options.attention) out.attention = Tensor({L, B, H, T, T});
    if (options.hidden_states) out.hidden_states = Tensor({L + 1, B, T, d});
    if (options.value_weighted) {
      detail::require_at_most(L * B * T * T, options.max_elements,
                              "the value-weighted attention [layers, B, T, T]");
      detail::require_at_most(B * H * T * T, options.max_elements,
                              "one layer's attention weights [B, heads, T, T] (value weighting)");
      out.value_norms = Tensor({L, B, H, T});
      out.value_weighted = Tensor({L, B, T, T});
    }
    if (HR > 0) out.head_outputs = Tensor({L, HR, H, d});
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the BERT forward pass could not allocate its results");
  }
  prepare(ws, c, B, T, 1, false);
  const MaskView mask = key_mask(ws, in.attention_mask, B, T);
  const float* P = params_.data();
  embed(c, l, P, ws, in, B, T);
  if (options.hidden_states)
    std::copy(ws.emb.begin(), ws.emb.begin() + N * d, out.hidden_states.data.begin());
  BertLayerActivations& a = ws.layers[0];
  for (int i = 0; i < c.layers; ++i) {
    layer_forward(c, l.layers[static_cast<std::size_t>(i)], P, a, ws.qkv.data(),
                  i == 0 ? ws.emb.data() : a.out.data(), B, T, mask,
                  options.attention || options.value_weighted, i, &work_->panels, &options.ablation,
                  in.attention_mask);
    if (options.value_weighted) {
      detail::value_weighted(out.value_norms.data.data() + i * B * H * T,
                             out.value_weighted.data.data() + i * B * T * T, a.v.data(),
                             P + l.layers[static_cast<std::size_t>(i)].ao_w,
                             a.attention.weights.data.data(), B, H, H, T, d / H, d,
                             &options.ablation, i);
    }
    if (HR > 0) {
      detail::head_writes(out.head_outputs.data.data() + i * HR * H * d, a.atty.data(),
                          P + l.layers[static_cast<std::size_t>(i)].ao_w, options.head_output_rows,
                          H, d / H, d);
    }
    if (!std::isfinite(detail::finite_max_abs(a.out.data(), N * d))) {
      detail::fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in layer ", i,
                   ": the weights are finite but too large for these inputs");
    }
    if (options.attention) {
      const std::vector<float>& w = a.attention.weights.data;
      std::copy(w.begin(), w.end(), out.attention.data.begin() + i * B * H * T * T);
    }
    if (options.hidden_states) {
      std::copy(a.out.begin(), a.out.begin() + N * d,
                out.hidden_states.data.begin() + (i + 1) * N * d);
    }
  }
  if (options.logits) {
    head_forward(c, l, P, ws, a.out.data());
    const std::int64_t R = static_cast<std::int64_t>(ws.rows.size());
    out.logits = options.logit_rows.empty() ? Tensor({B, T, V}) : Tensor({R, V});
    std::copy(ws.logits.begin(), ws.logits.begin() + R * V, out.logits.data.begin());
    if (!std::isfinite(detail::finite_max_abs(out.logits.data.data(), R * V))) {
      detail::fail(ErrorCode::NON_FINITE,
                   "the forward pass overflowed float32 in the masked-LM "
                   "logits: the weights are finite but too large for these inputs");
    }
  }
  return out;
}

Tensor BertModel::unembed(const Tensor& rows) {
  const BertConfig& c = config_;
  const std::int64_t d = c.d_model, V = c.vocab_size;
  if (work_->layout.decoder_b < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "this checkpoint has no masked-LM head (cls.predictions / vocab_projector), so "
                 "nothing to unembed; load a *ForMaskedLM checkpoint");
  }
  detail::check_stream_rows(rows, d, V);
  const std::int64_t R = rows.shape[0];
  BertActivations& ws = work_->parts[0];
  ws.rows.resize(static_cast<std::size_t>(R));
  for (std::int64_t r = 0; r < R; ++r)
    ws.rows[static_cast<std::size_t>(r)] = r;
  Tensor out;
  try {
    head_forward(c, work_->layout, params_.data(), ws, rows.data.data());
    out = Tensor({R, V});
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "unembed could not allocate the logits of ", R, " rows");
  }
  std::copy(ws.logits.begin(), ws.logits.begin() + R * V, out.data.begin());
  if (!std::isfinite(detail::finite_max_abs(out.data.data(), R * V))) {
    detail::fail(ErrorCode::NON_FINITE, "the logits of these rows overflow float32");
  }
  return out;
}

float BertModel::loss_and_gradients(const BertInputs& in, const TokenIds& labels) {
  check_inputs(in, config_);
  const BertConfig& c = config_;
  if (work_->layout.decoder_b < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "masked-LM training needs the masked-LM head; this model has none");
  }
  const std::int64_t B = in.ids.batch, T = in.ids.length;
  if (labels.batch != B || labels.length != T || labels.data == nullptr) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "labels have shape [", labels.batch, ", ",
                 labels.length, "] but ids have [", B, ", ", T, "]; they must be equal");
  }
  std::int64_t counted = 0;
  for (std::int64_t i = 0; i < B * T; ++i) {
    const std::int32_t y = labels.data[i];
    if (y == -1) continue;
    if (y < 0 || y >= c.vocab_size) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "labels[", i / T, ", ", i % T, "] is ", y,
                   ", outside the vocabulary [0, ", c.vocab_size,
                   ") (-1 marks a position that "
                   "is not predicted)");
    }
    ++counted;
  }
  if (counted == 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "every one of the ", B * T,
                 " labels is -1 (not predicted); the loss needs at least one");
  }
  detail::require_at_most(counted * c.vocab_size, kDefaultMaxElements,
                          "the logits [labels, vocab_size]");
  detail::require_at_most(B * c.heads * T * T, kDefaultMaxElements,
                          "one layer's attention weights [B, heads, T, T]");
  detail::BertWorkspace& ws = *work_;
  const std::size_t n = params_.size();
  grow(grads_, n, "gradients");
  const float grad_scale = static_cast<float>(1.0 / static_cast<double>(counted));
  const std::int64_t parts = std::min<std::int64_t>(threads_, B);
  auto run = [&](std::int64_t p, float* G) {
    const std::int64_t begin = p * (B / parts) + std::min(p, B % parts);
    const std::int64_t rows = B / parts + (p < B % parts ? 1 : 0);
    BertInputs share;
    share.ids = TokenIds{in.ids.data + begin * T, rows, T};
    if (in.token_types != nullptr) share.token_types = in.token_types + begin * T;
    if (in.attention_mask != nullptr) share.attention_mask = in.attention_mask + begin * T;
    return gradient_pass(c, ws.layout, params_.data(), G, num_parameters(),
                         ws.parts[static_cast<std::size_t>(p)], share, labels.data + begin * T,
                         rows, T, grad_scale);
  };
  if (parts == 1) return static_cast<float>(run(0, grads_.data()) / static_cast<double>(counted));

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
  double total = totals[0];
  for (std::size_t p = 1; p < totals.size(); ++p) {
    total += totals[p];
    const std::vector<float>& g = ws.part_grads[p - 1];
    for (std::size_t i = 0; i < n; ++i)
      grads_[i] += g[i];
  }
  return static_cast<float>(total / static_cast<double>(counted));
}

float BertModel::train_step(const BertInputs& in, const TokenIds& labels, float lr) {
  if (!std::isfinite(lr) || lr < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "learning rate is ", lr, "; it must be finite and >= 0");
  }
  const float loss = loss_and_gradients(in, labels);
  last_grad_norm_ = clip_grad_norm(grads_.data(), num_parameters(), adamw_config_.max_grad_norm);
  if (!adamw_) adamw_ = std::make_unique<AdamW>(adamw_config_, num_parameters());
  adamw_->step(params_.data(), grads_.data(), segments_, lr);
  work_->panels.clear();  // packed from the weights before this step
  return loss;
}

void BertModel::set_threads(int threads) {
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

void BertModel::set_optimizer(const AdamWConfig& config) {
  validate(config);
  adamw_config_ = config;
  if (adamw_) adamw_->set_config(config);
}

std::int64_t BertModel::steps() const noexcept {
  return adamw_ ? adamw_->steps() : 0;
}

AdamWState BertModel::optimizer_state() const {
  return adamw_ ? adamw_->state() : AdamWState{};
}

void BertModel::set_optimizer_state(const AdamWState& state) {
  if (state.m.empty() && state.v.empty() && state.steps == 0) {
    adamw_.reset();
    return;
  }
  auto adamw = std::make_unique<AdamW>(adamw_config_, num_parameters());
  adamw->set_state(state);
  adamw_ = std::move(adamw);
}

}  // namespace attnlens
