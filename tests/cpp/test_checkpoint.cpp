// Checkpoints: config.json in and out, save -> load round trips (F32 exact, F16 within its
// rounding), Hugging Face's own files, and every kind of bad file naming the file at fault.
#include "compare.hpp"
#include "helpers.hpp"

#include <attnlens/checkpoint.hpp>
#include <attnlens/safetensors.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using attnlens::Checkpoint;
using attnlens::CheckpointFiles;
using attnlens::CheckpointFileViews;
using attnlens::Dtype;
using attnlens::ErrorCode;
using attnlens::Gpt2Config;
using attnlens::Gpt2Model;
using attnlens::Tensor;
using attnlens::TensorList;
using testing::require_error;

namespace {

constexpr const char* kText =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife. The President shall from time to time give to the Congress "
    "information of the State of the Union. It is a truth, a truth, a truth.";

attnlens::BpeTokenizer small_tokenizer() {
  return attnlens::train_bpe({kText}, 280);
}

// vocab 280 = 256 bytes + 23 merges + <|endoftext|> (the trainer's count, bpe.hpp).
Gpt2Config small_config() {
  return Gpt2Config{2, 2, 8, 16, 280};
}

CheckpointFileViews views(const CheckpointFiles& f, bool with_tokenizer = true) {
  CheckpointFileViews v;
  v.model_safetensors = f.model_safetensors.data();
  v.model_safetensors_size = f.model_safetensors.size();
  v.config_json = f.config_json;
  if (with_tokenizer) {
    v.vocab_json = f.vocab_json;
    v.merges_txt = f.merges_txt;
  }
  return v;
}

// A config.json with `extra` members added to a valid 2-layer one.
std::string config_with(const std::string& extra) {
  return "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 8, \"n_positions\": 16, "
         "\"vocab_size\": 280" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

void require_bad_config(const std::string& text, std::vector<std::string> needles) {
  needles.push_back("config.json: ");
  require_error([&] { attnlens::parse_gpt2_config(text); }, ErrorCode::BAD_FILE, needles);
}

std::string as_string(const std::vector<std::uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

TEST_CASE("checkpoint: config.json written as Hugging Face does and read back", "[checkpoint]") {
  const Gpt2Config c{3, 4, 64, 128, 4000};
  const std::string text = attnlens::gpt2_config_json(c, Dtype::F16, 3999);
  const Gpt2Config back = attnlens::parse_gpt2_config(text);
  CHECK(back.layers == 3);
  CHECK(back.heads == 4);
  CHECK(back.d_model == 64);
  CHECK(back.context == 128);
  CHECK(back.vocab_size == 4000);
  // The keys GPT2LMHeadModel.from_pretrained relies on (transformers' GPT2Config).
  for (const char* line :
       {"  \"model_type\": \"gpt2\",\n", "    \"GPT2LMHeadModel\"\n", "\"n_inner\": null,",
        "\"activation_function\": \"gelu_new\",", "\"layer_norm_epsilon\": 1e-05,",
        "\"tie_word_embeddings\": true,", "\"torch_dtype\": \"float16\",",
        "\"bos_token_id\": 3999,", "\"eos_token_id\": 3999,", "\"n_positions\": 128,",
        "\"n_ctx\": 128,", "\"n_layer\": 3,", "\"n_head\": 4,", "\"n_embd\": 64,",
        "\"vocab_size\": 4000\n}\n"}) {
    INFO(line);
    CHECK(text.find(line) != std::string::npos);
  }
  // Without an end-of-text token no ids are written (GPT2Config's defaults are GPT-2's 50256).
  CHECK(attnlens::gpt2_config_json(c).find("bos_token_id") == std::string::npos);
  CHECK(attnlens::gpt2_config_json(c).find("\"torch_dtype\": \"float32\"") != std::string::npos);
  CHECK(back.attention_norm);
  CHECK(text.find("attnlens_attention_norm") == std::string::npos);  // GPT-2's own: not written

  // Without the LayerNorm before attention: one extra key, in sorted place, read back.
  Gpt2Config bare = c;
  bare.attention_norm = false;
  const std::string bare_text = attnlens::gpt2_config_json(bare);
  CHECK(bare_text.find(
            "\"attn_pdrop\": 0.0,\n  \"attnlens_attention_norm\": false,\n  \"embd_pdrop") !=
        std::string::npos);
  CHECK_FALSE(attnlens::parse_gpt2_config(bare_text).attention_norm);
}

TEST_CASE("checkpoint: GPT-2's and distilgpt2's own config.json files", "[checkpoint]") {
  // openai-community/gpt2 config.json (abridged to the keys that matter; the others are ignored).
  const std::string gpt2 = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
  "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
  "resid_pdrop": 0.1, "summary_activation": null, "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true, "summary_type": "cls_index", "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257
})";
  const Gpt2Config g = attnlens::parse_gpt2_config(gpt2);
  CHECK(g.layers == 12);
  CHECK(g.heads == 12);
  CHECK(g.d_model == 768);
  CHECK(g.context == 1024);
  CHECK(g.vocab_size == 50257);
  // distilgpt2 names its context n_ctx only in older files; n_positions is then missing.
  const std::string distil = R"({"_num_labels": 1, "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"], "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
  "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 6, "vocab_size": 50257})";
  const Gpt2Config d = attnlens::parse_gpt2_config(distil);
  CHECK(d.layers == 6);
  CHECK(d.context == 1024);
}

TEST_CASE("checkpoint: F32 save -> load is bit-exact, tokenizer included", "[checkpoint]") {
  const attnlens::BpeTokenizer tok = small_tokenizer();
  REQUIRE(tok.vocab_size() == 280);
  Gpt2Model model = Gpt2Model::random(small_config(), 7);
  const CheckpointFiles files = attnlens::save_checkpoint(model, &tok);

  Checkpoint back = attnlens::load_checkpoint(views(files));
  const std::vector<float>& a = model.parameters();
  const std::vector<float>& b = back.model.parameters();
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  CHECK(back.model.config().layers == 2);
  CHECK(back.model.config().heads == 2);
  REQUIRE(back.tokenizer.has_value());
  CHECK(back.tokenizer->to_vocab_json() == tok.to_vocab_json());
  CHECK(back.tokenizer->to_merges_txt() == tok.to_merges_txt());
  CHECK(back.tokenizer->encode(kText) == tok.encode(kText));
  // The end-of-text token is the trainer's last id, written as bos/eos.
  CHECK(files.config_json.find("\"eos_token_id\": 279") != std::string::npos);

  // What the safetensors file says about itself: Hugging Face's loader needs "format": "pt".
  bool has_format = false, has_writer = false;
  for (const auto& [key, value] : back.metadata) {
    has_format |= key == "format" && value == "pt";
    has_writer |= key == "writer" && value == std::string("attnlens ") + attnlens::kVersion;
  }
  CHECK(has_format);
  CHECK(has_writer);

  // Same parameters, same logits: bit for bit.
  const std::vector<std::int32_t> ids = tok.encode("a truth universally");
  const attnlens::TokenIds in{ids.data(), 1, static_cast<std::int64_t>(ids.size())};
  const Tensor la = model.forward(in).logits;
  const Tensor lb = back.model.forward(in).logits;
  REQUIRE(la.shape == lb.shape);
  CHECK(std::memcmp(la.data.data(), lb.data.data(), la.data.size() * sizeof(float)) == 0);

  // Without a tokenizer: the same weights, no tokenizer files.
  const CheckpointFiles bare = attnlens::save_checkpoint(model);
  CHECK(bare.vocab_json.empty());
  CHECK(bare.merges_txt.empty());
  CHECK(bare.model_safetensors == files.model_safetensors);
  Checkpoint bare_back = attnlens::load_checkpoint(views(bare, false));
  CHECK_FALSE(bare_back.tokenizer.has_value());
  CHECK(bare_back.model.parameters() == a);
}

TEST_CASE("checkpoint: F16 save -> load is within F16 rounding", "[checkpoint]") {
  // GPT-2's init gives N(0, 0.02²) matrices, ones and zeros: scale the weights up so some are
  // F16 subnormals (< 2^-14) and some large (up to ~100), and every regime of the rounding is
  // exercised.
  Gpt2Model init = Gpt2Model::random(small_config(), 11);
  TensorList tensors = init.to_tensors();
  const float scales[] = {1e-4f, 1e-2f, 1.0f, 100.0f};
  std::size_t k = 0;
  for (auto& [name, t] : tensors) {
    for (float& x : t.data)
      x *= scales[k % 4];
    ++k;
  }
  Gpt2Model model = Gpt2Model::from_tensors(small_config(), tensors);
  attnlens::CheckpointSaveOptions options;
  options.dtype = Dtype::F16;
  options.metadata = {{"note", "test"}};
  const CheckpointFiles files = attnlens::save_checkpoint(model, nullptr, options);
  CHECK(files.config_json.find("\"torch_dtype\": \"float16\"") != std::string::npos);
  // F16 halves the weights' bytes: the file is a little over 2 bytes per parameter.
  CHECK(files.model_safetensors.size() < 2 * model.parameters().size() + 4096);

  Checkpoint back = attnlens::load_checkpoint(views(files, false));
  const std::vector<float>& a = model.parameters();
  const std::vector<float>& b = back.model.parameters();
  REQUIRE(a.size() == b.size());
  // Round to nearest: the error is at most half an F16 step. For |x| in [2^e, 2^(e+1)) with
  // e >= -14 the step is 2^(e-10), so the bound is 2^-11 |x| (relative); below 2^-14 (subnormal)
  // the step is 2^-24 everywhere, so the bound is 2^-25 (absolute).
  double worst = 0.0;
  std::size_t worst_at = 0;
  std::size_t subnormals = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    const double bound =
        std::fabs(x) >= std::ldexp(1.0, -14) ? std::ldexp(std::fabs(x), -11) : std::ldexp(1.0, -25);
    if (std::fabs(x) < std::ldexp(1.0, -14) && x != 0.0) ++subnormals;
    const double excess = std::isnan(b[i]) ? 1e30 : std::fabs(b[i] - x) / bound;
    if (excess > worst) {
      worst = excess;
      worst_at = i;
    }
  }
  INFO("worst error / bound " << worst << " at " << worst_at << ": " << a[worst_at] << " -> "
                              << b[worst_at]);
  CHECK(worst <= 1.0);
  CHECK(subnormals > 0);
  // Exactly the nearest F16 value, as the converter rounds it.
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (b[i] != attnlens::f16_to_f32(attnlens::f32_to_f16(a[i]))) {
      FAIL("parameter " << i << ": " << a[i] << " loaded as " << b[i]);
    }
  }
  bool has_note = false;
  for (const auto& [key, value] : back.metadata)
    has_note |= key == "note" && value == "test";
  CHECK(has_note);
}

TEST_CASE("checkpoint: Hugging Face's variants load (prefix, mask buffers, tied lm_head)",
          "[checkpoint]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 3);
  TensorList tensors;
  for (auto& [name, t] : model.to_tensors()) {
    if (name == "wte.weight") tensors.emplace_back("lm_head.weight", t);
    tensors.emplace_back("transformer." + name, t);
  }
  // The mask buffers of older files: [1, 1, C, C] F32 here (the safetensors writer only writes
  // floats), masked_bias a scalar. The loader skips them without converting them.
  tensors.emplace_back(
      "transformer.h.0.attn.bias",
      Tensor({1, 1, c.context, c.context},
             std::vector<float>(static_cast<std::size_t>(c.context * c.context), 1.0f)));
  tensors.emplace_back("transformer.h.1.attn.masked_bias", Tensor({}, {-1e4f}));
  const std::vector<std::uint8_t> st = attnlens::write_safetensors(tensors, {{"format", "pt"}});
  const std::string config = attnlens::gpt2_config_json(c);
  CheckpointFileViews v;
  v.model_safetensors = st.data();
  v.model_safetensors_size = st.size();
  v.config_json = config;
  Checkpoint back = attnlens::load_checkpoint(v);
  CHECK(back.model.parameters() == model.parameters());
}

TEST_CASE("checkpoint: from_safetensors reads what from_tensors reads, and says the same",
          "[checkpoint]") {
  // load_checkpoint reads each tensor from the file straight into the parameters
  // (Gpt2Model::from_safetensors); reading the file into tensors first and giving them to
  // from_tensors must make the same model, bit for bit, from F32 and F16 files.
  const Gpt2Config c = small_config();
  const Gpt2Model model = Gpt2Model::random(c, 4);
  TensorList tensors;
  for (auto& [name, t] : model.to_tensors())
    tensors.emplace_back("transformer." + name, t);
  tensors.emplace_back("transformer.h.1.attn.masked_bias", Tensor({}, {-1e4f}));
  for (const Dtype dtype : {Dtype::F32, Dtype::F16}) {
    INFO("dtype " << (dtype == Dtype::F32 ? "F32" : "F16"));
    const std::vector<std::uint8_t> st = attnlens::write_safetensors(tensors, {}, dtype);
    const attnlens::SafetensorsView view(st.data(), st.size(), "model.safetensors");
    TensorList read;
    for (const auto& entry : view.tensors())
      read.emplace_back(entry.name, view.read_f32(entry));
    const Gpt2Model a = Gpt2Model::from_safetensors(c, view);
    const Gpt2Model b = Gpt2Model::from_tensors(c, read);
    const TensorList ta = a.to_tensors(), tb = b.to_tensors();
    REQUIRE(ta.size() == tb.size());
    for (std::size_t i = 0; i < ta.size(); ++i) {
      INFO(ta[i].first);
      CHECK(testing::close(ta[i].second.data, tb[i].second.data, 0.0, ta[i].second.shape));
    }
  }
  SECTION("a missing tensor: the count given leaves out the mask buffers, as from_tensors") {
    TensorList fewer(tensors.begin() + 1, tensors.end());  // no wte
    const std::vector<std::uint8_t> st = attnlens::write_safetensors(fewer);
    const attnlens::SafetensorsView view(st.data(), st.size(), "model.safetensors");
    require_error([&] { Gpt2Model::from_safetensors(c, view); }, ErrorCode::BAD_FILE,
                  {"tensor 'wte.weight'", "is missing",
                   std::to_string(fewer.size() - 1) + " tensors were given"});
  }
  SECTION("an untied lm_head, read from the file after the weights") {
    TensorList untied = tensors;
    Tensor lm_head = model.to_tensors().front().second;
    lm_head.data[5] += 1.0f;
    untied.emplace_back("lm_head.weight", lm_head);
    const std::vector<std::uint8_t> st = attnlens::write_safetensors(untied);
    const attnlens::SafetensorsView view(st.data(), st.size(), "model.safetensors");
    require_error([&] { Gpt2Model::from_safetensors(c, view); }, ErrorCode::BAD_FILE,
                  {"tensor 'lm_head.weight' differs from wte.weight at flat index 5"});
  }
}

TEST_CASE("checkpoint: bad config.json files name the key", "[checkpoint][errors]") {
  require_bad_config("{\"n_layer\": 2", {"end of"});
  require_bad_config("[2, 2, 8]", {"expected a JSON object, found an array"});
  require_bad_config(R"({"n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 280})",
                     {"\"n_layer\" is missing"});
  require_bad_config(R"({"n_layer": 2, "n_head": 2, "n_embd": 8, "vocab_size": 280})",
                     {"\"n_ctx\" is missing"});
  require_bad_config(
      R"({"n_layer": 2.5, "n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 280})",
      {"\"n_layer\" must be an integer, not a number"});
  require_bad_config(
      R"({"n_layer": "2", "n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 280})",
      {"\"n_layer\" must be an integer, not a string"});
  require_bad_config(
      R"({"n_layer": 0, "n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": 280})",
      {"\"n_layer\" is 0"});
  require_bad_config(
      R"({"n_layer": 2, "n_head": 3, "n_embd": 8, "n_positions": 16, "vocab_size": 280})",
      {"heads"});
  // Other architectures are named.
  require_bad_config(R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12})",
                     {"model_type is \"bert\"", "GPT-2"});
  require_bad_config(config_with(R"("architectures": ["LlamaForCausalLM"])"),
                     {"architectures names \"LlamaForCausalLM\""});
  require_bad_config(config_with(R"("architectures": "GPT2LMHeadModel")"),
                     {"\"architectures\" must be an array"});
  require_bad_config(config_with(R"("model_type": 2)"), {"\"model_type\" must be a string"});
  // Keys that would change the computation.
  require_bad_config(config_with(R"("layer_norm_epsilon": 1e-06)"),
                     {"\"layer_norm_epsilon\" is 1e-06", "1e-05"});
  require_bad_config(config_with(R"("layer_norm_epsilon": "1e-5")"),
                     {"\"layer_norm_epsilon\" must be a number, not a string"});
  require_bad_config(config_with(R"("activation_function": "relu")"),
                     {"activation_function is \"relu\"", "gelu_new"});
  require_bad_config(config_with(R"("n_inner": 16)"),
                     {"\"n_inner\" must be null or 4 * n_embd = 32"});
  require_bad_config(config_with(R"("scale_attn_by_inverse_layer_idx": true)"),
                     {"\"scale_attn_by_inverse_layer_idx\" is true"});
  require_bad_config(config_with(R"("scale_attn_weights": false)"),
                     {"\"scale_attn_weights\" is false"});
  require_bad_config(config_with(R"("tie_word_embeddings": false)"),
                     {"\"tie_word_embeddings\" is false"});
  require_bad_config(config_with(R"("add_cross_attention": true)"),
                     {"\"add_cross_attention\" is true"});
  require_bad_config(config_with(R"("attnlens_attention_norm": 0)"),
                     {"\"attnlens_attention_norm\" must be true or false, not a number"});
  // Accepted: the equivalent activation name, n_inner = 4d, architectures null.
  CHECK(attnlens::parse_gpt2_config(config_with(R"("activation_function": "gelu_pytorch_tanh",
      "n_inner": 32, "architectures": null)"))
            .d_model == 8);
  // Sizes over the parameter limit keep their code and name the file.
  require_error(
      [] {
        attnlens::parse_gpt2_config(
            R"({"n_layer": 100, "n_head": 8, "n_embd": 8192, "n_positions": 16, "vocab_size": 280})");
      },
      ErrorCode::TOO_LARGE, {"config.json: "});
}

TEST_CASE("checkpoint: bad weights and tokenizer files name the file and the entry",
          "[checkpoint][errors]") {
  const attnlens::BpeTokenizer tok = small_tokenizer();
  Gpt2Model model = Gpt2Model::random(small_config(), 5);
  const CheckpointFiles files = attnlens::save_checkpoint(model, &tok);

  SECTION("truncated model.safetensors") {
    CheckpointFiles f = files;
    f.model_safetensors.resize(f.model_safetensors.size() - 1);
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors"});
  }
  SECTION("weights with ln_1 for a config without attention_norm, and the other way round") {
    CheckpointFiles f = files;
    Gpt2Config bare = small_config();
    bare.attention_norm = false;
    f.config_json = attnlens::gpt2_config_json(bare);
    require_error(
        [&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
        {"model.safetensors: ", "unexpected tensor 'h.0.ln_1.", "no LayerNorm before attention"});
    const CheckpointFiles without = attnlens::save_checkpoint(Gpt2Model::random(bare, 5), &tok);
    CHECK(attnlens::load_checkpoint(views(without)).model.config().attention_norm == false);
    f = without;
    f.config_json = files.config_json;
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors: ", "tensor 'h.0.ln_1.weight' [8] is missing",
                   "needs \"attnlens_attention_norm\": false in config.json"});
  }
  SECTION("config with more layers than the file") {
    CheckpointFiles f = files;
    f.config_json = attnlens::gpt2_config_json(Gpt2Config{3, 2, 8, 16, 280});
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors: ", "h.2.", "is missing"});
  }
  SECTION("a config far larger than the file: a named tensor, before the parameters exist") {
    // 6 layers of width 4096 (1.4e9 parameters, 5.6 GB): the tensors are matched against the
    // layout before anything is allocated (the JS test measures the wasm heap around it).
    CheckpointFiles f = files;
    f.config_json = attnlens::gpt2_config_json(Gpt2Config{6, 32, 4096, 1024, 50257});
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors: ", "has shape [",
                   "but the config (layers 6, heads 32, d_model 4096, context 1024"});
  }
  SECTION("config with another vocab_size than wte") {
    CheckpointFiles f = files;
    f.config_json = attnlens::gpt2_config_json(Gpt2Config{2, 2, 8, 16, 300});
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors: ", "wte.weight", "[280, 8]", "[300, 8]"});
  }
  SECTION("tokenizer larger than the model") {
    CheckpointFiles f =
        attnlens::save_checkpoint(Gpt2Model::random(Gpt2Config{2, 2, 8, 16, 270}, 1), nullptr);
    f.vocab_json = files.vocab_json;
    f.merges_txt = files.merges_txt;
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"vocab.json: ", "280 tokens", "vocab_size is 270"});
  }
  SECTION("a smaller tokenizer than the model is fine (padded embeddings)") {
    CheckpointFiles f =
        attnlens::save_checkpoint(Gpt2Model::random(Gpt2Config{2, 2, 8, 16, 320}, 1), nullptr);
    f.vocab_json = files.vocab_json;
    f.merges_txt = files.merges_txt;
    CHECK(attnlens::load_checkpoint(views(f)).tokenizer->vocab_size() == 280);
  }
  SECTION("broken vocab.json and merges.txt") {
    CheckpointFiles f = files;
    f.vocab_json = "{\"a\": 0";
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"vocab.json"});
    f = files;
    f.merges_txt += "zz qq\n";
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"merges.txt"});
  }
  SECTION("only one of the tokenizer files") {
    CheckpointFileViews v = views(files);
    v.merges_txt.reset();
    require_error([&] { attnlens::load_checkpoint(v); }, ErrorCode::BAD_ARGUMENT,
                  {"merges.txt was not given"});
    v = views(files);
    v.vocab_json.reset();
    require_error([&] { attnlens::load_checkpoint(v); }, ErrorCode::BAD_ARGUMENT,
                  {"vocab.json was not given"});
  }
  SECTION("null bytes with a size") {
    CheckpointFileViews v = views(files);
    v.model_safetensors = nullptr;
    require_error([&] { attnlens::load_checkpoint(v); }, ErrorCode::BAD_ARGUMENT,
                  {"model_safetensors is null"});
  }
  SECTION("a BERT checkpoint under a GPT-2 config") {
    const std::vector<std::uint8_t> st = attnlens::write_safetensors(
        {{"bert.embeddings.word_embeddings.weight", Tensor({4, 2})}}, {{"format", "pt"}});
    CheckpointFileViews v = views(files);
    v.model_safetensors = st.data();
    v.model_safetensors_size = st.size();
    require_error([&] { attnlens::load_checkpoint(v); }, ErrorCode::BAD_FILE,
                  {"model.safetensors: ", "BERT"});
  }
  SECTION("an unsupported dtype names the tensor") {
    // wte.weight's header entry relabelled I32 (same byte count as F32).
    CheckpointFiles f = files;
    std::string text = as_string(f.model_safetensors);
    const std::size_t at = text.find("\"wte.weight\":{\"dtype\":\"F32\"");
    REQUIRE(at != std::string::npos);
    text.replace(at + 23, 3, "I32");
    f.model_safetensors.assign(text.begin(), text.end());
    require_error([&] { attnlens::load_checkpoint(views(f)); }, ErrorCode::BAD_FILE,
                  {"model.safetensors", "wte.weight", "I32"});
  }
}

TEST_CASE("checkpoint: save refuses what it cannot write", "[checkpoint][errors]") {
  const attnlens::BpeTokenizer tok = small_tokenizer();
  Gpt2Model model = Gpt2Model::random(small_config(), 5);
  attnlens::CheckpointSaveOptions options;
  options.dtype = Dtype::BF16;
  require_error([&] { attnlens::save_checkpoint(model, nullptr, options); },
                ErrorCode::BAD_ARGUMENT, {"dtype", "BF16"});
  options = {};
  options.metadata = {{"format", "tf"}};
  require_error([&] { attnlens::save_checkpoint(model, nullptr, options); },
                ErrorCode::BAD_ARGUMENT, {"\"format\""});
  Gpt2Model small = Gpt2Model::random(Gpt2Config{1, 1, 4, 4, 260}, 1);
  require_error([&] { attnlens::save_checkpoint(small, &tok); }, ErrorCode::BAD_ARGUMENT,
                {"280 tokens", "vocab_size is 260"});
  require_error([&] { attnlens::gpt2_config_json(small_config(), Dtype::F32, 280); },
                ErrorCode::BAD_ARGUMENT, {"end_of_text_id"});
  // A weight beyond F16's range cannot be written as F16.
  TensorList t = model.to_tensors();
  t[0].second.data[3] = 70000.0f;
  Gpt2Model big = Gpt2Model::from_tensors(small_config(), t);
  options = {};
  options.dtype = Dtype::F16;
  require_error([&] { attnlens::save_checkpoint(big, nullptr, options); }, ErrorCode::BAD_FILE,
                {"model.safetensors", "wte.weight"});
}

TEST_CASE("checkpoint: training resumes bit for bit from the weights and AdamW's state",
          "[checkpoint][optim]") {
  const Gpt2Config c = small_config();
  // Batches [2, 9] of ids, a different one per step.
  auto batch = [&](int step) {
    std::vector<std::int32_t> ids(18);
    for (std::size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<std::int32_t>((i * 37 + static_cast<std::size_t>(step) * 101) % 280);
    return ids;
  };
  auto step = [&](Gpt2Model& m, int s) {
    const std::vector<std::int32_t> ids = batch(s);
    return m.train_step(attnlens::TokenIds{ids.data(), 2, 9}, 1e-2f);
  };
  Gpt2Model straight = Gpt2Model::random(c, 9);
  Gpt2Model first = Gpt2Model::random(c, 9);
  CHECK(first.optimizer_state().m.empty());
  CHECK(first.optimizer_state().steps == 0);
  for (int s = 0; s < 3; ++s) {
    step(straight, s);
    step(first, s);
  }
  // Interrupted after 3 steps: weights through a checkpoint, the optimizer through its state.
  const CheckpointFiles files = attnlens::save_checkpoint(first);
  const attnlens::AdamWState state = first.optimizer_state();
  CHECK(state.steps == 3);
  REQUIRE(state.m.size() == first.parameters().size());
  Gpt2Model resumed = attnlens::load_checkpoint(views(files, false)).model;
  resumed.set_optimizer_state(state);
  CHECK(resumed.steps() == 3);
  for (int s = 3; s < 6; ++s) {
    const float a = step(straight, s);
    const float b = step(resumed, s);
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
  CHECK(resumed.parameters() == straight.parameters());
  // Without the moments the run goes elsewhere: the state is what makes it exact.
  Gpt2Model fresh = attnlens::load_checkpoint(views(files, false)).model;
  for (int s = 3; s < 6; ++s)
    step(fresh, s);
  CHECK(fresh.parameters() != straight.parameters());
  // Empty moments with 0 steps forget the state.
  resumed.set_optimizer_state({});
  CHECK(resumed.steps() == 0);

  attnlens::AdamWState bad = state;
  bad.m.pop_back();
  require_error([&] { resumed.set_optimizer_state(bad); }, ErrorCode::BAD_ARGUMENT,
                {"m holds", "parameters"});
  bad = state;
  bad.v[5] = -1.0f;
  require_error([&] { resumed.set_optimizer_state(bad); }, ErrorCode::BAD_ARGUMENT, {"index 5"});
  bad = state;
  bad.steps = -1;
  require_error([&] { resumed.set_optimizer_state(bad); }, ErrorCode::BAD_ARGUMENT,
                {"steps is -1"});
}
