// Every model family against PyTorch's own modules: the tiny checkpoints of
// tests/fixtures/models/ (written by make_torch.py beside them, from torch.nn's Embedding,
// LayerNorm, Linear, GELU and MultiheadAttention, evaluated in float64 with autograd) loaded
// through the registry as the page loads them, and compared tensor by tensor: hidden states,
// attention, logits, the loss and the gradient of every parameter. A gradient check names every
// tensor that differs, not only the first.
#include "compare.hpp"
#include "helpers.hpp"

#include <attnlens/model.hpp>
#include <attnlens/safetensors.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

using attnlens::Tensor;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Fixture {
  std::string folder;
  std::string weights;
  std::map<std::string, std::string> texts;
  std::map<std::string, Tensor> expected;
};

Fixture fixture(const std::string& name) {
  Fixture f;
  f.folder = std::string(ATTNLENS_SOURCE_DIR) + "/tests/fixtures/models/" + name;
  f.weights = read(f.folder + "/model.safetensors");
  f.texts["config.json"] = read(f.folder + "/config.json");
  const std::string expected = read(f.folder + "/expected.safetensors");
  const attnlens::SafetensorsView view(reinterpret_cast<const std::uint8_t*>(expected.data()),
                                       expected.size(), "expected.safetensors");
  for (const attnlens::SafetensorsEntry& e : view.tensors())
    f.expected.emplace(e.name, view.read_f32(e));
  return f;
}

attnlens::LoadedModel load(const Fixture& f) {
  attnlens::ModelFiles files;
  files.weights = reinterpret_cast<const std::uint8_t*>(f.weights.data());
  files.weights_size = f.weights.size();
  for (const auto& [name, text] : f.texts)
    files.texts.emplace(name, text);
  return attnlens::load_model(files);
}

std::vector<std::int32_t> ints(const Tensor& t) {
  std::vector<std::int32_t> out;
  for (const float x : t.data)
    out.push_back(static_cast<std::int32_t>(x));
  return out;
}

double max_abs(const Tensor& t) {
  double m = 0.0;
  for (const float x : t.data)
    m = std::max(m, std::abs(static_cast<double>(x)));
  return m;
}

// The forward pass against PyTorch's float64 values.
//
// Tolerances: attnlens computes in float32 (u = 2^-24 ≈ 6e-8). Each layer is about six
// products or normalisations of at most K = 40 terms (d = 16, intermediate 40); a float32 dot
// product of K terms is within K·u of its magnitude, so a layer adds about 6 · 40 · u ≈ 1.5e-5
// relative error; LayerNorm divides by the deviation of its input, which PyTorch's random
// weights keep near 1 (gains 1 ± 0.3), so two layers and the embeddings stay within ~5e-5 of
// the values' scale. We allow 2e-4 times the largest |value| of each tensor, four times that.
// Attention weights are probabilities (scale 1) and go through one softmax of at most 8 terms
// after the scores: 2e-5 absolute.
void check_forward(attnlens::Model& model, const Fixture& f, bool token_types, bool masked) {
  const Tensor& ids_t = f.expected.at("input_ids");
  const std::int64_t B = ids_t.shape[0], T = ids_t.shape[1];
  const std::vector<std::int32_t> ids = ints(ids_t);
  std::vector<std::int32_t> types, mask;
  attnlens::ModelInputs in;
  in.ids = attnlens::TokenIds{ids.data(), B, T};
  if (token_types) {
    types = ints(f.expected.at("token_type_ids"));
    in.token_types = types.data();
  }
  if (masked) {
    mask = ints(f.expected.at("attention_mask"));
    in.attention_mask = mask.data();
  }
  attnlens::ModelForwardOptions o;
  o.attention = true;
  o.hidden_states = true;
  o.logits = model.info().has_head;
  const attnlens::ModelOutput r = model.forward(in, o);
  const Tensor& hidden = f.expected.at("hidden_states");
  CHECK(r.hidden_states.shape == hidden.shape);
  CHECK(testing::close(r.hidden_states.data, hidden.data, 2e-4 * max_abs(hidden), hidden.shape));
  const Tensor& attention = f.expected.at("attentions");
  CHECK(r.attention.shape == attention.shape);
  CHECK(testing::close(r.attention.data, attention.data, 2e-5, attention.shape));
  if (o.logits) {
    const Tensor& logits = f.expected.at("logits");
    CHECK(r.logits.shape == logits.shape);
    CHECK(testing::close(r.logits.data, logits.data, 2e-4 * max_abs(logits), logits.shape));
  }
}

// The loss and every parameter's gradient. Gradients run the same products backwards (twice
// the stages of the forward pass, and the LayerNorm backward's two reductions): we allow 1e-3
// times each tensor's largest |gradient|, and report every tensor over it by name. A tensor
// whose true gradient is 0 (the key biases: softmax ignores a constant added to a row of
// scores) gets float32's rounding of the terms that cancel, about u times the model's
// gradients (~0.1): 1e-7 absolute on top.
void check_gradients(attnlens::Model& model, const Fixture& f, bool token_types, bool masked) {
  const Tensor& ids_t = f.expected.at("input_ids");
  const std::int64_t B = ids_t.shape[0], T = ids_t.shape[1];
  const std::vector<std::int32_t> ids = ints(ids_t);
  const std::vector<std::int32_t> labels = ints(f.expected.at("labels"));
  std::vector<std::int32_t> types, mask;
  attnlens::ModelInputs in;
  in.ids = attnlens::TokenIds{ids.data(), B, T};
  if (token_types) {
    types = ints(f.expected.at("token_type_ids"));
    in.token_types = types.data();
  }
  if (masked) {
    mask = ints(f.expected.at("attention_mask"));
    in.attention_mask = mask.data();
  }
  const float loss = model.loss_and_gradients(in, attnlens::TokenIds{labels.data(), B, T});
  const double expected_loss = static_cast<double>(f.expected.at("loss").data[0]);
  CHECK(std::abs(loss - expected_loss) <= 1e-4 * std::abs(expected_loss));
  std::vector<std::string> failing;
  std::size_t compared = 0;
  for (const auto& [name, grad] : model.gradients()) {
    const auto it = f.expected.find("grad." + name);
    if (it == f.expected.end()) {
      failing.push_back(name + ": PyTorch has no gradient of this name");
      continue;
    }
    ++compared;
    const testing::Closeness c = testing::close(
        grad.data, it->second.data, 1e-3 * max_abs(it->second) + 1e-7, it->second.shape);
    if (grad.shape != it->second.shape || !c) failing.push_back(name + ": " + c.report);
  }
  std::string report;
  for (const std::string& line : failing)
    report += "\n  " + line;
  INFO("gradients compared: " << compared << "; differing:" << report);
  CHECK(failing.empty());
  CHECK(compared == model.gradients().size());
}

}  // namespace

TEST_CASE("PyTorch oracle: GPT-2 (causal, tied lm_head, mask buffers in the file)", "[torch]") {
  const Fixture f = fixture("gpt2-tiny");
  attnlens::LoadedModel loaded = load(f);
  CHECK(loaded.model->info().family == "gpt2");
  CHECK(loaded.model->info().causal);
  check_forward(*loaded.model, f, false, false);
  check_gradients(*loaded.model, f, false, false);
}

TEST_CASE("PyTorch oracle: BERT (bert. prefix, pooler, NSP head, int64 position_ids, tied decoder)",
          "[torch]") {
  const Fixture f = fixture("bert-tiny");
  attnlens::LoadedModel loaded = load(f);
  const attnlens::ModelInfo info = loaded.model->info();
  CHECK(info.family == "bert");
  CHECK_FALSE(info.causal);
  CHECK(info.prediction == attnlens::PredictionKind::MaskedToken);
  CHECK(info.has_head);
  CHECK(info.type_vocab_size == 2);
  check_forward(*loaded.model, f, true, true);
  check_gradients(*loaded.model, f, true, true);
}

TEST_CASE("PyTorch oracle: BertModel without a head, no prefix, gamma/beta names, F16 weights",
          "[torch]") {
  const Fixture f = fixture("bert-tiny-old");
  attnlens::LoadedModel loaded = load(f);
  CHECK_FALSE(loaded.model->info().has_head);
  check_forward(*loaded.model, f, true, true);
}

TEST_CASE("PyTorch oracle: DistilBERT (distilbert. prefix, vocab_* head, BF16 weights)",
          "[torch]") {
  const Fixture f = fixture("distilbert-tiny");
  attnlens::LoadedModel loaded = load(f);
  CHECK(loaded.model->info().family == "distilbert");
  CHECK(loaded.model->info().type_vocab_size == 0);
  check_forward(*loaded.model, f, false, true);
  check_gradients(*loaded.model, f, false, true);
}
