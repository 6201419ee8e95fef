// BERT and DistilBERT: the forward pass against the float64 reference (bert_reference.hpp),
// every parameter's gradient against finite differences of that reference, checkpoint names in
// every style Hugging Face writes, training, and bad input. PyTorch's own numbers for the same
// architectures are in test_torch_models.cpp.
#include "bert_reference.hpp"
#include "bpe_files.hpp"
#include "compare.hpp"
#include "helpers.hpp"
#include "models/bert/family.hpp"
#include "models/bert/layout.hpp"

#include <attnlens/bert.hpp>
#include <attnlens/model.hpp>
#include <attnlens/safetensors.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

using attnlens::BertConfig;
using attnlens::BertFlavor;
using attnlens::BertInputs;
using attnlens::BertModel;
using attnlens::ErrorCode;
using attnlens::TokenIds;
using testing::require_error;

namespace {

BertConfig small(BertFlavor flavor) {
  BertConfig c;
  c.flavor = flavor;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 8;
  c.intermediate = 12;
  c.context = 9;
  c.vocab_size = 13;
  c.type_vocab_size = flavor == BertFlavor::Bert ? 2 : flavor == BertFlavor::Roberta ? 1 : 0;
  // RoBERTa's pad_token_id 1: positions from 2, and Batch's first id (1) is the padding token,
  // which takes position 1 and is not counted (modeling_roberta.py's position ids).
  if (flavor == BertFlavor::Roberta) c.position_offset = 2;
  return c;
}

// A model with weights far from the initialisation (LayerNorm gains and biases too), so every
// term of the gradient is exercised.
BertModel random_model(const BertConfig& c, unsigned seed) {
  BertModel init = BertModel::random(c, seed);
  attnlens::TensorList tensors = init.to_tensors();
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 0.3f);
  for (auto& [name, t] : tensors) {
    const bool gain = name.find("LayerNorm.weight") != std::string::npos ||
                      name.find("layer_norm.weight") != std::string::npos;
    for (float& x : t.data)
      x = (gain ? 1.0f : 0.0f) + dist(gen);
  }
  return BertModel::from_tensors(c, tensors);
}

struct Batch {
  std::int64_t B = 2, T = 6;
  std::vector<std::int32_t> ids = {1, 5, 12, 0, 7, 2, 3, 9, 9, 4, 0, 0};
  std::vector<std::int32_t> types = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0};
  std::vector<std::int32_t> mask = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  std::vector<std::int32_t> labels = {-1, 3, -1, -1, 11, -1, -1, 0, -1, 6, -1, -1};
  BertInputs inputs(bool with_types) const {
    return BertInputs{TokenIds{ids.data(), B, T}, with_types ? types.data() : nullptr, mask.data()};
  }
};

}  // namespace

TEST_CASE("BERT forward matches a float64 reference (padding, token types, every flavor)",
          "[bert]") {
  const BertFlavor flavor = GENERATE(BertFlavor::Bert, BertFlavor::DistilBert, BertFlavor::Roberta);
  const bool bert = flavor == BertFlavor::Bert;
  INFO(attnlens::detail::bert_names(flavor).name);
  const BertConfig c = small(flavor);
  BertModel model = random_model(c, 3);
  const Batch batch;
  attnlens::BertForwardOptions o;
  o.attention = o.hidden_states = o.logits = true;
  const attnlens::BertOutput out = model.forward(batch.inputs(bert), o);
  const bertref::Result ref =
      bertref::forward(c, bertref::params_of(model.to_tensors(), flavor), batch.ids,
                       bert ? batch.types.data() : nullptr, batch.mask.data(), batch.B, batch.T);
  CHECK(out.hidden_states.shape == attnlens::Shape{3, 2, 6, 8});
  CHECK(out.attention.shape == attnlens::Shape{2, 2, 2, 6, 6});
  CHECK(out.logits.shape == attnlens::Shape{2, 6, 13});
  // float32 through two layers of products of at most 12 terms and LayerNorms (see
  // test_torch_models.cpp for the derivation): 2e-5 absolute on values of size ~1-5 here.
  CHECK(testing::close(out.hidden_states.data, ref.hidden, 2e-5, out.hidden_states.shape));
  CHECK(testing::close(out.attention.data, ref.attention, 2e-6, out.attention.shape));
  CHECK(testing::close(out.logits.data, ref.logits, 5e-5, out.logits.shape));
  // Rows of attention weights sum to 1 over the visible keys; padded keys get exactly 0.
  for (std::int64_t row = 0; row < 2 * 2 * 2 * 6; ++row) {
    const std::int64_t b = (row / (2 * 6)) % 2;
    double sum = 0.0;
    for (std::int64_t j = 0; j < 6; ++j) {
      const float w = out.attention.data[static_cast<std::size_t>(row * 6 + j)];
      if (batch.mask[static_cast<std::size_t>(b * 6 + j)] == 0) CHECK(w == 0.0f);
      sum += w;
    }
    CHECK(std::abs(sum - 1.0) < 1e-6);
  }
  // Logits at chosen rows are the same numbers, up to the blocking of a 2-row product against
  // a 12-row one: float32 sums of d = 8 terms of size ~1, within 8 · 2^-24 · 8 ≈ 4e-6.
  attnlens::BertForwardOptions rows;
  rows.logits = true;
  rows.logit_rows = {4, 9};
  const attnlens::BertOutput picked = model.forward(batch.inputs(bert), rows);
  REQUIRE(picked.logits.shape == attnlens::Shape{2, 13});
  const std::vector<float> full_rows(out.logits.data.begin() + 4 * 13,
                                     out.logits.data.begin() + 5 * 13);
  const std::vector<float> full_row9(out.logits.data.begin() + 9 * 13,
                                     out.logits.data.begin() + 10 * 13);
  const std::vector<float> got4(picked.logits.data.begin(), picked.logits.data.begin() + 13);
  const std::vector<float> got9(picked.logits.data.begin() + 13, picked.logits.data.end());
  CHECK(testing::close(got4, full_rows, 4e-6));
  CHECK(testing::close(got9, full_row9, 4e-6));
}

TEST_CASE("BERT gradients of every parameter match finite differences", "[bert]") {
  const BertFlavor flavor = GENERATE(BertFlavor::Bert, BertFlavor::DistilBert, BertFlavor::Roberta);
  const bool bert = flavor == BertFlavor::Bert;
  INFO(attnlens::detail::bert_names(flavor).name);
  const BertConfig c = small(flavor);
  BertModel model = random_model(c, 5);
  const Batch batch;
  const float loss =
      model.loss_and_gradients(batch.inputs(bert), TokenIds{batch.labels.data(), 2, 6});
  bertref::Params params = bertref::params_of(model.to_tensors(), flavor);
  const auto ref_loss = [&] {
    return bertref::loss(c, params, batch.ids, bert ? batch.types.data() : nullptr,
                         batch.mask.data(), batch.labels, 2, 6);
  };
  REQUIRE(std::abs(loss - ref_loss()) < 1e-5);
  const std::string prefix = attnlens::detail::bert_prefix(flavor);
  std::mt19937 gen(6);
  for (const auto& [full, grad] : model.gradients()) {
    const std::string name = full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
    std::vector<double>& values = params.at(name);
    std::vector<std::size_t> picks;
    if (values.size() <= 48) {
      for (std::size_t i = 0; i < values.size(); ++i)
        picks.push_back(i);
    } else {
      std::uniform_int_distribution<std::size_t> dist(0, values.size() - 1);
      for (int i = 0; i < 30; ++i)
        picks.push_back(dist(gen));
    }
    std::vector<double> numeric, analytic;
    for (const std::size_t i : picks) {
      // Central differences of the float64 loss: truncation h²/6 |L'''| ~ 1e-9, rounding
      // 1e-16 |L| / h ~ 1e-11, negligible next to the float32 backward's error.
      const double h = 1e-4, saved = values[i];
      values[i] = saved + h;
      const double up = ref_loss();
      values[i] = saved - h;
      const double down = ref_loss();
      values[i] = saved;
      numeric.push_back((up - down) / (2 * h));
      analytic.push_back(grad.data[i]);
    }
    double largest = 0.0;
    for (const double g : numeric)
      largest = std::max(largest, std::abs(g));
    // As GPT-2's check (test_gpt2.cpp): float32 rounding of the backward's chain of products is
    // ~1e-4 of the largest gradient it sums; a missing term or factor is off by O(10%). A
    // tensor whose true gradient is 0 (the key biases: softmax ignores a constant added to a
    // row of scores) gets float32's rounding of the terms that cancel, ~u times the model's
    // gradients (~0.1): 1e-7 absolute.
    INFO("tensor " << full);
    CHECK(testing::close(analytic, numeric, 2e-4 * largest + 1e-7));
  }
}

TEST_CASE("BERT checkpoint names: prefix or none, weight/bias or gamma/beta, tied decoder",
          "[bert]") {
  const BertConfig c = small(BertFlavor::Bert);
  BertModel model = random_model(c, 7);
  attnlens::TensorList tensors = model.to_tensors();
  REQUIRE(tensors.front().first == "bert.embeddings.word_embeddings.weight");
  CHECK(tensors[5].first == "bert.encoder.layer.0.attention.self.query.weight");
  CHECK(tensors[5].second.shape == attnlens::Shape{8, 8});
  CHECK(tensors.back().first == "cls.predictions.bias");
  // Without the prefix and with the old LayerNorm names it is the same model.
  attnlens::TensorList old;
  for (const auto& [name, t] : tensors) {
    std::string n = name.rfind("bert.", 0) == 0 ? name.substr(5) : name;
    if (n.size() > 17 && n.compare(n.size() - 17, 17, "LayerNorm.weight") == 0)
      n.replace(n.size() - 6, 6, "gamma");
    if (n.size() > 15 && n.compare(n.size() - 14, 14, "LayerNorm.bias") == 0)
      n.replace(n.size() - 4, 4, "beta");
    old.emplace_back(n, t);
  }
  old.emplace_back("cls.predictions.decoder.weight", tensors.front().second);
  const BertModel again = BertModel::from_tensors(c, old);
  CHECK(again.parameters() == model.parameters());
  // An untied decoder, a missing tensor, a wrong shape and a GPT-2 tensor: each names it.
  attnlens::TensorList untied = tensors;
  untied.emplace_back("cls.predictions.decoder.weight", tensors.front().second);
  untied.back().second.data[3] += 1.0f;
  require_error([&] { BertModel::from_tensors(c, untied); }, ErrorCode::BAD_FILE,
                {"cls.predictions.decoder.weight", "differs from the word embeddings"});
  attnlens::TensorList missing(tensors.begin() + 1, tensors.end());
  require_error([&] { BertModel::from_tensors(c, missing); }, ErrorCode::BAD_FILE,
                {"'bert.embeddings.word_embeddings.weight' [13, 8] is missing"});
  attnlens::TensorList misshapen = tensors;
  misshapen[5].second.shape = {4, 16};
  require_error(
      [&] { BertModel::from_tensors(c, misshapen); }, ErrorCode::BAD_FILE,
      {"bert.encoder.layer.0.attention.self.query.weight", "has shape [4, 16]", "needs [8, 8]"});
  attnlens::TensorList gpt2 = tensors;
  gpt2.emplace_back("h.0.attn.c_attn.weight", attnlens::Tensor({8, 24}));
  require_error([&] { BertModel::from_tensors(c, gpt2); }, ErrorCode::BAD_FILE,
                {"looks like a GPT-2 checkpoint", "h.0.attn.c_attn.weight"});
}

TEST_CASE("BERT from_safetensors: the model from_tensors makes, read from the file's bytes",
          "[bert]") {
  // Loading reads each tensor from the file through one buffer into the parameters
  // (BertModel::from_safetensors); reading the file into tensors first and giving them to
  // from_tensors makes the same model, bit for bit, F32 and F16, with the buffers, pooler and
  // next-sentence head a Hugging Face file holds passed over, and the tied decoder checked.
  const BertConfig c = small(BertFlavor::Bert);
  const BertModel model = random_model(c, 8);
  attnlens::TensorList tensors = model.to_tensors();
  tensors.emplace_back("cls.predictions.decoder.weight", tensors.front().second);
  tensors.emplace_back("bert.pooler.dense.weight", attnlens::Tensor({8, 8}));
  tensors.emplace_back("cls.seq_relationship.bias", attnlens::Tensor({2}));
  for (const attnlens::Dtype dtype : {attnlens::Dtype::F32, attnlens::Dtype::F16}) {
    const std::vector<std::uint8_t> st = attnlens::write_safetensors(tensors, {}, dtype);
    const attnlens::SafetensorsView view(st.data(), st.size(), "model.safetensors");
    attnlens::TensorList read;
    for (const auto& entry : view.tensors())
      read.emplace_back(entry.name, view.read_f32(entry));
    const BertModel from_file = BertModel::from_safetensors(c, view);
    CHECK(
        testing::close(from_file.parameters(), BertModel::from_tensors(c, read).parameters(), 0.0));
  }
  attnlens::TensorList untied = tensors;
  untied[untied.size() - 3].second.data[3] += 1.0f;  // the decoder
  const std::vector<std::uint8_t> st = attnlens::write_safetensors(untied);
  const attnlens::SafetensorsView view(st.data(), st.size(), "model.safetensors");
  require_error(
      [&] { BertModel::from_safetensors(c, view); }, ErrorCode::BAD_FILE,
      {"cls.predictions.decoder.weight", "differs from the word embeddings at flat index 3"});
  attnlens::TensorList missing(tensors.begin() + 1, tensors.end());
  const std::vector<std::uint8_t> st2 = attnlens::write_safetensors(missing);
  const attnlens::SafetensorsView view2(st2.data(), st2.size(), "model.safetensors");
  // The count leaves out the pooler and the next-sentence head, which are not read.
  require_error([&] { BertModel::from_safetensors(c, view2); }, ErrorCode::BAD_FILE,
                {"'bert.embeddings.word_embeddings.weight' [13, 8] is missing",
                 std::to_string(missing.size() - 2) + " tensors were given"});
}

TEST_CASE("BERT forward after a training step: the new weights, not their packed copy", "[bert]") {
  // In WebAssembly forward() keeps the weights packed for its products; a training step changes
  // them. Afterwards forward() must equal, bit for bit, that of a model made from the trained
  // weights (which packs them afresh): the packed kernels give the same bits at any address.
  // Natively the products are Eigen's, which nothing packs ahead, and whose bits depend on where
  // the buffers sit (with FMA, the rows it peels to align are not fused): test_gpt2_cache.cpp's
  // rule, 1e-5 + 1e-5·|x| on these O(1)-O(10) values, at most 1e-4; weights in [0, 1], 1e-6.
  // A stale weight moves values by O(0.1).
#if defined(__wasm_simd128__)
  const double values = 0.0, weights = 0.0;
#else
  const double values = 1e-4, weights = 1e-6;
#endif
  const BertConfig c = small(BertFlavor::Bert);
  const Batch batch;
  BertModel model = random_model(c, 11);
  attnlens::BertForwardOptions o;
  o.attention = o.hidden_states = o.logits = true;
  model.forward(batch.inputs(true), o);
  model.train_step(batch.inputs(true), TokenIds{batch.labels.data(), 2, 6}, 1e-2f);
  const attnlens::BertOutput got = model.forward(batch.inputs(true), o);
  const attnlens::BertOutput expected =
      BertModel::from_tensors(c, model.to_tensors()).forward(batch.inputs(true), o);
  CHECK(testing::close(got.logits.data, expected.logits.data, values, got.logits.shape));
  CHECK(testing::close(got.hidden_states.data, expected.hidden_states.data, values,
                       got.hidden_states.shape));
  CHECK(testing::close(got.attention.data, expected.attention.data, weights, got.attention.shape));
}

TEST_CASE(
    "BERT training: the loss falls, and threads give the same results, bit-identical per count",
    "[bert]") {
  const BertConfig c = small(BertFlavor::Bert);
  const Batch batch;
  const auto run = [&](int threads) {
    BertModel model = random_model(c, 9);
    model.set_threads(threads);
    std::vector<float> losses;
    for (int step = 0; step < 30; ++step)
      losses.push_back(
          model.train_step(batch.inputs(true), TokenIds{batch.labels.data(), 2, 6}, 1e-2f));
    return std::make_pair(losses, model.parameters());
  };
  const auto [one, p1] = run(1);
  CHECK(one.back() < 0.3f * one.front());
  const auto [one_again, p1_again] = run(1);
  CHECK(p1 == p1_again);
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  // The WebAssembly build has no threads: more than one is a named error (as for GPT-2).
  BertModel model = random_model(c, 9);
  require_error([&] { model.set_threads(2); }, ErrorCode::BAD_ARGUMENT,
                {"no threads, so it must be 1"});
#else
  const auto [two, p2] = run(2);
  const auto [two_again, p2_again] = run(2);
  CHECK(p2 == p2_again);
  // One step's gradients with two threads: the same sums in another order (each row's share,
  // then the two added). Reordering a float32 sum of n = 12 rows' terms moves it by up to about
  // n · 2^-24 ≈ 7e-7 of the terms' magnitude, which is the gradient's own size when they agree in
  // sign: 1e-6 relative to the largest gradient, at least 1e-6 (the -march=native build's
  // blocking gave 1.2e-6 on a gradient of 2.5). (Thirty steps at lr 1e-2 amplify those last
  // bits; the runs above are compared per thread count.)
  BertModel a = random_model(c, 9), b = random_model(c, 9);
  b.set_threads(2);
  a.loss_and_gradients(batch.inputs(true), TokenIds{batch.labels.data(), 2, 6});
  b.loss_and_gradients(batch.inputs(true), TokenIds{batch.labels.data(), 2, 6});
  double largest = 1.0;
  for (const float g : a.gradient_data())
    largest = std::max(largest, static_cast<double>(std::abs(g)));
  CHECK(testing::close(b.gradient_data(), a.gradient_data(), 1e-6 * largest));
#endif
}

TEST_CASE("BERT bad input: each a named error", "[bert]") {
  BertConfig c = small(BertFlavor::Bert);
  BertModel model = random_model(c, 11);
  Batch batch;
  const auto forward = [&] { model.forward(batch.inputs(true)); };
  batch.ids[3] = 13;
  require_error(forward, ErrorCode::BAD_ARGUMENT, {"ids[0, 3] is 13", "[0, 13)"});
  batch = Batch{};
  batch.types[7] = 2;
  require_error(forward, ErrorCode::BAD_ARGUMENT, {"token_types[1, 1] is 2", "0 .. 1"});
  batch = Batch{};
  batch.mask[2] = 3;
  require_error(forward, ErrorCode::BAD_ARGUMENT, {"attention_mask[0, 2] is 3"});
  batch = Batch{};
  std::fill(batch.mask.begin() + 6, batch.mask.end(), 0);
  require_error(forward, ErrorCode::BAD_ARGUMENT, {"attention_mask row 1 is all 0"});
  std::vector<std::int32_t> long_ids(10, 1);
  require_error(
      [&] {
        model.forward(BertInputs{TokenIds{long_ids.data(), 1, 10}});
      },
      ErrorCode::TOO_LARGE, {"10 tokens", "context of 9"});
  batch = Batch{};
  std::vector<std::int32_t> none(12, -1);
  require_error(
      [&] {
        model.loss_and_gradients(batch.inputs(true), TokenIds{none.data(), 2, 6});
      },
      ErrorCode::BAD_ARGUMENT, {"every one of the 12 labels is -1"});
  // DistilBERT has no token types.
  BertModel distil = random_model(small(BertFlavor::DistilBert), 12);
  batch = Batch{};
  require_error([&] { distil.forward(batch.inputs(true)); }, ErrorCode::BAD_ARGUMENT,
                {"token_types[0, 3] is 1", "no token types"});
  // A model without the head gives no logits.
  c.mlm_head = false;
  BertModel bare = BertModel::random(c, 1);
  attnlens::BertForwardOptions o;
  o.logits = true;
  batch = Batch{};
  require_error([&] { bare.forward(batch.inputs(true), o); }, ErrorCode::BAD_ARGUMENT,
                {"no masked-LM head"});
}

TEST_CASE("BERT configs: the registry picks the family, relative positions and others are refused",
          "[bert]") {
  CHECK(std::string(attnlens::family_of(R"({"model_type": "bert", "hidden_size": 8})").name) ==
        "bert");
  CHECK(std::string(attnlens::family_of(R"({"model_type": "distilbert"})").name) == "distilbert");
  CHECK(std::string(attnlens::family_of(R"({"n_embd": 8, "n_layer": 1})").name) == "gpt2");
  CHECK(std::string(attnlens::family_of(R"({"model_type": "roberta"})").name) == "roberta");
  require_error([] { attnlens::family_of(R"({"model_type": "albert"})"); }, ErrorCode::BAD_FILE,
                {"config.json: model_type \"albert\" is not a family attnlens loads", "\"bert\""});
  const std::string base =
      R"({"model_type": "bert", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8,
          "intermediate_size": 12, "max_position_embeddings": 9, "vocab_size": 13, "type_vocab_size": 2)";
  const BertConfig parsed = attnlens::detail::parse_bert_config(base + "}");
  CHECK(parsed.layers == 2);
  CHECK(parsed.intermediate == 12);
  CHECK(parsed.layer_norm_eps == 1e-12f);
  require_error(
      [&] {
        attnlens::detail::parse_bert_config(base +
                                            R"(, "position_embedding_type": "relative_key"})");
      },
      ErrorCode::BAD_FILE, {"position_embedding_type is \"relative_key\"", "absolute"});
  require_error([&] { attnlens::detail::parse_bert_config(base + R"(, "hidden_act": "relu"})"); },
                ErrorCode::BAD_FILE, {"hidden_act is \"relu\""});
  require_error([] { attnlens::detail::parse_bert_config(R"({"model_type": "bert"})"); },
                ErrorCode::BAD_FILE, {"\"num_hidden_layers\" is missing"});
  // The config written for a trained encoder reads back the same.
  BertConfig c = small(BertFlavor::Bert);
  const BertConfig back = attnlens::detail::parse_bert_config(
      attnlens::detail::bert_config_json(c, attnlens::Dtype::F16, 0));
  CHECK(back.layers == c.layers);
  CHECK(back.d_model == c.d_model);
  CHECK(back.intermediate == c.intermediate);
  CHECK(back.vocab_size == c.vocab_size);
  CHECK(back.type_vocab_size == c.type_vocab_size);
}

TEST_CASE("an encoder's [MASK] written in the text takes the white space before it", "[bert]") {
  // attnlens' own encoder: a byte-level BPE with encoder specials. Its words carry their space
  // (" man"), so "a [MASK]" must not read as "a", " ", "[MASK]": the mask takes the space, as
  // Hugging Face's lstrip does for RoBERTa's <mask>. Byte ids are the bytes (small_vocab).
  attnlens::BpeTokenizer bpe =
      attnlens::BpeTokenizer::from_files(testing::small_vocab({"ab"}), "a b\n");
  bpe.add_special_tokens({"[CLS]", "[SEP]", "[MASK]", "[PAD]"});
  const std::unique_ptr<attnlens::Tokenizer> t = attnlens::as_encoder_tokenizer(bpe);
  const std::int32_t cls = t->token_to_id("[CLS]"), sep = t->token_to_id("[SEP]");
  const std::int32_t mask = t->mask_id();
  REQUIRE(mask == t->token_to_id("[MASK]"));
  const auto ids = [&](std::string_view text) {
    std::vector<std::int32_t> out;
    for (const attnlens::EncodedToken& e : t->encode(text))
      out.push_back(e.id);
    return out;
  };
  using Ids = std::vector<std::int32_t>;
  CHECK(ids("b [MASK]") == Ids{cls, 'b', mask, sep});
  CHECK(ids("b [MASK]") == ids("b[MASK]"));
  // Any white space (a tab, a line break, U+00A0 and U+3000 too), however much; the space after
  // the mask stays with the next word; a second mask takes its own.
  CHECK(ids("b \t\n\xC2\xA0\xE3\x80\x80[MASK] b") == Ids{cls, 'b', mask, ' ', 'b', sep});
  CHECK(ids("b [MASK] [MASK]") == Ids{cls, 'b', mask, mask, sep});
  // U+FEFF is no white space (Unicode's White_Space): it stays a token of its own bytes.
  CHECK(ids("\xEF\xBB\xBF[MASK]") == Ids{cls, 0xEF, 0xBB, 0xBF, mask, sep});
  // Its span covers the space it took, as Hugging Face's offsets of an lstrip token do.
  const std::vector<attnlens::EncodedToken> spans = t->encode("ab  [MASK] b");
  REQUIRE(spans.size() == 6);
  CHECK((spans[1].id == 256 && spans[1].begin == 0 && spans[1].end == 2));
  CHECK((spans[2].id == mask && spans[2].begin == 2 && spans[2].end == 10));
  // The other specials written in the text keep the space before them as a token.
  CHECK(ids("b [SEP]") == Ids{cls, 'b', ' ', sep, sep});
  // Only as far back as the text goes: a mask first in the second sentence of a pair.
  const std::vector<attnlens::EncodedToken> pair = t->encode_pair("b ", " [MASK]");
  REQUIRE(pair.size() == 6);
  CHECK((pair[2].id == ' ' && pair[2].segment == 0));
  CHECK((pair[4].id == mask && pair[4].segment == 1 && pair[4].begin == 0 && pair[4].end == 7));
}

TEST_CASE("a WordPiece tokenizer.json's added tokens: lstrip and rstrip widen the span", "[bert]") {
  const auto json = [](const std::string& mask_flags) {
    return R"({"version": "1.0", "added_tokens": [{"id": 4, "content": "[MASK]", )" + mask_flags +
           R"(, "special": true}], "normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"},)"
           R"( "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},)"
           R"( "decoder": null, "model": {"type": "WordPiece", "unk_token": "[UNK]",)"
           R"( "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab":)"
           R"( {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hi": 5}}})";
  };
  const auto mask_span = [](const std::string& file) {
    attnlens::ModelFiles files;
    files.texts.emplace("tokenizer.json", file);
    const auto t = attnlens::detail::load_wordpiece(files, 6);
    const std::vector<attnlens::EncodedToken> e = t->encode("hi  [MASK]  hi");
    REQUIRE(e.size() == 5);  // WordPiece drops white space: the ids are the same either way
    CHECK((e[1].id == 5 && e[2].id == 4 && e[3].id == 5));
    return std::pair<std::size_t, std::size_t>(e[2].begin, e[2].end);
  };
  using Span = std::pair<std::size_t, std::size_t>;
  CHECK(mask_span(json(R"("lstrip": false, "rstrip": false)")) == Span{4, 10});
  CHECK(mask_span(json(R"("lstrip": true, "rstrip": false)")) == Span{2, 10});
  CHECK(mask_span(json(R"("lstrip": false, "rstrip": true)")) == Span{4, 12});
  CHECK(mask_span(json(R"("lstrip": true, "rstrip": true)")) == Span{2, 12});
  attnlens::ModelFiles bad;
  const std::string file = json(R"("lstrip": "yes", "rstrip": false)");
  bad.texts.emplace("tokenizer.json", file);
  require_error([&] { attnlens::detail::load_wordpiece(bad, 6); }, ErrorCode::BAD_FILE,
                {"tokenizer.json", "added_tokens", "[MASK]", "\"lstrip\" is a string",
                 "expected true or false"});
}

TEST_CASE("BERT ablation: zero and mean against the reference, zero as a zeroed output slice",
          "[bert][ablation]") {
  const BertFlavor flavor = GENERATE(BertFlavor::Bert, BertFlavor::DistilBert);
  const bool bert = flavor == BertFlavor::Bert;
  const bool mean = GENERATE(false, true);
  INFO((bert ? "BERT" : "DistilBERT") << (mean ? ", mean" : ", zero"));
  const BertConfig c = small(flavor);
  BertModel model = random_model(c, 3);
  const Batch batch;  // its second sentence is padded: a mean runs over its 4 tokens
  attnlens::BertForwardOptions o;
  o.attention = o.hidden_states = o.logits = o.value_weighted = true;
  o.ablation.heads = {{0, 1}, {1, 0}};
  o.ablation.kind = mean ? attnlens::AblationKind::Mean : attnlens::AblationKind::Zero;
  const attnlens::BertOutput out = model.forward(batch.inputs(bert), o);
  const ablationref::Spec spec{{{0, 1}, {1, 0}}, mean};
  const bertref::Result ref = bertref::forward(c, bertref::params_of(model.to_tensors(), flavor),
                                               batch.ids, bert ? batch.types.data() : nullptr,
                                               batch.mask.data(), batch.B, batch.T, &spec);
  // The forward's own tolerances (the first test of this file); a mean of at most 6 rows adds
  // 6 · 2^-24 relative.
  CHECK(testing::close(out.hidden_states.data, ref.hidden, 2e-5, out.hidden_states.shape));
  CHECK(testing::close(out.attention.data, ref.attention, 2e-6, out.attention.shape));
  CHECK(testing::close(out.logits.data, ref.logits, 5e-5, out.logits.shape));
  // Value-weighted attention. Each component of f_h(x_j) is a float32 product chain of the
  // layer, within the forward's per-value bound above (2e-5 on values of this size); a norm of
  // d = 8 of them within √8 times that (‖δf‖ <= √d · max|δf_c|), 6e-5; the layer's norm of the
  // sum over 2 heads within twice that, 1.2e-4. (Measured: under 1e-6.)
  CHECK(testing::close(out.value_norms.data, ref.value_norms, 6e-5, out.value_norms.shape));
  CHECK(testing::close(out.value_weighted.data, ref.value_weighted, 1.2e-4,
                       out.value_weighted.shape));
  attnlens::BertForwardOptions plain_options;
  plain_options.logits = plain_options.value_weighted = true;
  const attnlens::BertOutput plain = model.forward(batch.inputs(bert), plain_options);
  const bertref::Result plain_ref =
      bertref::forward(c, bertref::params_of(model.to_tensors(), flavor), batch.ids,
                       bert ? batch.types.data() : nullptr, batch.mask.data(), batch.B, batch.T);
  CHECK(testing::close(plain.value_norms.data, plain_ref.value_norms, 6e-5));
  CHECK(testing::close(plain.value_weighted.data, plain_ref.value_weighted, 1.2e-4));
  CHECK(testing::max_abs_difference(plain.logits.data, out.logits.data) > 0.05);

  if (!mean) {
    // The output projection is [out, in] (torch's Linear): head h's outputs enter at columns
    // h · hd ... Zeroed there, the same arithmetic on exact zeros: bit for bit.
    const std::int64_t d = c.d_model, hd = d / c.heads;
    attnlens::TensorList tensors = model.to_tensors();
    for (auto& [name, t] : tensors) {
      for (const auto& [layer, head] : spec.heads) {
        const std::string l = std::to_string(layer);
        if (name != "bert.encoder.layer." + l + ".attention.output.dense.weight" &&
            name != "distilbert.transformer.layer." + l + ".attention.out_lin.weight")
          continue;
        for (std::int64_t row = 0; row < d; ++row)
          std::fill(t.data.begin() + row * d + head * hd,
                    t.data.begin() + row * d + (head + 1) * hd, 0.0f);
      }
    }
    BertModel zeroed = BertModel::from_tensors(c, tensors);
    attnlens::BertForwardOptions same;
    same.attention = same.logits = true;
    const attnlens::BertOutput z = zeroed.forward(batch.inputs(bert), same);
    CHECK(testing::close(out.logits.data, z.logits.data, 0.0, out.logits.shape));
    CHECK(testing::close(out.attention.data, z.attention.data, 0.0, out.attention.shape));
  }

  // Every head of a layer off still computes; a head outside the model is a named error.
  attnlens::BertForwardOptions all;
  all.logits = true;
  all.ablation.heads = {{1, 0}, {1, 1}};
  for (float x : model.forward(batch.inputs(bert), all).logits.data)
    REQUIRE(std::isfinite(x));
  all.ablation.heads = {{1, 0}, {0, 2}};
  require_error([&] { model.forward(batch.inputs(bert), all); }, ErrorCode::BAD_ARGUMENT,
                {"ablate[1]", "head 2", "heads are 0 to 1"});
}

TEST_CASE("BERT heads' writes and logit lens against the reference, and its attribution refused",
          "[bert][lens]") {
  const BertFlavor flavor = GENERATE(BertFlavor::Bert, BertFlavor::DistilBert);
  const bool bert = flavor == BertFlavor::Bert;
  INFO((bert ? "BERT" : "DistilBERT"));
  const BertConfig c = small(flavor);
  BertModel model = random_model(c, 3);
  const Batch batch;
  const std::int64_t N = batch.B * batch.T, L = c.layers, H = c.heads, d = c.d_model;
  const bertref::Params params = bertref::params_of(model.to_tensors(), flavor);
  const bertref::Result ref =
      bertref::forward(c, params, batch.ids, bert ? batch.types.data() : nullptr, batch.mask.data(),
                       batch.B, batch.T);
  attnlens::BertForwardOptions o;
  o.hidden_states = true;
  o.logits = false;
  o.head_output_rows = {1, N - 3};
  const attnlens::BertOutput out = model.forward(batch.inputs(bert), o);
  REQUIRE(out.head_outputs.shape == attnlens::Shape{L, 2, H, d});
  std::vector<double> expected;
  for (std::int64_t l = 0; l < L; ++l)
    for (std::int64_t r : o.head_output_rows)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t k = 0; k < d; ++k)
          expected.push_back(
              ref.head_writes[static_cast<std::size_t>(((l * N + r) * H + h) * d + k)]);
  // The forward's hidden-state bound (the first test of this file): one product of the chain.
  CHECK(testing::close(out.head_outputs.data, expected, 2e-5, out.head_outputs.shape));
  // The logit lens: the masked-LM head on each layer's output, against the reference's head on
  // its own (the forward's logits bound, 5e-5: the same head on a stream within 2e-5).
  for (std::int64_t l = 0; l <= L; ++l) {
    INFO("after layer " << l - 1);
    attnlens::Tensor stream({N, d});
    std::copy(out.hidden_states.data.begin() + l * N * d,
              out.hidden_states.data.begin() + (l + 1) * N * d, stream.data.begin());
    const std::vector<double> rows(ref.hidden.begin() + l * N * d,
                                   ref.hidden.begin() + (l + 1) * N * d);
    const attnlens::Tensor logits = model.unembed(stream);
    CHECK(testing::close(logits.data, bertref::mlm_head(c, params, rows, N), 5e-5, logits.shape));
  }
  std::unique_ptr<attnlens::Model> wrapped = attnlens::as_model(std::move(model));
  require_error(
      [&] {
        wrapped->attribute({TokenIds{batch.ids.data(), batch.B, batch.T}}, 0, 1);
      },
      ErrorCode::BAD_ARGUMENT,
      {bert ? "BERT normalises after every layer" : "DistilBERT normalises"});
}

TEST_CASE("a RoBERTa folder as the hub writes it: names, position ids, <s> and <mask>, save",
          "[bert]") {
  // The vocabulary: 256 byte tokens, "ab", then RoBERTa's specials (bpe_files.hpp).
  attnlens::BpeTokenizer bpe =
      attnlens::BpeTokenizer::from_files(testing::small_vocab({"ab"}), "a b\n");
  bpe.add_special_tokens({"<s>", "<pad>", "</s>", "<unk>", "<mask>"});
  const std::string vocab = bpe.to_vocab_json(), merges = "a b\n";
  BertConfig c = small(BertFlavor::Roberta);
  c.vocab_size = 262;
  c.layer_norm_eps = 1e-5f;
  const BertModel model = random_model(c, 21);
  attnlens::TensorList tensors = model.to_tensors();
  // The hub's files hold the tied decoder once more, and RobertaForMaskedLM's save of a
  // RobertaModel the pooler (skipped).
  for (const auto& [name, t] : model.to_tensors())
    if (name == "roberta.embeddings.word_embeddings.weight")
      tensors.emplace_back("lm_head.decoder.weight", t);
  tensors.emplace_back("roberta.pooler.dense.weight", attnlens::Tensor({8, 8}));
  const std::vector<std::uint8_t> weights =
      attnlens::write_safetensors(tensors, {}, attnlens::Dtype::F32);
  // pad_token_id 1: position ids count from 2, so 9 position rows hold 7 tokens.
  const std::string config =
      R"({"architectures": ["RobertaForMaskedLM"], "bos_token_id": 0, "eos_token_id": 2,)"
      R"( "hidden_act": "gelu", "hidden_size": 8, "intermediate_size": 12, "layer_norm_eps": 1e-05,)"
      R"( "max_position_embeddings": 9, "model_type": "roberta", "num_attention_heads": 2,)"
      R"( "num_hidden_layers": 2, "pad_token_id": 1, "type_vocab_size": 1, "vocab_size": 262})";
  const auto load = [&](const std::string& config_text, const std::vector<std::uint8_t>& w,
                        std::map<std::string, std::string> texts) {
    attnlens::ModelFiles files;
    files.weights = w.data();
    files.weights_size = w.size();
    texts["config.json"] = config_text;
    for (const auto& [name, text] : texts)
      files.texts.emplace(name, text);
    return attnlens::load_model(files);
  };
  const std::map<std::string, std::string> tokenizer_files = {{"vocab.json", vocab},
                                                              {"merges.txt", merges}};
  // (The map's views stay valid: the texts live in tokenizer_files and config until the end.)
  attnlens::LoadedModel loaded = load(config, weights, tokenizer_files);
  const attnlens::ModelInfo info = loaded.model->info();
  CHECK(info.family == "roberta");
  CHECK(info.context == 7);
  CHECK(info.type_vocab_size == 1);
  REQUIRE(loaded.tokenizer != nullptr);
  const attnlens::Tokenizer& t = *loaded.tokenizer;
  const std::int32_t s = t.token_to_id("<s>"), e = t.token_to_id("</s>");
  const std::int32_t mask = t.token_to_id("<mask>");
  CHECK(t.mask_id() == mask);
  const auto ids = [&](const std::vector<attnlens::EncodedToken>& tokens) {
    std::vector<std::int32_t> out;
    for (const attnlens::EncodedToken& token : tokens)
      out.push_back(token.id);
    return out;
  };
  using Ids = std::vector<std::int32_t>;
  // <mask> takes the space before it (its added token has lstrip in RoBERTa's tokenizer.json).
  CHECK(ids(t.encode("ab <mask>")) == Ids{s, 256, mask, e});
  // Pairs as RobertaProcessing writes them: <s> a </s></s> b </s>, one token type.
  const std::vector<attnlens::EncodedToken> pair = t.encode_pair("a", "b");
  CHECK(ids(pair) == Ids{s, 'a', e, e, 'b', e});
  for (const attnlens::EncodedToken& token : pair)
    CHECK(token.type == 0);

  // The forward against the float64 reference, on ids that hold the padding id (1) inside the
  // text: it takes position 1 and is not counted (modeling_roberta.py).
  const std::vector<std::int32_t> text = {s, 'a', 1, 256, mask, e};
  attnlens::ModelForwardOptions o;
  o.attention = o.hidden_states = o.logits = true;
  const attnlens::ModelOutput out =
      loaded.model->forward(attnlens::ModelInputs{TokenIds{text.data(), 1, 6}}, o);
  const bertref::Result ref = bertref::forward(
      c, bertref::params_of(model.to_tensors(), BertFlavor::Roberta), text, nullptr, nullptr, 1, 6);
  // As the forward test above: float32 through two layers of d = 8.
  CHECK(testing::close(out.hidden_states.data, ref.hidden, 2e-5, out.hidden_states.shape));
  CHECK(testing::close(out.attention.data, ref.attention, 2e-6, out.attention.shape));
  CHECK(testing::close(out.logits.data, ref.logits, 5e-5, out.logits.shape));
  // Eight tokens need position 9: one past the table.
  const std::vector<std::int32_t> eight(8, 'a');
  require_error(
      [&] {
        loaded.model->forward(attnlens::ModelInputs{TokenIds{eight.data(), 1, 8}}, o);
      },
      ErrorCode::TOO_LARGE, {"context of 7"});

  // save() writes a folder that transformers' RobertaForMaskedLM reads and attnlens reads back.
  const auto saved = attnlens::save_model(*loaded.model, loaded.tokenizer.get());
  std::map<std::string, std::string> texts;
  std::vector<std::uint8_t> saved_weights;
  for (const auto& [name, bytes] : saved) {
    if (name == "model.safetensors")
      saved_weights = bytes;
    else
      texts[name] = std::string(bytes.begin(), bytes.end());
  }
  REQUIRE(texts.count("config.json") == 1);
  CHECK(texts["config.json"].find("\"model_type\": \"roberta\"") != std::string::npos);
  CHECK(texts["config.json"].find("\"pad_token_id\": 1,") != std::string::npos);
  CHECK(texts["config.json"].find("RobertaForMaskedLM") != std::string::npos);
  const std::string saved_config = texts["config.json"];
  texts.erase("config.json");
  attnlens::LoadedModel back = load(saved_config, saved_weights, texts);
  const attnlens::ModelOutput again =
      back.model->forward(attnlens::ModelInputs{TokenIds{text.data(), 1, 6}}, o);
  CHECK(again.logits.data == out.logits.data);
  CHECK(ids(back.tokenizer->encode("ab <mask>")) == Ids{s, 256, mask, e});

  // What it refuses, by name.
  require_error(
      [&] {
        load(config, weights, {{"tokenizer.json", "{}"}});
      },
      ErrorCode::BAD_FILE, {"tokenizer.json", "vocab.json and merges.txt"});
  const BertModel bert = random_model(small(BertFlavor::Bert), 22);
  const std::vector<std::uint8_t> bert_weights =
      attnlens::write_safetensors(bert.to_tensors(), {}, attnlens::Dtype::F32);
  require_error([&] { load(config, bert_weights, tokenizer_files); }, ErrorCode::BAD_FILE,
                {"looks like a BERT checkpoint", "the config says roberta"});
  // Without pad_token_id, RobertaConfig's default 1.
  std::string no_pad = config;
  no_pad.erase(no_pad.find(" \"pad_token_id\": 1,"), 19);
  REQUIRE(no_pad.find("pad_token_id") == std::string::npos);
  CHECK(load(no_pad, weights, tokenizer_files).model->info().context == 7);
  // A vocabulary with BERT's [CLS] under a RoBERTa config.
  attnlens::BpeTokenizer bert_names =
      attnlens::BpeTokenizer::from_files(testing::small_vocab({"ab"}), "a b\n");
  bert_names.add_special_tokens({"[CLS]", "[SEP]", "[MASK]", "[PAD]"});
  require_error(
      [&] {
        load(config, weights, {{"vocab.json", bert_names.to_vocab_json()}, {"merges.txt", merges}});
      },
      ErrorCode::BAD_FILE, {"vocab.json", "no \"<s>\"", "BERT's [CLS]"});
  // An offset that contradicts the flavor.
  BertConfig zero = c;
  zero.position_offset = 0;
  require_error([&] { attnlens::validate(zero); }, ErrorCode::BAD_ARGUMENT,
                {"position_offset is 0"});
  BertConfig offset_bert = small(BertFlavor::Bert);
  offset_bert.position_offset = 2;
  require_error([&] { attnlens::validate(offset_bert); }, ErrorCode::BAD_ARGUMENT,
                {"position_offset is 2"});
  std::string far_pad = config;
  far_pad.replace(far_pad.find("\"pad_token_id\": 1"), 17, "\"pad_token_id\": 8");
  require_error([&] { load(far_pad, weights, tokenizer_files); }, ErrorCode::BAD_FILE,
                {"\"pad_token_id\" is 8", "below max_position_embeddings - 1 = 8"});
  for (const char* type : {"xlm-roberta"}) {
    std::string other = config;
    other.replace(other.find("\"roberta\""), 9, std::string("\"") + type + "\"");
    require_error([&] { load(other, weights, tokenizer_files); }, ErrorCode::BAD_FILE,
                  {std::string("model_type \"") + type + "\" is ", "does not", "attnlens loads"});
  }
}
