// ModernBERT checkpoints through the registry: hub-layout folders written here (config.json in
// both transformers dialects, model.safetensors with ModernBertForMaskedLM's tensor names, in F32
// or BF16, tied or untied, with and without every bias) against an independent float64 reference
// (modernbert_reference.hpp); a tokenizer.json with the [CLS] … [SEP] template and a [MASK] that
// takes the space before it; and the named errors of the config and the tensors.
#include "compare.hpp"
#include "helpers.hpp"
#include "hub_folder.hpp"
#include "modernbert_reference.hpp"

#include <attnlens/model.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

using attnlens::Dtype;
using attnlens::ErrorCode;
using attnlens::TokenIds;
using testing::load;
using testing::random_ids;
using testing::require_error;

namespace {

struct Case {
  std::string label;
  modernbertref::Config c;
  bool tf5 = false;  // transformers 5: layer_types and rope_parameters per layer type
  bool norm_bias = false, attention_bias = false, mlp_bias = false, classifier_bias = false;
  bool decoder_bias = true;
  Dtype dtype = Dtype::F32;
  int every = 3;  // global_attn_every_n_layers (transformers 4's dialect)
};

modernbertref::Config sizes(int layers, int hidden, int heads, int intermediate, int vocab,
                            int local_attention, int every, bool tied) {
  modernbertref::Config c;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.intermediate = intermediate;
  c.vocab = vocab;
  c.local_attention = local_attention;
  c.tied = tied;
  for (int l = 0; l < layers; ++l)
    c.local.push_back(l % every != 0);
  return c;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  {
    Case k{"tied, decoder bias, windows of +-2, every 3rd layer global, F32, transformers 4",
           sizes(4, 32, 4, 48, 41, 4, 3, true)};
    k.c.global_theta = 160000;
    k.c.local_theta = 10000;
    out.push_back(k);
  }
  {
    Case k{"untied, every bias, windows of +-3, layer_types, BF16, transformers 5",
           sizes(3, 24, 2, 40, 37, 6, 2, false)};
    k.tf5 = true;
    k.norm_bias = k.attention_bias = k.mlp_bias = k.classifier_bias = true;
    k.c.global_theta = 80000;
    k.c.local_theta = 5000;
    k.c.eps = 1e-6;
    k.dtype = Dtype::BF16;
    k.every = 2;
    out.push_back(k);
  }
  {
    Case k{"tied, no decoder bias, one global layer, F32, transformers 4",
           sizes(2, 16, 2, 24, 29, 2, 2, true)};
    k.decoder_bias = false;
    k.every = 2;
    out.push_back(k);
  }
  {
    // Each bias flag read from its own key; an odd local_attention (5: ±2); layers local in no
    // period (saved as transformers 5's layer_types).
    Case k{
        "norm and classifier biases only, local_attention 5, layers global, local, global, "
        "global, untied, F32, transformers 5",
        sizes(4, 24, 3, 32, 31, 5, 3, false)};
    k.c.local = {false, true, false, false};
    k.tf5 = true;
    k.norm_bias = k.classifier_bias = true;
    out.push_back(k);
  }
  {
    Case k{"attention and MLP biases only, every layer global, F32, transformers 4",
           sizes(2, 16, 2, 24, 29, 4, 1, true)};
    k.attention_bias = k.mlp_bias = true;
    k.every = 1;
    out.push_back(k);
  }
  return out;
}

// ModernBertForMaskedLM's tensors [name, shape].
std::vector<std::pair<std::string, attnlens::Shape>> tensor_list(const Case& k) {
  const auto& c = k.c;
  const std::int64_t d = c.hidden, I = c.intermediate, V = c.vocab;
  std::vector<std::pair<std::string, attnlens::Shape>> t;
  const auto norm = [&](const std::string& name) {
    t.push_back({name + ".weight", {d}});
    if (k.norm_bias) t.push_back({name + ".bias", {d}});
  };
  const auto linear = [&](const std::string& name, std::int64_t in, std::int64_t out, bool bias) {
    t.push_back({name + ".weight", {out, in}});
    if (bias) t.push_back({name + ".bias", {out}});
  };
  t.push_back({"model.embeddings.tok_embeddings.weight", {V, d}});
  norm("model.embeddings.norm");
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    if (l > 0) norm(p + "attn_norm");
    linear(p + "attn.Wqkv", d, 3 * d, k.attention_bias);
    linear(p + "attn.Wo", d, d, k.attention_bias);
    norm(p + "mlp_norm");
    linear(p + "mlp.Wi", d, 2 * I, k.mlp_bias);
    linear(p + "mlp.Wo", I, d, k.mlp_bias);
  }
  norm("model.final_norm");
  linear("head.dense", d, d, k.classifier_bias);
  norm("head.norm");
  if (!c.tied) t.push_back({"decoder.weight", {V, d}});
  if (k.decoder_bias) t.push_back({"decoder.bias", {V}});
  return t;
}

// Random O(1) weights rounded to the file's dtype: norm gains 1 ± 0.3, biases ± 0.3, matrices
// uniform with unit variance per output over fan-in (times 1.5, for attention far from uniform),
// embeddings ± 1.
modernbertref::Params random_params(const Case& k, std::uint32_t seed) {
  std::mt19937 gen(seed);
  modernbertref::Params p;
  for (const auto& [name, shape] : tensor_list(k)) {
    std::int64_t n = 1;
    for (std::int64_t s : shape)
      n *= s;
    const bool gain = name.find("norm.weight") != std::string::npos;
    const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const bool embedding = shape.size() == 2 && shape[0] == k.c.vocab;
    const double spread = gain || bias ? 0.3
                          : embedding  ? 1.0
                                       : 1.5 * std::sqrt(3.0 / static_cast<double>(shape[1]));
    std::uniform_real_distribution<double> dist(-spread, spread);
    std::vector<double> values(static_cast<std::size_t>(n));
    for (double& v : values) {
      auto x = static_cast<float>((gain ? 1.0 : 0.0) + dist(gen));
      if (k.dtype == Dtype::BF16) x = testing::bf16_round(x);
      v = x;
    }
    p[name] = std::move(values);
  }
  return p;
}

std::string flag(bool v) {
  return v ? "true" : "false";
}

// ModernBertConfig's config.json in transformers 4's dialect (global_attn_every_n_layers,
// global_rope_theta, local_rope_theta) or 5's (layer_types, rope_parameters per layer type).
std::string config_json(const Case& k) {
  const auto& c = k.c;
  using testing::number;
  std::string s =
      "{\n  \"architectures\": [\"ModernBertForMaskedLM\"],\n  \"model_type\": "
      "\"modernbert\"";
  s += ",\n  \"hidden_size\": " + std::to_string(c.hidden);
  s += ",\n  \"intermediate_size\": " + std::to_string(c.intermediate);
  s += ",\n  \"num_hidden_layers\": " + std::to_string(c.layers);
  s += ",\n  \"num_attention_heads\": " + std::to_string(c.heads);
  s += ",\n  \"max_position_embeddings\": 64";
  s += ",\n  \"vocab_size\": " + std::to_string(c.vocab);
  s += ",\n  \"norm_eps\": " + number(c.eps);
  s += ",\n  \"hidden_activation\": \"gelu\",\n  \"classifier_activation\": \"gelu\"";
  s += ",\n  \"local_attention\": " + std::to_string(c.local_attention);
  s += ",\n  \"norm_bias\": " + flag(k.norm_bias) +
       ",\n  \"attention_bias\": " + flag(k.attention_bias) +
       ",\n  \"mlp_bias\": " + flag(k.mlp_bias) +
       ",\n  \"classifier_bias\": " + flag(k.classifier_bias);
  s += ",\n  \"decoder_bias\": " + flag(k.decoder_bias);
  s += ",\n  \"tie_word_embeddings\": " + flag(c.tied);
  s += ",\n  \"pad_token_id\": 0, \"cls_token_id\": 1, \"sep_token_id\": 2";
  s += ",\n  \"classifier_pooling\": \"mean\", \"sparse_prediction\": false";
  if (k.tf5) {
    s += ",\n  \"layer_types\": [";
    for (int l = 0; l < c.layers; ++l)
      s += std::string(l ? ", " : "") +
           (c.local[static_cast<std::size_t>(l)] ? "\"sliding_attention\"" : "\"full_attention\"");
    s += "]";
    s += ",\n  \"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\", "
         "\"rope_theta\": " +
         number(c.global_theta) +
         "}, \"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": " +
         number(c.local_theta) + "}}";
    s += ",\n  \"dtype\": \"" + std::string(k.dtype == Dtype::BF16 ? "bfloat16" : "float32") + "\"";
  } else {
    s += ",\n  \"global_attn_every_n_layers\": " + std::to_string(k.every);
    s += ",\n  \"global_rope_theta\": " + number(c.global_theta);
    s += ",\n  \"local_rope_theta\": " + number(c.local_theta);
    s += ",\n  \"torch_dtype\": \"" + std::string(k.dtype == Dtype::BF16 ? "bfloat16" : "float32") +
         "\"";
  }
  return s + "\n}\n";
}

struct Folder {
  std::string config;
  std::vector<std::uint8_t> weights;
  modernbertref::Params params;
};

Folder folder(const Case& k, std::uint32_t seed = 11) {
  Folder f;
  f.params = random_params(k, seed);
  std::map<std::string, attnlens::Shape> shapes;
  for (const auto& [name, shape] : tensor_list(k))
    shapes[name] = shape;
  f.weights = testing::safetensors(f.params, shapes, k.dtype);
  f.config = config_json(k);
  return f;
}

std::vector<std::uint8_t> weights_of(const Case& k, const modernbertref::Params& p,
                                     const std::map<std::string, attnlens::Shape>& extra = {}) {
  std::map<std::string, attnlens::Shape> shapes(extra);
  for (const auto& [name, shape] : tensor_list(k))
    shapes[name] = shape;
  return testing::safetensors(p, shapes, k.dtype);
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("ModernBERT forward matches an independent float64 reference", "[modernbert]") {
  const std::vector<Case> all = cases();
  const auto index = GENERATE_COPY(range(std::size_t{0}, all.size()));
  const Case& k = all[index];
  INFO(k.label);
  const Folder f = folder(k);
  INFO(f.config);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  attnlens::Model& model = *loaded.model;

  const attnlens::ModelInfo info = model.info();
  CHECK(info.family == "modernbert");
  CHECK_FALSE(info.causal);
  CHECK(info.prediction == attnlens::PredictionKind::MaskedToken);
  CHECK(info.layers == k.c.layers);
  CHECK(info.heads == k.c.heads);
  CHECK(info.kv_heads == k.c.heads);
  CHECK(info.head_dim == k.c.hidden / k.c.heads);
  CHECK(info.positions == "rotary");
  CHECK(info.norm == "layernorm");
  CHECK(info.context == 64);
  // A local layer sees itself and local_attention / 2 keys on each side.
  std::vector<int> windows;
  for (bool local : k.c.local)
    windows.push_back(local ? k.c.local_attention / 2 + 1 : 0);
  // (Empty when no layer is local.)
  if (std::all_of(windows.begin(), windows.end(), [](int w) { return w == 0; })) windows.clear();
  CHECK(info.windows == windows);

  const int B = 2, T = 11;
  const auto ids = random_ids(B * T, k.c.vocab, 3);
  attnlens::ModelForwardOptions options;
  options.attention = true;
  options.hidden_states = true;
  const attnlens::ModelOutput out = model.forward({TokenIds{ids.data(), B, T}}, options);
  const modernbertref::Output ref = modernbertref::forward(k.c, f.params, ids, B, T);

  const attnlens::Shape logits_shape = {B, T, k.c.vocab};
  const attnlens::Shape attention_shape = {k.c.layers, B, k.c.heads, T, T};
  const attnlens::Shape hidden_shape = {k.c.layers + 1, B, T, k.c.hidden};
  REQUIRE(out.logits.shape == logits_shape);
  REQUIRE(out.attention.shape == attention_shape);
  REQUIRE(out.hidden_states.shape == hidden_shape);
  // float32 against float64 on the same weights: a product of K terms is off by at most K·u
  // (u = 2^-24 = 6e-8) of its terms' magnitudes, 2 · 40 · 6e-8 ≈ 5e-6 for Wi's here. Each
  // LayerNorm divides by a standard deviation of about 1 (gains 1 ± 0.3), so errors neither grow
  // nor shrink much through the 4 layers and the head's two norms: a worst case near 1e-4 on
  // logits of magnitude up to ~10 (the Llama-family tests' bound, by the same count); a wrong
  // window, base, half of Wi or sign moves logits by O(0.1).
  REQUIRE_CLOSE(testing::close(out.logits.data, ref.logits, 2e-4, logits_shape));
  REQUIRE_CLOSE(testing::close(out.hidden_states.data, ref.hidden, 2e-4, hidden_shape));
  // Weights after one softmax of scores of a few units: a score off by e moves a weight by at
  // most e/4 relative.
  REQUIRE_CLOSE(testing::close(out.attention.data, ref.attention, 2e-5, attention_shape));
  // The window is drawn from the weights: keys past a local layer's reach weigh exactly 0, in
  // every sequence and head.
  for (int g = 0; g < k.c.layers * B * k.c.heads; ++g) {
    const int l = g / (B * k.c.heads);
    for (int i = 0; i < T; ++i) {
      for (int j = 0; j < T; ++j) {
        const float w = out.attention.data[static_cast<std::size_t>((g * T + i) * T + j)];
        INFO("layer " << l << ", sequence and head " << g % (B * k.c.heads) << ", (" << i << ", "
                      << j << ") = " << w);
        if (k.c.local[static_cast<std::size_t>(l)] && std::abs(i - j) > k.c.local_attention / 2) {
          REQUIRE(w == 0.0f);
        } else {
          REQUIRE(w > 0.0f);
        }
      }
    }
  }

  // Logits of a few rows are those rows of the full product.
  attnlens::ModelForwardOptions rows;
  rows.logit_rows = {T + 4, 0, 2 * T - 1};
  const attnlens::ModelOutput some = model.forward({TokenIds{ids.data(), B, T}}, rows);
  std::vector<double> expected;
  for (std::int64_t r : rows.logit_rows) {
    expected.insert(expected.end(), ref.logits.begin() + r * k.c.vocab,
                    ref.logits.begin() + (r + 1) * k.c.vocab);
  }
  REQUIRE_CLOSE(testing::close(some.logits.data, expected, 2e-4, {3, k.c.vocab}));

  // The logit lens of the last hidden state is the model's logits: the same final norm, head
  // transform and decoder (bit for bit: the same code on the same rows).
  attnlens::Tensor last({B * T, k.c.hidden});
  std::copy(out.hidden_states.data.end() - B * T * k.c.hidden, out.hidden_states.data.end(),
            last.data.begin());
  CHECK(model.unembed(last).data == out.logits.data);

  // A cache gives the same numbers and keeps nothing: every row of an encoder depends on every
  // token.
  const auto cache = model.make_cache();
  REQUIRE(cache != nullptr);
  const attnlens::ModelOutput first = model.forward({TokenIds{ids.data(), 1, T}}, options, *cache);
  const attnlens::ModelOutput again = model.forward({TokenIds{ids.data(), 1, T}}, options, *cache);
  CHECK(cache->reused() == 0);
  CHECK(again.logits.data == first.logits.data);
  REQUIRE_CLOSE(testing::close(
      first.logits.data,
      std::vector<double>(ref.logits.begin(), ref.logits.begin() + T * k.c.vocab), 2e-4));
}

TEST_CASE("ModernBERT saves and loads back to the same numbers", "[modernbert]") {
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
  CHECK(second.model->info().windows == first.model->info().windows);
  // The special tokens' ids go back (transformers' default pad_token_id is past these
  // vocabularies), and layers local in no period are written as layer_types.
  CHECK(config.find("\"pad_token_id\": 0") != std::string::npos);
  CHECK(config.find("\"sep_token_id\": 2") != std::string::npos);
  CHECK((config.find("\"layer_types\"") != std::string::npos) ==
        (config.find("global_attn_every_n_layers") == std::string::npos));
  CHECK(second.model->num_parameters() == first.model->num_parameters());
  const auto tensors = first.model->to_tensors();
  REQUIRE(tensors.size() == tensor_list(k).size());
  for (const auto& [name, tensor] : tensors) {
    INFO(name);
    // The fused Wqkv and Wi come back in the file's row order.
    const auto& want = f.params.at(name);
    REQUIRE(tensor.data.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      REQUIRE(static_cast<double>(tensor.data[i]) == want[i]);
  }
  const auto ids = random_ids(9, k.c.vocab, 4);
  attnlens::ModelForwardOptions options;
  options.attention = true;
  const auto a = first.model->forward({TokenIds{ids.data(), 1, 9}}, options);
  const auto b = second.model->forward({TokenIds{ids.data(), 1, 9}}, options);
  CHECK(a.logits.data == b.logits.data);
  CHECK(a.attention.data == b.attention.data);
}

TEST_CASE("ModernBERT: a switched-off head equals its columns of Wo zeroed", "[modernbert]") {
  const Case k = cases()[0];
  const Folder f = folder(k);
  attnlens::LoadedModel loaded = load(f.config, f.weights);
  const int layer = 1, head = 2, hd = k.c.hidden / k.c.heads, T = 9;
  modernbertref::Params zeroed = f.params;
  auto& wo = zeroed.at("model.layers." + std::to_string(layer) + ".attn.Wo.weight");
  for (int out = 0; out < k.c.hidden; ++out) {
    for (int e = 0; e < hd; ++e)
      wo[static_cast<std::size_t>(out * k.c.hidden + head * hd + e)] = 0.0;
  }
  const auto weights = weights_of(k, zeroed);
  attnlens::LoadedModel cut = load(f.config, weights);
  const auto ids = random_ids(T, k.c.vocab, 8);
  attnlens::ModelForwardOptions options;
  options.ablation.heads = {{layer, head}};
  const auto ablated = loaded.model->forward({TokenIds{ids.data(), 1, T}}, options);
  const auto reference = cut.model->forward({TokenIds{ids.data(), 1, T}}, {});
  // The same products with zeros in place of one head's output or of its weights: equal up to
  // the order in which the zero terms enter the sums (exactly 0 either way).
  REQUIRE_CLOSE(testing::close(
      ablated.logits.data,
      std::vector<double>(reference.logits.data.begin(), reference.logits.data.end()), 1e-6));
}

TEST_CASE(
    "ModernBERT's tokenizer.json: the [CLS] … [SEP] template and a [MASK] that takes its space",
    "[modernbert]") {
  Case k = cases()[2];
  const Folder f = folder(k);
  // A byte-level BPE as ModernBERT's file has it (ByteLevel pre-tokenizer and decoder, the
  // TemplateProcessing post-processor, [MASK] with lstrip), over a tiny vocabulary.
  const std::string tokenizer_json = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 2, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 3, "content": "[MASK]", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": true}
  ],
  "normalizer": {"type": "NFC"},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
    "vocab": {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[MASK]": 3, "a": 4, "b": 5, "Ġ": 6, "Ġb": 7, "c": 8},
    "merges": ["Ġ b"]}
})";
  attnlens::LoadedModel loaded = load(f.config, f.weights, {{"tokenizer.json", tokenizer_json}});
  REQUIRE(loaded.tokenizer != nullptr);
  const attnlens::Tokenizer& t = *loaded.tokenizer;
  CHECK(t.mask_id() == 3);
  const auto ids = [&](const std::string& text) {
    std::vector<std::int32_t> out;
    for (const auto& e : t.encode(text))
      out.push_back(e.id);
    return out;
  };
  // The space before [MASK] is the mask's (lstrip), so "a [MASK] b" reads as "a", [MASK], " b",
  // the same as "a[MASK] b".
  CHECK(ids("a [MASK] b") == std::vector<std::int32_t>{1, 4, 3, 7, 2});
  // The mask covers the space it took, and is the text's, not a special token the tokenizer
  // added (as [CLS] and [SEP] are).
  const auto tokens = t.encode("a [MASK] b");
  CHECK(tokens[2].begin == 1);
  CHECK(tokens[2].end == 8);
  CHECK_FALSE(tokens[2].special);
  CHECK(tokens[0].special);
  CHECK(tokens[4].special);
  CHECK(ids("a[MASK] b") == ids("a [MASK] b"));
  CHECK(ids("ab c") == std::vector<std::int32_t>{1, 4, 5, 6, 8, 2});
  // The model predicts at the mask: its logits row is a distribution over the vocabulary.
  const auto text = ids("a [MASK] b");
  attnlens::ModelForwardOptions options;
  options.logit_rows = {2};
  const auto out = loaded.model->forward(
      {TokenIds{text.data(), 1, static_cast<std::int64_t>(text.size())}}, options);
  REQUIRE(out.logits.shape == attnlens::Shape{1, k.c.vocab});
}

TEST_CASE("ModernBERT config and tensor errors name the file and the field", "[modernbert]") {
  const Case k = cases()[0];
  const Folder f = folder(k);
  SECTION("an activation other than the exact GELU") {
    require_error(
        [&] {
          load(replace(f.config, "\"hidden_activation\": \"gelu\"",
                       "\"hidden_activation\": \"gelu_new\""),
               f.weights);
        },
        ErrorCode::BAD_FILE, {"config.json", "hidden_activation", "gelu_new"});
  }
  SECTION("a scaled rotary embedding") {
    Case t = cases()[1];
    const Folder g = folder(t);
    require_error(
        [&] {
          load(replace(g.config, "{\"rope_type\": \"default\", \"rope_theta\": 80000",
                       "{\"rope_type\": \"linear\", \"factor\": 2, \"rope_theta\": 80000"),
               g.weights);
        },
        ErrorCode::BAD_FILE, {"config.json", "rope_type", "default"});
  }
  SECTION(
      "rope_scaling, a flat rope_parameters, and layer_types that global_attn_every_n_layers "
      "contradicts") {
    require_error(
        [&] {
          load(replace(
                   f.config, "\"norm_eps\"",
                   "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2},\n  \"norm_eps\""),
               f.weights);
        },
        ErrorCode::BAD_FILE, {"config.json", "rope_scaling", "default"});
    require_error(
        [&] {
          load(replace(f.config, "\"norm_eps\"",
                       "\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": "
                       "10000},\n  \"norm_eps\""),
               f.weights);
        },
        ErrorCode::BAD_FILE, {"rope_parameters.rope_type", "full_attention"});
    Case t = cases()[1];  // layer_types global, local, global
    const Folder g = folder(t);
    require_error(
        [&] {
          load(replace(g.config, "\"norm_eps\"",
                       "\"global_attn_every_n_layers\": 3,\n  \"norm_eps\""),
               g.weights);
        },
        ErrorCode::BAD_FILE, {"layer_types\"[2]", "global_attn_every_n_layers", "(3)"});
    // In agreement, both may be given.
    CHECK(load(replace(g.config, "\"norm_eps\"",
                       "\"global_attn_every_n_layers\": 2,\n  \"norm_eps\""),
               g.weights)
              .model);
  }
  SECTION("a null local_rope_theta rotates the local layers at the global base") {
    attnlens::LoadedModel null_theta = load(
        replace(f.config, "\"local_rope_theta\": 10000", "\"local_rope_theta\": null"), f.weights);
    attnlens::LoadedModel same_theta =
        load(replace(f.config, "\"local_rope_theta\": 10000", "\"local_rope_theta\": 160000"),
             f.weights);
    attnlens::LoadedModel own_theta = load(f.config, f.weights);
    const auto ids = random_ids(9, k.c.vocab, 6);
    const auto a = null_theta.model->forward({TokenIds{ids.data(), 1, 9}}, {});
    CHECK(a.logits.data == same_theta.model->forward({TokenIds{ids.data(), 1, 9}}, {}).logits.data);
    CHECK(a.logits.data != own_theta.model->forward({TokenIds{ids.data(), 1, 9}}, {}).logits.data);
  }
  SECTION("a layer type that is neither") {
    Case t = cases()[1];
    const Folder g = folder(t);
    require_error(
        [&] {
          load(replace(g.config, "\"sliding_attention\", ", "\"chunked_attention\", "), g.weights);
        },
        ErrorCode::BAD_FILE, {"layer_types", "chunked_attention"});
  }
  SECTION("a norm before layer 0's attention") {
    modernbertref::Params p = f.params;
    p["model.layers.0.attn_norm.weight"] =
        std::vector<double>(static_cast<std::size_t>(k.c.hidden), 1.0);
    require_error(
        [&] {
          load(f.config, weights_of(k, p, {{"model.layers.0.attn_norm.weight", {k.c.hidden}}}));
        },
        ErrorCode::BAD_FILE, {"model.layers.0.attn_norm.weight", "first layer"});
  }
  SECTION("a bias the config does not have") {
    modernbertref::Params p = f.params;
    p["model.layers.1.attn.Wqkv.bias"] =
        std::vector<double>(static_cast<std::size_t>(3 * k.c.hidden), 0.0);
    require_error(
        [&] {
          load(f.config, weights_of(k, p, {{"model.layers.1.attn.Wqkv.bias", {3 * k.c.hidden}}}));
        },
        ErrorCode::BAD_FILE, {"model.layers.1.attn.Wqkv.bias", "attention_bias"});
  }
  SECTION("a missing decoder bias") {
    modernbertref::Params p = f.params;
    p.erase("decoder.bias");
    require_error([&] { load(f.config, weights_of(k, p)); }, ErrorCode::BAD_FILE,
                  {"decoder.bias", "missing", "decoder_bias"});
  }
  SECTION("a stored decoder that is not the tied embedding") {
    modernbertref::Params p = f.params;
    p["decoder.weight"] = p.at("model.embeddings.tok_embeddings.weight");
    p["decoder.weight"][5] += 1.0;
    require_error(
        [&] {
          load(f.config, weights_of(k, p, {{"decoder.weight", {k.c.vocab, k.c.hidden}}}));
        },
        ErrorCode::BAD_FILE, {"decoder.weight", "tie_word_embeddings"});
    // Equal to it, it is read as the tie it is.
    p["decoder.weight"][5] -= 1.0;
    CHECK(load(f.config, weights_of(k, p, {{"decoder.weight", {k.c.vocab, k.c.hidden}}})).model);
  }
  SECTION("direct logit attribution is refused: the head is not linear") {
    attnlens::LoadedModel loaded = load(f.config, f.weights);
    const auto ids = random_ids(5, k.c.vocab, 2);
    require_error(
        [&] {
          loaded.model->attribute({TokenIds{ids.data(), 1, 5}}, 2, -1, {});
        },
        ErrorCode::BAD_ARGUMENT, {"GELU", "unembed"});
  }
}
