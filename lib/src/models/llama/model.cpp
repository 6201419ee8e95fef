#include "models/llama/model.hpp"

#include "core/check.hpp"
#include "models/tensor_source.hpp"
#include "nn/lens.hpp"

#include <algorithm>
#include <map>
#include <new>
#include <string_view>

namespace attnlens::detail {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Where each tensor of one block sits: offsets into the parameters, -1 for none.
struct BlockOffsets {
  std::int64_t attn_norm = -1, attn_norm_b = -1, mlp_norm_b = -1, q_w = -1, q_b = -1, k_w = -1,
               k_b = -1, v_w = -1, v_b = -1;
  std::int64_t o_w = -1, o_b = -1, q_norm = -1, k_norm = -1, post_attn_norm = -1, mlp_norm = -1;
  std::int64_t post_mlp_norm = -1;
  std::int64_t gate_w = -1, gate_b = -1, up_w = -1, up_b = -1, down_w = -1, down_b = -1;
};

struct Layout {
  std::vector<LlamaTensor> tensors;
  std::int64_t embed = 0, final_norm = 0, head = -1;
  // ModernBERT's: the embeddings' norm, the biases of its norms, the head's transform and bias.
  std::int64_t embed_norm = -1, embed_norm_b = -1, final_norm_b = -1;
  std::int64_t head_dense = -1, head_dense_b = -1, head_norm = -1, head_norm_b = -1;
  std::int64_t head_bias = -1;
  std::vector<BlockOffsets> blocks;
  std::int64_t total = 0;
};

// The tensors a config needs, in the order of a transformers state dict.
Layout layout_of(const LlamaConfig& c) {
  const BlockSpec& b = c.spec.block;
  const std::int64_t d = b.d_model, hd = b.head_dim, I = b.intermediate, V = c.spec.vocab_size;
  const std::int64_t qw = b.heads * hd, kvw = b.kv_heads * hd;
  Layout layout;
  const auto add = [&](std::string name, Shape shape, bool transposed, std::int64_t pieces = 1) {
    LlamaTensor t;
    t.name = std::move(name);
    t.count = shape_numel(shape);
    t.shape = std::move(shape);
    t.offset = layout.total;
    t.transposed = transposed;
    t.pieces = pieces;
    layout.total += t.count;
    layout.tensors.push_back(std::move(t));
    return layout.tensors.back().offset;
  };
  // A torch Linear: weight [out, in], bias [out].
  const auto linear = [&](const std::string& name, std::int64_t in, std::int64_t out, bool bias,
                          std::int64_t& w, std::int64_t& bo) {
    w = add(name + ".weight", {out, in}, true);
    if (bias) bo = add(name + ".bias", {out}, false);
  };
  if (c.model_type == "modernbert") {
    // ModernBertForMaskedLM's state dict (modeling_modernbert.py): model.embeddings, model.layers
    // (attn_norm absent in layer 0: nn.Identity), model.final_norm, head, decoder.
    const auto norm = [&](const std::string& name, std::int64_t& w, std::int64_t& bias) {
      w = add(name + ".weight", {d}, false);
      if (b.norm_bias) bias = add(name + ".bias", {d}, false);
    };
    layout.embed = add("model.embeddings.tok_embeddings.weight", {V, d}, false);
    norm("model.embeddings.norm", layout.embed_norm, layout.embed_norm_b);
    for (std::int64_t i = 0; i < c.spec.layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      BlockOffsets o;
      if (i > 0) norm(p + "attn_norm", o.attn_norm, o.attn_norm_b);
      o.q_w = add(p + "attn.Wqkv.weight", {3 * qw, d}, true, 3);
      o.k_w = o.q_w + d * qw;
      o.v_w = o.k_w + d * qw;
      if (b.q_bias) {
        o.q_b = add(p + "attn.Wqkv.bias", {3 * qw}, false);
        o.k_b = o.q_b + qw;
        o.v_b = o.k_b + qw;
      }
      linear(p + "attn.Wo", qw, d, b.o_bias, o.o_w, o.o_b);
      norm(p + "mlp_norm", o.mlp_norm, o.mlp_norm_b);
      // Wi's first half is activated ("input"), its second multiplies ("gate"): the block's
      // gate and up.
      o.gate_w = add(p + "mlp.Wi.weight", {2 * I, d}, true, 2);
      o.up_w = o.gate_w + d * I;
      if (b.mlp_bias) {
        o.gate_b = add(p + "mlp.Wi.bias", {2 * I}, false);
        o.up_b = o.gate_b + I;
      }
      linear(p + "mlp.Wo", I, d, b.mlp_bias, o.down_w, o.down_b);
      layout.blocks.push_back(o);
    }
    norm("model.final_norm", layout.final_norm, layout.final_norm_b);
    linear("head.dense", d, d, c.classifier_bias, layout.head_dense, layout.head_dense_b);
    norm("head.norm", layout.head_norm, layout.head_norm_b);
    if (!c.tied) layout.head = add("decoder.weight", {V, d}, false);
    if (c.decoder_bias) layout.head_bias = add("decoder.bias", {V}, false);
    return layout;
  }
  layout.embed = add("model.embed_tokens.weight", {V, d}, false);
  for (std::int64_t i = 0; i < c.spec.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    BlockOffsets o;
    o.attn_norm = add(p + "input_layernorm.weight", {d}, false);
    linear(p + "self_attn.q_proj", d, qw, b.q_bias, o.q_w, o.q_b);
    linear(p + "self_attn.k_proj", d, kvw, b.k_bias, o.k_w, o.k_b);
    linear(p + "self_attn.v_proj", d, kvw, b.v_bias, o.v_w, o.v_b);
    linear(p + "self_attn.o_proj", qw, d, b.o_bias, o.o_w, o.o_b);
    if (b.qk_norm) {
      o.q_norm = add(p + "self_attn.q_norm.weight", {hd}, false);
      o.k_norm = add(p + "self_attn.k_norm.weight", {hd}, false);
    }
    // Sandwich (Gemma): post_attention_layernorm follows the attention and the MLP has a norm
    // on each side; pre (Llama): post_attention_layernorm is the MLP's norm.
    const bool sandwich = b.placement == NormPlacement::Sandwich;
    if (sandwich) {
      o.post_attn_norm = add(p + "post_attention_layernorm.weight", {d}, false);
      o.mlp_norm = add(p + "pre_feedforward_layernorm.weight", {d}, false);
    } else {
      o.mlp_norm = add(p + "post_attention_layernorm.weight", {d}, false);
    }
    linear(p + "mlp.gate_proj", d, I, b.mlp_bias, o.gate_w, o.gate_b);
    linear(p + "mlp.up_proj", d, I, b.mlp_bias, o.up_w, o.up_b);
    linear(p + "mlp.down_proj", I, d, b.mlp_bias, o.down_w, o.down_b);
    if (sandwich) o.post_mlp_norm = add(p + "post_feedforward_layernorm.weight", {d}, false);
    layout.blocks.push_back(o);
  }
  layout.final_norm = add("model.norm.weight", {d}, false);
  if (!c.tied) layout.head = add("lm_head.weight", {V, d}, false);
  return layout;
}

DecoderWeights weights_of(const Layout& layout, const float* base) {
  const auto at = [base](std::int64_t offset) { return offset < 0 ? nullptr : base + offset; };
  DecoderWeights w;
  w.embed = base + layout.embed;
  w.embed_norm_w = at(layout.embed_norm);
  w.embed_norm_b = at(layout.embed_norm_b);
  for (const BlockOffsets& o : layout.blocks) {
    BlockWeights b;
    b.attn_norm_w = at(o.attn_norm);
    b.attn_norm_b = at(o.attn_norm_b);
    b.mlp_norm_b = at(o.mlp_norm_b);
    b.q_w = at(o.q_w);
    b.q_b = at(o.q_b);
    b.k_w = at(o.k_w);
    b.k_b = at(o.k_b);
    b.v_w = at(o.v_w);
    b.v_b = at(o.v_b);
    b.o_w = at(o.o_w);
    b.o_b = at(o.o_b);
    b.q_norm_w = at(o.q_norm);
    b.k_norm_w = at(o.k_norm);
    b.post_attn_norm_w = at(o.post_attn_norm);
    b.mlp_norm_w = at(o.mlp_norm);
    b.post_mlp_norm_w = at(o.post_mlp_norm);
    b.gate_w = at(o.gate_w);
    b.gate_b = at(o.gate_b);
    b.up_w = at(o.up_w);
    b.up_b = at(o.up_b);
    b.down_w = at(o.down_w);
    b.down_b = at(o.down_b);
    w.blocks.push_back(b);
  }
  w.final_norm_w = base + layout.final_norm;
  w.final_norm_b = at(layout.final_norm_b);
  w.head_dense_w = at(layout.head_dense);
  w.head_dense_b = at(layout.head_dense_b);
  w.head_norm_w = at(layout.head_norm);
  w.head_norm_b = at(layout.head_norm_b);
  w.head = layout.head < 0 ? w.embed : base + layout.head;
  w.head_bias = at(layout.head_bias);
  return w;
}

std::string sizes_text(const LlamaConfig& c) {
  const BlockSpec& b = c.spec.block;
  return "num_hidden_layers " + std::to_string(c.spec.layers) + ", hidden_size " +
         std::to_string(b.d_model) + ", num_attention_heads " + std::to_string(b.heads) +
         ", num_key_value_heads " + std::to_string(b.kv_heads) + ", head_dim " +
         std::to_string(b.head_dim) + ", intermediate_size " + std::to_string(b.intermediate) +
         ", vocab_size " + std::to_string(c.spec.vocab_size);
}

// The message for a tensor of the wrong shape: a projection of the attention names the heads
// and head_dim whose product it must hold.
[[noreturn]] void wrong_shape(const LlamaConfig& c, const TensorSource& t,
                              const LlamaTensor& want) {
  const BlockSpec& b = c.spec.block;
  const std::string& name = *t.name;
  const bool q_or_o = name.find("self_attn.q_proj.") != std::string::npos ||
                      name.find("self_attn.o_proj.") != std::string::npos;
  const bool k_or_v = name.find("self_attn.k_proj.") != std::string::npos ||
                      name.find("self_attn.v_proj.") != std::string::npos;
  if (q_or_o || k_or_v) {
    const std::int64_t heads = q_or_o ? b.heads : b.kv_heads;
    fail(ErrorCode::BAD_FILE, "tensor '", name, "' has shape ", shape_to_string(*t.shape),
         " but config.json's ", q_or_o ? "num_attention_heads" : "num_key_value_heads", " (", heads,
         ") × head_dim (", b.head_dim, ") = ", heads * b.head_dim, " with hidden_size ", b.d_model,
         " needs ", shape_to_string(want.shape),
         "; a config whose head_dim is not hidden_size / num_attention_heads says so in "
         "\"head_dim\"");
  }
  fail(ErrorCode::BAD_FILE, "tensor '", name, "' has shape ", shape_to_string(*t.shape),
       " but config.json (", sizes_text(c), ") needs ", shape_to_string(want.shape));
}

// Why a known-looking name is not in the layout: a bias or norm the config does not have.
std::string unexpected_why(const LlamaConfig& c, std::string_view name) {
  const BlockSpec& b = c.spec.block;
  if (c.model_type == "modernbert") {
    if (ends_with(name, "norm.bias"))
      return ": the config's norms have no bias (\"norm_bias\" false)";
    if (name.find(".attn.W") != std::string_view::npos && ends_with(name, ".bias")) {
      return ": the config's attention has no biases (\"attention_bias\" false)";
    }
    if (name.find(".mlp.W") != std::string_view::npos && ends_with(name, ".bias")) {
      return ": the config's MLP has no biases (\"mlp_bias\" false)";
    }
    if (name == "head.dense.bias") return ": \"classifier_bias\" is false";
    if (name == "decoder.bias") return ": \"decoder_bias\" is false";
    if (name == "model.layers.0.attn_norm.weight") {
      return ": ModernBERT's first layer has no norm before its attention";
    }
    return "; a ModernBERT checkpoint holds model.embeddings.{tok_embeddings,norm}, "
           "model.layers.{i}.{attn_norm,attn.Wqkv,attn.Wo,mlp_norm,mlp.Wi,mlp.Wo}, "
           "model.final_norm, head.{dense,norm} and decoder tensors (" +
           std::to_string(c.spec.layers) + " layers here)";
  }
  if (ends_with(name, "_proj.bias")) {
    if (name.find("mlp.") != std::string_view::npos) {
      return c.model_type == "llama" ? ": the config has no MLP biases (\"mlp_bias\" false)"
                                     : ": this family's MLP has no biases";
    }
    if (c.model_type == "qwen2") return ": Qwen2's o_proj has no bias";
    if (c.model_type == "mistral") return ": Mistral's attention has no biases";
    return ": the config has no attention biases (\"attention_bias\" false)";
  }
  if (ends_with(name, "_norm.weight") && name.find("self_attn.") != std::string_view::npos &&
      !b.qk_norm) {
    return ": only qwen3 and gemma3_text normalise q and k (QK-norm; Gemma 2 does not); model_type "
           "is \"" +
           c.model_type + "\"";
  }
  if (name == "lm_head.weight") return "";
  if (name.substr(0, 13) == "model.layers.") {
    const bool sandwich = b.placement == NormPlacement::Sandwich;
    return ": the config has " + std::to_string(c.spec.layers) + " layers (model.layers.0 .. " +
           std::to_string(c.spec.layers - 1) + ") of input_layernorm, self_attn.{q,k,v,o}_proj, " +
           (b.qk_norm ? "self_attn.{q,k}_norm, " : "") +
           (sandwich ? "post_attention_layernorm, pre_feedforward_layernorm, "
                       "mlp.{gate,up,down}_proj and post_feedforward_layernorm tensors"
                     : "post_attention_layernorm and mlp.{gate,up,down}_proj tensors");
  }
  return "; a Llama-family checkpoint holds model.embed_tokens, model.layers.{i}.*, model.norm "
         "and lm_head tensors";
}

// out [cols, rows] = in [rows, cols]ᵀ, in tiles that stay in cache on both sides (a plain loop
// over a 1 B model's matrices strides through memory and takes most of the load).
void transpose_into(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t tile = 32;
  for (std::int64_t r0 = 0; r0 < rows; r0 += tile) {
    const std::int64_t r1 = std::min(rows, r0 + tile);
    for (std::int64_t c0 = 0; c0 < cols; c0 += tile) {
      const std::int64_t c1 = std::min(cols, c0 + tile);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t col = c0; col < c1; ++col)
          out[col * rows + r] = in[r * cols + col];
      }
    }
  }
}

}  // namespace

LlamaModel LlamaModel::from_safetensors(const LlamaConfig& config, const SafetensorsView& file) {
  const Layout layout = layout_of(config);
  const std::vector<TensorSource> sources = tensor_sources(
      file, [](const SafetensorsEntry& e) { return !ends_with(e.name, "rotary_emb.inv_freq"); });

  // Every name and shape is matched before the parameters are allocated: a config whose sizes
  // the file does not fill is an error naming a tensor, not an allocation of what it claims.
  std::map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < layout.tensors.size(); ++i)
    index.emplace(layout.tensors[i].name, i);
  std::vector<const TensorSource*> found(layout.tensors.size(), nullptr);
  const TensorSource* tied_head = nullptr;
  // The head's name, which a tied checkpoint may store as well (equal to the embedding).
  const std::string tied_name =
      config.model_type == "modernbert" ? "decoder.weight" : "lm_head.weight";
  for (const TensorSource& t : sources) {
    const auto it = index.find(*t.name);
    if (it == index.end()) {
      if (config.tied && *t.name == tied_name) {
        if (*t.shape != layout.tensors[0].shape) {
          fail(ErrorCode::BAD_FILE, "tensor '", tied_name, "' has shape ",
               shape_to_string(*t.shape),
               " but the embedding tied to it (tie_word_embeddings) has ",
               shape_to_string(layout.tensors[0].shape));
        }
        require_consistent(t);
        tied_head = &t;
        continue;
      }
      fail(ErrorCode::BAD_FILE, "unexpected tensor '", *t.name, "' ", shape_to_string(*t.shape),
           unexpected_why(config, *t.name));
    }
    const LlamaTensor& want = layout.tensors[it->second];
    if (found[it->second] != nullptr) {
      fail(ErrorCode::BAD_FILE, "tensor '", want.name, "' appears twice");
    }
    if (*t.shape != want.shape) wrong_shape(config, t, want);
    require_consistent(t);
    found[it->second] = &t;
  }
  std::int64_t missing = 0;
  const LlamaTensor* first_missing = nullptr;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i] == nullptr && missing++ == 0) first_missing = &layout.tensors[i];
  }
  if (first_missing != nullptr) {
    const BlockSpec& b = config.spec.block;
    std::string why;
    if (first_missing->name == "lm_head.weight" || first_missing->name == "decoder.weight") {
      why = " (config.json's \"tie_word_embeddings\" is false: the head is its own tensor)";
    } else if (ends_with(first_missing->name, "_proj.bias")) {
      why = config.model_type == "qwen2" ? " (Qwen2's q, k and v projections have biases)"
                                         : " (config.json asks for biases)";
    } else if (b.qk_norm && ends_with(first_missing->name, "_norm.weight") &&
               first_missing->name.find("self_attn.") != std::string::npos) {
      why = config.model_type == "qwen3" ? " (Qwen3 normalises q and k)"
                                         : " (Gemma 3 normalises q and k)";  // only they do
    } else if (config.model_type == "modernbert" && ends_with(first_missing->name, ".bias")) {
      why =
          " (config.json asks for it: norm_bias, attention_bias, mlp_bias, classifier_bias or "
          "decoder_bias)";
    } else if (ends_with(first_missing->name, "feedforward_layernorm.weight")) {
      why = " (Gemma normalises before and after each MLP)";
    }
    fail(ErrorCode::BAD_FILE, "tensor '", first_missing->name, "' ",
         shape_to_string(first_missing->shape), " is missing", why,
         missing > 1 ? " (and " + std::to_string(missing - 1) + " more)" : std::string(), "; ",
         sources.size(), " tensors were given");
  }

  LlamaModel model;
  model.config_ = config;
  try {
    model.params_.resize(static_cast<std::size_t>(layout.total));
  } catch (const std::exception&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the model could not allocate its ", layout.total,
         " parameters (", layout.total * 4, " bytes as float32)");
  }
  std::vector<float> scratch;
  for (std::size_t i = 0; i < layout.tensors.size(); ++i) {
    const LlamaTensor& want = layout.tensors[i];
    const TensorSource& t = *found[i];
    float* out = model.params_.data() + want.offset;
    if (!want.transposed) {
      t.read(out);
      require_finite(t, out, "weights must be finite numbers");
      continue;
    }
    scratch.resize(static_cast<std::size_t>(want.count));
    t.read(scratch.data());
    require_finite(t, scratch.data(), "weights must be finite numbers");
    const std::int64_t rows = want.shape[0] / want.pieces, piece = rows * want.shape[1];
    for (std::int64_t k = 0; k < want.pieces; ++k)
      transpose_into(out + k * piece, scratch.data() + k * piece, rows, want.shape[1]);
  }
  if (tied_head != nullptr) {
    // A tied checkpoint may store the head as well; it must then be the embedding itself.
    scratch.resize(static_cast<std::size_t>(tied_head->values));
    tied_head->read(scratch.data());
    const float* embed = model.params_.data() + layout.embed;
    for (std::int64_t k = 0; k < tied_head->values; ++k) {
      if (!(scratch[static_cast<std::size_t>(k)] == embed[k])) {
        fail(ErrorCode::BAD_FILE, "tensor '", tied_name, "' differs from ", layout.tensors[0].name,
             " at flat index ", k, " (", scratch[static_cast<std::size_t>(k)], " vs ", embed[k],
             ") but config.json's \"tie_word_embeddings\" is true");
      }
    }
  }
  model.tensors_ = layout.tensors;
  model.weights_ = weights_of(layout, model.params_.data());
  model.panels_ = std::make_unique<WeightPanels>();
  return model;
}

void LlamaModel::check_ids(const TokenIds& ids) const {
  if (ids.batch < 0 || ids.length < 0) {
    fail(ErrorCode::BAD_ARGUMENT, "ids has shape [", ids.batch, ", ", ids.length,
         "]; dimensions must be >= 0");
  }
  if (ids.batch == 0 || ids.length == 0) {
    fail(ErrorCode::EMPTY_INPUT, "ids has shape [", ids.batch, ", ", ids.length,
         "]; the model needs at least one sequence of at least one token");
  }
  if (ids.length > config_.spec.context) {
    fail(ErrorCode::TOO_LARGE, "ids has ", ids.length,
         " tokens per sequence, more than the model's context of ", config_.spec.context,
         config_.sliding_window && *config_.sliding_window == config_.spec.context
             ? " (its sliding window: attnlens computes sequences the window does not cut)"
             : "");
  }
  require_product_at_most({ids.batch, ids.length}, kDefaultMaxElements, "ids");
  if (ids.data == nullptr) {
    fail(ErrorCode::BAD_ARGUMENT, "ids has shape [", ids.batch, ", ", ids.length, "] but no data");
  }
  const std::int64_t n = ids.batch * ids.length;
  for (std::int64_t i = 0; i < n; ++i) {
    if (ids.data[i] < 0 || ids.data[i] >= config_.spec.vocab_size) {
      fail(ErrorCode::BAD_ARGUMENT, "ids[", i / ids.length, ", ", i % ids.length, "] is ",
           ids.data[i], ", outside the vocabulary [0, ", config_.spec.vocab_size, ")");
    }
  }
}

ModelOutput LlamaModel::forward(const TokenIds& ids, const DecoderForward& options) {
  check_ids(ids);
  return decoder_forward(config_.spec, weights_, ids.data, ids.batch, ids.length, options,
                         panels_.get());
}

ModelOutput LlamaModel::forward(const TokenIds& ids, DecoderCache& cache,
                                const DecoderForward& options) {
  check_ids(ids);
  if (ids.batch != 1) {
    fail(ErrorCode::BAD_ARGUMENT, "a cached forward takes one sequence; ids has ", ids.batch,
         " (use forward() without a cache for a batch)");
  }
  return decoder_forward(config_.spec, weights_, ids.data, ids.length, options, cache,
                         panels_.get());
}

Tensor LlamaModel::unembed(const Tensor& rows) const {
  // A head that is more than the final norm and a product goes through the block's own head.
  if (config_.spec.head_transform || config_.spec.final_softcap > 0.0f) {
    return decoder_unembed(config_.spec, weights_, rows);
  }
  return unembed_prenorm(decoder_readout(config_.spec, weights_), rows);
}

LogitAttribution LlamaModel::attribute(const TokenIds& ids, std::int64_t row, std::int32_t token,
                                       const Ablation& ablation) {
  check_ids(ids);
  check_attribution(row, token, ids.batch * ids.length, config_.spec.vocab_size);
  // The parts are the heads', biases' and MLPs' writes only where each adds to the stream as it is
  // (x + f(norm(x))); post and sandwich norms rescale them on the way.
  if (config_.spec.block.placement != NormPlacement::Pre) {
    fail(ErrorCode::BAD_ARGUMENT,
         "direct logit attribution splits a stream that each part adds to as it is; this model's "
         "norms come after its layers' parts (the logit lens, unembed(), still reads it)");
  }
  if (config_.spec.head_transform) {
    fail(ErrorCode::BAD_ARGUMENT,
         "direct logit attribution splits the logit along a linear readout; this model's head "
         "passes the stream through a dense layer and a GELU first (the logit lens, unembed(), "
         "still reads it)");
  }
  // (No family loads a pre-norm block with a logit cap today: Gemma's sandwich norms are refused
  // above. The check keeps the split honest for one that would.)
  if (config_.spec.final_softcap > 0.0f) {
    fail(ErrorCode::BAD_ARGUMENT,
         "direct logit attribution splits the logit along a linear readout; this model soft-caps "
         "its logits through tanh (the logit lens, unembed(), still reads it)");
  }
  const Readout readout = decoder_readout(config_.spec, weights_);
  if (readout.unembedding == nullptr) {
    fail(ErrorCode::BAD_ARGUMENT, "this model has no prediction head, so no logit to attribute");
  }
  DecoderForward o;
  o.hidden_states = true;
  o.logit_rows = {row};
  o.head_output_rows = {row};
  o.ablation = ablation;
  const ModelOutput out = forward(ids, o);
  return attribute_prenorm(readout, out, row, token);
}

TensorList LlamaModel::to_tensors() const {
  TensorList out;
  for (const LlamaTensor& t : tensors_) {
    Tensor tensor(t.shape);
    const float* p = params_.data() + t.offset;
    if (t.transposed) {
      // Stored [in, out] (per piece); the file's [out, in] is its transpose.
      const std::int64_t rows = t.shape[0] / t.pieces, piece = rows * t.shape[1];
      for (std::int64_t k = 0; k < t.pieces; ++k)
        transpose_into(tensor.data.data() + k * piece, p + k * piece, t.shape[1], rows);
    } else {
      std::copy(p, p + t.count, tensor.data.begin());
    }
    out.emplace_back(t.name, std::move(tensor));
  }
  return out;
}

}  // namespace attnlens::detail
