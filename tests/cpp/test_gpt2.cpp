// The GPT-2 model: forward against an independent float64 reference, every gradient against
// finite differences, training (a falling loss, the copy task's induction circuit), the
// checkpoint seam and bad inputs.
#include "compare.hpp"
#include "gpt2_reference.hpp"
#include "helpers.hpp"
#include "lens_reference.hpp"

#include <attnlens/gpt2.hpp>
#include <attnlens/model.hpp>

#include <cmath>
#include <random>

using attnlens::ErrorCode;
using attnlens::Gpt2Config;
using attnlens::Gpt2Model;
using attnlens::Tensor;
using attnlens::TensorList;
using attnlens::TokenIds;
using testing::require_error;

namespace {

// A small model whose every parameter is random and O(1) (not GPT-2's init, where LayerNorms
// are the identity and biases zero, and would hide mistakes in their gradients).
Gpt2Model random_model(const Gpt2Config& c, std::uint32_t seed) {
  std::mt19937 gen(seed);
  TensorList tensors = Gpt2Model::random(c, 0).to_tensors();
  for (auto& [name, t] : tensors) {
    const bool is_ln = name.find("ln_") != std::string::npos;
    const bool is_weight = name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
    // Matrices scaled by 1/sqrt(fan-in) keep activations O(1) through the blocks.
    const double fan_in = t.shape.size() == 2 ? static_cast<double>(t.shape[0]) : 1.0;
    const bool embedding = name == "wte.weight" || name == "wpe.weight";
    const double spread = embedding ? 1.0 : (t.shape.size() == 2 ? 1.5 / std::sqrt(fan_in) : 0.3);
    std::uniform_real_distribution<double> dist(-spread, spread);
    for (float& x : t.data)
      x = static_cast<float>((is_ln && is_weight ? 1.0 : 0.0) + dist(gen));
  }
  return Gpt2Model::from_tensors(c, tensors);
}

gpt2ref::Params to_params(const TensorList& tensors) {
  gpt2ref::Params p;
  for (const auto& [name, t] : tensors)
    p[name] = std::vector<double>(t.data.begin(), t.data.end());
  return p;
}

gpt2ref::Config ref_config(const Gpt2Config& c) {
  return {c.layers, c.heads, c.d_model, c.context, c.vocab_size, c.attention_norm};
}

std::vector<std::int32_t> random_ids(std::size_t n, int vocab, std::mt19937& gen) {
  std::uniform_int_distribution<int> dist(0, vocab - 1);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids)
    id = dist(gen);
  return ids;
}

}  // namespace

TEST_CASE("GPT-2 forward matches an independent float64 reference", "[gpt2]") {
  Gpt2Config c{2, 2, 16, 12, 23};
  c.attention_norm = GENERATE(true, false);
  INFO("attention_norm " << c.attention_norm);
  Gpt2Model model = random_model(c, 1);
  const int B = 2, T = 9;
  std::mt19937 gen(2);
  const auto ids = random_ids(B * T, c.vocab_size, gen);
  attnlens::Gpt2ForwardOptions options;
  options.attention = true;
  options.residuals = true;
  const auto out = model.forward(TokenIds{ids.data(), B, T}, options);
  const auto ref = gpt2ref::forward(ref_config(c), to_params(model.to_tensors()), ids, B, T);

  REQUIRE(out.logits.shape == attnlens::Shape{B, T, c.vocab_size});
  REQUIRE(out.attention.shape == attnlens::Shape{c.layers, B, c.heads, T, T});
  REQUIRE(out.residuals.shape == attnlens::Shape{c.layers + 1, B, T, c.d_model});
  // float32 rounding, bounded from the worst case: a product of K terms is off by at most
  // K·u (u = 2^-24 = 6e-8) relative to the sum of its terms' magnitudes, 64 · 6e-8 = 4e-6 for
  // the widest product here (4d = 64). A logit sits at the end of about 11 such products (5 per
  // block, then the unembedding), LayerNorm can amplify what comes before by ~3x (it divides by
  // a standard deviation ~0.3 here): ~1e-4 of the O(1) magnitudes, hence 1e-4 + 1e-4·|x|. (The
  // random rounding is far smaller, ~1e-6; a real mistake — a wrong sign, scale or index —
  // moves logits by O(0.1).)
  REQUIRE_CLOSE(gpt2ref::compare("logits", out.logits.data, ref.logits, 1e-4, 1e-4));
  REQUIRE_CLOSE(gpt2ref::compare("residuals", out.residuals.data, ref.residuals, 1e-4, 1e-4));
  // Weights are probabilities in [0, 1] after one softmax of well-scaled scores: absolute 1e-5.
  REQUIRE_CLOSE(gpt2ref::compare("attention", out.attention.data, ref.attention, 1e-5, 0.0));

  // Causal: every weight above the diagonal is exactly zero; every row sums to 1.
  for (std::int64_t slice = 0; slice < c.layers * B * c.heads; ++slice) {
    for (int i = 0; i < T; ++i) {
      double sum = 0;
      for (int j = 0; j < T; ++j) {
        const float w = out.attention.data[static_cast<std::size_t>((slice * T + i) * T + j)];
        if (j > i) REQUIRE(w == 0.0f);
        sum += w;
      }
      // A sum of at most T = 9 weights, each within a few ulp: 1e-6.
      REQUIRE(std::abs(sum - 1.0) < 1e-6);
    }
  }

  // One sequence alone gives the same numbers as inside the batch (rows are independent).
  const auto single = model.forward(TokenIds{ids.data() + T, 1, T});
  const std::vector<float> batch_row1(out.logits.data.begin() + T * c.vocab_size,
                                      out.logits.data.end());
  // Only rounding differs (other row alignment inside the products): 1e-5 on O(1)-O(10) logits.
  REQUIRE_CLOSE(gpt2ref::compare("B = 1 vs batch row", single.logits.data, batch_row1, 1e-5, 1e-5));
}

TEST_CASE("GPT-2 gradients of every parameter match finite differences", "[gpt2]") {
  Gpt2Config c{2, 2, 8, 7, 11};
  c.attention_norm = GENERATE(true, false);
  INFO("attention_norm " << c.attention_norm);
  Gpt2Model model = random_model(c, 3);
  const int B = 2, T = 5;
  std::mt19937 gen(4);
  const auto ids = random_ids(B * T, c.vocab_size, gen);
  auto targets = random_ids(B * T, c.vocab_size, gen);
  targets[1] = -1;  // ignored positions contribute nothing
  targets[7] = -1;
  const float loss =
      model.loss_and_gradients(TokenIds{ids.data(), B, T}, TokenIds{targets.data(), B, T});
  const auto rc = ref_config(c);
  gpt2ref::Params params = to_params(model.to_tensors());
  const double ref_loss = gpt2ref::loss(rc, params, ids, targets, B, T);
  // The loss is a mean of ~log(V) = 2.4 sized terms computed through the forward above: 1e-5.
  REQUIRE(std::abs(loss - ref_loss) < 1e-5);

  for (const auto& [name, grad] : model.gradients()) {
    std::vector<double>& values = params.at(name);
    // Every element of small tensors, 40 sampled ones of the larger matrices.
    std::vector<std::size_t> picks;
    if (values.size() <= 64) {
      for (std::size_t i = 0; i < values.size(); ++i)
        picks.push_back(i);
    } else {
      std::uniform_int_distribution<std::size_t> dist(0, values.size() - 1);
      for (int i = 0; i < 40; ++i)
        picks.push_back(dist(gen));
    }
    std::vector<double> numeric, analytic;
    for (std::size_t i : picks) {
      // Central differences of the float64 loss: truncation error h²/6·|L'''| ~ 1e-9 and
      // rounding 1e-16·|L|/h ~ 1e-11, both negligible next to float32's gradient error.
      const double h = 1e-4, saved = values[i];
      values[i] = saved + h;
      const double up = gpt2ref::loss(rc, params, ids, targets, B, T);
      values[i] = saved - h;
      const double down = gpt2ref::loss(rc, params, ids, targets, B, T);
      values[i] = saved;
      numeric.push_back((up - down) / (2 * h));
      analytic.push_back(grad.data[i]);
    }
    // The float32 backward pass runs through the same chain of ~11 products and LayerNorms as
    // the forward (see above), so its worst-case rounding is ~1e-4 relative to the magnitudes it
    // sums, which are bounded by the tensor's largest gradient; the float64 differences are
    // exact to ~1e-9. Allow 1e-4 of the tensor's largest |gradient|: a missing term, a wrong
    // sign or factor (e.g. forgetting the 1/sqrt(hd) scale) is off by O(10%) of it and fails.
    double largest = 1e-6;
    for (double g : numeric)
      largest = std::max(largest, std::abs(g));
    // CHECK, not REQUIRE: every tensor whose gradient differs is reported by name, so a bug in
    // one layer's backward names that layer's tensors (and those it feeds), not just the first
    // tensor in checkpoint order.
    INFO("tensor " << name);
    CHECK_CLOSE(gpt2ref::compare(name, analytic, numeric, 1e-4 * largest, 0.0));
  }
}

TEST_CASE("GPT-2 initialisation is seeded, deterministic and shaped as GPT-2's", "[gpt2]") {
  const Gpt2Config c{3, 2, 32, 16, 97};
  const Gpt2Model a = Gpt2Model::random(c, 11), b = Gpt2Model::random(c, 11);
  const Gpt2Model other = Gpt2Model::random(c, 12);
  REQUIRE(a.num_parameters() == attnlens::gpt2_parameter_count(c));
  CHECK(a.parameters() == b.parameters());  // bit-identical for the same seed
  CHECK(a.parameters() != other.parameters());
  for (const auto& [name, t] : a.to_tensors()) {
    INFO("tensor " << name);
    const bool ln_weight =
        name.find("ln_") != std::string::npos && name.compare(name.size() - 7, 7, ".weight") == 0;
    if (t.shape.size() == 1) {
      // LayerNorm weights 1, every bias 0: exactly.
      for (float x : t.data)
        REQUIRE(x == (ln_weight ? 1.0f : 0.0f));
      continue;
    }
    const bool residual = name.find("c_proj.weight") != std::string::npos;
    const double expected = residual ? 0.02 / std::sqrt(2.0 * c.layers) : 0.02;
    double sum = 0, squares = 0;
    for (float x : t.data) {
      sum += x;
      squares += static_cast<double>(x) * x;
    }
    const double n = static_cast<double>(t.data.size());
    const double mean = sum / n, sd = std::sqrt(squares / n - mean * mean);
    // n >= 1024 normal samples: the sample sd is within 4 / sqrt(2n) <= 9% of the true one and
    // the mean within 4 sd / sqrt(n) <= 0.125 sd, at 4 standard errors.
    CHECK(std::abs(sd / expected - 1.0) < 4.0 / std::sqrt(2.0 * n));
    CHECK(std::abs(mean) < 4.0 * expected / std::sqrt(n));
  }
}

TEST_CASE("GPT-2 tensors: names, order and shapes of Hugging Face's checkpoints", "[gpt2]") {
  Gpt2Config c{2, 2, 8, 6, 10};
  // Without attention_norm the same list less each block's ln_1 tensors.
  c.attention_norm = GENERATE(true, false);
  INFO("attention_norm " << c.attention_norm);
  const Gpt2Model model = Gpt2Model::random(c, 5);
  const TensorList tensors = model.to_tensors();
  std::vector<std::pair<std::string, attnlens::Shape>> expected_block = {
      {"attn.c_attn.weight", {8, 24}}, {"attn.c_attn.bias", {24}}, {"attn.c_proj.weight", {8, 8}},
      {"attn.c_proj.bias", {8}},       {"ln_2.weight", {8}},       {"ln_2.bias", {8}},
      {"mlp.c_fc.weight", {8, 32}},    {"mlp.c_fc.bias", {32}},    {"mlp.c_proj.weight", {32, 8}},
      {"mlp.c_proj.bias", {8}}};
  if (c.attention_norm) {
    expected_block.insert(expected_block.begin(), {{"ln_1.weight", {8}}, {"ln_1.bias", {8}}});
  }
  std::vector<std::pair<std::string, attnlens::Shape>> expected = {{"wte.weight", {10, 8}},
                                                                   {"wpe.weight", {6, 8}}};
  for (int i = 0; i < c.layers; ++i) {
    for (const auto& [name, shape] : expected_block)
      expected.emplace_back("h." + std::to_string(i) + "." + name, shape);
  }
  expected.emplace_back("ln_f.weight", attnlens::Shape{8});
  expected.emplace_back("ln_f.bias", attnlens::Shape{8});
  REQUIRE(tensors.size() == expected.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    CHECK(tensors[i].first == expected[i].first);
    CHECK(tensors[i].second.shape == expected[i].second);
    total += tensors[i].second.numel();
  }
  CHECK(total == model.num_parameters());
  CHECK(total == attnlens::gpt2_parameter_count(c));

  // Decay on every 2-D tensor (embeddings included, as nanoGPT), none on 1-D ones.
  REQUIRE(model.segments().size() == tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i)
    CHECK(model.segments()[i].decay == (tensors[i].second.shape.size() == 2));

  // Round trip, with Hugging Face's extras: a "transformer." prefix, the causal-mask buffers and
  // a tied lm_head.
  TensorList hf;
  for (const auto& [name, t] : tensors)
    hf.emplace_back("transformer." + name, t);
  hf.emplace_back("transformer.h.0.attn.bias", Tensor({1, 1, 6, 6}));
  hf.emplace_back("transformer.h.1.attn.masked_bias", Tensor({}, {-1e4f}));
  hf.emplace_back("lm_head.weight", tensors.front().second);
  const Gpt2Model loaded = Gpt2Model::from_tensors(c, hf);
  CHECK(loaded.parameters() == model.parameters());
}

TEST_CASE("GPT-2 loss falls when training on one fixed batch", "[gpt2]") {
  const Gpt2Config c{2, 2, 16, 16, 20};
  Gpt2Model model = Gpt2Model::random(c, 21);
  std::mt19937 gen(22);
  const int B = 4, T = 16;
  const auto batch = random_ids(B * (T + 1), c.vocab_size, gen);
  const TokenIds ids{batch.data(), B, T + 1};
  const float first = model.train_step(ids, 1e-2f);
  float last = first;
  for (int step = 1; step < 60; ++step)
    last = model.train_step(ids, 1e-2f);
  CHECK(model.steps() == 60);
  // Untrained, the model is near uniform: loss ~ log(20) = 3.0. 60 steps of AdamW on the same
  // 64 targets memorise most of them (measured: below 0.3); require at least a 5x fall.
  CHECK(std::abs(first - std::log(20.0f)) < 0.2f);
  CHECK(last < first / 5);
}

TEST_CASE("GPT-2 training is bit-identical for the same seed and data", "[gpt2]") {
  const Gpt2Config c{2, 2, 16, 8, 13};
  std::mt19937 gen(31);
  const auto batch = random_ids(3 * 9, c.vocab_size, gen);
  auto run = [&] {
    Gpt2Model model = Gpt2Model::random(c, 32);
    std::vector<float> losses;
    for (int step = 0; step < 4; ++step)
      losses.push_back(model.train_step(TokenIds{batch.data(), 3, 9}, 3e-3f));
    return std::make_pair(losses, model.parameters());
  };
  const auto a = run(), b = run();
  CHECK(a.first == b.first);
  CHECK(a.second == b.second);

  // Wherever the parameters sit in memory: models kept alive side by side get arrays at
  // different addresses (modulo the 64-byte vectors of AVX-512 builds), and their gradients must
  // still be the same bits.
  std::vector<Gpt2Model> models;
  std::vector<std::int32_t> inputs(batch.begin(), batch.begin() + 3 * 8);
  for (int i = 0; i < 6; ++i) {
    models.push_back(Gpt2Model::random(c, 32));
    models.back().loss_and_gradients(TokenIds{inputs.data(), 3, 8},
                                     TokenIds{batch.data() + 1, 3, 8});
  }
  for (const Gpt2Model& m : models)
    CHECK(m.gradient_data() == models.front().gradient_data());
}

TEST_CASE("GPT-2 copy task: a 2-layer model learns to repeat a sequence", "[gpt2]") {
  // Random sequences of n = 8 distinct tokens, each shown twice (16 tokens). Only the second
  // copy's tokens after its first one are targets (the rest are -1): each is exactly
  // predictable by attending from position t back to t − n + 1, the token that followed the
  // earlier occurrence of the current token. Measured over 8 seeds, this configuration gets
  // the loss below 0.025 nats in 150 steps.
  //
  // With one fixed n this pattern is also a fixed offset, so a single layer can implement it
  // with positions instead of content — and, measured, it does: layer 0's heads put ~98 % of
  // their weight on t − n + 1, and the model does not carry over to other lengths. A
  // content-based induction head needs varied lengths and millions of tokens (~5 M:
  // docs/toolchain.md, "Induction heads: tokens needed"), far beyond a unit test. This test
  // checks that training finds a circuit that reads from the right place and drives the loss to
  // near zero.
  const int V = 24, n = 8, B = 16, T = 2 * n - 1, steps = 150;
  const Gpt2Config c{2, 2, 32, 2 * n, V};
  Gpt2Model model = Gpt2Model::random(c, 1);
  attnlens::Rng rng(101);
  std::vector<std::int32_t> inputs(B * T), targets(B * T);
  auto make_batch = [&] {
    for (int b = 0; b < B; ++b) {
      std::vector<std::int32_t> pool(V);
      for (int i = 0; i < V; ++i)
        pool[static_cast<std::size_t>(i)] = i;
      std::vector<std::int32_t> seq(2 * n);
      for (int i = 0; i < n; ++i) {
        const int j = i + static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(V - i));
        std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
        seq[static_cast<std::size_t>(i)] = seq[static_cast<std::size_t>(i + n)] =
            pool[static_cast<std::size_t>(i)];
      }
      for (int t = 0; t < T; ++t) {
        const auto at = static_cast<std::size_t>(b * T + t);
        inputs[at] = seq[static_cast<std::size_t>(t)];
        targets[at] = t >= n ? seq[static_cast<std::size_t>(t + 1)] : -1;
      }
    }
  };
  float first = 0, recent = 0;
  for (int step = 0; step < steps; ++step) {
    make_batch();
    const float loss =
        model.train_step(TokenIds{inputs.data(), B, T}, TokenIds{targets.data(), B, T}, 1e-2f);
    if (step == 0) first = loss;
    if (step >= steps - 10) recent += loss / 10;
  }
  INFO("second-copy loss: first step " << first << ", mean of the last 10 steps " << recent);
  // Uniform guessing costs log(24) = 3.18 nats; "near zero" here: below 0.1 nats (the model
  // puts about 90 % or more on the right token).
  CHECK(std::abs(first - std::log(static_cast<float>(V))) < 0.3f);
  CHECK(recent < 0.1f);

  // A fresh batch: some head looks from each second-copy token at t to the token after its
  // earlier occurrence, t − n + 1, with most of its weight.
  make_batch();
  attnlens::Gpt2ForwardOptions options;
  options.attention = true;
  const auto out = model.forward(TokenIds{inputs.data(), B, T}, options);
  double best = 0;
  for (int l = 0; l < c.layers; ++l) {
    for (int h = 0; h < c.heads; ++h) {
      double score = 0;
      for (int b = 0; b < B; ++b) {
        for (int t = n; t < T; ++t) {
          const std::int64_t row = (((std::int64_t{l} * B + b) * c.heads + h) * T + t) * T;
          score += out.attention.data[static_cast<std::size_t>(row + t - n + 1)];
        }
      }
      UNSCOPED_INFO("layer " << l << " head " << h << ": mean weight on t - n + 1 is "
                             << score / (B * (T - n)));
      best = std::max(best, score / (B * (T - n)));
    }
  }
  CHECK(best > 0.5);
}

TEST_CASE("GPT-2 bad inputs are errors that name the argument", "[gpt2]") {
  const Gpt2Config c{1, 2, 8, 6, 10};
  Gpt2Model model = Gpt2Model::random(c, 1);
  const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2};
  auto forward = [&](const TokenIds& t) { model.forward(t); };

  SECTION("ids") {
    std::vector<std::int32_t> bad = ids;
    bad[4] = 10;
    require_error(
        [&] {
          forward(TokenIds{bad.data(), 2, 6});
        },
        ErrorCode::BAD_ARGUMENT, {"ids[0, 4] is 10", "outside the vocabulary [0, 10)"});
    bad[4] = -1;
    require_error(
        [&] {
          forward(TokenIds{bad.data(), 2, 6});
        },
        ErrorCode::BAD_ARGUMENT, {"ids[0, 4] is -1"});
    require_error(
        [&] {
          forward(TokenIds{ids.data(), 1, 7});
        },
        ErrorCode::TOO_LARGE, {"7 tokens", "context of 6"});
    require_error(
        [&] {
          forward(TokenIds{ids.data(), 0, 6});
        },
        ErrorCode::EMPTY_INPUT, {"ids has shape [0, 6]"});
    require_error([&] { forward(TokenIds{ids.data(), 2, 0}); }, ErrorCode::EMPTY_INPUT);
    require_error([&] { forward(TokenIds{nullptr, 2, 3}); }, ErrorCode::BAD_ARGUMENT, {"no data"});
    require_error(
        [&] {
          forward(TokenIds{ids.data(), -1, 3});
        },
        ErrorCode::BAD_ARGUMENT, {"[-1, 3]"});
    attnlens::Gpt2ForwardOptions small;
    small.max_elements = 50;
    require_error(
        [&] {
          model.forward(TokenIds{ids.data(), 2, 3}, small);
        },
        ErrorCode::TOO_LARGE, {"logits"});
  }
  SECTION("targets and training") {
    const TokenIds in{ids.data(), 2, 3};
    std::vector<std::int32_t> targets(6, 1);
    require_error(
        [&] {
          model.loss(in, TokenIds{targets.data(), 3, 2});
        },
        ErrorCode::SHAPE_MISMATCH, {"targets have shape [3, 2]", "inputs have [2, 3]"});
    targets[5] = 12;
    require_error(
        [&] {
          model.loss_and_gradients(in, TokenIds{targets.data(), 2, 3});
        },
        ErrorCode::BAD_ARGUMENT, {"targets[1, 2] is 12", "-1 marks"});
    std::fill(targets.begin(), targets.end(), -1);
    require_error(
        [&] {
          model.loss(in, TokenIds{targets.data(), 2, 3});
        },
        ErrorCode::BAD_ARGUMENT, {"every one of the 6 targets is -1"});
    require_error(
        [&] {
          model.train_step(TokenIds{ids.data(), 2, 1}, 1e-3f);
        },
        ErrorCode::BAD_ARGUMENT, {"T + 1 >= 2"});
    require_error(
        [&] {
          model.train_step(TokenIds{ids.data(), 1, 8}, 1e-3f);
        },
        ErrorCode::TOO_LARGE, {"batch has 8 tokens per sequence, i.e. 7 inputs", "context of 6"});
    const std::vector<float> before = model.parameters();
    require_error(
        [&] {
          model.train_step(TokenIds{ids.data(), 2, 6}, -1.0f);
        },
        ErrorCode::BAD_ARGUMENT, {"learning rate is -1"});
    require_error(
        [&] {
          model.train_step(TokenIds{ids.data(), 2, 6}, NAN);
        },
        ErrorCode::BAD_ARGUMENT, {"learning rate"});
    CHECK(model.parameters() == before);
    CHECK(model.steps() == 0);
    attnlens::AdamWConfig adamw;
    adamw.beta2 = 1.0f;
    require_error([&] { model.set_optimizer(adamw); }, ErrorCode::BAD_ARGUMENT,
                  {"AdamW beta2 is 1"});
  }
  SECTION("config") {
    auto bad = [](Gpt2Config k) { return [k] { Gpt2Model::random(k, 0); }; };
    require_error(bad({0, 2, 8, 6, 10}), ErrorCode::BAD_ARGUMENT, {"layers is 0"});
    require_error(bad({1, 0, 8, 6, 10}), ErrorCode::BAD_ARGUMENT, {"heads is 0"});
    require_error(bad({1, 3, 8, 6, 10}), ErrorCode::BAD_ARGUMENT,
                  {"d_model is 8", "not a multiple of heads = 3"});
    require_error(bad({1, 2, -8, 6, 10}), ErrorCode::BAD_ARGUMENT, {"d_model is -8"});
    require_error(bad({1, 2, 8, 0, 10}), ErrorCode::BAD_ARGUMENT, {"context is 0"});
    require_error(bad({1, 2, 8, 6, 0}), ErrorCode::BAD_ARGUMENT, {"vocab_size is 0"});
    require_error(bad({1, 2, 8, 6, attnlens::kGpt2MaxVocab + 1}), ErrorCode::BAD_ARGUMENT,
                  {"vocab_size"});
    require_error(bad({128, 64, 8192, 16384, 1 << 21}), ErrorCode::TOO_LARGE,
                  {"parameters, over the limit"});
    // GPT-2 small fits the limits.
    CHECK_NOTHROW(attnlens::validate(Gpt2Config{12, 12, 768, 1024, 50257}));
    CHECK(attnlens::gpt2_parameter_count(Gpt2Config{12, 12, 768, 1024, 50257}) == 124439808);
  }
}

TEST_CASE("GPT-2 checkpoint tensors: every kind of bad tensor is BAD_FILE naming it", "[gpt2]") {
  const Gpt2Config c{2, 2, 8, 6, 10};
  const TensorList good = Gpt2Model::random(c, 1).to_tensors();
  auto load = [&](const TensorList& t) { return [&c, t] { Gpt2Model::from_tensors(c, t); }; };
  auto without = [&](const std::string& name) {
    TensorList t;
    for (const auto& entry : good) {
      if (entry.first != name) t.push_back(entry);
    }
    return t;
  };

  require_error(load(without("h.1.mlp.c_fc.bias")), ErrorCode::BAD_FILE,
                {"tensor 'h.1.mlp.c_fc.bias' [32] is missing"});
  require_error(load({}), ErrorCode::BAD_FILE, {"'wte.weight' [10, 8] is missing", "and 27 more"});

  TensorList reshaped = good;
  reshaped[4].second.shape = {24, 8};
  require_error(load(reshaped), ErrorCode::BAD_FILE,
                {"'h.0.attn.c_attn.weight' has shape [24, 8]", "needs [8, 24]"});
  TensorList wrong_vocab = good;
  wrong_vocab[0].second = Tensor({12, 8});
  require_error(load(wrong_vocab), ErrorCode::BAD_FILE,
                {"'wte.weight' has shape [12, 8]", "vocab_size 10", "needs [10, 8]"});

  TensorList nan = good;
  nan[7].second.data[3] = NAN;
  require_error(load(nan), ErrorCode::BAD_FILE,
                {"'h.0.attn.c_proj.bias' holds nan at flat index 3"});
  TensorList inf = good;
  inf[0].second.data[0] = INFINITY;
  require_error(load(inf), ErrorCode::BAD_FILE, {"'wte.weight' holds inf"});

  TensorList short_data = good;
  short_data[2].second.data.pop_back();
  require_error(load(short_data), ErrorCode::BAD_FILE,
                {"'h.0.ln_1.weight' has shape [8] (8 elements) but holds 7 values"});

  TensorList twice = good;
  twice.emplace_back("transformer.wpe.weight", good[1].second);
  require_error(load(twice), ErrorCode::BAD_FILE,
                {"'wpe.weight' appears twice", "'transformer.wpe.weight'"});

  TensorList extra = good;
  extra.emplace_back("h.2.ln_1.weight", Tensor({8}));
  require_error(load(extra), ErrorCode::BAD_FILE,
                {"unexpected tensor 'h.2.ln_1.weight'", "2 layers (h.0 .. h.1)"});
  // Without attention_norm: an ln_1 tensor of a block the config has is named as such; one of a
  // block it lacks is blamed on the layer count, and the block's list leaves ln_1 out.
  Gpt2Config bare = c;
  bare.attention_norm = false;
  const TensorList bare_good = Gpt2Model::random(bare, 1).to_tensors();
  TensorList bare_extra = bare_good;
  bare_extra.emplace_back("h.1.ln_1.bias", Tensor({8}));
  require_error([&] { Gpt2Model::from_tensors(bare, bare_extra); }, ErrorCode::BAD_FILE,
                {"unexpected tensor 'h.1.ln_1.bias'", "no LayerNorm before attention"});
  bare_extra = bare_good;
  bare_extra.emplace_back("h.7.ln_1.bias", Tensor({8}));
  require_error([&] { Gpt2Model::from_tensors(bare, bare_extra); }, ErrorCode::BAD_FILE,
                {"unexpected tensor 'h.7.ln_1.bias'", "2 layers (h.0 .. h.1)",
                 "a GPT-2 block holds attn.c_attn,"});
  TensorList stray = good;
  stray.emplace_back("score.weight", Tensor({2, 8}));
  require_error(load(stray), ErrorCode::BAD_FILE, {"unexpected tensor 'score.weight' [2, 8]"});

  TensorList untied = good;
  untied.emplace_back("lm_head.weight", good[0].second);
  untied.back().second.data[5] += 1.0f;
  require_error(load(untied), ErrorCode::BAD_FILE,
                {"'lm_head.weight' differs from wte.weight at flat index 5", "untied"});
  TensorList lm_shape = good;
  lm_shape.emplace_back("lm_head.weight", Tensor({10, 4}));
  require_error(load(lm_shape), ErrorCode::BAD_FILE, {"'lm_head.weight' has shape [10, 4]"});

  const TensorList bert = {{"bert.embeddings.word_embeddings.weight", Tensor({30522, 1})},
                           {"bert.encoder.layer.0.attention.self.query.weight", Tensor({1, 1})}};
  require_error(load(bert), ErrorCode::BAD_FILE,
                {"this looks like a BERT checkpoint", "bert.embeddings.word_embeddings.weight"});
  const TensorList llama = {{"model.embed_tokens.weight", Tensor({32000, 1})},
                            {"model.layers.0.self_attn.q_proj.weight", Tensor({1, 1})}};
  require_error(load(llama), ErrorCode::BAD_FILE,
                {"this looks like a LLaMA-style", "model.embed_tokens.weight"});
  const TensorList neox = {{"gpt_neox.embed_in.weight", Tensor({1, 1})}};
  require_error(load(neox), ErrorCode::BAD_FILE, {"GPT-NeoX"});
}

TEST_CASE("GPT-2 training threads: same results as one thread, bit-identical per count", "[gpt2]") {
  const Gpt2Config c{2, 2, 16, 8, 13};
  std::mt19937 gen(41);
  const int B = 5, T = 8;
  const auto batch = random_ids(B * (T + 1), c.vocab_size, gen);
  struct Run {
    float loss = 0;
    std::vector<float> gradients, losses, parameters;
  };
  auto run = [&](int threads) {
    Gpt2Model model = Gpt2Model::random(c, 42);
    model.set_threads(threads);
    Run r;
    const std::vector<std::int32_t> inputs(batch.begin(), batch.begin() + B * T);
    r.loss =
        model.loss_and_gradients(TokenIds{inputs.data(), B, T}, TokenIds{batch.data() + 1, B, T});
    r.gradients = model.gradient_data();
    for (int step = 0; step < 3; ++step)
      r.losses.push_back(model.train_step(TokenIds{batch.data(), B, T + 1}, 3e-3f));
    r.parameters = model.parameters();
    return r;
  };
  Gpt2Model model = Gpt2Model::random(c, 1);
  require_error([&] { model.set_threads(0); }, ErrorCode::BAD_ARGUMENT, {"threads is 0"});
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  require_error([&] { model.set_threads(2); }, ErrorCode::BAD_ARGUMENT,
                {"no threads, so it must be 1"});
  CHECK(model.threads() == 1);
  (void)run;
#else
  require_error([&] { model.set_threads(attnlens::kGpt2MaxThreads + 1); }, ErrorCode::BAD_ARGUMENT,
                {"threads is 65"});
  const Run one = run(1);
  for (int threads : {2, 3, 8}) {  // 3: shares of 2, 2, 1 rows; 8: more threads than rows
    INFO(threads << " threads");
    const Run a = run(threads), b = run(threads);
    CHECK(a.losses == b.losses);
    CHECK(a.parameters == b.parameters);
    // Only the order of the sums over the batch's rows differs from one thread: a sum of K
    // terms reordered moves by at most ~K·2^-24 of its terms' magnitudes (K <= 40 here), so
    // 1e-5 of the largest gradient, and 1e-6 relative on the loss. (Parameters after AdamW
    // steps are not compared: Adam divides by sqrt(v), so a gradient that is exactly 0 in
    // exact arithmetic, as the key bias's, turns rounding noise into lr-sized steps.)
    CHECK(std::abs(a.loss - one.loss) <= 1e-6f * one.loss);
    double largest = 0;
    for (float g : one.gradients)
      largest = std::max(largest, std::abs(static_cast<double>(g)));
    REQUIRE_CLOSE(gpt2ref::compare("gradients", a.gradients, one.gradients, 1e-5 * largest, 0.0));
  }
#endif
}

TEST_CASE("GPT-2 ablation: zero and mean against the reference, zero as a zeroed c_proj slice",
          "[gpt2][ablation]") {
  Gpt2Config c{2, 2, 16, 12, 23};
  Gpt2Model model = random_model(c, 1);
  const int B = 2, T = 9, hd = c.d_model / c.heads;
  std::mt19937 gen(2);
  const auto ids = random_ids(B * T, c.vocab_size, gen);
  const bool mean = GENERATE(false, true);
  INFO((mean ? "mean" : "zero"));
  attnlens::Gpt2ForwardOptions options;
  options.attention = options.residuals = options.value_weighted = true;
  options.ablation.heads = {{1, 0}, {0, 1}};
  options.ablation.kind = mean ? attnlens::AblationKind::Mean : attnlens::AblationKind::Zero;
  const auto out = model.forward(TokenIds{ids.data(), B, T}, options);
  const ablationref::Spec spec{{{1, 0}, {0, 1}}, mean};
  const auto ref = gpt2ref::forward(ref_config(c), to_params(model.to_tensors()), ids, B, T, &spec);
  // The tolerances of the forward's own test above: the same products, and a mean of at most
  // T = 9 rows adds 9 · 2^-24 relative.
  REQUIRE_CLOSE(gpt2ref::compare("logits", out.logits.data, ref.logits, 1e-4, 1e-4));
  REQUIRE_CLOSE(gpt2ref::compare("residuals", out.residuals.data, ref.residuals, 1e-4, 1e-4));
  REQUIRE_CLOSE(gpt2ref::compare("attention", out.attention.data, ref.attention, 1e-5, 0.0));
  // Value-weighted attention. Each component of f_h(x_j) is a float32 product chain of the
  // layer, within the forward's own per-value bound above (1e-4 + 1e-4·|x|); a norm of d = 16 of
  // them is within √16 times that (‖δf‖ <= √d · max|δf_c|): 4e-4 + 4e-4·‖f‖. The layer's norm
  // ‖Σ_h α_h f_h‖ moves by at most Σ_h α_h ‖δf_h‖ <= heads (2) times that: 8e-4 + 8e-4·|x|.
  // (Measured: under 1e-6. A wrong head, slice or sum moves them by O(0.1).) The ablated
  // heads' norms are exactly 0.
  REQUIRE(out.value_norms.shape == attnlens::Shape{c.layers, B, c.heads, T});
  REQUIRE(out.value_weighted.shape == attnlens::Shape{c.layers, B, T, T});
  REQUIRE_CLOSE(gpt2ref::compare("value norms", out.value_norms.data, ref.value_norms, 4e-4, 4e-4));
  REQUIRE_CLOSE(
      gpt2ref::compare("value-weighted", out.value_weighted.data, ref.value_weighted, 8e-4, 8e-4));
  // The ablation changed the prediction (else the test could not see it).
  attnlens::Gpt2ForwardOptions plain_options;
  plain_options.value_weighted = true;
  const auto plain = model.forward(TokenIds{ids.data(), B, T}, plain_options);
  const auto plain_ref = gpt2ref::forward(ref_config(c), to_params(model.to_tensors()), ids, B, T);
  REQUIRE_CLOSE(gpt2ref::compare("value norms, no ablation", plain.value_norms.data,
                                 plain_ref.value_norms, 4e-4, 4e-4));
  REQUIRE_CLOSE(gpt2ref::compare("value-weighted, no ablation", plain.value_weighted.data,
                                 plain_ref.value_weighted, 8e-4, 8e-4));
  CHECK(testing::max_abs_difference(plain.logits.data, out.logits.data) > 0.05);

  if (!mean) {
    // Zero ablation is the model whose c_proj rows of those heads are 0 (Conv1D [in, out]: head
    // h's outputs enter at rows h · hd ..): the same arithmetic on exact zeros, bit for bit.
    TensorList tensors = model.to_tensors();
    for (auto& [name, t] : tensors) {
      for (const auto& [layer, head] : spec.heads) {
        if (name != "h." + std::to_string(layer) + ".attn.c_proj.weight") continue;
        std::fill(t.data.begin() + head * hd * c.d_model,
                  t.data.begin() + (head + 1) * hd * c.d_model, 0.0f);
      }
    }
    Gpt2Model zeroed = Gpt2Model::from_tensors(c, tensors);
    attnlens::Gpt2ForwardOptions same;
    same.attention = same.residuals = true;
    const auto z = zeroed.forward(TokenIds{ids.data(), B, T}, same);
    REQUIRE_CLOSE(
        gpt2ref::compare("logits vs zeroed weights", out.logits.data, z.logits.data, 0, 0));
    REQUIRE_CLOSE(gpt2ref::compare("attention vs zeroed weights", out.attention.data,
                                   z.attention.data, 0, 0));
  }

  // Every head of a layer off still computes: the residual carries on.
  attnlens::Gpt2ForwardOptions all;
  all.ablation.heads = {{0, 0}, {0, 1}};
  all.ablation.kind = options.ablation.kind;
  const auto off = model.forward(TokenIds{ids.data(), B, T}, all);
  for (float x : off.logits.data)
    REQUIRE(std::isfinite(x));

  // A cached forward with an ablation computes every row and leaves the cache as it was.
  attnlens::Gpt2Cache cache;
  const auto first = model.forward(TokenIds{ids.data(), 1, T}, cache);
  const auto ablated = model.forward(TokenIds{ids.data(), 1, T}, cache, options);
  CHECK(cache.reused() == 0);
  const auto single = model.forward(TokenIds{ids.data(), 1, T}, options);
  REQUIRE_CLOSE(gpt2ref::compare("cached ablated", ablated.logits.data, single.logits.data, 0, 0));
  const auto again = model.forward(TokenIds{ids.data(), 1, T}, cache);
  CHECK(cache.reused() == T);
  REQUIRE_CLOSE(gpt2ref::compare("cache kept", again.logits.data, first.logits.data, 0, 0));
}

TEST_CASE("GPT-2 ablation: a head outside the model or named twice is a named error",
          "[gpt2][ablation]") {
  Gpt2Model model = random_model(Gpt2Config{2, 2, 16, 12, 23}, 1);
  const std::vector<std::int32_t> ids = {1, 2, 3};
  const auto run = [&](std::vector<attnlens::AblatedHead> heads) {
    attnlens::Gpt2ForwardOptions o;
    o.ablation.heads = std::move(heads);
    model.forward(TokenIds{ids.data(), 1, 3}, o);
  };
  require_error(
      [&] {
        run({{2, 0}});
      },
      ErrorCode::BAD_ARGUMENT, {"ablate[0]", "layer 2", "layers are 0 to 1"});
  require_error(
      [&] {
        run({{0, 0}, {-1, 0}});
      },
      ErrorCode::BAD_ARGUMENT, {"ablate[1]", "layer -1"});
  require_error(
      [&] {
        run({{1, 2}});
      },
      ErrorCode::BAD_ARGUMENT, {"ablate[0]", "head 2", "heads are 0 to 1"});
  require_error(
      [&] {
        run({{1, 1}, {0, 0}, {1, 1}});
      },
      ErrorCode::BAD_ARGUMENT, {"ablate[2]", "again", "ablate[0]"});
}

TEST_CASE("GPT-2 value weighting that overflows float32 is NON_FINITE naming the layer",
          "[gpt2][ablation]") {
  // Two heads computing the same thing, whose output projections cancel (W and -W): the block's
  // output stays as it was while each head's value through its projection overflows float32.
  const Gpt2Config c{1, 2, 16, 12, 23};
  const std::int64_t d = c.d_model, hd = d / c.heads;
  TensorList tensors = random_model(c, 1).to_tensors();
  for (auto& [name, t] : tensors) {
    if (name == "h.0.attn.c_attn.weight") {  // Conv1D [d, 3d]: q, k, v column blocks
      for (std::int64_t r = 0; r < d; ++r)
        for (std::int64_t part = 0; part < 3; ++part)
          for (std::int64_t e = 0; e < hd; ++e)
            t.data[r * 3 * d + part * d + hd + e] = t.data[r * 3 * d + part * d + e];
    }
    if (name == "h.0.attn.c_attn.bias") {
      for (std::int64_t part = 0; part < 3; ++part)
        for (std::int64_t e = 0; e < hd; ++e)
          t.data[part * d + hd + e] = t.data[part * d + e];
    }
    if (name == "h.0.attn.c_proj.weight") {  // [in, out]: head 1's rows are -head 0's, huge
      for (std::int64_t e = 0; e < hd; ++e)
        for (std::int64_t col = 0; col < d; ++col) {
          t.data[e * d + col] = 3e38f * (col % 2 == 0 ? 1.0f : -1.0f);
          t.data[(hd + e) * d + col] = -t.data[e * d + col];
        }
    }
  }
  Gpt2Model model = Gpt2Model::from_tensors(c, tensors);
  const std::vector<std::int32_t> ids = {1, 2, 3, 4};
  attnlens::Gpt2ForwardOptions o;
  o.value_weighted = true;
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 4}, o);
      },
      ErrorCode::NON_FINITE, {"value-weighted attention of layer 0"});
}

TEST_CASE("GPT-2 heads' writes, logit lens and logit attribution against the reference",
          "[gpt2][lens]") {
  const Gpt2Config c{2, 2, 16, 12, 23};
  Gpt2Model model = random_model(c, 1);
  const int B = 2, T = 9, N = B * T, L = c.layers, H = c.heads, d = c.d_model, V = c.vocab_size;
  std::mt19937 gen(4);
  const auto ids = random_ids(B * T, V, gen);
  const int ablated = GENERATE(0, 1, 2);  // none, head (1, 0) zeroed, its mean
  INFO((ablated == 0 ? "no ablation" : ablated == 1 ? "zero" : "mean"));
  attnlens::Ablation ablation;
  ablationref::Spec spec;
  if (ablated > 0) {
    ablation.heads = {{1, 0}};
    ablation.kind = ablated == 2 ? attnlens::AblationKind::Mean : attnlens::AblationKind::Zero;
    spec = {{{1, 0}}, ablated == 2};
  }
  const gpt2ref::Params params = to_params(model.to_tensors());
  const auto ref =
      gpt2ref::forward(ref_config(c), params, ids, B, T, ablated > 0 ? &spec : nullptr);

  // Each head's write at two rows (b · T + t): a product chain of the forward's, within its
  // residuals' bound (1e-4 + 1e-4·|x|, the forward test above).
  const std::vector<std::int64_t> rows = {3, N - 1};
  attnlens::Gpt2ForwardOptions options;
  options.residuals = true;
  options.head_output_rows = rows;
  options.ablation = ablation;
  const auto out = model.forward(TokenIds{ids.data(), B, T}, options);
  REQUIRE(out.head_outputs.shape == attnlens::Shape{L, 2, H, d});
  std::vector<double> expected;
  for (int l = 0; l < L; ++l)
    for (std::int64_t r : rows)
      for (int h = 0; h < H; ++h)
        for (int k = 0; k < d; ++k)
          expected.push_back(
              ref.head_writes[static_cast<std::size_t>(((l * N + r) * H + h) * d + k)]);
  REQUIRE_CLOSE(gpt2ref::compare("heads' writes", out.head_outputs.data, expected, 1e-4, 1e-4));
  if (ablated == 1) {  // a head switched off writes nothing
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int k = 0; k < d; ++k)
        CHECK(out.head_outputs.data[((1 * 2 + r) * H + 0) * d + static_cast<std::size_t>(k)] ==
              0.0f);
  }

  lensref::Readout readout;
  readout.layernorm = true;
  readout.w = params.at("ln_f.weight");
  readout.b = params.at("ln_f.bias");
  const std::vector<double>& wte = params.at("wte.weight");
  readout.unembedding = [&](std::int64_t v, std::int64_t k) {
    return wte[static_cast<std::size_t>(v * d + k)];
  };
  readout.d = d;
  readout.vocab = V;

  // The logit lens of every layer, every row: ln_f and the unembedding on the library's stream
  // against the reference's on its own (the forward's logits tolerance, 1e-4 + 1e-4·|x|: one
  // more LayerNorm and product on a stream already within that bound).
  for (int l = 0; l <= L; ++l) {
    INFO("after layer " << l - 1);
    attnlens::Tensor stream({N, d});
    std::copy(out.residuals.data.begin() + l * N * d, out.residuals.data.begin() + (l + 1) * N * d,
              stream.data.begin());
    const attnlens::Tensor logits = model.unembed(stream);
    REQUIRE(logits.shape == attnlens::Shape{N, V});
    std::vector<double> want;
    for (int n = 0; n < N; ++n) {
      const auto row = lensref::logits(readout, ref.residuals.data() + (l * N + n) * d);
      want.insert(want.end(), row.begin(), row.end());
    }
    REQUIRE_CLOSE(gpt2ref::compare("logit lens", logits.data, want, 1e-4, 1e-4));
  }

  // Attribution of two tokens at the last row: each part through the frozen ln_f.
  const std::int64_t row = N - 1;
  for (const std::int32_t token : {0, 17}) {
    INFO("token " << token);
    const attnlens::LogitAttribution a =
        model.attribute(TokenIds{ids.data(), B, T}, row, token, ablation);
    const auto at = [&](const std::vector<double>& v, std::int64_t i) { return v.data() + i * d; };
    std::vector<double> bias_rows;
    for (int l = 0; l < L; ++l) {
      const auto& b = params.at("h." + std::to_string(l) + ".attn.c_proj.bias");
      bias_rows.insert(bias_rows.end(), b.begin(), b.end());
    }
    const lensref::Attribution want = lensref::attribute(
        readout, token, at(ref.residuals, L * N + row), at(ref.residuals, row),
        [&](int l, int h) { return at(ref.head_writes, (l * N + row) * H + h); },
        [&](int l) { return at(bias_rows, l); },
        [&](int l) { return at(ref.mlp_writes, l * N + row); }, L, H);
    REQUIRE(a.heads.shape == attnlens::Shape{L, H});
    REQUIRE(a.attention_bias.shape == attnlens::Shape{L});
    REQUIRE(a.mlps.shape == attnlens::Shape{L});
    CHECK(a.row == row);
    CHECK(a.token == token);
    // A part's attribution is linear in its components with coefficients of total size
    // want.sensitivity (Σ_k |w_k U_k| · scale, twice for the LayerNorm's centring), so it moves by
    // at most that times its components' largest error: e, the largest difference between this
    // forward's float32 streams and heads' writes and the reference's (measured here, above
    // checked to be within the forward's bound), for a head or the embeddings; (heads + 2) · e for
    // an MLP (two streams and the heads' writes subtracted). The frozen scale 1 / σ moves by at
    // most e / σ relative: 2 · e · scale covers it.
    double e = 0;
    for (std::size_t i = 0; i < ref.residuals.size(); ++i)
      e = std::max(e, std::abs(out.residuals.data[i] - ref.residuals[i]));
    for (std::size_t i = 0; i < expected.size(); ++i)
      e = std::max(e, std::abs(out.head_outputs.data[i] - expected[i]));
    const double tol = e * want.sensitivity, rel = 2 * e * a.scale;
    INFO("largest stream error " << e << ", tolerance " << tol << " + " << rel << "·|x|");
    CHECK(e < 1e-4);
    REQUIRE_CLOSE(gpt2ref::compare("heads", a.heads.data, want.heads, tol, rel));
    REQUIRE_CLOSE(
        gpt2ref::compare("attention biases", a.attention_bias.data, want.biases, tol, rel));
    REQUIRE_CLOSE(gpt2ref::compare("MLPs", a.mlps.data, want.mlps, (H + 2) * tol, rel));
    REQUIRE_CLOSE(gpt2ref::compare("embeddings", std::vector<double>{a.embeddings},
                                   std::vector<double>{want.embeddings}, tol, rel));
    REQUIRE_CLOSE(gpt2ref::compare("constant", std::vector<double>{a.constant},
                                   std::vector<double>{want.constant}, 1e-6, 1e-6));
    REQUIRE_CLOSE(gpt2ref::compare("logit", std::vector<double>{a.logit},
                                   std::vector<double>{want.logit}, 1e-4, 1e-4));
    // The parts add up to the model's own logit: exactly in real arithmetic (a frozen LayerNorm is
    // linear, and the parts sum to the stream); here up to float32 rounding of the logit (a
    // d-term product: d · 2^-24 of Σ|terms| <= 1e-6 · Σ|parts|) and of each part (2^-24 each).
    double magnitude = std::abs(a.embeddings) + std::abs(a.constant);
    for (const auto* t : {&a.heads, &a.attention_bias, &a.mlps})
      for (float x : t->data)
        magnitude += std::abs(x);
    CHECK(std::abs(a.total() - a.logit) <= 2e-6 * (1 + magnitude));
    if (ablated == 1) CHECK(a.heads.data[static_cast<std::size_t>(1 * H + 0)] == 0.0f);
  }
}

TEST_CASE("GPT-2 logit lens and attribution: rows, tokens and shapes out of range are named errors",
          "[gpt2][lens]") {
  const Gpt2Config c{2, 2, 16, 12, 23};
  Gpt2Model model = random_model(c, 1);
  const std::vector<std::int32_t> ids = {1, 2, 3};
  require_error(
      [&] {
        model.attribute(TokenIds{ids.data(), 1, 3}, 3, 0);
      },
      ErrorCode::BAD_ARGUMENT, {"row is 3", "[0, 3)"});
  require_error(
      [&] {
        model.attribute(TokenIds{ids.data(), 1, 3}, -1, 0);
      },
      ErrorCode::BAD_ARGUMENT, {"row is -1"});
  require_error(
      [&] {
        model.attribute(TokenIds{ids.data(), 1, 3}, 0, 23);
      },
      ErrorCode::BAD_ARGUMENT, {"token is 23", "[0, 23)"});
  attnlens::Ablation twice;
  twice.heads = {{0, 0}, {0, 0}};
  require_error(
      [&] {
        model.attribute(TokenIds{ids.data(), 1, 3}, 0, 1, twice);
      },
      ErrorCode::BAD_ARGUMENT, {"ablate[1]", "again"});
  require_error(
      [&] {
        model.unembed(attnlens::Tensor({2, 15}));
      },
      ErrorCode::BAD_ARGUMENT, {"[2, 15]", "[R, 16]"});
  require_error(
      [&] {
        model.unembed(attnlens::Tensor({0, 16}));
      },
      ErrorCode::BAD_ARGUMENT, {"R >= 1"});
  attnlens::Tensor nan({2, 16});
  nan.data[20] = std::nanf("");
  require_error([&] { model.unembed(nan); }, ErrorCode::NON_FINITE, {"row 1"});
  attnlens::Gpt2ForwardOptions o;
  o.head_output_rows = {0, 3};
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 3}, o);
      },
      ErrorCode::BAD_ARGUMENT, {"head_output_rows[1] is 3", "[0, 3)"});
  // A cached forward with heads' writes computes without the cache and leaves it as it was.
  attnlens::Gpt2Cache cache;
  model.forward(TokenIds{ids.data(), 1, 3}, cache);
  o.head_output_rows = {2};
  const auto cached = model.forward(TokenIds{ids.data(), 1, 3}, cache, o);
  CHECK(cache.reused() == 0);
  const auto plain = model.forward(TokenIds{ids.data(), 1, 3}, o);
  REQUIRE_CLOSE(
      gpt2ref::compare("cached writes", cached.head_outputs.data, plain.head_outputs.data, 0, 0));
  model.forward(TokenIds{ids.data(), 1, 3}, cache);
  CHECK(cache.reused() == 3);
}
