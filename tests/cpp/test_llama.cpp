// Llama-family checkpoints (llama, mistral, qwen2, qwen3) through the registry: hub-layout
// folders written here (config.json in both transformers dialects, model.safetensors in F32,
// F16 or BF16, tied or untied) against an independent float64 reference; the block's pieces;
// and every named error of the config and the tensors.
#include "compare.hpp"
#include "helpers.hpp"
#include "hub_folder.hpp"
#include "lens_reference.hpp"
#include "llama_reference.hpp"

#include "nn/block.hpp"

#include <attnlens/attention.hpp>
#include <attnlens/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>

using attnlens::Dtype;
using attnlens::ErrorCode;
using attnlens::TokenIds;
using testing::bf16_round;
using testing::load;
using testing::number;
using testing::random_ids;
using testing::require_error;
using testing::safetensors;

namespace {

// A small checkpoint of one family, described the way its config.json says it.
struct Case {
  Case(std::string label, std::string model_type, llamaref::Config c)
      : label(std::move(label)), model_type(std::move(model_type)), c(c) {}
  std::string label;
  std::string model_type;
  llamaref::Config c;
  bool tf5 = false;  // transformers 5's rope_parameters, dtype and layer_types
  Dtype dtype = Dtype::F32;
  bool attention_bias = false;  // llama, qwen3: biases on q, k, v and o
  std::optional<int> sliding_window;
  bool inv_freq_buffer = false;  // a stale rotary_emb.inv_freq buffer in the file
  // gemma3_text: query_pre_attn_scalar, and in transformers 4's dialect whether the windowed
  // layers are listed (layer_types) or derived from sliding_window_pattern.
  double query_pre_attn_scalar = 0;
  std::optional<int> sliding_window_pattern;
};

bool is_gemma(const Case& k) {
  return k.model_type == "gemma3_text" || k.model_type == "gemma2";
}

llamaref::Config sizes(int layers, int hidden, int heads, int kv_heads, int head_dim,
                       int intermediate, int vocab, bool tied) {
  llamaref::Config c;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.intermediate = intermediate;
  c.vocab = vocab;
  c.tied = tied;
  c.eps = 1e-5;
  return c;
}

// The checkpoint's tensors [name, shape], listed from transformers' module tree.
std::vector<std::pair<std::string, attnlens::Shape>> tensor_list(const Case& k) {
  const auto& c = k.c;
  const std::int64_t d = c.hidden, hd = c.head_dim, q = c.heads * hd, kv = c.kv_heads * hd;
  std::vector<std::pair<std::string, attnlens::Shape>> t = {
      {"model.embed_tokens.weight", {c.vocab, d}}};
  const bool qkv_bias = k.model_type == "qwen2" || k.attention_bias;
  const bool gemma = is_gemma(k);
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", {d}});
    t.push_back({p + "self_attn.q_proj.weight", {q, d}});
    t.push_back({p + "self_attn.k_proj.weight", {kv, d}});
    t.push_back({p + "self_attn.v_proj.weight", {kv, d}});
    t.push_back({p + "self_attn.o_proj.weight", {d, q}});
    if (qkv_bias) {
      t.push_back({p + "self_attn.q_proj.bias", {q}});
      t.push_back({p + "self_attn.k_proj.bias", {kv}});
      t.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    if (k.attention_bias) t.push_back({p + "self_attn.o_proj.bias", {d}});
    if (k.model_type == "qwen3" || k.model_type == "gemma3_text") {
      t.push_back({p + "self_attn.q_norm.weight", {hd}});
      t.push_back({p + "self_attn.k_norm.weight", {hd}});
    }
    t.push_back({p + "post_attention_layernorm.weight", {d}});
    if (gemma) t.push_back({p + "pre_feedforward_layernorm.weight", {d}});
    t.push_back({p + "mlp.gate_proj.weight", {c.intermediate, d}});
    t.push_back({p + "mlp.up_proj.weight", {c.intermediate, d}});
    t.push_back({p + "mlp.down_proj.weight", {d, c.intermediate}});
    if (gemma) t.push_back({p + "post_feedforward_layernorm.weight", {d}});
  }
  t.push_back({"model.norm.weight", {d}});
  if (!c.tied) t.push_back({"lm_head.weight", {c.vocab, d}});
  return t;
}

// Random O(1) weights, rounded to the file's dtype (so the reference reads what the file holds):
// norm gains 1 ± 0.3, biases ± 0.3, matrices uniform with unit variance per output over fan-in
// (times 1.5, for attention far from uniform), embeddings ± 1.
llamaref::Params random_params(const Case& k, std::uint32_t seed) {
  std::mt19937 gen(seed);
  llamaref::Params p;
  for (const auto& [name, shape] : tensor_list(k)) {
    std::int64_t n = 1;
    for (std::int64_t s : shape)
      n *= s;
    const bool gain = name.find("norm.weight") != std::string::npos;
    const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const bool embedding = name == "model.embed_tokens.weight" || name == "lm_head.weight";
    const double spread = gain || bias ? 0.3
                          : embedding  ? 1.0
                                       : 1.5 * std::sqrt(3.0 / static_cast<double>(shape[1]));
    std::uniform_real_distribution<double> dist(-spread, spread);
    std::vector<double> values(static_cast<std::size_t>(n));
    for (double& v : values) {
      float x = static_cast<float>((gain ? 1.0 : 0.0) + dist(gen));
      if (k.dtype == Dtype::BF16) x = bf16_round(x);
      if (k.dtype == Dtype::F16) x = attnlens::f16_to_f32(attnlens::f32_to_f16(x));
      v = x;
    }
    p[name] = std::move(values);
  }
  return p;
}

// Gemma3TextConfig's config.json: transformers 4 (rope_theta, rope_scaling, rope_local_base_freq,
// layer_types or sliding_window_pattern) or 5 (rope_parameters per layer type); Gemma2Config's:
// one rope_theta (transformers 5: a flat rope_parameters), the soft caps, and layer_types or
// (no pattern key: Gemma 2 derives every other layer) nothing.
std::string gemma_config_json(const Case& k, const std::string& rope_fields, const char* dtype) {
  const auto& c = k.c;
  const auto& r = c.rope;
  const bool two = k.model_type == "gemma2";
  std::string s = "{\n  \"architectures\": [\"" +
                  std::string(two ? "Gemma2ForCausalLM" : "Gemma3ForCausalLM") +
                  "\"],\n  \"model_type\": \"" + k.model_type + "\"";
  s += ",\n  \"hidden_size\": " + std::to_string(c.hidden);
  s += ",\n  \"intermediate_size\": " + std::to_string(c.intermediate);
  s += ",\n  \"num_hidden_layers\": " + std::to_string(c.layers);
  s += ",\n  \"num_attention_heads\": " + std::to_string(c.heads);
  s += ",\n  \"num_key_value_heads\": " + std::to_string(c.kv_heads);
  s += ",\n  \"head_dim\": " + std::to_string(c.head_dim);
  s += ",\n  \"max_position_embeddings\": 64";
  s += ",\n  \"vocab_size\": " + std::to_string(c.vocab);
  s += ",\n  \"rms_norm_eps\": " + number(c.eps);
  s += ",\n  \"hidden_activation\": \"gelu_pytorch_tanh\"";
  s += ",\n  \"query_pre_attn_scalar\": " + number(k.query_pre_attn_scalar);
  // Gemma2Config's defaults (50, 30) are left for the parser to fill in when the case's caps are
  // those; Gemma 3 writes null.
  const auto cap = [&](const char* key, double value, double fallback) {
    if (two && value == fallback) return;
    s += ",\n  \"" + std::string(key) + "\": " + (value > 0 ? number(value) : std::string("null"));
  };
  cap("attn_logit_softcapping", c.attn_softcap, 50);
  cap("final_logit_softcapping", c.final_softcap, 30);
  s += ",\n  \"attention_bias\": " + std::string(k.attention_bias ? "true" : "false");
  if (!c.tied) s += ",\n  \"tie_word_embeddings\": false";  // Gemma's default is true
  s += ",\n  \"sliding_window\": " + std::to_string(k.sliding_window.value_or(4096));
  if (two && k.sliding_window_pattern) {
    // Gemma 2 without layer_types: layers 0, 2, 4, ... slide.
  } else if (k.sliding_window_pattern && !k.tf5) {
    s += ",\n  \"sliding_window_pattern\": " + std::to_string(*k.sliding_window_pattern);
  } else {
    s += ",\n  \"layer_types\": [";
    for (int l = 0; l < c.layers; ++l)
      s += std::string(l ? ", " : "") + (c.window[static_cast<std::size_t>(l)] > 0
                                             ? "\"sliding_attention\""
                                             : "\"full_attention\"");
    s += "]";
  }
  const std::string full = "{" + rope_fields + "\"rope_theta\": " + number(r.theta) +
                           ", \"rope_type\": \"" + r.type + "\"}";
  if (two) {
    if (k.tf5) {
      s += ",\n  \"rope_parameters\": " + full;
      s += ",\n  \"dtype\": \"" + std::string(dtype) + "\"";
    } else {
      s += ",\n  \"rope_theta\": " + number(r.theta);
      if (r.type != "default")
        s += ",\n  \"rope_scaling\": {" + rope_fields + "\"rope_type\": \"" + r.type + "\"}";
      s += ",\n  \"torch_dtype\": \"" + std::string(dtype) + "\"";
    }
  } else if (k.tf5) {
    s += ",\n  \"rope_parameters\": {\"full_attention\": " + full +
         ", \"sliding_attention\": {\"rope_theta\": " + number(c.local_rope.theta) +
         ", \"rope_type\": \"default\"}}";
    s += ",\n  \"dtype\": \"" + std::string(dtype) + "\"";
  } else {
    s += ",\n  \"rope_theta\": " + number(r.theta);
    s += ",\n  \"rope_local_base_freq\": " + number(c.local_rope.theta);
    s += ",\n  \"rope_scaling\": " +
         (r.type == "default" ? std::string("null")
                              : "{" + rope_fields + "\"rope_type\": \"" + r.type + "\"}");
    s += ",\n  \"torch_dtype\": \"" + std::string(dtype) + "\"";
  }
  return s + "\n}\n";
}

// config.json as transformers 4 (rope_theta, rope_scaling, torch_dtype) or 5 (rope_parameters,
// dtype, layer_types) writes it for the case.
std::string config_json(const Case& k) {
  const auto& c = k.c;
  const auto& r = c.rope;
  std::string rope_fields;
  if (r.type == "linear") rope_fields = "\"factor\": " + number(r.factor) + ", ";
  if (r.type == "llama3") {
    rope_fields = "\"factor\": " + number(r.factor) +
                  ", \"low_freq_factor\": " + number(r.low_freq_factor) +
                  ", \"high_freq_factor\": " + number(r.high_freq_factor) +
                  ", \"original_max_position_embeddings\": " +
                  std::to_string(static_cast<int>(r.original_max_position_embeddings)) + ", ";
  }
  const char* dtype = k.dtype == Dtype::F32   ? "float32"
                      : k.dtype == Dtype::F16 ? "float16"
                                              : "bfloat16";
  if (is_gemma(k)) return gemma_config_json(k, rope_fields, dtype);
  std::string s = "{\n  \"architectures\": [\"X\"],\n  \"model_type\": \"" + k.model_type + "\"";
  s += ",\n  \"hidden_size\": " + std::to_string(c.hidden);
  s += ",\n  \"intermediate_size\": " + std::to_string(c.intermediate);
  s += ",\n  \"num_hidden_layers\": " + std::to_string(c.layers);
  s += ",\n  \"num_attention_heads\": " + std::to_string(c.heads);
  s += ",\n  \"num_key_value_heads\": " + std::to_string(c.kv_heads);
  if (c.head_dim != c.hidden / c.heads || k.model_type == "qwen3") {
    s += ",\n  \"head_dim\": " + std::to_string(c.head_dim);
  }
  s += ",\n  \"max_position_embeddings\": 64";
  s += ",\n  \"vocab_size\": " + std::to_string(c.vocab);
  s += ",\n  \"rms_norm_eps\": " + number(c.eps);
  s += ",\n  \"hidden_act\": \"silu\"";
  s += ",\n  \"tie_word_embeddings\": " + std::string(c.tied ? "true" : "false");
  if (k.model_type == "llama" || k.model_type == "qwen3") {
    s += ",\n  \"attention_bias\": " + std::string(k.attention_bias ? "true" : "false");
  }
  if (k.model_type == "qwen2" || k.model_type == "qwen3") {
    s += ",\n  \"use_sliding_window\": false,\n  \"sliding_window\": 4096,\n  "
         "\"max_window_layers\": " +
         std::to_string(c.layers);
  }
  if (k.model_type == "mistral") {
    s += ",\n  \"sliding_window\": " +
         (k.sliding_window ? std::to_string(*k.sliding_window) : std::string("null"));
  }
  if (k.tf5) {
    s += ",\n  \"rope_parameters\": {" + rope_fields + "\"rope_theta\": " + number(r.theta) +
         ", \"rope_type\": \"" + r.type + "\"}";
    s += ",\n  \"dtype\": \"" + std::string(dtype) + "\"";
    s += ",\n  \"layer_types\": [";
    for (int l = 0; l < c.layers; ++l)
      s += std::string(l ? ", " : "") + "\"full_attention\"";
    s += "]";
  } else {
    s += ",\n  \"rope_theta\": " + number(r.theta);
    s += ",\n  \"rope_scaling\": " +
         (r.type == "default" ? std::string("null")
                              : "{" + rope_fields + "\"rope_type\": \"" + r.type + "\"}");
    s += ",\n  \"torch_dtype\": \"" + std::string(dtype) + "\"";
  }
  return s + "\n}\n";
}

struct Folder {
  std::string config;
  std::vector<std::uint8_t> weights;
  llamaref::Params params;
};

Folder folder(const Case& k, std::uint32_t seed = 7) {
  Folder f;
  f.params = random_params(k, seed);
  std::map<std::string, attnlens::Shape> shapes;
  for (const auto& [name, shape] : tensor_list(k))
    shapes[name] = shape;
  llamaref::Params stored = f.params;
  if (k.inv_freq_buffer) {
    stored["model.rotary_emb.inv_freq"] =
        std::vector<double>(static_cast<std::size_t>(k.c.head_dim / 2), 0.5);
    shapes["model.rotary_emb.inv_freq"] = {k.c.head_dim / 2};
  }
  f.weights = safetensors(stored, shapes, k.dtype);
  f.config = config_json(k);
  return f;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {
    Case k{"llama tied, rope default, GQA 1, F32, transformers 4", "llama",
           sizes(2, 32, 4, 4, 8, 64, 37, true)};
    k.c.rope.theta = 10000;
    k.inv_freq_buffer = true;
    out.push_back(k);
  }
  {
    Case k{"llama untied, rope llama3, GQA 3, BF16, transformers 5", "llama",
           sizes(2, 48, 6, 2, 16, 80, 41, false)};
    // Wavelengths 2π / inv_freq of head_dim 16 at theta 10000 run from 6.3 to 3500 positions:
    // with original 16, low 1 and high 4 they fall in all three bands (kept below 4, divided
    // by the factor above 16, blended between).
    k.c.rope = {10000, "llama3", 8.0, 1.0, 4.0, 16.0};
    k.tf5 = true;
    k.dtype = Dtype::BF16;
    out.push_back(k);
  }
  {
    Case k{"llama untied, rope linear, attention and MLP biases off, F16, transformers 4", "llama",
           sizes(1, 32, 4, 2, 8, 48, 29, false)};
    k.c.rope = {500000, "linear", 4.0};
    k.dtype = Dtype::F16;
    out.push_back(k);
  }
  {
    Case k{"mistral, GQA 7, sliding window past the sequence, F16", "mistral",
           sizes(2, 56, 7, 1, 8, 96, 33, false)};
    k.c.rope.theta = 1000000;
    k.dtype = Dtype::F16;
    k.sliding_window = 16;
    out.push_back(k);
  }
  {
    Case k{"qwen2, q/k/v biases, tied, GQA 3, BF16, transformers 4", "qwen2",
           sizes(2, 48, 6, 2, 8, 64, 43, true)};
    k.c.rope.theta = 1000000;
    k.c.eps = 1e-6;
    k.dtype = Dtype::BF16;
    out.push_back(k);
  }
  {
    Case k{"qwen3, QK-norm, head_dim 12 != 32 / 4, GQA 2, F32, transformers 5", "qwen3",
           sizes(2, 32, 4, 2, 12, 64, 31, true)};
    k.c.rope.theta = 1000000;
    k.c.eps = 1e-6;
    k.tf5 = true;
    out.push_back(k);
  }
  {
    Case k{"qwen3, QK-norm, attention_bias, untied, GQA 1, BF16, transformers 4", "qwen3",
           sizes(1, 32, 2, 2, 20, 48, 27, false)};
    k.attention_bias = true;
    k.dtype = Dtype::BF16;
    out.push_back(k);
  }
  // Gemma 3 (gemma3_text): windows narrower than the sequences the tests run, so the windows hide
  // keys, in the forward and past a cached prefix.
  {
    Case k{
        "gemma3_text, sandwich norms, windows of 3 by sliding_window_pattern 3, rope linear 8, "
        "tied, GQA 2, BF16, transformers 4",
        "gemma3_text", sizes(3, 32, 4, 2, 16, 48, 37, true)};
    k.c.gemma = true;
    k.c.norm_plus_one = true;
    // hidden_size ** 0.5 as transformers holds it: a float32 buffer.
    k.c.embedding_scale = static_cast<double>(std::sqrt(32.0f));
    k.c.eps = 1e-6;
    k.c.rope = {1000000, "linear", 8.0};
    k.c.local_rope.theta = 10000;
    k.c.window = {3, 3, 0};  // layers 0 and 1 slide, every 3rd is full
    k.sliding_window = 3;
    k.sliding_window_pattern = 3;
    k.query_pre_attn_scalar = 16;
    k.c.attention_scale = 0.25;
    k.dtype = Dtype::BF16;
    out.push_back(k);
  }
  {
    Case k{
        "gemma3_text, windows of 4 by layer_types, query_pre_attn_scalar 24, untied, "
        "attention_bias, GQA 1, F32, transformers 5",
        "gemma3_text", sizes(2, 24, 3, 3, 8, 40, 29, false)};
    k.c.gemma = true;
    k.c.norm_plus_one = true;
    k.c.embedding_scale = static_cast<double>(std::sqrt(24.0f));
    k.c.eps = 1e-6;
    k.c.rope.theta = 1000000;
    k.c.local_rope.theta = 10000;
    k.c.window = {0, 4};
    k.sliding_window = 4;
    k.attention_bias = true;
    k.query_pre_attn_scalar = 24;
    k.c.attention_scale = 1.0 / std::sqrt(24.0);
    k.tf5 = true;
    out.push_back(k);
  }
  // Gemma 2: Gemma2Config's default caps (50 on scores, 30 on logits: they bend scores of a few
  // units by ~1e-2, far above the tolerances) and its derived layers (0 and 2 slide); then caps
  // of 2 and 3, which squash these scores and logits hard, through transformers 5's config.
  {
    Case k{
        "gemma2, default soft caps 50 and 30, windows of 3 on layers 0 and 2 (derived), tied, "
        "GQA 2, BF16, transformers 4",
        "gemma2", sizes(3, 32, 4, 2, 16, 48, 37, true)};
    k.c.gemma = true;
    k.c.norm_plus_one = true;
    k.c.embedding_scale = static_cast<double>(std::sqrt(32.0f));
    k.c.eps = 1e-6;
    k.c.rope.theta = 10000;
    k.c.local_rope = k.c.rope;
    k.c.window = {3, 0, 3};
    k.c.attn_softcap = 50;
    k.c.final_softcap = 30;
    k.sliding_window = 3;
    k.sliding_window_pattern = 2;  // no layer_types: Gemma 2 derives them
    k.query_pre_attn_scalar = 16;
    k.c.attention_scale = 0.25;
    k.dtype = Dtype::BF16;
    out.push_back(k);
  }
  {
    Case k{
        "gemma2, soft caps 2 and 3, layer_types, rope linear 4, untied, GQA 1, F32, "
        "transformers 5",
        "gemma2", sizes(2, 24, 3, 3, 8, 40, 29, false)};
    k.c.gemma = true;
    k.c.norm_plus_one = true;
    k.c.embedding_scale = static_cast<double>(std::sqrt(24.0f));
    k.c.eps = 1e-6;
    k.c.rope = {10000, "linear", 4.0};
    k.c.local_rope = k.c.rope;
    k.c.window = {0, 4};
    k.c.attn_softcap = 2;
    k.c.final_softcap = 3;
    k.sliding_window = 4;
    k.query_pre_attn_scalar = 8;
    k.c.attention_scale = 1.0 / std::sqrt(8.0);
    k.tf5 = true;
    out.push_back(k);
  }
  return out;
}

}  // namespace

TEST_CASE("Llama-family forward matches an independent float64 reference", "[llama]") {
  const std::vector<Case> all = cases();
  const auto index = GENERATE_COPY(range(std::size_t{0}, all.size()));
  const Case& k = all[index];
  INFO(k.label);
  const Folder f = folder(k);
  INFO(f.config);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  REQUIRE(loaded.tokenizer == nullptr);
  attnlens::Model& model = *loaded.model;

  const attnlens::ModelInfo info = model.info();
  CHECK(info.family == k.model_type);
  CHECK(info.causal);
  CHECK(info.prediction == attnlens::PredictionKind::NextToken);
  CHECK(info.layers == k.c.layers);
  CHECK(info.heads == k.c.heads);
  CHECK(info.kv_heads == k.c.kv_heads);
  CHECK(info.head_dim == k.c.head_dim);
  CHECK(info.d_model == k.c.hidden);
  CHECK(info.vocab_size == k.c.vocab);
  CHECK(info.positions == "rotary");
  CHECK(info.norm == (is_gemma(k) ? "rmsnorm(1+w)" : "rmsnorm"));
  // Mistral's window caps the context (within it nothing is hidden); Gemma's layers compute theirs.
  CHECK(info.context == (k.sliding_window && !is_gemma(k) ? *k.sliding_window : 64));
  CHECK(info.windows == (is_gemma(k) ? k.c.window : std::vector<int>{}));
  CHECK(info.score_softcap == static_cast<float>(k.c.attn_softcap));
  CHECK(info.logit_softcap == static_cast<float>(k.c.final_softcap));

  const int B = 2, T = 11;
  const auto ids = random_ids(B * T, k.c.vocab, 3);
  attnlens::ModelForwardOptions options;
  options.attention = true;
  options.hidden_states = true;
  const attnlens::ModelOutput out = model.forward({TokenIds{ids.data(), B, T}}, options);
  const llamaref::Output ref = llamaref::forward(k.c, f.params, ids, B, T);

  const attnlens::Shape logits_shape = {B, T, k.c.vocab};
  const attnlens::Shape attention_shape = {k.c.layers, B, k.c.heads, T, T};
  const attnlens::Shape hidden_shape = {k.c.layers + 1, B, T, k.c.hidden};
  REQUIRE(out.logits.shape == logits_shape);
  REQUIRE(out.attention.shape == attention_shape);
  REQUIRE(out.hidden_states.shape == hidden_shape);
  // float32 rounding against float64 (the weights are the same numbers on both sides: the file's
  // F16 or BF16 values widen to float32 exactly). Each product of K terms is off by at most
  // K·u (u = 2^-24 = 6e-8) of the sum of its terms' magnitudes: 96 · 6e-8 = 6e-6 for the widest
  // here. A logit ends a chain of 7 products per layer and the head, each RMSNorm rescaling
  // what comes before by its 1 / rms (about 1 to 3 here): a worst case of ~1e-3 on logits of
  // magnitude up to ~10, while rounding errors of random sign add up to ~1e-5. 2e-4 lies
  // between; a real mistake (a wrong sign, frequency, head or index) moves logits by O(0.1).
  REQUIRE_CLOSE(testing::close(out.logits.data, ref.logits, 2e-4, logits_shape));
  REQUIRE_CLOSE(testing::close(out.hidden_states.data, ref.hidden, 2e-4, hidden_shape));
  // Weights are probabilities after one softmax of scores of a few units: a score off by e
  // moves a weight by at most e/4 relative, ~1e-6 here; the last layer's inherit the stream's
  // ~1e-5 worst case through q and k.
  REQUIRE_CLOSE(testing::close(out.attention.data, ref.attention, 2e-5, attention_shape));

  // Logits at a few rows are those rows of the full product.
  attnlens::ModelForwardOptions rows;
  rows.logit_rows = {T + 4, 0, 2 * T - 1, 0};
  const attnlens::ModelOutput some = model.forward({TokenIds{ids.data(), B, T}}, rows);
  REQUIRE(some.logits.shape == attnlens::Shape{4, k.c.vocab});
  std::vector<double> expected;
  for (std::int64_t r : rows.logit_rows) {
    expected.insert(expected.end(), ref.logits.begin() + r * k.c.vocab,
                    ref.logits.begin() + (r + 1) * k.c.vocab);
  }
  REQUIRE_CLOSE(testing::close(some.logits.data, expected, 2e-4));
}

TEST_CASE("Llama-family models save and load back to the same numbers", "[llama]") {
  const std::vector<Case> all = cases();
  const auto index = GENERATE_COPY(range(std::size_t{0}, all.size()));
  const Case& k = all[index];
  INFO(k.label);
  const Folder f = folder(k);
  attnlens::LoadedModel first = load(f.config, f.weights);
  const auto saved = attnlens::save_model(*first.model, nullptr);
  REQUIRE(saved.size() == 2);
  const std::string config(saved[1].second.begin(), saved[1].second.end());
  INFO(config);
  attnlens::LoadedModel second = load(config, saved[0].second);
  CHECK(second.model->info().family == k.model_type);
  CHECK(second.model->info().context == first.model->info().context);
  CHECK(second.model->num_parameters() == first.model->num_parameters());
  const auto ids = random_ids(9, k.c.vocab, 4);
  attnlens::ModelForwardOptions options;
  options.attention = true;
  const auto a = first.model->forward({TokenIds{ids.data(), 1, 9}}, options);
  const auto b = second.model->forward({TokenIds{ids.data(), 1, 9}}, options);
  // F32 keeps every value and the config every size: the same bits.
  CHECK(a.logits.data == b.logits.data);
  CHECK(a.attention.data == b.attention.data);
}

TEST_CASE("Block pieces: llama3 frequencies, RMSNorm, SwiGLU, grouped-query attention", "[llama]") {
  using namespace attnlens::detail;
  SECTION("Llama 3.2's rotary frequencies (theta 500000, factor 32, low 1, high 4, 8192)") {
    RopeSpec rope;
    rope.theta = 500000;
    rope.scaling = RopeScaling::Llama3;
    rope.factor = 32;
    rope.low_freq_factor = 1;
    rope.high_freq_factor = 4;
    rope.original_context = 8192;
    llamaref::Rope ref{500000, "llama3", 32, 1, 4, 8192};
    const std::vector<double> got = rope_inv_freq(rope, 64);
    const std::vector<double> want = llamaref::impl::inv_freq(ref, 64);
    // The same float64 formula on both sides: only the order of operations differs.
    REQUIRE_CLOSE(testing::close(got, want, 1e-15));
    // Bands: the first frequencies are kept, the last divided by 32.
    CHECK(got[0] == 1.0);
    CHECK(std::abs(got[31] * 32 - 1.0 / std::pow(500000.0, 62.0 / 64)) < 1e-18);
  }
  SECTION("linear scaling divides every frequency") {
    RopeSpec rope;
    rope.scaling = RopeScaling::Linear;
    rope.factor = 4;
    const std::vector<double> got = rope_inv_freq(rope, 8);
    REQUIRE(got.size() == 4);
    for (int i = 0; i < 4; ++i)
      CHECK(std::abs(got[static_cast<std::size_t>(i)] - std::pow(10000.0, -i / 4.0) / 4) < 1e-15);
  }
  SECTION("RMSNorm with and without 1 + w") {
    const std::vector<float> x = {1, -2, 3, 0.5f, 0, 0, 0, 0};
    const std::vector<float> w = {1, 0.5f, 2, -1};
    std::vector<float> out(8);
    rmsnorm_forward(out.data(), x.data(), w.data(), 2, 4, 1e-6f);
    const double rms = std::sqrt((1 + 4 + 9 + 0.25) / 4 + 1e-6);
    REQUIRE_CLOSE(testing::close(out, {1 / rms, -1 / rms, 6 / rms, -0.5 / rms, 0, 0, 0, 0}, 1e-6));
    rmsnorm_forward(out.data(), x.data(), w.data(), 1, 4, 1e-6f, true);
    REQUIRE_CLOSE(testing::close(std::vector<float>(out.begin(), out.begin() + 4),
                                 {2 / rms, -3 / rms, 9 / rms, 0}, 1e-6));
  }
  SECTION("SwiGLU") {
    const std::vector<float> gate = {-3, 0, 2}, up = {2, 5, -1};
    std::vector<float> out(3);
    swiglu_forward(out.data(), gate.data(), up.data(), 3);
    REQUIRE_CLOSE(testing::close(
        out, {-3 / (1 + std::exp(3.0)) * 2, 0, 2 / (1 + std::exp(-2.0)) * -1}, 1e-6));
  }
  SECTION("grouped-query attention is attention over repeated key/value heads") {
    const std::int64_t B = 2, H = 6, Hkv = 2, T = 5, hd = 4;
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> dist(-2, 2);
    std::vector<float> q(B * H * T * hd), k(B * Hkv * T * hd), v(B * Hkv * T * hd);
    for (auto* t : {&q, &k, &v})
      for (float& x : *t)
        x = dist(gen);
    // repeat_kv: head h reads key/value head h / (H / Hkv).
    std::vector<float> k_rep, v_rep;
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t at = (b * Hkv + h / (H / Hkv)) * T * hd;
        k_rep.insert(k_rep.end(), k.begin() + at, k.begin() + at + T * hd);
        v_rep.insert(v_rep.end(), v.begin() + at, v.begin() + at + T * hd);
      }
    }
    const auto grouped =
        grouped_attention(q.data(), k.data(), v.data(), B, H, Hkv, T, T, hd, 0.5f, true, true);
    attnlens::AttentionOptions o;
    o.causal = true;
    o.scale = 0.5f;
    o.return_weights = true;
    const auto repeated =
        attnlens::attention(testing::view(q, {B, H, T, hd}), testing::view(k_rep, {B, H, T, hd}),
                            testing::view(v_rep, {B, H, T, hd}), o);
    // The same kernels on the same numbers: the same bits.
    CHECK(grouped.output.data == repeated.output.data);
    CHECK(grouped.weights.data == repeated.weights.data);
  }
}

TEST_CASE("Llama-family config errors name the file and the field", "[llama]") {
  Case k{"qwen2", "qwen2", sizes(2, 48, 6, 2, 8, 64, 43, true)};
  const Folder f = folder(k);
  const auto with = [&](const std::string& key, const std::string& value) {
    std::string config = f.config;
    const std::string needle = "\n  \"" + key + "\": ";
    const std::size_t at = config.find(needle);
    if (at == std::string::npos) {
      config.insert(config.size() - 3, ",\n  \"" + key + "\": " + value);
    } else {
      const std::size_t end = config.find_first_of(",\n", at + needle.size());
      config.replace(at + needle.size(), end - at - needle.size(), value);
    }
    return config;
  };
  const auto refused = [&](const std::string& config, std::vector<std::string> needles) {
    INFO(config);
    needles.insert(needles.begin(), "config.json");
    require_error([&] { load(config, f.weights); }, ErrorCode::BAD_FILE, needles);
  };
  refused(with("num_key_value_heads", "4"),
          {"\"num_attention_heads\" (6) is not a multiple of \"num_key_value_heads\" (4)"});
  refused(with("rope_scaling", "{\"rope_type\": \"yarn\", \"factor\": 4.0}"),
          {"rope_scaling.rope_type", "\"yarn\"", "\"default\", \"linear\" and \"llama3\""});
  refused(with("rope_parameters", "{\"rope_type\": \"dynamic\", \"rope_theta\": 10000.0}"),
          {"rope_parameters.rope_type", "\"dynamic\""});
  refused(with("rope_parameters", "{\"full_attention\": {\"rope_type\": \"default\"}}"),
          {"\"rope_parameters.full_attention\" is an object"});
  refused(with("rope_scaling", "{\"rope_type\": \"llama3\", \"factor\": 8.0}"),
          {"rope_scaling.low_freq_factor", "missing"});
  refused(with("use_sliding_window", "true"), {"\"use_sliding_window\" is true", "sliding-window"});
  refused(with("layer_types", "[\"full_attention\", \"sliding_attention\"]"),
          {"\"layer_types\"[1] is \"sliding_attention\"", "sliding-window"});
  refused(with("layer_types", "[\"full_attention\"]"), {"\"layer_types\" has 1 entries"});
  refused(with("hidden_act", "\"gelu\""), {"\"hidden_act\" is \"gelu\"", "\"silu\""});
  refused(with("num_attention_heads", "0"), {"\"num_attention_heads\" must be an integer"});
  refused(with("head_dim", "7"), {"\"head_dim\" is 7", "even"});
  refused(with("model_type", "\"gemma\""), {"model_type \"gemma\""});
}

namespace {

// config.json (as config_json() writes it) with `key` set to `value`, added when absent.
std::string config_with(std::string config, const std::string& key, const std::string& value) {
  const std::string needle = "\n  \"" + key + "\": ";
  const std::size_t at = config.find(needle);
  if (at == std::string::npos) {
    config.insert(config.size() - 3, ",\n  \"" + key + "\": " + value);
  } else {
    // The value runs to the end of its line (nested objects here are written on one line).
    const std::size_t end = config.find('\n', at + needle.size());
    const std::size_t comma = config[end - 1] == ',' ? end - 1 : end;
    config.replace(at + needle.size(), comma - at - needle.size(), value);
  }
  return config;
}

}  // namespace

TEST_CASE("Gemma 3 config and tensor errors name the file and the field", "[llama][gemma]") {
  const std::vector<Case> all = cases();
  const Case& tf4 = all[7];
  const Case& tf5 = all[8];
  REQUIRE(is_gemma(tf4));
  REQUIRE(is_gemma(tf5));
  const Folder f4 = folder(tf4), f5 = folder(tf5);
  const auto refused = [&](const Folder& f, const std::string& config,
                           std::vector<std::string> needles) {
    INFO(config);
    needles.insert(needles.begin(), "config.json");
    require_error([&] { load(config, f.weights); }, ErrorCode::BAD_FILE, needles);
  };
  refused(f4, config_with(f4.config, "attn_logit_softcapping", "-50.0"),
          {"\"attn_logit_softcapping\" must be null or a number > 0"});
  refused(f4, config_with(f4.config, "final_logit_softcapping", "\"30\""),
          {"\"final_logit_softcapping\" must be null or a number > 0"});
  refused(f4, config_with(f4.config, "final_logit_softcapping", "1e300"),
          {"\"final_logit_softcapping\" must be null or a number > 0"});
  refused(f4, config_with(f4.config, "use_bidirectional_attention", "true"),
          {"\"use_bidirectional_attention\" is true"});
  refused(f4, config_with(f4.config, "hidden_activation", "\"gelu\""),
          {"\"hidden_activation\" is \"gelu\"", "\"gelu_pytorch_tanh\""});
  refused(f4, config_with(f4.config, "sliding_window", "0"),
          {"\"sliding_window\" must be an integer"});
  refused(f4, config_with(f4.config, "sliding_window_pattern", "0"),
          {"\"sliding_window_pattern\" must be an integer"});
  refused(f4, config_with(f4.config, "query_pre_attn_scalar", "-1"),
          {"\"query_pre_attn_scalar\" must be a number > 0"});
  refused(f4, config_with(f4.config, "rope_local_base_freq", "\"x\""),
          {"\"rope_local_base_freq\" must be a number > 0"});
  refused(f5, config_with(f5.config, "layer_types", "[\"full_attention\", \"chunked_attention\"]"),
          {"\"layer_types\"[1] is \"chunked_attention\"", "\"sliding_attention\""});
  refused(f5, config_with(f5.config, "layer_types", "[\"full_attention\"]"),
          {"\"layer_types\" has 1 entries but \"num_hidden_layers\" is 2"});
  refused(f5,
          config_with(f5.config, "rope_parameters",
                      "{\"full_attention\": {\"rope_type\": \"default\", \"rope_theta\": 1e6}, "
                      "\"sliding_attention\": [10000]}"),
          {"\"rope_parameters.sliding_attention\" must be an object"});
  refused(f5,
          config_with(f5.config, "rope_parameters",
                      "{\"full_attention\": {\"rope_type\": \"default\"}, "
                      "\"sliding_attention\": {\"rope_type\": \"linear\", \"factor\": 2.0}}"),
          {"\"rope_parameters.sliding_attention.rope_type\" is \"linear\"", "\"default\""});
  // Sets and thetas left out take what Gemma3TextConfig fills in: the top-level rope_theta and
  // rope_local_base_freq, then 1e6 and 1e4. The case's thetas are those defaults, so the folder
  // computes the same numbers as with its sets written out.
  const std::vector<std::int32_t> probe = {1, 5, 2, 8, 3, 9, 4, 7, 6};
  attnlens::ModelForwardOptions attention;
  attention.attention = true;
  const auto written =
      load(f5.config, f5.weights).model->forward({TokenIds{probe.data(), 1, 9}}, attention);
  for (const std::string& params :
       {std::string("{\"full_attention\": {\"rope_type\": \"default\"}}"),
        std::string("{\"sliding_attention\": {\"rope_type\": \"default\"}}"), std::string("{}")}) {
    INFO(params);
    const auto filled = load(config_with(f5.config, "rope_parameters", params), f5.weights)
                            .model->forward({TokenIds{probe.data(), 1, 9}}, attention);
    CHECK(filled.logits.data == written.logits.data);
  }
  const std::string wrong =
      config_with(config_with(f5.config, "rope_parameters",
                              "{\"full_attention\": {\"rope_type\": \"default\"}}"),
                  "rope_local_base_freq", "500.0");
  CHECK(load(wrong, f5.weights)
            .model->forward({TokenIds{probe.data(), 1, 9}}, attention)
            .logits.data != written.logits.data);
  refused(f5,
          config_with(f5.config, "rope_parameters",
                      "{\"full_attention\": {\"rope_type\": \"yarn\", \"rope_theta\": 1e6}, "
                      "\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 1e4}}"),
          {"rope_parameters.full_attention.rope_type", "\"yarn\""});

  // The feed-forward norms a Llama checkpoint does not have are named when missing.
  llamaref::Params params = f4.params;
  params.erase("model.layers.1.pre_feedforward_layernorm.weight");
  std::map<std::string, attnlens::Shape> shapes;
  for (const auto& [name, shape] : tensor_list(tf4))
    shapes[name] = shape;
  const auto weights = safetensors(params, shapes, tf4.dtype);
  require_error([&] { load(f4.config, weights); }, ErrorCode::BAD_FILE,
                {"model.layers.1.pre_feedforward_layernorm.weight",
                 "Gemma normalises before and after each MLP"});
}

TEST_CASE("Gemma 2: null caps compute and save as none, and its config and tensor errors",
          "[llama][gemma]") {
  const std::vector<Case> all = cases();
  const Case& tf4 = all[9];
  Case tf5 = all[10];
  REQUIRE(tf4.model_type == "gemma2");
  REQUIRE(tf5.model_type == "gemma2");
  const Folder f4 = folder(tf4), f5 = folder(tf5);
  const auto refused = [&](const Folder& f, const std::string& config,
                           std::vector<std::string> needles) {
    INFO(config);
    needles.insert(needles.begin(), "config.json");
    require_error([&] { load(config, f.weights); }, ErrorCode::BAD_FILE, needles);
  };

  // Null caps are none (not Gemma2Config's defaults): the reference without caps, and a save
  // that writes null and reads back to the same numbers.
  const std::string uncapped = config_with(config_with(f5.config, "attn_logit_softcapping", "null"),
                                           "final_logit_softcapping", "null");
  attnlens::LoadedModel loaded = load(uncapped, f5.weights);
  CHECK(loaded.model->info().score_softcap == 0.0f);
  CHECK(loaded.model->info().logit_softcap == 0.0f);
  tf5.c.attn_softcap = tf5.c.final_softcap = 0;
  const int T = 9;
  const auto ids = random_ids(T, tf5.c.vocab, 5);
  attnlens::ModelForwardOptions options;
  options.attention = true;
  const auto out = loaded.model->forward({TokenIds{ids.data(), 1, T}}, options);
  const llamaref::Output ref = llamaref::forward(tf5.c, f5.params, ids, 1, T);
  // The forward test's tolerances (the first test of this file).
  REQUIRE_CLOSE(testing::close(out.logits.data, ref.logits, 2e-4, out.logits.shape));
  REQUIRE_CLOSE(testing::close(out.attention.data, ref.attention, 2e-5, out.attention.shape));
  const auto saved = attnlens::save_model(*loaded.model, nullptr);
  const std::string config(saved[1].second.begin(), saved[1].second.end());
  CHECK(config.find("\"attn_logit_softcapping\": null") != std::string::npos);
  CHECK(config.find("\"final_logit_softcapping\": null") != std::string::npos);
  CHECK(config.find("rope_local_base_freq") == std::string::npos);
  const auto back =
      load(config, saved[0].second).model->forward({TokenIds{ids.data(), 1, T}}, options);
  CHECK(back.logits.data == out.logits.data);
  CHECK(back.attention.data == out.attention.data);

  refused(f4, config_with(f4.config, "attn_logit_softcapping", "0"),
          {"\"attn_logit_softcapping\" must be null or a number > 0"});
  // A cap that rounds to float32's 0 would silently mean none.
  refused(f4, config_with(f4.config, "final_logit_softcapping", "1e-50"),
          {"\"final_logit_softcapping\" must be null or a number > 0"});
  refused(f4, config_with(f4.config, "sliding_window", "null"),
          {"\"sliding_window\" is null", "Gemma 2's layers slide"});
  refused(f5, config_with(f5.config, "layer_types", "[\"full_attention\", \"chunked_attention\"]"),
          {"\"layer_types\"[1] is \"chunked_attention\"", "Gemma 2's layers"});
  // Gemma 2 has one set of rotary parameters: sets per layer type are Gemma 3's.
  refused(f5,
          config_with(f5.config, "rope_parameters",
                      "{\"full_attention\": {\"rope_type\": \"default\"}, "
                      "\"sliding_attention\": {\"rope_type\": \"default\"}}"),
          {"\"rope_parameters.full_attention\" is an object"});

  // A q_norm tensor (Gemma 3's) is named as one Gemma 2 does not have.
  llamaref::Params params = f4.params;
  std::map<std::string, attnlens::Shape> shapes;
  for (const auto& [name, shape] : tensor_list(tf4))
    shapes[name] = shape;
  params["model.layers.0.self_attn.q_norm.weight"] = llamaref::Vec(16, 0.5);
  shapes["model.layers.0.self_attn.q_norm.weight"] = {16};
  const auto weights = safetensors(params, shapes, tf4.dtype);
  require_error([&] { load(f4.config, weights); }, ErrorCode::BAD_FILE,
                {"unexpected tensor 'model.layers.0.self_attn.q_norm.weight'", "Gemma 2 does not"});

  // Logits past float32's range are an error, not a cap's c: the cap comes after the check.
  llamaref::Params huge = f5.params;
  for (double& v : huge.at("lm_head.weight"))
    v *= 1e38;
  std::map<std::string, attnlens::Shape> shapes5;
  for (const auto& [name, shape] : tensor_list(tf5))
    shapes5[name] = shape;
  attnlens::LoadedModel overflowing = load(f5.config, safetensors(huge, shapes5, tf5.dtype));
  require_error(
      [&] {
        overflowing.model->forward({TokenIds{ids.data(), 1, T}}, {});
      },
      ErrorCode::NON_FINITE, {"overflowed float32 in the logits"});
  attnlens::Tensor stream({1, tf5.c.hidden});
  std::fill(stream.data.begin(), stream.data.end(), 1.0f);
  require_error([&] { overflowing.model->unembed(stream); }, ErrorCode::NON_FINITE,
                {"overflowed float32 in the logits"});
}

TEST_CASE("Llama-family tensor errors name the tensor and the config field", "[llama]") {
  SECTION("head_dim × heads that do not match q_proj's shape") {
    // The file's heads are 12 wide (Qwen3-style) but the config leaves head_dim out, so it is
    // hidden_size / num_attention_heads = 8.
    Case k{"qwen2", "qwen2", sizes(1, 32, 4, 2, 12, 48, 17, true)};
    Folder f = folder(k);
    const std::string config = f.config.substr(0, f.config.find(",\n  \"head_dim\"")) +
                               f.config.substr(f.config.find(",\n  \"max_position_embeddings\""));
    INFO(config);
    require_error([&] { load(config, f.weights); }, ErrorCode::BAD_FILE,
                  {"model.safetensors", "model.layers.0.self_attn.k_proj.bias", "[24]",
                   "num_key_value_heads (2) × head_dim (8) = 16", "\"head_dim\""});
  }
  SECTION("a missing lm_head of an untied model") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, false)};
    Folder f = folder(k);
    const Folder tied = folder(Case{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, true)});
    require_error([&] { load(f.config, tied.weights); }, ErrorCode::BAD_FILE,
                  {"'lm_head.weight' [11, 16] is missing", "\"tie_word_embeddings\" is false"});
  }
  SECTION("biases the config does not have") {
    Case k{"qwen2", "qwen2", sizes(1, 16, 2, 1, 8, 32, 11, true)};
    Folder f = folder(k);
    Case llama = k;
    llama.model_type = "llama";
    require_error([&] { load(config_json(llama), f.weights); }, ErrorCode::BAD_FILE,
                  {"unexpected tensor 'model.layers.0.self_attn.", "_proj.bias'",
                   "\"attention_bias\" false"});
  }
  SECTION("Qwen2 without its q/k/v biases") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, true)};
    Folder f = folder(k);
    Case qwen = k;
    qwen.model_type = "qwen2";
    require_error([&] { load(config_json(qwen), f.weights); }, ErrorCode::BAD_FILE,
                  {"_proj.bias'", "is missing", "Qwen2's q, k and v projections have biases"});
  }
  SECTION("a tied lm_head that is not the embedding") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, false)};
    Folder f = folder(k);
    Case tied = k;
    tied.c.tied = true;
    require_error([&] { load(config_json(tied), f.weights); }, ErrorCode::BAD_FILE,
                  {"'lm_head.weight' differs from model.embed_tokens.weight",
                   "\"tie_word_embeddings\" is true"});
  }
  SECTION("text files over their size caps, refused before they are parsed") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, true)};
    Folder f = folder(k);
    const auto padded = [](std::string json, std::size_t size) {
      json.insert(json.size() - 1, size - json.size(), ' ');  // spaces before the last brace
      return json;
    };
    const std::size_t cap = attnlens::max_text_file_bytes("config.json");
    CHECK(cap == std::size_t{1} << 20);
    // At the cap: read; one byte over: refused, naming the file, its size and the cap.
    CHECK_NOTHROW(load(padded(f.config, cap), f.weights));
    require_error([&] { load(padded(f.config, cap + 1), f.weights); }, ErrorCode::BAD_FILE,
                  {"config.json: 1048577 bytes, over the limit of 1048576"});
    require_error([&] { attnlens::family_of(padded(f.config, cap + 1)); }, ErrorCode::BAD_FILE,
                  {"config.json: 1048577 bytes"});
    for (const char* name : {"tokenizer_config.json", "tokenizer.json"}) {
      const std::size_t over = attnlens::max_text_file_bytes(name) + 1;
      require_error(
          [&] {
            load(f.config, f.weights, {{name, padded("{}", over)}});
          },
          ErrorCode::BAD_FILE,
          {std::string(name) + ": " + std::to_string(over) + " bytes, over the limit"});
    }
    CHECK(attnlens::max_text_file_bytes("README.md") == 0);
  }
  SECTION("a non-finite weight, named once with its file") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, false)};
    Folder f = folder(k);
    // The last value's high bytes (F32, little-endian): sign set, exponent all ones, a NaN.
    f.weights[f.weights.size() - 2] = 0xc1;
    f.weights[f.weights.size() - 1] = 0xff;
    try {
      load(f.config, f.weights);
      FAIL("a NaN weight was loaded");
    } catch (const attnlens::Error& e) {
      const std::string message = e.what();
      INFO(message);
      CHECK(e.code() == ErrorCode::BAD_FILE);
      CHECK(message.rfind("model.safetensors: tensor \"", 0) == 0);
      CHECK(message.find("model.safetensors: model.safetensors") == std::string::npos);
      CHECK(message.find(" holds nan at flat index ") != std::string::npos);
    }
  }
  SECTION("a tokenizer.json that is not one, and a tokenizer_config.json without it") {
    Case k{"llama", "llama", sizes(1, 16, 2, 1, 8, 32, 11, true)};
    Folder f = folder(k);
    require_error(
        [&] {
          load(f.config, f.weights, {{"tokenizer.json", "{}"}});
        },
        ErrorCode::BAD_FILE, {"tokenizer.json", "has no \"model\""});
    require_error(
        [&] {
          load(f.config, f.weights, {{"tokenizer_config.json", "{}"}});
        },
        ErrorCode::BAD_FILE, {"tokenizer_config.json was given without", "tokenizer.json"});
  }
  SECTION("ids outside the vocabulary and past the sliding window") {
    Case k{"mistral", "mistral", sizes(1, 16, 2, 1, 8, 32, 11, false)};
    k.sliding_window = 4;
    Folder f = folder(k);
    auto loaded = load(f.config, f.weights);
    const std::vector<std::int32_t> ids = {1, 2, 11, 3, 4};
    require_error(
        [&] {
          loaded.model->forward({TokenIds{ids.data(), 1, 3}}, {});
        },
        ErrorCode::BAD_ARGUMENT, {"ids[0, 2] is 11", "[0, 11)"});
    require_error(
        [&] {
          loaded.model->forward({TokenIds{ids.data(), 1, 5}}, {});
        },
        ErrorCode::TOO_LARGE, {"context of 4", "sliding window"});
    require_error(
        [&] {
          loaded.model->loss_and_gradients({TokenIds{ids.data(), 1, 2}}, {});
        },
        ErrorCode::BAD_ARGUMENT, {"does not train"});
  }
}

TEST_CASE("Llama-family prefix cache gives forward()'s numbers on edits of one sentence",
          "[llama]") {
  const std::vector<Case> all = cases();
  // llama3 frequencies, and QK-norm with head_dim 12: positions and per-head norms of the
  // rows computed after a kept prefix; Gemma 3's windows of 3 past a kept prefix; Gemma 2's
  // soft-capped scores and logits in the rows after it.
  const auto index = GENERATE(std::size_t{1}, std::size_t{5}, std::size_t{7}, std::size_t{10});
  const Case& k = all[index];
  INFO(k.label);
  const Folder f = folder(k);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  attnlens::Model& model = *loaded.model;
  const std::unique_ptr<attnlens::ForwardCache> cache = model.make_cache();
  REQUIRE(cache != nullptr);

  struct Step {
    std::vector<std::int32_t> ids;
    bool attention, hidden;
    std::vector<std::int64_t> rows;
    std::int64_t reused;
    std::int64_t from = 0;  // attention_from: the query rows asked for
  };
  const std::vector<Step> steps = {
      {{3, 1, 4, 1, 5, 9, 2, 6}, true, false, {}, 0},
      {{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, true, false, {9}, 8, 8},  // appended: its rows only
      {{3, 1, 4, 1, 5, 8, 2, 6, 5, 3}, true, false, {}, 5, 5},   // an edit in the middle
      {{3, 1, 4, 1, 5, 8, 2}, true, false, {6, 2}, 7, 7},        // deleted at the end: no row
      {{3, 1, 4, 1, 5, 8, 2}, false, false, {}, 7},              // the same again
      {{3, 1, 4, 1, 5, 8, 2, 7}, true, true, {}, 0},             // hidden states: starts over
      {{3, 1, 4, 1, 5, 8, 2, 7, 7}, true, true, {8}, 8},         // appended, keeping them
      {{0, 1, 4, 1, 5, 8, 2, 7, 7}, false, false, {0, 8}, 0},    // the first token edited
  };
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    INFO("step " << s);
    const auto T = static_cast<std::int64_t>(step.ids.size());
    attnlens::ModelForwardOptions o;
    o.attention = step.attention;
    o.hidden_states = step.hidden;
    o.logit_rows = step.rows;
    o.attention_from = step.from;
    const attnlens::ModelOutput cached =
        model.forward({TokenIds{step.ids.data(), 1, T}}, o, *cache);
    const attnlens::ModelOutput plain = model.forward({TokenIds{step.ids.data(), 1, T}}, o);
    if (step.attention) {
      // attention_from cuts the rows before it, nothing else: the plain forward's rows from it
      // are those of the whole attention, bit for bit.
      REQUIRE(plain.attention.shape == attnlens::Shape{k.c.layers, 1, k.c.heads, T - step.from, T});
      o.attention_from = 0;
      const attnlens::Tensor whole = model.forward({TokenIds{step.ids.data(), 1, T}}, o).attention;
      const std::int64_t groups = std::int64_t{k.c.layers} * k.c.heads, R = T - step.from;
      for (std::int64_t g = 0; g < groups; ++g) {
        for (std::int64_t k2 = 0; k2 < R * T; ++k2) {
          REQUIRE(plain.attention.data[static_cast<std::size_t>(g * R * T + k2)] ==
                  whole.data[static_cast<std::size_t>((g * T + step.from) * T + k2)]);
        }
      }
    }
    CHECK(cache->reused() == step.reused);
    CHECK(cache->tokens() == T);
    REQUIRE(cached.logits.shape == plain.logits.shape);
    REQUIRE(cached.attention.shape == plain.attention.shape);
    REQUIRE(cached.hidden_states.shape == plain.hidden_states.shape);
    // Both are float32 computations of the same formula; the products see other numbers of
    // rows (Eigen may pick other kernels and summation orders), a few ulp per product, ~1e-6 on
    // logits of a few units.
    REQUIRE_CLOSE(testing::close(cached.logits.data, plain.logits.data, 1e-5, cached.logits.shape));
    REQUIRE_CLOSE(
        testing::close(cached.attention.data, plain.attention.data, 1e-6, cached.attention.shape));
    REQUIRE_CLOSE(testing::close(cached.hidden_states.data, plain.hidden_states.data, 1e-5,
                                 cached.hidden_states.shape));
  }

  SECTION("attention_from outside [0, T] is refused, with a cache and without") {
    const std::vector<std::int32_t> ids = {1, 2, 3, 4};
    for (const std::int64_t from : {std::int64_t{-1}, std::int64_t{5}}) {
      attnlens::ModelForwardOptions o;
      o.attention = true;
      o.attention_from = from;
      require_error(
          [&] {
            model.forward({TokenIds{ids.data(), 1, 4}}, o, *cache);
          },
          ErrorCode::BAD_ARGUMENT, {"attention_from is " + std::to_string(from), "[0, 4]"});
      require_error(
          [&] {
            model.forward({TokenIds{ids.data(), 1, 4}}, o);
          },
          ErrorCode::BAD_ARGUMENT, {"attention_from is " + std::to_string(from)});
    }
  }

  SECTION("a cache of another model is refused, and a batch") {
    attnlens::LoadedModel other = load(f.config, f.weights);
    const std::vector<std::int32_t> ids = {1, 2, 3, 4};
    require_error(
        [&] {
          other.model->forward({TokenIds{ids.data(), 1, 4}}, {}, *cache);
        },
        ErrorCode::BAD_ARGUMENT, {"another model"});
    require_error(
        [&] {
          model.forward({TokenIds{ids.data(), 2, 2}}, {}, *cache);
        },
        ErrorCode::BAD_ARGUMENT, {"one sequence"});
  }
}

TEST_CASE("The block computes other families' variations described by data", "[llama][block]") {
  // Through the block's own interface, not a config.json: no positions, every RMSNorm scaling by
  // (1 + w), embeddings times sqrt(d) and a scale other than 1 / sqrt(head_dim) (Gemma's
  // query_pre_attn_scalar), with QK-norm, biases on q, k, v and o, and GQA 3.
  using namespace attnlens::detail;
  Case k{"variations", "qwen3", sizes(2, 24, 6, 2, 6, 40, 19, false)};
  k.attention_bias = true;
  k.c.rotary = false;
  k.c.norm_plus_one = true;
  k.c.embedding_scale = std::sqrt(24.0);
  k.c.attention_scale = 0.3;
  const llamaref::Params params = random_params(k, 9);

  DecoderSpec spec;
  spec.layers = k.c.layers;
  spec.vocab_size = k.c.vocab;
  spec.context = 32;
  spec.embedding_scale = static_cast<float>(k.c.embedding_scale);
  BlockSpec& b = spec.block;
  b.d_model = k.c.hidden;
  b.intermediate = k.c.intermediate;
  b.norm = NormKind::RMSNormPlusOne;
  b.norm_eps = static_cast<float>(k.c.eps);
  b.positions = PositionKind::None;
  b.heads = k.c.heads;
  b.kv_heads = k.c.kv_heads;
  b.head_dim = k.c.head_dim;
  b.q_bias = b.k_bias = b.v_bias = b.o_bias = true;
  b.qk_norm = true;
  b.scale = static_cast<float>(k.c.attention_scale);
  check_spec(spec);
  for (const float bad : {-1.0f, NAN}) {
    DecoderSpec capped = spec;
    capped.block.attn_softcap = bad;
    require_error([&] { check_spec(capped); }, ErrorCode::BAD_ARGUMENT,
                  {"DecoderSpec attn_softcap is", "finite and >= 0"});
    capped = spec;
    capped.final_softcap = bad;
    require_error([&] { check_spec(capped); }, ErrorCode::BAD_ARGUMENT,
                  {"DecoderSpec final_softcap is", "finite and >= 0"});
  }

  // The tensors as float32, torch's Linear weights [out, in] turned to the block's [in, out].
  std::map<std::string, std::vector<float>> stored;
  for (const auto& [name, shape] : tensor_list(k)) {
    const std::vector<double>& v = params.at(name);
    std::vector<float>& out = stored[name];
    out.resize(v.size());
    const bool matrix = shape.size() == 2 && name.find("_proj.weight") != std::string::npos;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i) {
      const std::int64_t at = matrix ? (i % shape[1]) * shape[0] + i / shape[1] : i;
      out[static_cast<std::size_t>(at)] = static_cast<float>(v[static_cast<std::size_t>(i)]);
    }
  }
  const auto w = [&](const std::string& name) { return stored.at(name).data(); };
  DecoderWeights weights;
  weights.embed = w("model.embed_tokens.weight");
  for (int l = 0; l < k.c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    BlockWeights bw;
    bw.attn_norm_w = w(p + "input_layernorm.weight");
    bw.q_w = w(p + "self_attn.q_proj.weight");
    bw.q_b = w(p + "self_attn.q_proj.bias");
    bw.k_w = w(p + "self_attn.k_proj.weight");
    bw.k_b = w(p + "self_attn.k_proj.bias");
    bw.v_w = w(p + "self_attn.v_proj.weight");
    bw.v_b = w(p + "self_attn.v_proj.bias");
    bw.o_w = w(p + "self_attn.o_proj.weight");
    bw.o_b = w(p + "self_attn.o_proj.bias");
    bw.q_norm_w = w(p + "self_attn.q_norm.weight");
    bw.k_norm_w = w(p + "self_attn.k_norm.weight");
    bw.mlp_norm_w = w(p + "post_attention_layernorm.weight");
    bw.gate_w = w(p + "mlp.gate_proj.weight");
    bw.up_w = w(p + "mlp.up_proj.weight");
    bw.down_w = w(p + "mlp.down_proj.weight");
    weights.blocks.push_back(bw);
  }
  weights.final_norm_w = w("model.norm.weight");
  weights.head = w("lm_head.weight");

  const int B = 2, T = 9;
  const auto ids = random_ids(B * T, k.c.vocab, 6);
  DecoderForward options;
  options.attention = true;
  options.hidden_states = true;
  const attnlens::ModelOutput out =
      decoder_forward(spec, weights, ids.data(), B, T, options, nullptr);
  const llamaref::Output ref = llamaref::forward(k.c, params, ids, B, T);
  // The test above's tolerances and reasons; the stream here is sqrt(24) ≈ 5 times larger at the
  // embeddings, so its rounding too: 1e-3 on the hidden states.
  REQUIRE_CLOSE(testing::close(out.logits.data, ref.logits, 2e-4, out.logits.shape));
  REQUIRE_CLOSE(testing::close(out.hidden_states.data, ref.hidden, 1e-3, out.hidden_states.shape));
  REQUIRE_CLOSE(testing::close(out.attention.data, ref.attention, 2e-5, out.attention.shape));

  // The cached form over a kept prefix: the second sequence's first 5 tokens, then all 9.
  DecoderCache cache;
  DecoderForward rows;
  rows.attention = true;
  decoder_forward(spec, weights, ids.data() + T, 5, rows, cache, nullptr);
  const attnlens::ModelOutput cached =
      decoder_forward(spec, weights, ids.data() + T, T, rows, cache, nullptr);
  CHECK(cache.reused() == 5);
  const attnlens::ModelOutput plain =
      decoder_forward(spec, weights, ids.data() + T, 1, T, rows, nullptr);
  // float32 both, other row counts in the products: the cache test's 1e-5 and 1e-6 on logits
  // and weights, but here the embeddings are scaled by sqrt(24) = 4.9, so the stream and its
  // rounding errors are about five times larger: 5e-5 on logits (the SIMD128 build's products
  // differed by 1.03e-5 on a logit of 2.35).
  REQUIRE_CLOSE(testing::close(cached.logits.data, plain.logits.data, 5e-5));
  REQUIRE_CLOSE(testing::close(cached.attention.data, plain.attention.data, 1e-6));
}

TEST_CASE("Llama-family ablation: zero and mean against the reference, zero as a zeroed o_proj",
          "[llama][ablation]") {
  const std::vector<Case> all = cases();
  // Grouped-query attention (query heads 1 and 2 share a key/value head with others), q/k/v
  // biases (Qwen2: f_h(x) = (x W_V + b_V) W_O takes the value's bias), QK-norm, Gemma 3's
  // sandwich norms and windows, and Gemma 2's soft caps.
  const std::size_t index = GENERATE(std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{7},
                                     std::size_t{8}, std::size_t{10});
  const bool mean = GENERATE(false, true);
  const Case& k = all[index];
  INFO(k.label << (mean ? ", mean" : ", zero"));
  const Folder f = folder(k);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  attnlens::Model& model = *loaded.model;
  const int B = 2, T = 11, hd = k.c.head_dim, d = k.c.hidden, q = k.c.heads * hd;
  const auto ids = random_ids(B * T, k.c.vocab, 3);
  attnlens::ModelForwardOptions options;
  options.attention = options.hidden_states = options.value_weighted = true;
  options.ablation.heads = {{0, 1}, {1, 2}};
  options.ablation.kind = mean ? attnlens::AblationKind::Mean : attnlens::AblationKind::Zero;
  const attnlens::ModelOutput out = model.forward({TokenIds{ids.data(), B, T}}, options);
  const ablationref::Spec spec{{{0, 1}, {1, 2}}, mean};
  const llamaref::Output ref = llamaref::forward(k.c, f.params, ids, B, T, &spec);
  const attnlens::Shape logits_shape = {B, T, k.c.vocab};
  // The forward's own tolerances (the first test of this file): a mean of at most 11 rows adds
  // 11 · 2^-24 relative to values of a few units.
  REQUIRE_CLOSE(testing::close(out.logits.data, ref.logits, 2e-4, logits_shape));
  REQUIRE_CLOSE(testing::close(out.hidden_states.data, ref.hidden, 2e-4));
  REQUIRE_CLOSE(testing::close(out.attention.data, ref.attention, 2e-5));
  // Value-weighted attention. Each component of f_h(x_j) is a float32 product chain of the
  // layer, within the forward's per-value bound above (2e-4); a norm of d <= 48 of them within
  // √48 ≈ 7 times that (‖δf‖ <= √d · max|δf_c|), 1.4e-3; the layer's norm of the sum over at
  // most 6 heads within 6 times that, 8.4e-3. (Measured: under 1e-5. A wrong head, key/value
  // group or slice moves them by O(0.1).)
  REQUIRE_CLOSE(testing::close(out.value_norms.data, ref.value_norms, 1.4e-3));
  REQUIRE_CLOSE(testing::close(out.value_weighted.data, ref.value_weighted, 8.4e-3));
  attnlens::ModelForwardOptions plain_options;
  plain_options.value_weighted = true;
  const attnlens::ModelOutput plain = model.forward({TokenIds{ids.data(), B, T}}, plain_options);
  const llamaref::Output plain_ref = llamaref::forward(k.c, f.params, ids, B, T);
  REQUIRE_CLOSE(testing::close(plain.value_norms.data, plain_ref.value_norms, 1.4e-3));
  REQUIRE_CLOSE(testing::close(plain.value_weighted.data, plain_ref.value_weighted, 8.4e-3));
  CHECK(testing::max_abs_difference(plain.logits.data, out.logits.data) > 0.05);

  if (!mean) {
    // o_proj is [d, heads · head_dim] (torch's Linear): head h enters at columns h · hd ..
    llamaref::Params zeroed = f.params;
    for (const auto& [layer, head] : spec.heads) {
      auto& w = zeroed.at("model.layers." + std::to_string(layer) + ".self_attn.o_proj.weight");
      for (int row = 0; row < d; ++row)
        std::fill(w.begin() + row * q + head * hd, w.begin() + row * q + (head + 1) * hd, 0.0);
    }
    std::map<std::string, attnlens::Shape> shapes;
    for (const auto& [name, shape] : tensor_list(k))
      shapes[name] = shape;
    attnlens::LoadedModel other = load(f.config, safetensors(zeroed, shapes, k.dtype));
    attnlens::ModelForwardOptions same;
    same.attention = true;
    const attnlens::ModelOutput z = other.model->forward({TokenIds{ids.data(), B, T}}, same);
    // The same arithmetic on exact zeros: bit for bit.
    REQUIRE_CLOSE(testing::close(out.logits.data, z.logits.data, 0.0, logits_shape));
    REQUIRE_CLOSE(testing::close(out.attention.data, z.attention.data, 0.0));
  }

  // With a cache: every row computed, the cache left as it was.
  const std::unique_ptr<attnlens::ForwardCache> cache = model.make_cache();
  REQUIRE(cache != nullptr);
  const attnlens::ModelOutput first = model.forward({TokenIds{ids.data(), 1, T}}, {}, *cache);
  const attnlens::ModelOutput cached = model.forward({TokenIds{ids.data(), 1, T}}, options, *cache);
  CHECK(cache->reused() == 0);
  const attnlens::ModelOutput single = model.forward({TokenIds{ids.data(), 1, T}}, options);
  REQUIRE_CLOSE(testing::close(cached.logits.data, single.logits.data, 0.0));
  const attnlens::ModelOutput again = model.forward({TokenIds{ids.data(), 1, T}}, {}, *cache);
  CHECK(cache->reused() == T);
  REQUIRE_CLOSE(testing::close(again.logits.data, first.logits.data, 0.0));

  // Every head of a layer off still computes; a duplicate is a named error.
  attnlens::ModelForwardOptions every;
  for (int h = 0; h < k.c.heads; ++h)
    every.ablation.heads.push_back({1, h});
  for (float x : model.forward({TokenIds{ids.data(), B, T}}, every).logits.data)
    REQUIRE(std::isfinite(x));
  every.ablation.heads.push_back({1, 0});
  require_error(
      [&] {
        model.forward({TokenIds{ids.data(), B, T}}, every);
      },
      ErrorCode::BAD_ARGUMENT, {"again"});
}

TEST_CASE("Llama-family heads' writes, logit lens and logit attribution against the reference",
          "[llama][lens]") {
  const std::vector<Case> all = cases();
  // Grouped-query attention, q/k/v biases (Qwen2), QK-norm (Qwen3), Gemma 3's sandwich norms
  // and Gemma 2's soft caps (heads' writes and the lens; attribution refused), with and without
  // a head off.
  const std::size_t index = GENERATE(std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{7},
                                     std::size_t{8}, std::size_t{10});
  const bool ablate = GENERATE(false, true);
  const Case& k = all[index];
  INFO(k.label << (ablate ? ", head (1, 2) zeroed" : ""));
  const Folder f = folder(k);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  attnlens::Model& model = *loaded.model;
  const int B = 2, T = 11, N = B * T, L = k.c.layers, H = k.c.heads, d = k.c.hidden, V = k.c.vocab;
  const auto ids = random_ids(B * T, V, 3);
  attnlens::Ablation ablation;
  const ablationref::Spec spec{{{1, 2}}, false};
  if (ablate) ablation.heads = {{1, 2}};
  const llamaref::Output ref =
      llamaref::forward(k.c, f.params, ids, B, T, ablate ? &spec : nullptr);

  const std::vector<std::int64_t> rows = {T - 1, N - 2};
  attnlens::ModelForwardOptions options;
  options.hidden_states = true;
  options.head_output_rows = rows;
  options.ablation = ablation;
  const attnlens::ModelOutput out = model.forward({TokenIds{ids.data(), B, T}}, options);
  REQUIRE(out.head_outputs.shape == attnlens::Shape{L, 2, H, d});
  std::vector<double> expected;
  for (int l = 0; l < L; ++l)
    for (std::int64_t r : rows)
      for (int h = 0; h < H; ++h)
        for (int c = 0; c < d; ++c)
          expected.push_back(
              ref.head_writes[static_cast<std::size_t>(((l * N + r) * H + h) * d + c)]);
  // A product chain of the forward's: its hidden states' bound (the first test of this file).
  REQUIRE_CLOSE(testing::close(out.head_outputs.data, expected, 2e-4));

  lensref::Readout readout;
  readout.eps = k.c.eps;
  readout.plus_one = k.c.norm_plus_one;
  readout.w = f.params.at("model.norm.weight");
  const llamaref::Vec& head =
      f.params.at(k.c.tied ? "model.embed_tokens.weight" : "lm_head.weight");
  readout.unembedding = [&](std::int64_t v, std::int64_t c) {
    return head[static_cast<std::size_t>(v * d + c)];
  };
  readout.d = d;
  readout.vocab = V;
  // The logit lens of every layer against the reference's norm and head on its own stream: the
  // forward's logits bound (2e-4), one more norm and product on a stream within it.
  for (int l = 0; l <= L; ++l) {
    INFO("after layer " << l - 1);
    attnlens::Tensor stream({N, d});
    std::copy(out.hidden_states.data.begin() + l * N * d,
              out.hidden_states.data.begin() + (l + 1) * N * d, stream.data.begin());
    const attnlens::Tensor logits = model.unembed(stream);
    std::vector<double> want;
    for (int n = 0; n < N; ++n) {
      auto row = lensref::logits(readout, ref.hidden.data() + (l * N + n) * d);
      // Gemma 2's soft cap is part of its head: the lens reads logits as the model gives them.
      if (k.c.final_softcap > 0) {
        for (double& x : row)
          x = k.c.final_softcap * std::tanh(x / k.c.final_softcap);
      }
      want.insert(want.end(), row.begin(), row.end());
    }
    REQUIRE_CLOSE(testing::close(logits.data, want, 2e-4, attnlens::Shape{N, V}));
  }

  const std::int64_t row = N - 2;
  if (is_gemma(k)) {
    // A head's write passes post_attention_layernorm before it joins the stream: no part adds
    // to it as it is, so there is nothing to split.
    require_error(
        [&] {
          model.attribute({TokenIds{ids.data(), B, T}}, row, 0, ablation);
        },
        ErrorCode::BAD_ARGUMENT, {"norms come after its layers' parts"});
    return;
  }
  for (const std::int32_t token : {0, V - 1}) {
    INFO("token " << token);
    const attnlens::LogitAttribution a =
        model.attribute({TokenIds{ids.data(), B, T}}, row, token, ablation);
    const auto at = [&](const llamaref::Vec& v, std::int64_t i) { return v.data() + i * d; };
    const lensref::Attribution want = lensref::attribute(
        readout, token, at(ref.hidden, L * N + row), at(ref.hidden, row),
        [&](int l, int h) { return at(ref.head_writes, (l * N + row) * H + h); },
        [&](int l) -> const double* {
          const auto b =
              f.params.find("model.layers." + std::to_string(l) + ".self_attn.o_proj.bias");
          return b == f.params.end() ? nullptr : b->second.data();
        },
        [&](int l) { return at(ref.mlp_writes, l * N + row); }, L, H);
    // As GPT-2's test (test_gpt2.cpp): a part's attribution moves by at most its components'
    // largest error e (measured: this forward's float32 streams and heads' writes against the
    // reference's) times want.sensitivity, an MLP's by (heads + 2) times that; the frozen
    // 1 / rms by e · scale relative.
    double e = 0;
    for (std::size_t i = 0; i < ref.hidden.size(); ++i)
      e = std::max(e, std::abs(out.hidden_states.data[i] - ref.hidden[i]));
    for (std::size_t i = 0; i < expected.size(); ++i)
      e = std::max(e, std::abs(out.head_outputs.data[i] - expected[i]));
    CHECK(e < 2e-4);
    double big = std::abs(want.embeddings);  // the largest |part|, for the relative term
    for (const auto* v : {&want.heads, &want.mlps})
      for (double x : *v)
        big = std::max(big, std::abs(x));
    const double tol = e * want.sensitivity, rel = 2 * e * a.scale * big;
    INFO("largest stream error " << e << ", tolerance " << tol << " + " << rel);
    REQUIRE_CLOSE(testing::close(a.heads.data, want.heads, tol + rel));
    REQUIRE_CLOSE(testing::close(a.attention_bias.data, want.biases, 0.0));
    REQUIRE_CLOSE(testing::close(a.mlps.data, want.mlps, (H + 2) * tol + rel));
    CHECK(std::abs(a.embeddings - want.embeddings) <= tol + rel);
    CHECK(a.constant == 0.0);  // no norm bias, no head bias
    CHECK(std::abs(a.logit - want.logit) <= 2e-4 * (1 + std::abs(want.logit)));
    double magnitude = std::abs(a.embeddings);
    for (const auto* t : {&a.heads, &a.mlps})
      for (float x : t->data)
        magnitude += std::abs(x);
    // The parts add up to the model's logit up to float32 rounding (test_gpt2.cpp's bound).
    CHECK(std::abs(a.total() - a.logit) <= 2e-6 * (1 + magnitude));
    if (ablate) CHECK(a.heads.data[static_cast<std::size_t>(1 * H + 2)] == 0.0f);
  }
  require_error(
      [&] {
        model.attribute({TokenIds{ids.data(), B, T}}, N, 0);
      },
      ErrorCode::BAD_ARGUMENT, {"row is 22"});
  require_error(
      [&] {
        model.attribute({TokenIds{ids.data(), B, T}}, 0, V);
      },
      ErrorCode::BAD_ARGUMENT, {"token is"});
  require_error(
      [&] {
        model.unembed(attnlens::Tensor({1, d + 1}));
      },
      ErrorCode::BAD_ARGUMENT, {"unembed takes"});
}
