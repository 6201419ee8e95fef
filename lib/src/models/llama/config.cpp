#include "models/llama/config.hpp"

#include "core/check.hpp"
#include "io/json.hpp"

#include <climits>
#include <cmath>
#include <cstdio>
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
  if (scaling == nullptr) return rope;
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
  return rope;
}

std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const char* architecture(const std::string& model_type) {
  if (model_type == "mistral") return "MistralForCausalLM";
  if (model_type == "qwen2") return "Qwen2ForCausalLM";
  if (model_type == "qwen3") return "Qwen3ForCausalLM";
  return "LlamaForCausalLM";
}

}  // namespace

LlamaConfig parse_llama_config(std::string_view config_json, std::string_view file) {
  const JsonValue root = parse_json(config_json, file);
  if (!root.is_object()) fail(ErrorCode::BAD_FILE, file, ": not a JSON object");
  LlamaConfig c;
  const std::string* type = string_key(root, "model_type", file);
  if (type == nullptr ||
      (*type != "llama" && *type != "mistral" && *type != "qwen2" && *type != "qwen3")) {
    fail(ErrorCode::BAD_FILE, file, ": model_type is ",
         type == nullptr ? std::string("missing") : "\"" + *type + "\"",
         "; a Llama-family config says \"llama\", \"mistral\", \"qwen2\" or \"qwen3\"");
  }
  c.model_type = *type;
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
  b.head_dim = size_key_or(root, "head_dim", file, kMaxWidth, b.d_model / b.heads);
  const JsonValue* head_dim = root.find("head_dim");
  if ((head_dim == nullptr || head_dim->is_null()) && b.d_model % b.heads != 0) {
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
  if (const std::string* act = string_key(root, "hidden_act", file)) {
    if (*act != "silu") {
      fail(ErrorCode::BAD_FILE, file, ": \"hidden_act\" is \"", *act,
           "\"; the Llama-family MLP attnlens computes is gated SiLU (\"silu\")");
    }
  }
  for (const char* key : {"torch_dtype", "dtype"})
    string_key(root, key, file);
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
  if (const JsonValue* types = root.find("layer_types"); types != nullptr && !types->is_null()) {
    if (!types->is_array()) {
      fail(ErrorCode::BAD_FILE, file, ": \"layer_types\" must be an array, not ",
           types->kind_name());
    }
    if (static_cast<std::int64_t>(types->items().size()) != s.layers) {
      fail(ErrorCode::BAD_FILE, file, ": \"layer_types\" has ", types->items().size(),
           " entries but \"num_hidden_layers\" is ", s.layers);
    }
    for (std::size_t i = 0; i < types->items().size(); ++i) {
      const JsonValue& t = types->items()[i];
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

std::string llama_config_json(const LlamaConfig& c, Dtype dtype) {
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
  entries.emplace_back("rms_norm_eps", number_text(b.norm_eps));
  const RopeSpec& r = b.rope;
  std::string scaling = "null";
  if (r.scaling == RopeScaling::Linear) {
    scaling =
        "{\n    \"factor\": " + number_text(r.factor) + ",\n    \"rope_type\": \"linear\"\n  }";
  } else if (r.scaling == RopeScaling::Llama3) {
    scaling = "{\n    \"factor\": " + number_text(r.factor) +
              ",\n    \"high_freq_factor\": " + number_text(r.high_freq_factor) +
              ",\n    \"low_freq_factor\": " + number_text(r.low_freq_factor) +
              ",\n    \"original_max_position_embeddings\": " +
              std::to_string(static_cast<std::int64_t>(r.original_context)) +
              ",\n    \"rope_type\": \"llama3\"\n  }";
  }
  entries.emplace_back("rope_scaling", scaling);
  entries.emplace_back("rope_theta", number_text(r.theta));
  if (c.model_type == "mistral") {
    entries.emplace_back("sliding_window",
                         c.sliding_window ? std::to_string(*c.sliding_window) : "null");
  }
  entries.emplace_back("tie_word_embeddings", flag(c.tied));
  entries.emplace_back("torch_dtype", q(dtype == Dtype::F16    ? "float16"
                                        : dtype == Dtype::BF16 ? "bfloat16"
                                                               : "float32"));
  if (c.model_type == "qwen2" || c.model_type == "qwen3") {
    entries.emplace_back("use_sliding_window", "false");
  }
  entries.emplace_back("vocab_size", std::to_string(s.vocab_size));
  std::string out = "{\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    out += "  \"" + entries[i].first + "\": " + entries[i].second +
           (i + 1 < entries.size() ? ",\n" : "\n");
  return out + "}\n";
}

}  // namespace attnlens::detail
