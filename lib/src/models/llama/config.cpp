#include "models/llama/config.hpp"

#include "core/check.hpp"
#include "io/json.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace attnlens::detail {
namespace {

// Sizes past which a config is refused before anything is allocated: far beyond every released
// model of these families (Llama 3.1 405B: 126 layers, width 16384, 128 heads, vocabulary 128256).
constexpr std::int64_t kMaxLayers = 1024;
constexpr std::int64_t kMaxWidth = 1 << 17;
constexpr std::int64_t kMaxHeads = 1024;
constexpr std::int64_t kMaxVocab = 1 << 22;

std::int64_t size_key(const JsonValue& root, std::string_view key, std::string_view file,
                      std::int64_t most) {
  const JsonValue* value = root.find(key);
  if (value == nullptr) {
    fail(ErrorCode::BAD_FILE, file, ": the key \"", key, "\" is missing; a Llama-family config ",
         "gives it");
  }
  if (!value->is_integer() || value->as_integer() < 1 || value->as_integer() > most) {
    fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" must be an integer in [1, ", most, "], not ",
         value->is_integer() ? std::to_string(value->as_integer()) : value->kind_name());
  }
  return value->as_integer();
}

// An optional size: absent or null gives `fallback`.
std::int64_t size_key_or(const JsonValue& root, std::string_view key, std::string_view file,
                         std::int64_t most, std::int64_t fallback) {
  const JsonValue* value = root.find(key);
  if (value == nullptr || value->is_null()) return fallback;
  return size_key(root, key, file, most);
}

bool bool_key(const JsonValue& root, std::string_view key, std::string_view file, bool fallback) {
  const JsonValue* value = root.find(key);
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_bool()) {
    fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" must be true or false, not ",
         value->kind_name());
  }
  return value->as_bool();
}

double number_key(const JsonValue& obj, std::string_view key, std::string_view file,
                  std::string_view where, double fallback, bool required = false) {
  const JsonValue* value = obj.find(key);
  if (value == nullptr || value->is_null()) {
    if (required) {
      fail(ErrorCode::BAD_FILE, file, ": \"", where, key, "\" is missing; this rope_type needs it");
    }
    return fallback;
  }
  if (!value->is_number() || !(value->as_number() > 0.0)) {
    fail(ErrorCode::BAD_FILE, file, ": \"", where, key, "\" must be a number > 0, not ",
         value->is_number() ? std::to_string(value->as_number()) : value->kind_name());
  }
  return value->as_number();
}

const std::string* string_key(const JsonValue& obj, std::string_view key, std::string_view file,
                              std::string_view where = "") {
  const JsonValue* value = obj.find(key);
  if (value == nullptr || value->is_null()) return nullptr;
  if (!value->is_string()) {
    fail(ErrorCode::BAD_FILE, file, ": \"", where, key, "\" must be a string, not ",
         value->kind_name());
  }
  return &value->as_string();
}

void read_rope_type(RopeSpec& rope, const JsonValue& set, std::string_view file,
                    const std::string& where);

// Rotary embeddings from transformers 5's rope_parameters {rope_type, rope_theta, ...} or
// transformers 4's rope_theta and rope_scaling {rope_type (or the older "type"), ...}.
RopeSpec parse_rope(const JsonValue& root, std::string_view file) {
  RopeSpec rope;
  const JsonValue* params = root.find("rope_parameters");
  const JsonValue* scaling = nullptr;
  std::string where;
  if (params != nullptr && !params->is_null()) {
    if (!params->is_object()) {
      fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters\" must be an object, not ",
           params->kind_name());
    }
    where = "rope_parameters.";
    // Some families give one set per layer type ({"full_attention": {...}, ...}): read as one
    // set they would silently take the defaults.
    for (const JsonMember& m : params->members()) {
      if (m.value.is_object()) {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters.", m.name,
             "\" is an object: rotary parameters per layer type are not read; a Llama-family "
             "config gives one set {rope_type, rope_theta, ...}");
      }
    }
    rope.theta = number_key(*params, "rope_theta", file, where,
                            number_key(root, "rope_theta", file, "", 10000.0));
    scaling = params;
  } else {
    rope.theta = number_key(root, "rope_theta", file, "", 10000.0);
    const JsonValue* s = root.find("rope_scaling");
    if (s != nullptr && !s->is_null()) {
      if (!s->is_object()) {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_scaling\" must be an object or null, not ",
             s->kind_name());
      }
      where = "rope_scaling.";
      scaling = s;
    }
  }
  if (scaling != nullptr) read_rope_type(rope, *scaling, file, where);
  return rope;
}

// The rope_type of a set (rope_scaling or rope_parameters) and the numbers that type reads.
void read_rope_type(RopeSpec& rope, const JsonValue& set, std::string_view file,
                    const std::string& where) {
  const JsonValue* scaling = &set;
  const char* type_key = "rope_type";
  const std::string* type = string_key(*scaling, type_key, file, where);
  if (type == nullptr) {
    type_key = "type";
    type = string_key(*scaling, type_key, file, where);
  }
  const std::string name = type == nullptr ? "default" : *type;
  if (name == "default") {
    rope.scaling = RopeScaling::Default;
  } else if (name == "linear") {
    rope.scaling = RopeScaling::Linear;
    rope.factor = number_key(*scaling, "factor", file, where, 1.0, true);
  } else if (name == "llama3") {
    rope.scaling = RopeScaling::Llama3;
    rope.factor = number_key(*scaling, "factor", file, where, 1.0, true);
    rope.low_freq_factor = number_key(*scaling, "low_freq_factor", file, where, 1.0, true);
    rope.high_freq_factor = number_key(*scaling, "high_freq_factor", file, where, 4.0, true);
    rope.original_context =
        number_key(*scaling, "original_max_position_embeddings", file, where, 8192.0, true);
    if (!(rope.high_freq_factor > rope.low_freq_factor)) {
      fail(ErrorCode::BAD_FILE, file, ": \"", where, "high_freq_factor\" (", rope.high_freq_factor,
           ") must be larger than low_freq_factor (", rope.low_freq_factor, ")");
    }
  } else {
    fail(ErrorCode::BAD_FILE, file, ": \"", where, type_key, "\" is \"", name,
         "\"; attnlens computes rotary embeddings of rope_type \"default\", \"linear\" and "
         "\"llama3\"");
  }
  const double partial = number_key(*scaling, "partial_rotary_factor", file, where, 1.0);
  if (partial != 1.0) {
    fail(ErrorCode::BAD_FILE, file, ": \"", where,
         "partial_rotary_factor\" is not 1; attnlens rotates the whole head");
  }
}

std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// The shortest decimal that reads back as the same float (1e-05, not 9.9999997473787516e-06):
// an eps held as float32 is written as the config gave it.
std::string float_text(float x) {
  char buffer[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buffer, nullptr) == x) break;
  }
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// A soft cap as config.json writes it: null for none.
std::string softcap_text(float cap) {
  return cap > 0.0f ? float_text(cap) : "null";
}

const char* architecture(const std::string& model_type) {
  if (model_type == "mistral") return "MistralForCausalLM";
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  if (model_type == "qwen3") return "Qwen3ForCausalLM";
  if (model_type == "gemma3_text") return "Gemma3ForCausalLM";
  if (model_type == "gemma2") return "Gemma2ForCausalLM";
  if (model_type == "modernbert") return "ModernBertForMaskedLM";
  return "LlamaForCausalLM";
}

// config.json's "layer_types" when given: one entry per layer (num_hidden_layers of them), each
// read by the caller; null when absent.
const std::vector<JsonValue>* layer_types(const JsonValue& root, std::string_view file,
                                          std::int64_t layers) {
  const JsonValue* types = root.find("layer_types");
  if (types == nullptr || types->is_null()) return nullptr;
  if (!types->is_array()) {
    fail(ErrorCode::BAD_FILE, file, ": \"layer_types\" must be an array, not ", types->kind_name());
  }
  if (static_cast<std::int64_t>(types->items().size()) != layers) {
    fail(ErrorCode::BAD_FILE, file, ": \"layer_types\" has ", types->items().size(),
         " entries but \"num_hidden_layers\" is ", layers);
  }
  return &types->items();
}

// config.json's "layer_types" as which layers slide, each entry "sliding_attention" or
// "full_attention" (`family` names the model in the message), or nothing when absent.
std::optional<std::vector<bool>> sliding_layers(const JsonValue& root, std::string_view file,
                                                std::int64_t layers, const char* family) {
  const std::vector<JsonValue>* types = layer_types(root, file, layers);
  if (types == nullptr) return std::nullopt;
  std::vector<bool> sliding(types->size());
  for (std::size_t i = 0; i < types->size(); ++i) {
    const JsonValue& t = (*types)[i];
    const bool full = t.is_string() && t.as_string() == "full_attention";
    const bool window = t.is_string() && t.as_string() == "sliding_attention";
    if (!full && !window) {
      fail(ErrorCode::BAD_FILE, file, ": \"layer_types\"[", i, "] is ",
           t.is_string() ? "\"" + t.as_string() + "\"" : std::string(t.kind_name()), "; ", family,
           "'s layers are \"sliding_attention\" or \"full_attention\"");
    }
    sliding[i] = window;
  }
  return sliding;
}

// Gemma 2's soft caps: the key's number c > 0 (each score or logit x becomes c · tanh(x / c)),
// `fallback` when the key is absent (Gemma2Config's defaults), 0 when it is null.
float softcap_key(const JsonValue& root, const char* key, std::string_view file, double fallback) {
  const JsonValue* cap = root.find(key);
  if (cap == nullptr) return static_cast<float>(fallback);
  if (cap->is_null()) return 0.0f;
  // Checked as the float it becomes: 1e-50 would be a cap of 0, which means none.
  if (!cap->is_number() || !(static_cast<float>(cap->as_number()) > 0.0f) ||
      !std::isfinite(static_cast<float>(cap->as_number()))) {
    fail(ErrorCode::BAD_FILE, file, ": \"", key,
         "\" must be null or a number > 0 (scores or logits x become c · tanh(x / c))");
  }
  return static_cast<float>(cap->as_number());
}

// Gemma 3's text model (Gemma3TextConfig) or Gemma 2 (Gemma2Config), after the sizes every family
// shares: the (1 + w) RMSNorm around each of attention and MLP, embeddings times
// sqrt(hidden_size), the score scale query_pre_attn_scalar^-0.5, GeGLU with the tanh GELU, the
// soft caps attn_logit_softcapping and final_logit_softcapping where not null, and per layer
// either a sliding window or full attention. Gemma 3 adds QK-norm and a rotary base of its own
// for sliding layers (rope_local_base_freq); Gemma 2 rotates every layer by rope_theta, and
// slides on layers 0, 2, 4, ... unless layer_types says otherwise.
void parse_gemma(const JsonValue& root, std::string_view file, LlamaConfig& c) {
  DecoderSpec& s = c.spec;
  BlockSpec& b = s.block;
  const bool two = c.model_type == "gemma2";
  const char* family = two ? "Gemma 2" : "Gemma 3";
  for (const char* key : {"hidden_activation", "hidden_act"}) {
    const std::string* act = string_key(root, key, file);
    if (act != nullptr && *act != "gelu_pytorch_tanh") {
      fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" is \"", *act, "\"; the ", family,
           " MLP attnlens computes is GeGLU with the tanh GELU (\"gelu_pytorch_tanh\")");
    }
  }
  // Gemma2Config defaults to caps of 50 (scores) and 30 (logits); Gemma3TextConfig to none.
  b.attn_softcap = softcap_key(root, "attn_logit_softcapping", file, two ? 50.0 : 0.0);
  s.final_softcap = softcap_key(root, "final_logit_softcapping", file, two ? 30.0 : 0.0);
  if (bool_key(root, "use_bidirectional_attention", file, false)) {
    fail(ErrorCode::BAD_FILE, file, ": \"use_bidirectional_attention\" is true; attnlens computes ",
         family, " as a causal decoder");
  }
  b.norm = NormKind::RMSNormPlusOne;
  b.placement = NormPlacement::Sandwich;
  b.positions = PositionKind::Rotary;
  b.mlp = MlpKind::GatedGelu;
  b.qk_norm = !two;
  b.q_bias = b.k_bias = b.v_bias = b.o_bias = bool_key(root, "attention_bias", file, false);
  // float32, as transformers computes hidden_size ** 0.5 and a float32 model multiplies by it.
  s.embedding_scale = std::sqrt(static_cast<float>(b.d_model));
  c.query_pre_attn_scalar = number_key(root, "query_pre_attn_scalar", file, "", 256.0);
  b.scale = static_cast<float>(1.0 / std::sqrt(c.query_pre_attn_scalar));
  c.tied = bool_key(root, "tie_word_embeddings", file, true);

  // Rotary positions: Gemma 2 has one set for every layer, as the Llama families give it.
  // Gemma 3: transformers 5 nests one set per layer type in rope_parameters; transformers 4 gives
  // rope_theta (+ rope_scaling) for full layers and rope_local_base_freq.
  const JsonValue* params = root.find("rope_parameters");
  if (two) {
    b.rope = parse_rope(root, file);
    s.local_rope = b.rope;
  } else if (params != nullptr && !params->is_null()) {
    if (!params->is_object()) {
      fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters\" must be an object, not ",
           params->kind_name());
    }
    // As Gemma3TextConfig fills them in: a set or its rope_theta left out takes the top-level
    // rope_theta (full layers) or rope_local_base_freq (sliding ones), then 1e6 or 1e4.
    for (const char* kind : {"full_attention", "sliding_attention"}) {
      const bool full = std::string_view(kind) == "full_attention";
      const double theta = full ? number_key(root, "rope_theta", file, "", 1000000.0)
                                : number_key(root, "rope_local_base_freq", file, "", 10000.0);
      RopeSpec& rope = full ? b.rope : s.local_rope;
      const JsonValue* set = params->find(kind);
      if (set == nullptr || set->is_null()) {
        rope.theta = theta;
        continue;
      }
      if (!set->is_object()) {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters.", kind,
             "\" must be an object {rope_type, rope_theta, ...}: Gemma 3 gives one set per "
             "layer type");
      }
      const std::string where = std::string("rope_parameters.") + kind + ".";
      rope.theta = number_key(*set, "rope_theta", file, where, theta);
      read_rope_type(rope, *set, file, where);
    }
    // Gemma 3's sliding layers rotate at their base frequency only (transformers 4 builds their
    // rotary embedding with rope_type "default"); a scaled one would not survive a save.
    if (s.local_rope.scaling != RopeScaling::Default) {
      fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters.sliding_attention.rope_type\" is \"",
           rope_scaling_name(s.local_rope.scaling),
           "\"; Gemma 3's sliding layers rotate with rope_type \"default\"");
    }
  } else {
    b.rope.theta = number_key(root, "rope_theta", file, "", 1000000.0);
    const JsonValue* scaling = root.find("rope_scaling");
    if (scaling != nullptr && !scaling->is_null()) {
      if (!scaling->is_object()) {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_scaling\" must be an object or null, not ",
             scaling->kind_name());
      }
      read_rope_type(b.rope, *scaling, file, "rope_scaling.");
    }
    s.local_rope.theta = number_key(root, "rope_local_base_freq", file, "", 10000.0);
  }

  // Which layers are windowed: layer_types, or (older configs) as Gemma2Config derives
  // layer_types (every other layer, from layer 0) or Gemma3TextConfig does (every
  // sliding_window_pattern-th layer full and the others sliding, default 6).
  std::vector<bool> sliding(static_cast<std::size_t>(s.layers));
  if (auto types = sliding_layers(root, file, s.layers, family)) {
    sliding = std::move(*types);
  } else if (two) {
    for (std::int64_t i = 0; i < s.layers; ++i)
      sliding[static_cast<std::size_t>(i)] = (i + 1) % 2 != 0;
  } else {
    const std::int64_t pattern = size_key_or(root, "sliding_window_pattern", file, kMaxLayers, 6);
    for (std::int64_t i = 0; i < s.layers; ++i)
      sliding[static_cast<std::size_t>(i)] = (i + 1) % pattern != 0;
  }
  const bool any_sliding = std::find(sliding.begin(), sliding.end(), true) != sliding.end();
  // A null window with sliding layers has no meaning (transformers fails building their mask).
  const JsonValue* window_value = root.find("sliding_window");
  if (any_sliding && window_value != nullptr && window_value->is_null()) {
    fail(ErrorCode::BAD_FILE, file, ": \"sliding_window\" is null, but some of this ", family,
         "'s layers slide (layer_types or the default pattern): give the window's size");
  }
  const std::int64_t window = size_key_or(root, "sliding_window", file, INT_MAX, 4096);
  if (any_sliding) c.sliding_window = window;
  for (std::int64_t i = 0; i < s.layers; ++i) {
    LayerAttention a;
    if (sliding[static_cast<std::size_t>(i)]) {
      a.window = window;
      a.local_rope = !two;
    }
    s.layer_attention.push_back(a);
  }
  s.context = c.max_position_embeddings;
}
// ModernBERT (ModernBertConfig, modeling_modernbert.py): a bidirectional encoder on the block.
// LayerNorms (bias per norm_bias) after the embeddings, before attention (not in layer 0) and
// before the MLP, and at the end; a fused Wqkv (split when loaded) and Wo, biased per
// attention_bias; GeGLU with the exact GELU (Wi's first half activated, times its second half);
// every global_attn_every_n_layers-th layer (0, n, 2n, ...) global with rotary base
// global_rope_theta, the others a window of local_attention / 2 keys on each side with
// local_rope_theta (transformers 5: layer_types and rope_parameters per layer type); the
// prediction head norm(gelu(dense(x))) and a decoder tied to the embeddings with a bias.
void parse_modernbert(const JsonValue& root, std::string_view file, LlamaConfig& c) {
  DecoderSpec& s = c.spec;
  BlockSpec& b = s.block;
  for (const char* key : {"hidden_activation", "classifier_activation"}) {
    const std::string* act = string_key(root, key, file);
    if (act != nullptr && *act != "gelu") {
      fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" is \"", *act,
           "\"; the ModernBERT attnlens computes uses the exact GELU (\"gelu\")");
    }
  }
  if (b.d_model % b.heads != 0) {
    fail(ErrorCode::BAD_FILE, file, ": \"hidden_size\" (", b.d_model,
         ") is not a multiple of \"num_attention_heads\" (", b.heads, ")");
  }
  b.head_dim = b.d_model / b.heads;
  b.kv_heads = b.heads;
  if (b.head_dim % 2 != 0) {
    fail(ErrorCode::BAD_FILE, file, ": a head is ", b.head_dim,
         " wide (hidden_size / num_attention_heads); rotary embeddings pair its halves, so it "
         "must be even");
  }
  const JsonValue* eps = root.find("norm_eps");
  if (eps != nullptr && !eps->is_null()) {
    if (!eps->is_number() || !(eps->as_number() > 0.0)) {
      fail(ErrorCode::BAD_FILE, file, ": \"norm_eps\" must be a number > 0");
    }
    b.norm_eps = static_cast<float>(eps->as_number());
  } else {
    b.norm_eps = 1e-5f;
  }
  b.norm = NormKind::LayerNorm;
  b.norm_bias = bool_key(root, "norm_bias", file, false);
  b.placement = NormPlacement::Pre;
  b.positions = PositionKind::Rotary;
  b.mlp = MlpKind::GatedGeluErf;
  b.q_bias = b.k_bias = b.v_bias = b.o_bias = bool_key(root, "attention_bias", file, false);
  b.mlp_bias = bool_key(root, "mlp_bias", file, false);
  c.classifier_bias = bool_key(root, "classifier_bias", file, false);
  // The special tokens' ids, written back by save(): transformers builds the embedding with
  // padding_idx = pad_token_id, and its default (50283) is past a smaller vocabulary.
  for (const char* key :
       {"pad_token_id", "bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id"}) {
    const JsonValue* id = root.find(key);
    if (id == nullptr || id->is_null()) continue;
    if (!id->is_integer() || id->as_integer() < 0 || id->as_integer() >= s.vocab_size) {
      fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" must be a token id in [0, ", s.vocab_size,
           "), not ", id->is_integer() ? std::to_string(id->as_integer()) : id->kind_name());
    }
    c.token_ids.emplace_back(key, id->as_integer());
  }
  c.decoder_bias = bool_key(root, "decoder_bias", file, true);
  c.tied = bool_key(root, "tie_word_embeddings", file, true);
  s.embedding_norm = true;
  s.first_attn_norm = false;
  s.head_transform = true;
  s.causal = false;

  // Rotary bases: transformers 5 nests one set per layer type in rope_parameters, transformers 4
  // gives global_rope_theta and local_rope_theta (160 000 and 10 000 by default).
  // A local_rope_theta given as null rotates the local layers at the global base (transformers 4's
  // ModernBertRotaryEmbedding takes local_rope_theta only when it is not None).
  b.rope.theta = number_key(root, "global_rope_theta", file, "", 160000.0);
  const JsonValue* local_theta = root.find("local_rope_theta");
  s.local_rope.theta = local_theta != nullptr && local_theta->is_null()
                           ? b.rope.theta
                           : number_key(root, "local_rope_theta", file, "", 10000.0);
  // transformers 5 applies a top-level rope_scaling to both kinds of layer; transformers 4
  // ignores it. Either way it is not the default rotation this family computes.
  const JsonValue* scaling = root.find("rope_scaling");
  if (scaling != nullptr && !scaling->is_null()) {
    fail(ErrorCode::BAD_FILE, file,
         ": \"rope_scaling\" is set; the ModernBERT attnlens computes rotates with rope_type "
         "\"default\" in both kinds of layer");
  }
  const JsonValue* params = root.find("rope_parameters");
  if (params != nullptr && !params->is_null()) {
    if (!params->is_object()) {
      fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters\" must be an object, not ",
           params->kind_name());
    }
    // One set per layer type, nothing else: a flat {rope_type, rope_theta} would otherwise be
    // read as no sets at all.
    for (const JsonMember& m : params->members()) {
      if (m.name != "full_attention" && m.name != "sliding_attention") {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters.", m.name,
             "\" is not a layer type; ModernBERT gives one set per layer type "
             "(\"full_attention\", \"sliding_attention\")");
      }
    }
    for (const char* kind : {"full_attention", "sliding_attention"}) {
      RopeSpec& rope = std::string_view(kind) == "full_attention" ? b.rope : s.local_rope;
      const JsonValue* set = params->find(kind);
      if (set == nullptr || set->is_null()) continue;
      if (!set->is_object()) {
        fail(ErrorCode::BAD_FILE, file, ": \"rope_parameters.", kind,
             "\" must be an object {rope_type, rope_theta}: ModernBERT gives one set per layer "
             "type");
      }
      const std::string where = std::string("rope_parameters.") + kind + ".";
      rope.theta = number_key(*set, "rope_theta", file, where, rope.theta);
      read_rope_type(rope, *set, file, where);
    }
  }
  if (b.rope.scaling != RopeScaling::Default || s.local_rope.scaling != RopeScaling::Default) {
    fail(ErrorCode::BAD_FILE, file,
         ": a scaled rope_type; the ModernBERT attnlens computes rotates with rope_type "
         "\"default\" in both kinds of layer");
  }

  // Which layers are local: layer_types, or every layer whose index is not a multiple of
  // global_attn_every_n_layers (default 3), as ModernBertConfig derives layer_types.
  std::vector<bool> local(static_cast<std::size_t>(s.layers));
  const JsonValue* every_key = root.find("global_attn_every_n_layers");
  if (auto types = sliding_layers(root, file, s.layers, "ModernBERT")) {
    local = std::move(*types);
    // Both given: transformers versions differ on which one decides, so they must agree.
    if (every_key != nullptr && !every_key->is_null()) {
      const std::int64_t every = size_key(root, "global_attn_every_n_layers", file, kMaxLayers);
      for (std::int64_t i = 0; i < s.layers; ++i) {
        if (local[static_cast<std::size_t>(i)] != (i % every != 0)) {
          fail(ErrorCode::BAD_FILE, file, ": \"layer_types\"[", i, "] is \"",
               local[static_cast<std::size_t>(i)] ? "sliding_attention" : "full_attention",
               "\" but \"global_attn_every_n_layers\" (", every, ") makes layer ", i,
               local[static_cast<std::size_t>(i)] ? " global" : " local",
               "; give one of them, or both in agreement");
        }
      }
    }
  } else {
    const std::int64_t every = size_key_or(root, "global_attn_every_n_layers", file, kMaxLayers, 3);
    for (std::int64_t i = 0; i < s.layers; ++i)
      local[static_cast<std::size_t>(i)] = i % every != 0;
  }
  c.local_attention = size_key_or(root, "local_attention", file, INT_MAX - 2, 128);
  for (std::int64_t i = 0; i < s.layers; ++i) {
    LayerAttention a;
    if (local[static_cast<std::size_t>(i)]) {
      a.window = c.local_attention / 2 + 1;  // |i - j| <= local_attention / 2
      a.local_rope = true;
    }
    s.layer_attention.push_back(a);
  }
  s.context = c.max_position_embeddings;
}

}  // namespace

LlamaConfig parse_llama_config(std::string_view config_json, std::string_view file) {
  const JsonValue root = parse_json(config_json, file);
  if (!root.is_object()) fail(ErrorCode::BAD_FILE, file, ": not a JSON object");
  LlamaConfig c;
  const std::string* type = string_key(root, "model_type", file);
  if (type == nullptr ||
      (*type != "llama" && *type != "mistral" && *type != "qwen2" && *type != "qwen3" &&
       *type != "gemma2" && *type != "gemma3_text" && *type != "modernbert")) {
    fail(ErrorCode::BAD_FILE, file, ": model_type is ",
         type == nullptr ? std::string("missing") : "\"" + *type + "\"",
         "; a config of the block's families says \"llama\", \"mistral\", \"qwen2\", \"qwen3\", ",
         "\"gemma2\", \"gemma3_text\" or \"modernbert\"");
  }
  c.model_type = *type;
  const bool gemma = c.model_type == "gemma3_text" || c.model_type == "gemma2";
  DecoderSpec& s = c.spec;
  BlockSpec& b = s.block;
  s.layers = size_key(root, "num_hidden_layers", file, kMaxLayers);
  b.d_model = size_key(root, "hidden_size", file, kMaxWidth);
  b.intermediate = size_key(root, "intermediate_size", file, 4 * kMaxWidth);
  b.heads = size_key(root, "num_attention_heads", file, kMaxHeads);
  b.kv_heads = size_key_or(root, "num_key_value_heads", file, kMaxHeads, b.heads);
  s.vocab_size = size_key(root, "vocab_size", file, kMaxVocab);
  c.max_position_embeddings = size_key(root, "max_position_embeddings", file, INT_MAX);
  if (b.heads % b.kv_heads != 0) {
    fail(ErrorCode::BAD_FILE, file, ": \"num_attention_heads\" (", b.heads,
         ") is not a multiple of \"num_key_value_heads\" (", b.kv_heads,
         "); grouped-query attention shares each key/value head among a whole number of query "
         "heads");
  }
  // Gemma's head_dim defaults to 256 whatever the width; the others' to
  // hidden_size / num_attention_heads.
  b.head_dim = size_key_or(root, "head_dim", file, kMaxWidth, gemma ? 256 : b.d_model / b.heads);
  const JsonValue* head_dim = root.find("head_dim");
  if (!gemma && (head_dim == nullptr || head_dim->is_null()) && b.d_model % b.heads != 0) {
    fail(ErrorCode::BAD_FILE, file, ": \"hidden_size\" (", b.d_model,
         ") is not a multiple of \"num_attention_heads\" (", b.heads,
         ") and no \"head_dim\" says how wide a head is");
  }
  if (b.head_dim % 2 != 0) {
    fail(ErrorCode::BAD_FILE, file, ": \"head_dim\" is ", b.head_dim,
         "; rotary embeddings pair the halves of a head, so it must be even");
  }
  const JsonValue* eps = root.find("rms_norm_eps");
  if (eps != nullptr && !eps->is_null()) {
    if (!eps->is_number() || !(eps->as_number() > 0.0)) {
      fail(ErrorCode::BAD_FILE, file, ": \"rms_norm_eps\" must be a number > 0");
    }
    b.norm_eps = static_cast<float>(eps->as_number());
  }
  for (const char* key : {"torch_dtype", "dtype"})
    string_key(root, key, file);
  if (c.model_type == "modernbert") {
    parse_modernbert(root, file, c);
    try {
      check_spec(s);
    } catch (const Error& e) {
      fail(ErrorCode::BAD_FILE, file, ": ", e.what());
    }
    return c;
  }
  if (gemma) {
    parse_gemma(root, file, c);
    s.causal = true;
    try {
      check_spec(s);
    } catch (const Error& e) {
      fail(ErrorCode::BAD_FILE, file, ": ", e.what());
    }
    return c;
  }
  if (const std::string* act = string_key(root, "hidden_act", file)) {
    if (*act != "silu") {
      fail(ErrorCode::BAD_FILE, file, ": \"hidden_act\" is \"", *act,
           "\"; the Llama-family MLP attnlens computes is gated SiLU (\"silu\")");
    }
  }
  b.norm = NormKind::RMSNorm;
  b.placement = NormPlacement::Pre;
  b.positions = PositionKind::Rotary;
  b.rope = parse_rope(root, file);
  b.mlp = MlpKind::GatedSilu;
  c.tied = bool_key(root, "tie_word_embeddings", file, false);

  if (c.model_type == "qwen2") {
    b.q_bias = b.k_bias = b.v_bias = true;
  } else if (c.model_type != "mistral") {
    b.q_bias = b.k_bias = b.v_bias = b.o_bias = bool_key(root, "attention_bias", file, false);
  }
  if (c.model_type == "llama") b.mlp_bias = bool_key(root, "mlp_bias", file, false);
  b.qk_norm = c.model_type == "qwen3";

  // Windows come later: a model whose attention is windowed past what it computes is refused.
  if (bool_key(root, "use_sliding_window", file, false)) {
    fail(ErrorCode::BAD_FILE, file,
         ": \"use_sliding_window\" is true; attnlens computes full causal attention in every "
         "layer and does not compute sliding-window attention yet");
  }
  if (const std::vector<JsonValue>* types = layer_types(root, file, s.layers)) {
    for (std::size_t i = 0; i < types->size(); ++i) {
      const JsonValue& t = (*types)[i];
      if (t.is_string() && t.as_string() == "full_attention") continue;
      fail(ErrorCode::BAD_FILE, file, ": \"layer_types\"[", i, "] is ",
           t.is_string() ? "\"" + t.as_string() + "\"" : std::string(t.kind_name()),
           "; attnlens computes \"full_attention\" layers only (sliding-window attention is not "
           "computed yet)");
    }
  }
  s.context = c.max_position_embeddings;
  if (c.model_type == "mistral") {
    const JsonValue* window = root.find("sliding_window");
    if (window != nullptr && !window->is_null()) {
      c.sliding_window = size_key(root, "sliding_window", file, INT_MAX);
      s.context = std::min(s.context, *c.sliding_window);
    }
  }
  s.causal = true;
  try {
    check_spec(s);
  } catch (const Error& e) {
    fail(ErrorCode::BAD_FILE, file, ": ", e.what());
  }
  return c;
}

namespace {

std::string rope_scaling_json(const RopeSpec& r) {
  if (r.scaling == RopeScaling::Linear) {
    return "{\n    \"factor\": " + number_text(r.factor) + ",\n    \"rope_type\": \"linear\"\n  }";
  }
  if (r.scaling == RopeScaling::Llama3) {
    return "{\n    \"factor\": " + number_text(r.factor) +
           ",\n    \"high_freq_factor\": " + number_text(r.high_freq_factor) +
           ",\n    \"low_freq_factor\": " + number_text(r.low_freq_factor) +
           ",\n    \"original_max_position_embeddings\": " +
           std::to_string(static_cast<std::int64_t>(r.original_context)) +
           ",\n    \"rope_type\": \"llama3\"\n  }";
  }
  return "null";
}

std::string json_object(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "{\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    out += "  \"" + entries[i].first + "\": " + entries[i].second +
           (i + 1 < entries.size() ? ",\n" : "\n");
  return out + "}\n";
}

const char* torch_dtype(Dtype dtype) {
  return dtype == Dtype::F16 ? "float16" : dtype == Dtype::BF16 ? "bfloat16" : "float32";
}

// Gemma 3's config.json as transformers 4 writes it (layer_types, rope_local_base_freq), or Gemma
// 2's (layer_types, one rope_theta, its soft caps).
std::string gemma_config_json(const LlamaConfig& c, Dtype dtype) {
  const DecoderSpec& s = c.spec;
  const BlockSpec& b = s.block;
  const auto q = [](std::string_view text) { return "\"" + std::string(text) + "\""; };
  const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  std::string types = "[";
  for (std::size_t i = 0; i < s.layer_attention.size(); ++i) {
    types += std::string(i == 0 ? "\n    " : ",\n    ") +
             (s.layer_attention[i].window > 0 ? "\"sliding_attention\"" : "\"full_attention\"");
  }
  types += "\n  ]";
  std::vector<std::pair<std::string, std::string>> entries = {
      {"architectures", "[\n    \"" + std::string(architecture(c.model_type)) + "\"\n  ]"},
      {"attention_bias", flag(b.o_bias)},
      {"attention_dropout", "0.0"},
      {"attn_logit_softcapping", softcap_text(b.attn_softcap)},
      {"final_logit_softcapping", softcap_text(s.final_softcap)},
      {"head_dim", std::to_string(b.head_dim)},
      {"hidden_activation", q("gelu_pytorch_tanh")},
      {"hidden_size", std::to_string(b.d_model)},
      {"initializer_range", "0.02"},
      {"intermediate_size", std::to_string(b.intermediate)},
      {"layer_types", types},
      {"max_position_embeddings", std::to_string(c.max_position_embeddings)},
      {"model_type", q(c.model_type)},
      {"num_attention_heads", std::to_string(b.heads)},
      {"num_hidden_layers", std::to_string(s.layers)},
      {"num_key_value_heads", std::to_string(b.kv_heads)},
      {"query_pre_attn_scalar", number_text(c.query_pre_attn_scalar)},
      {"rms_norm_eps", float_text(b.norm_eps)},
      {"rope_local_base_freq", number_text(s.local_rope.theta)},
      {"rope_scaling", rope_scaling_json(b.rope)},
      {"rope_theta", number_text(b.rope.theta)},
      {"sliding_window", std::to_string(c.sliding_window.value_or(4096))},
      {"tie_word_embeddings", flag(c.tied)},
      {"torch_dtype", q(torch_dtype(dtype))},
      {"vocab_size", std::to_string(s.vocab_size)},
  };
  // Gemma 2 rotates every layer by rope_theta: its config has no rope_local_base_freq.
  if (c.model_type == "gemma2") {
    entries.erase(std::find_if(entries.begin(), entries.end(),
                               [](const auto& e) { return e.first == "rope_local_base_freq"; }));
  }
  return json_object(entries);
}

// ModernBERT's config.json as transformers 4 writes it (global_attn_every_n_layers when the local
// layers follow that rule, layer_types otherwise).
std::string modernbert_config_json(const LlamaConfig& c, Dtype dtype) {
  const DecoderSpec& s = c.spec;
  const BlockSpec& b = s.block;
  const auto q = [](std::string_view text) { return "\"" + std::string(text) + "\""; };
  const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  // The smallest n >= 1 whose rule (layer i global when i % n == 0) gives these layers, if any.
  std::int64_t every = 0;
  for (std::int64_t n = 1; n <= s.layers + 1 && every == 0; ++n) {
    bool same = true;
    for (std::int64_t i = 0; i < s.layers; ++i)
      same = same && (s.layer_attention[static_cast<std::size_t>(i)].window > 0) == (i % n != 0);
    if (same) every = n;
  }
  std::vector<std::pair<std::string, std::string>> entries = {
      {"architectures", "[\n    \"ModernBertForMaskedLM\"\n  ]"},
      {"attention_bias", flag(b.o_bias)},
      {"attention_dropout", "0.0"},
      {"classifier_activation", q("gelu")},
      {"classifier_bias", flag(c.classifier_bias)},
      {"decoder_bias", flag(c.decoder_bias)},
      {"global_rope_theta", number_text(b.rope.theta)},
  };
  for (const auto& [key, id] : c.token_ids)
    entries.emplace_back(key, std::to_string(id));
  if (every > 0) {
    entries.emplace_back("global_attn_every_n_layers", std::to_string(every));
  } else {
    // No period gives these layers: transformers 5's layer_types and rope_parameters, which
    // transformers 4 (global_attn_every_n_layers only) cannot read as this model.
    std::string types = "[";
    for (std::size_t i = 0; i < s.layer_attention.size(); ++i) {
      types += std::string(i == 0 ? "\n    " : ",\n    ") +
               (s.layer_attention[i].window > 0 ? "\"sliding_attention\"" : "\"full_attention\"");
    }
    entries.emplace_back("layer_types", types + "\n  ]");
    entries.emplace_back(
        "rope_parameters",
        "{\n    \"full_attention\": {\"rope_type\": \"default\", \"rope_theta\": " +
            number_text(b.rope.theta) +
            "},\n    \"sliding_attention\": {\"rope_type\": \"default\", "
            "\"rope_theta\": " +
            number_text(s.local_rope.theta) + "}\n  }");
  }
  entries.emplace_back("hidden_activation", q("gelu"));
  entries.emplace_back("hidden_size", std::to_string(b.d_model));
  entries.emplace_back("intermediate_size", std::to_string(b.intermediate));
  entries.emplace_back("local_attention", std::to_string(c.local_attention));
  entries.emplace_back("local_rope_theta", number_text(s.local_rope.theta));
  entries.emplace_back("max_position_embeddings", std::to_string(c.max_position_embeddings));
  entries.emplace_back("mlp_bias", flag(b.mlp_bias));
  entries.emplace_back("model_type", q("modernbert"));
  entries.emplace_back("norm_bias", flag(b.norm_bias));
  entries.emplace_back("norm_eps", float_text(b.norm_eps));
  entries.emplace_back("num_attention_heads", std::to_string(b.heads));
  entries.emplace_back("num_hidden_layers", std::to_string(s.layers));
  entries.emplace_back("tie_word_embeddings", flag(c.tied));
  entries.emplace_back("torch_dtype", q(torch_dtype(dtype)));
  entries.emplace_back("vocab_size", std::to_string(s.vocab_size));
  return json_object(entries);
}

}  // namespace

std::string llama_config_json(const LlamaConfig& c, Dtype dtype) {
  if (c.model_type == "gemma3_text" || c.model_type == "gemma2") {
    return gemma_config_json(c, dtype);
  }
  if (c.model_type == "modernbert") return modernbert_config_json(c, dtype);
  const DecoderSpec& s = c.spec;
  const BlockSpec& b = s.block;
  const auto q = [](std::string_view text) { return "\"" + std::string(text) + "\""; };
  const auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  std::vector<std::pair<std::string, std::string>> entries = {
      {"architectures", "[\n    \"" + std::string(architecture(c.model_type)) + "\"\n  ]"},
      {"attention_dropout", "0.0"},
  };
  if (c.model_type == "llama" || c.model_type == "qwen3") {
    entries.emplace_back("attention_bias", flag(b.o_bias));
  }
  entries.emplace_back("head_dim", std::to_string(b.head_dim));
  entries.emplace_back("hidden_act", q("silu"));
  entries.emplace_back("hidden_size", std::to_string(b.d_model));
  entries.emplace_back("initializer_range", "0.02");
  entries.emplace_back("intermediate_size", std::to_string(b.intermediate));
  entries.emplace_back("max_position_embeddings", std::to_string(c.max_position_embeddings));
  if (c.model_type == "llama") entries.emplace_back("mlp_bias", flag(b.mlp_bias));
  entries.emplace_back("model_type", q(c.model_type));
  entries.emplace_back("num_attention_heads", std::to_string(b.heads));
  entries.emplace_back("num_hidden_layers", std::to_string(s.layers));
  entries.emplace_back("num_key_value_heads", std::to_string(b.kv_heads));
  entries.emplace_back("rms_norm_eps", float_text(b.norm_eps));
  const RopeSpec& r = b.rope;
  entries.emplace_back("rope_scaling", rope_scaling_json(r));
  entries.emplace_back("rope_theta", number_text(r.theta));
  if (c.model_type == "mistral") {
    entries.emplace_back("sliding_window",
                         c.sliding_window ? std::to_string(*c.sliding_window) : "null");
  }
  entries.emplace_back("tie_word_embeddings", flag(c.tied));
  entries.emplace_back("torch_dtype", q(torch_dtype(dtype)));
  if (c.model_type == "qwen2" || c.model_type == "qwen3") {
    entries.emplace_back("use_sliding_window", "false");
  }
  entries.emplace_back("vocab_size", std::to_string(s.vocab_size));
  return json_object(entries);
}

}  // namespace attnlens::detail
