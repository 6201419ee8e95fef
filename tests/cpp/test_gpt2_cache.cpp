// GPT-2's forward from a cached prefix (Gpt2Cache, Model::make_cache): after each kind of edit a
// reader makes — typing at the end, deleting at the end, changing a word in the middle, a new
// sentence — the results equal a full forward() of the same tokens, the cache says how many
// rows it kept, and a cache never serves a model whose weights changed or another model.
#include "compare.hpp"
#include "gpt2_reference.hpp"
#include "helpers.hpp"

#include <attnlens/gpt2.hpp>
#include <attnlens/model.hpp>

#include <random>

using attnlens::ErrorCode;
using attnlens::Gpt2Cache;
using attnlens::Gpt2Config;
using attnlens::Gpt2ForwardOptions;
using attnlens::Gpt2Model;
using attnlens::Gpt2Output;
using attnlens::TokenIds;
using testing::require_error;

namespace {

// The cached rows and the fresh ones come from the same arithmetic on the same values; only the
// matrix products' blocking differs (a product over the fresh rows alone, or over all of them),
// which reorders float32 sums: the rule of test_gpt2.cpp's "B = 1 vs batch row", 1e-5 + 1e-5·|x|
// on O(1)-O(10) values. Weights in [0, 1]: 1e-6 absolute. (A row taken from the wrong position,
// a stale key or a missing layer moves values by O(0.1).)
void require_same(const Gpt2Output& cached, const Gpt2Output& full, const char* what) {
  INFO(what);
  REQUIRE(cached.logits.shape == full.logits.shape);
  REQUIRE_CLOSE(gpt2ref::compare("logits", cached.logits.data, full.logits.data, 1e-5, 1e-5));
  REQUIRE(cached.attention.shape == full.attention.shape);
  if (!full.attention.data.empty()) {
    REQUIRE_CLOSE(
        gpt2ref::compare("attention", cached.attention.data, full.attention.data, 1e-6, 0.0));
    // Causal: the cached rows, widened to the new length, are exactly zero past the diagonal.
    const std::int64_t T = full.attention.shape.back();
    for (std::size_t k = 0; k < cached.attention.data.size(); ++k) {
      const auto i = static_cast<std::int64_t>(k) / T % T, j = static_cast<std::int64_t>(k) % T;
      if (j > i) REQUIRE(cached.attention.data[k] == 0.0f);
    }
  }
  REQUIRE(cached.residuals.shape == full.residuals.shape);
  if (!full.residuals.data.empty()) {
    REQUIRE_CLOSE(
        gpt2ref::compare("residuals", cached.residuals.data, full.residuals.data, 1e-5, 1e-5));
  }
}

Gpt2Config small_config() {
  Gpt2Config c{2, 4, 32, 24, 50};
  return c;
}

std::vector<std::int32_t> random_ids(std::size_t n, int vocab, std::mt19937& gen) {
  std::uniform_int_distribution<int> dist(0, vocab - 1);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids)
    id = dist(gen);
  return ids;
}

}  // namespace

TEST_CASE("GPT-2 cached forward: every kind of edit gives a full forward's results",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 3);
  Gpt2ForwardOptions o;
  o.attention = true;
  o.residuals = GENERATE(false, true);
  INFO("residuals " << o.residuals);
  Gpt2Cache cache;
  std::mt19937 gen(4);
  std::vector<std::int32_t> ids = random_ids(12, c.vocab_size, gen);
  const auto step = [&](const char* what, std::int64_t expect_reused) {
    const TokenIds t{ids.data(), 1, static_cast<std::int64_t>(ids.size())};
    const Gpt2Output cached = model.forward(t, cache, o);
    const Gpt2Output full = model.forward(t, o);
    require_same(cached, full, what);
    INFO(what);
    CHECK(cache.reused() == expect_reused);
    CHECK(cache.tokens() == static_cast<std::int64_t>(ids.size()));
    // The rows the edit changed only (attention_from), as a figure drawn again asks: the same
    // call again keeps every row, and its rows from there are those of the whole attention.
    Gpt2ForwardOptions rows = o;
    rows.attention_from = expect_reused;
    const Gpt2Output changed = model.forward(t, cache, rows);
    const std::int64_t T = t.length, R = T - expect_reused;
    REQUIRE(changed.attention.shape == attnlens::Shape{c.layers, 1, c.heads, R, T});
    for (std::int64_t g = 0; g < c.layers * c.heads; ++g)
      for (std::int64_t k = 0; k < R * T; ++k)
        REQUIRE(changed.attention.data[static_cast<std::size_t>(g * R * T + k)] ==
                cached.attention.data[static_cast<std::size_t>((g * T + expect_reused) * T + k)]);
  };

  step("the first sentence: nothing to reuse", 0);
  step("the same sentence again: every row kept", 12);
  ids.push_back(7);
  step("one token typed at the end", 12);
  for (int k = 0; k < 5; ++k)
    ids.push_back(static_cast<std::int32_t>(k * 9 % c.vocab_size));
  step("five tokens pasted at the end", 13);
  ids.resize(10);
  step("the last eight deleted", 10);
  ids[4] = (ids[4] + 1) % c.vocab_size;
  step("a word changed in the middle", 4);
  ids[0] = (ids[0] + 1) % c.vocab_size;
  step("the first token changed", 0);
  ids = random_ids(c.context, c.vocab_size, gen);
  step("another sentence, the whole context", 0);
  ids.back() = (ids.back() + 1) % c.vocab_size;
  step("the last of a full context changed", c.context - 1);
  ids = {ids[0]};
  step("down to one token", 1);
}

TEST_CASE("GPT-2 cached forward: a call asking for more than the cache kept computes again",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 5);
  Gpt2Cache cache;
  std::mt19937 gen(6);
  const auto ids = random_ids(9, c.vocab_size, gen);
  const TokenIds t{ids.data(), 1, 9};
  Gpt2ForwardOptions bare;
  model.forward(t, cache, bare);
  // The cache kept logits only: attention now has to be computed for every row.
  Gpt2ForwardOptions with_attention;
  with_attention.attention = true;
  require_same(model.forward(t, cache, with_attention), model.forward(t, with_attention),
               "attention after a call without it");
  CHECK(cache.reused() == 0);
  // And a call asking for less is served from what was kept.
  require_same(model.forward(t, cache, bare), model.forward(t, bare),
               "logits only after attention");
  CHECK(cache.reused() == 9);
}

TEST_CASE("GPT-2 cached forward: a training step or another model empties what the cache holds",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 7);
  Gpt2Cache cache;
  std::mt19937 gen(8);
  const auto ids = random_ids(10, c.vocab_size, gen);
  const TokenIds t{ids.data(), 1, 10};
  Gpt2ForwardOptions o;
  o.attention = true;
  model.forward(t, cache, o);
  // One step on another batch changes every weight: the cached keys are stale.
  const auto batch = random_ids(2 * 11, c.vocab_size, gen);
  model.train_step(TokenIds{batch.data(), 2, 11}, 1e-2f);
  require_same(model.forward(t, cache, o), model.forward(t, o), "after a training step");
  CHECK(cache.reused() == 0);
  // Another model with the same config and the same ids: nothing is reused.
  Gpt2Model other = Gpt2Model::random(c, 9);
  require_same(other.forward(t, cache, o), other.forward(t, o), "another model");
  CHECK(cache.reused() == 0);
}

TEST_CASE("GPT-2 forward after a training step: the new weights, not their packed copy",
          "[gpt2][cache]") {
  // In WebAssembly forward() keeps the weights packed for its products (WeightPanels); a
  // training step changes them. Afterwards a plain and a cached forward must equal, bit for bit,
  // those of a model made from the trained weights (which packs them afresh): the packed kernels
  // give the same bits at any address. Natively the products are Eigen's, which nothing packs
  // ahead, and whose bits depend on where the buffers sit (with FMA, the rows it peels to align
  // are not fused): require_same's rule there (1.7e-8 apart seen in the -march=native build; a
  // stale weight moves values by O(0.1)).
#if defined(__wasm_simd128__)
  const double logit_abs = 0.0, logit_rel = 0.0, weight_abs = 0.0;
#else
  const double logit_abs = 1e-5, logit_rel = 1e-5, weight_abs = 1e-6;
#endif
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 12);
  std::mt19937 gen(13);
  const auto ids = random_ids(10, c.vocab_size, gen);
  const TokenIds t{ids.data(), 1, 10};
  Gpt2ForwardOptions o;
  o.attention = true;
  Gpt2Cache cache;
  model.forward(t, o);
  model.forward(t, cache, o);
  const auto batch = random_ids(2 * 11, c.vocab_size, gen);
  model.train_step(TokenIds{batch.data(), 2, 11}, 1e-2f);
  Gpt2Model rebuilt = Gpt2Model::from_tensors(c, model.to_tensors());
  const Gpt2Output expected = rebuilt.forward(t, o);
  for (const auto& [what, got] : {std::make_pair("forward", model.forward(t, o)),
                                  std::make_pair("cached forward", model.forward(t, cache, o))}) {
    INFO(what);
    REQUIRE_CLOSE(
        gpt2ref::compare("logits", got.logits.data, expected.logits.data, logit_abs, logit_rel));
    REQUIRE_CLOSE(gpt2ref::compare("attention", got.attention.data, expected.attention.data,
                                   weight_abs, 0.0));
  }
}

TEST_CASE("GPT-2 cached forward: bad uses are named errors and leave the cache usable",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 10);
  Gpt2Cache cache;
  std::mt19937 gen(11);
  const auto ids = random_ids(2 * 6, c.vocab_size, gen);
  model.forward(TokenIds{ids.data(), 1, 6}, cache);
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 2, 6}, cache);
      },
      ErrorCode::BAD_ARGUMENT, {"a cached forward takes one sequence; ids has 2"});
  std::vector<std::int32_t> bad = {1, 2, c.vocab_size};
  require_error(
      [&] {
        model.forward(TokenIds{bad.data(), 1, 3}, cache);
      },
      ErrorCode::BAD_ARGUMENT, {"[0, 2]"});
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 0}, cache);
      },
      ErrorCode::EMPTY_INPUT, {});
  const auto long_ids = random_ids(c.context + 1, c.vocab_size, gen);
  require_error(
      [&] {
        model.forward(TokenIds{long_ids.data(), 1, c.context + 1}, cache);
      },
      ErrorCode::TOO_LARGE, {"context"});
  Gpt2ForwardOptions from;
  from.attention = true;
  from.attention_from = 7;
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 6}, cache, from);
      },
      ErrorCode::BAD_ARGUMENT, {"attention_from is 7", "[0, 6]"});
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 6}, from);
      },
      ErrorCode::BAD_ARGUMENT, {"attention_from is 7", "[0, 6]"});
  // After the errors the cache still serves the sentence it held.
  const TokenIds t{ids.data(), 1, 6};
  require_same(model.forward(t, cache), model.forward(t), "after bad calls");
  CHECK(cache.reused() == 6);
}

TEST_CASE("Model::make_cache: GPT-2 reuses its prefix through the interface, an encoder has none",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  auto model = attnlens::as_model(Gpt2Model::random(c, 12));
  auto other = attnlens::as_model(Gpt2Model::random(c, 12));
  auto cache = model->make_cache();
  REQUIRE(cache != nullptr);
  std::mt19937 gen(13);
  auto ids = random_ids(8, c.vocab_size, gen);
  attnlens::ModelForwardOptions o;
  o.attention = true;
  o.logit_rows = {7};
  attnlens::ModelInputs in{TokenIds{ids.data(), 1, 8}};
  model->forward(in, o, *cache);
  ids.push_back(3);
  in.ids = TokenIds{ids.data(), 1, 9};
  o.logit_rows = {8};
  const auto cached = model->forward(in, o, *cache);
  const auto full = model->forward(in, o);
  CHECK(cache->reused() == 8);
  CHECK(cache->tokens() == 9);
  REQUIRE(cached.logits.shape == full.logits.shape);
  REQUIRE_CLOSE(
      gpt2ref::compare("last row's logits", cached.logits.data, full.logits.data, 1e-5, 1e-5));
  require_error([&] { other->forward(in, o, *cache); }, ErrorCode::BAD_ARGUMENT,
                {"this cache belongs to another model"});

  attnlens::BertConfig bc;
  bc.layers = 1;
  bc.heads = 2;
  bc.d_model = 16;
  bc.intermediate = 32;
  bc.context = 16;
  bc.vocab_size = 30;
  auto encoder = attnlens::as_model(attnlens::BertModel::random(bc, 1));
  CHECK(encoder->make_cache() == nullptr);
  // An encoder cuts its attention to the rows asked for as well (attention_from).
  const std::vector<std::int32_t> words = {1, 5, 9, 2, 6};
  attnlens::ModelForwardOptions eo;
  eo.attention = true;
  const auto whole = encoder->forward({TokenIds{words.data(), 1, 5}}, eo);
  eo.attention_from = 3;
  const auto last = encoder->forward({TokenIds{words.data(), 1, 5}}, eo);
  REQUIRE(last.attention.shape == attnlens::Shape{1, 1, 2, 2, 5});
  for (std::int64_t g = 0; g < 2; ++g)
    for (std::int64_t k = 0; k < 2 * 5; ++k)
      REQUIRE(last.attention.data[static_cast<std::size_t>(g * 10 + k)] ==
              whole.attention.data[static_cast<std::size_t>((g * 5 + 3) * 5 + k)]);
  eo.attention_from = 6;
  require_error(
      [&] {
        encoder->forward({TokenIds{words.data(), 1, 5}}, eo);
      },
      ErrorCode::BAD_ARGUMENT, {"attention_from is 6", "[0, 5]"});
}

namespace {

// Rows `rows` of a [1, T, V] (or [T, V]) logits tensor, as [rows.size(), V].
std::vector<float> rows_of(const attnlens::Tensor& logits, const std::vector<std::int64_t>& rows,
                           std::int64_t V) {
  std::vector<float> out;
  for (const std::int64_t t : rows)
    out.insert(out.end(), logits.data.begin() + t * V, logits.data.begin() + (t + 1) * V);
  return out;
}

}  // namespace

TEST_CASE("GPT-2 logit rows: only the rows asked for, in their order, equal to every row's",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  Gpt2Model model = Gpt2Model::random(c, 21);
  std::mt19937 gen(22);
  const auto ids = random_ids(2 * 9, c.vocab_size, gen);
  const TokenIds batch{ids.data(), 2, 9};
  const Gpt2Output every = model.forward(batch);
  REQUIRE(every.logits.shape == std::vector<std::int64_t>{2, 9, c.vocab_size});

  // Rows of a batch (b · T + t), in any order, with a repeat.
  Gpt2ForwardOptions o;
  o.logit_rows = {17, 3, 9, 3};
  const Gpt2Output some = model.forward(batch, o);
  REQUIRE(some.logits.shape == std::vector<std::int64_t>{4, c.vocab_size});
  // The same arithmetic on the same final-LayerNorm rows; natively Eigen's product may sum
  // another way for 4 rows than for 18 (the rule of require_same above).
  REQUIRE_CLOSE(gpt2ref::compare("rows 17, 3, 9, 3", some.logits.data,
                                 rows_of(every.logits, o.logit_rows, c.vocab_size), 1e-5, 1e-5));

  // No logits at all.
  o.logits = false;
  o.attention = true;
  const Gpt2Output none = model.forward(batch, o);
  CHECK(none.logits.data.empty());
  CHECK(none.logits.shape.empty());
  REQUIRE(none.attention.shape == std::vector<std::int64_t>{c.layers, 2, c.heads, 9, 9});

  // A row outside the batch is named, before anything runs.
  o.logits = true;
  o.logit_rows = {0, 18};
  require_error([&] { model.forward(batch, o); }, ErrorCode::BAD_ARGUMENT,
                {"logit_rows[1] = 18", "[0, 18)"});
  o.logit_rows = {-1};
  require_error([&] { model.forward(batch, o); }, ErrorCode::BAD_ARGUMENT, {"logit_rows[0] = -1"});
}

TEST_CASE("GPT-2 cached forward: logits not asked for are computed when a later call asks",
          "[gpt2][cache]") {
  const Gpt2Config c = small_config();
  const std::int64_t V = c.vocab_size;
  Gpt2Model model = Gpt2Model::random(c, 31);
  std::mt19937 gen(32);
  auto ids = random_ids(12, c.vocab_size, gen);
  const Gpt2Output full = model.forward(TokenIds{ids.data(), 1, 12});
  Gpt2Cache cache;

  // The last row only (what a figure shows first).
  Gpt2ForwardOptions o;
  o.attention = true;
  o.logit_rows = {11};
  const Gpt2Output last = model.forward(TokenIds{ids.data(), 1, 12}, cache, o);
  CHECK(cache.reused() == 0);
  REQUIRE(last.logits.shape == std::vector<std::int64_t>{1, V});
  REQUIRE_CLOSE(
      gpt2ref::compare("row 11", last.logits.data, rows_of(full.logits, {11}, V), 1e-5, 1e-5));

  // The same ids again, other rows: no block runs (every row reused), only their unembedding.
  o.attention = false;
  o.logit_rows = {4, 0, 7};
  const Gpt2Output more = model.forward(TokenIds{ids.data(), 1, 12}, cache, o);
  CHECK(cache.reused() == 12);
  REQUIRE_CLOSE(gpt2ref::compare("rows 4, 0, 7", more.logits.data,
                                 rows_of(full.logits, o.logit_rows, V), 1e-5, 1e-5));

  // Every row: the rows computed before and the rest, together equal to a full forward.
  o.logit_rows.clear();
  const Gpt2Output every = model.forward(TokenIds{ids.data(), 1, 12}, cache, o);
  CHECK(cache.reused() == 12);
  REQUIRE(every.logits.shape == full.logits.shape);
  REQUIRE_CLOSE(gpt2ref::compare("every row", every.logits.data, full.logits.data, 1e-5, 1e-5));

  // An edit at token 5 drops the logits of rows 5.. (stale) but keeps those before it.
  ids[5] = (ids[5] + 1) % static_cast<std::int32_t>(V);
  const Gpt2Output edited_full = model.forward(TokenIds{ids.data(), 1, 12});
  o.logit_rows = {11, 2, 6};
  const Gpt2Output edited = model.forward(TokenIds{ids.data(), 1, 12}, cache, o);
  CHECK(cache.reused() == 5);
  REQUIRE_CLOSE(gpt2ref::compare("rows 11, 2, 6 after the edit", edited.logits.data,
                                 rows_of(edited_full.logits, o.logit_rows, V), 1e-5, 1e-5));
  o.logit_rows.clear();
  REQUIRE_CLOSE(gpt2ref::compare("every row after the edit",
                                 model.forward(TokenIds{ids.data(), 1, 12}, cache, o).logits.data,
                                 edited_full.logits.data, 1e-5, 1e-5));

  // No logits, then a row outside the sentence: named, and the cache still serves.
  o.logits = false;
  CHECK(model.forward(TokenIds{ids.data(), 1, 12}, cache, o).logits.data.empty());
  o.logits = true;
  o.logit_rows = {12};
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 12}, cache, o);
      },
      ErrorCode::BAD_ARGUMENT, {"logit_rows[0] = 12", "[0, 12)"});
  o.logit_rows = {3};
  REQUIRE_CLOSE(gpt2ref::compare("row 3 after the error",
                                 model.forward(TokenIds{ids.data(), 1, 12}, cache, o).logits.data,
                                 rows_of(edited_full.logits, {3}, V), 1e-5, 1e-5));
  CHECK(cache.reused() == 12);
}

TEST_CASE("GPT-2 cached forward: a call that fails part-way leaves nothing to serve",
          "[gpt2][cache]") {
  // Block 0's two MLP weights times 1e30: finite, but their products (about 1e30 · 1e30) overflow
  // float32 for any input, after the cache has taken the new ids.
  const Gpt2Config c = small_config();
  attnlens::TensorList tensors = Gpt2Model::random(c, 41).to_tensors();
  for (auto& [name, tensor] : tensors) {
    if (name == "h.0.mlp.c_fc.weight" || name == "h.0.mlp.c_proj.weight") {
      for (float& w : tensor.data)
        w *= 1e30f;
    }
  }
  Gpt2Model model = Gpt2Model::from_tensors(c, tensors);
  std::mt19937 gen(42);
  const auto ids = random_ids(6, c.vocab_size, gen);
  Gpt2Cache cache;
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 6}, cache);
      },
      ErrorCode::NON_FINITE, {"block 0"});
  CHECK(cache.tokens() == 0);
  // The same ids again are computed again, and fail again: never logits of rows no block
  // computed (all-zero final rows would give a uniform distribution without an error).
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 6}, cache);
      },
      ErrorCode::NON_FINITE, {"block 0"});
  Gpt2ForwardOptions o;
  o.logit_rows = {5};
  require_error(
      [&] {
        model.forward(TokenIds{ids.data(), 1, 6}, cache, o);
      },
      ErrorCode::NON_FINITE, {"block 0"});
}
