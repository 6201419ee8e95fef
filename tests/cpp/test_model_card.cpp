// The model card (MODEL.md, written at the end of `npm run train`): the phase change it states
// is the one in the curve — the last point with no circuit yet (induction < 0.1) before the first
// that meets the target (>= 0.5) and copies (second copy a nat below the first) — and the curve
// table lists the points of the change itself, however many points the run has.
#include "eval_report.hpp"
#include "helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

attnlens::train::CurvePoint point(std::int64_t step, double induction, double second) {
  attnlens::train::CurvePoint p;
  p.step = step;
  p.tokens = step * 2048;
  p.train_loss = 5.0;
  p.lr = 1e-3;
  p.heldout_loss = 4.0;
  p.previous_token = 0.5;
  p.induction = induction;
  p.first_copy_loss = 8.3;
  p.second_copy_loss = second;
  return p;
}

attnlens::eval::Evaluation evaluation() {
  attnlens::eval::Evaluation e;
  e.length = 128;
  e.heldout = {1000, 3.7, 6.5, 4.5};
  e.train = e.heldout;
  e.sample = e.heldout;
  e.previous_token = {{0.1, 0.7}, {0.2, 0.3}};
  e.sample_previous_token = e.previous_token;
  e.induction.scores = {{0.01, 0.02}, {0.8, 0.1}};
  e.induction.first_copy_loss = 8.3;
  e.induction.second_copy_loss = 1.2;
  return e;
}

attnlens::eval::TrainRecord record(const std::vector<attnlens::train::CurvePoint>& curve) {
  attnlens::eval::TrainRecord r;
  r.config = attnlens::Gpt2Config{2, 2, 8, 128, 64};
  r.steps = curve.back().step;
  r.batch = 16;
  r.length = 128;
  r.tokens_seen = r.steps * 2048;
  r.train_tokens = 1000000;
  r.curve = curve;
  return r;
}

}  // namespace

TEST_CASE("the model card states the curve's phase change and lists its points", "[model]") {
  // 200 points, every 250 steps; the head forms between steps 30 000 and 30 750.
  std::vector<attnlens::train::CurvePoint> curve;
  for (std::int64_t step = 0; step <= 50000; step += 250) {
    const double induction = step < 30250    ? 0.02
                             : step == 30250 ? 0.15
                             : step == 30500 ? 0.45
                                             : 0.8;
    const double second = step < 30250 ? 8.3 : step == 30250 ? 7.6 : step == 30500 ? 3.0 : 1.0;
    curve.push_back(point(step, induction, second));
  }
  const std::string card = attnlens::eval::model_card(evaluation(), record(curve));
  INFO(card);
  // 30 000 is the last point under 0.1; 30 500 scores 0.45 (under the target); 30 750 forms.
  CHECK(card.find("**The phase change:** at step 30000 (61.4 M tokens") != std::string::npos);
  CHECK(card.find("at step 30750 (63.0 M tokens) it scored 0.800 and the second copy cost 1.00 "
                  "against 8.30: the circuit formed within 750 steps") != std::string::npos);
  // The rows of the change, though the table shows every 12th point elsewhere.
  for (const char* row : {"| 30250 | 61.95 M |", "| 30500 | 62.46 M |", "| 30750 | 62.98 M |"})
    CHECK(card.find(row) != std::string::npos);
  CHECK(card.find("| 29750 | 60.93 M |") == std::string::npos);  // unchanged, between strides
  CHECK(card.find("Targets: held-out loss at least") != std::string::npos);
  CHECK(card.find("Layer 1, head 0 is an induction head (score 0.800)") != std::string::npos);
}

TEST_CASE("a card without a phase change says so", "[model]") {
  std::vector<attnlens::train::CurvePoint> curve;
  for (std::int64_t step = 0; step <= 5000; step += 250)
    curve.push_back(point(step, 0.02, 8.3));
  auto e = evaluation();
  e.induction.scores = {{0.01, 0.02}, {0.03, 0.1}};
  const std::string card = attnlens::eval::model_card(e, record(curve));
  INFO(card);
  CHECK(card.find("**No phase change:**") != std::string::npos);
  CHECK(card.find("No induction head formed in this run (the best, layer 1, head 1, scores 0.100; "
                  "target 0.5)") != std::string::npos);
}

TEST_CASE(
    "the card names the corpus it was trained on, with WordNet's licence when WordNet is in it",
    "[model]") {
  std::vector<attnlens::train::CurvePoint> curve;
  for (std::int64_t step = 0; step <= 5000; step += 250)
    curve.push_back(point(step, step < 3000 ? 0.02 : 0.8, step < 3000 ? 8.3 : 1.0));
  const std::string wordnet_notice =
      "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.";

  // build/corpus: the novels and the addresses, as the cards before WordNet said.
  auto base = record(curve);
  base.tokenizer_size = 4096;
  const std::string two = attnlens::eval::model_card(evaluation(), base);
  INFO(two);
  CHECK(two.find("of 19th-century novels and American political speeches, trained") !=
        std::string::npos);
  CHECK(two.find("recorded in `build/corpus/split.json`") != std::string::npos);
  CHECK(two.find("WordNet") == std::string::npos);
  CHECK(two.find("(Emma, Elizabeth, Highbury, Congress)") != std::string::npos);

  auto r = record(curve);
  r.corpus_dir = "build/corpus-wordnet";
  r.sources = {"austen", "sotu", "wordnet"};
  r.tokenizer_size = 8192;
  const std::string three = attnlens::eval::model_card(evaluation(), r);
  INFO(three);
  CHECK(three.find("American political speeches and WordNet's definitions and examples of English "
                   "words, trained") != std::string::npos);
  CHECK(three.find("| WordNet 3.0: each of its 117 659 synsets") != std::string::npos);
  CHECK(
      three.find(
          "Split (`scripts/corpus.sh --wordnet`, recorded in `build/corpus-wordnet/split.json`)") !=
      std::string::npos);
  CHECK(three.find("every 10th document of 100 consecutive synsets") != std::string::npos);
  CHECK(three.find("### WordNet's licence") != std::string::npos);
  CHECK(three.find(wordnet_notice) != std::string::npos);
  CHECK(three.find("THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\"") != std::string::npos);
  CHECK(three.find("(\"cat\" occurs 164 times in the training split)") != std::string::npos);
  CHECK(two.find("neither corpus contains the word \"cat\"") != std::string::npos);
  CHECK(three.find("Why this size: at 8 192 tokens, 870 of the 1 000 words") != std::string::npos);
  r.tokenizer_size = 300;
  CHECK(
      attnlens::eval::model_card(evaluation(), r).find("The size, 300, was given with `--vocab`") !=
      std::string::npos);
}

TEST_CASE("a warm-started model's card and eval.json say where it started", "[model]") {
  std::vector<attnlens::train::CurvePoint> curve;
  for (std::int64_t step = 0; step <= 1000; step += 250)
    curve.push_back(point(step, 0.8, 1.0));
  auto r = record(curve);
  r.tokenizer_size = 8192;
  r.seed = 1;
  const std::string scratch = attnlens::eval::model_card(evaluation(), r);
  CHECK(scratch.find("trained from scratch by attnlens' own C++") != std::string::npos);
  CHECK(scratch.find("Where it started") == std::string::npos);
  CHECK(attnlens::eval::eval_json(evaluation(), r).find("init_from") == std::string::npos);

  r.init = {"build/model-4096", "56000", 0x0123456789abcdef, 4096, 3918, 4274, 12};
  const std::string warm = attnlens::eval::model_card(evaluation(), r);
  INFO(warm);
  CHECK(warm.find("trained from the model of `build/model-4096` (the section Training says how) "
                  "by attnlens' own C++") != std::string::npos);
  CHECK(warm.find("Where it started: the weights of `build/model-4096` (trained for 56000 "
                  "steps), a model of the same blocks with a 4096-token vocabulary") !=
        std::string::npos);
  CHECK(warm.find("of this vocabulary's 8192 tokens, 3918 are tokens of the old one") !=
        std::string::npos);
  CHECK(warm.find("and 4274 are new") != std::string::npos);
  CHECK(warm.find("(12 of them end inside a UTF-8 character") != std::string::npos);
  CHECK(warm.find("| seed | 1 (batches) |") != std::string::npos);
  CHECK(scratch.find("| seed | 1 (initialisation and batches) |") != std::string::npos);
  const std::string json = attnlens::eval::eval_json(evaluation(), r);
  CHECK(json.find("\"init_from\": {\"dir\": \"build/model-4096\", \"step\": \"56000\", "
                  "\"vocab_size\": 4096, \"same_tokens\": 3918, \"composed_tokens\": 4274, "
                  "\"cut_tokens\": 12, \"files_hash\": \"0123456789abcdef\"},") !=
        std::string::npos);
}

TEST_CASE("the corpus's sources are read from its split.json, and a corpus without them is refused",
          "[model]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "attnlens_test_corpus_sources";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](const char* json) { std::ofstream(dir / "split.json") << json; };
  write(R"({"rule": "x", "sources": {"austen": {}, "sotu": {}, "wordnet": {"licence": "l"}}})");
  CHECK(attnlens::eval::corpus_sources(dir.string()) ==
        std::vector<std::string>{"austen", "sotu", "wordnet"});
  write(R"({"rule": "x"})");
  testing::require_error([&] { attnlens::eval::corpus_sources(dir.string()); },
                         attnlens::ErrorCode::BAD_FILE, {"split.json: no \"sources\" object"});
  write(R"({"sources": {}})");
  testing::require_error([&] { attnlens::eval::corpus_sources(dir.string()); },
                         attnlens::ErrorCode::BAD_FILE, {"split.json: no \"sources\" object"});
  write(R"({"sources": )");
  testing::require_error([&] { attnlens::eval::corpus_sources(dir.string()); },
                         attnlens::ErrorCode::BAD_FILE, {"split.json"});
  fs::remove_all(dir);
  testing::require_error([&] { attnlens::eval::corpus_sources(dir.string()); },
                         attnlens::ErrorCode::BAD_FILE, {"split.json: cannot open it"});
}
