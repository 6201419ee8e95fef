// The evaluation of a trained model as `npm run eval` prints it and as the end of `npm run train`
// records it: the numbers (Evaluation), the tables on a terminal, eval.json and MODEL.md.
#pragma once

#include "eval_metrics.hpp"
#include "train_state.hpp"
#include "warm_start.hpp"

#include <attnlens/bpe.hpp>
#include <attnlens/gpt2.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace attnlens::eval {

// The token streams an evaluation runs on (all encoded with the model's tokenizer).
struct Streams {
  std::vector<std::int32_t> train;    // the training split (baselines are fitted on it)
  std::vector<std::int32_t> heldout;  // the held-out split
  std::vector<std::int32_t> sample;   // tests/fixtures/corpus/heldout_sample.txt
};

// How much of each stream is scored.
struct EvalOptions {
  int length = 128;                     // window length T (<= the model's context)
  std::int64_t heldout_windows = 0;     // 0 = every window of the held-out split
  std::int64_t train_windows = 512;     // windows of the training split, spread evenly
  std::int64_t previous_windows = 256;  // held-out windows for the previous-token scores
  InductionProbe induction;
};

struct Evaluation {
  int length = 0;
  LossReport heldout;
  LossReport train;
  LossReport sample;
  double discount = 0.0;            // the bigram's Kneser–Ney discount D
  HeadTable previous_token;         // on held-out windows
  HeadTable sample_previous_token;  // on the held-out sample (what the shipped-model test sees)
  InductionReport induction;
  InductionProbe probe;  // the probe the induction scores come from
};

// Everything above, on one thread of `model`.
Evaluation evaluate(Gpt2Model& model, const Streams& streams, std::int32_t end_of_text,
                    const EvalOptions& options);

// Prints the losses next to the baselines and the two layers × heads tables.
void print_evaluation(std::FILE* out, const Evaluation& e);

// What eval.json and MODEL.md say about the training run.
struct TrainRecord {
  Gpt2Config config;
  std::int64_t parameters = 0;
  std::int32_t tokenizer_size = 0;
  std::int64_t merges = 0;
  std::uint64_t seed = 0;
  std::int64_t steps = 0;
  int batch = 0;
  int length = 0;
  std::int64_t tokens_seen = 0;
  std::int64_t train_tokens = 0;    // the training split's stream
  std::int64_t heldout_tokens = 0;  // the held-out split's stream
  double max_lr = 0.0, min_lr = 0.0, weight_decay = 0.0, grad_clip = 0.0;
  std::int64_t warmup_steps = 0;
  int span_rows = 0, random_rows = 0, min_repeat = 0, max_repeat = 0;
  int threads = 1;
  double seconds = 0.0;     // wall time of the training loop
  std::string machine;      // CPU model and cores
  std::string build;        // compiler and flags
  std::string sample_file;  // the held-out sample's path, as given
  // The corpus folder, as given, and its sources (the names under "sources" in its split.json:
  // "austen", "sotu", and "wordnet" with `scripts/corpus.sh --wordnet`); the card's data section
  // lists those. Empty: the two of build/corpus.
  std::string corpus_dir = "build/corpus";
  std::vector<std::string> sources;
  // A warm start (attnlens_train --init-from); an empty init.dir: the run started from random
  // weights.
  train::WarmStartRecord init;
  std::vector<train::CurvePoint> curve;
};

// eval.json: {"model", "training", "evaluation", "curve"} as the tests and the card read it.
std::string eval_json(const Evaluation& e, const TrainRecord& r);

// MODEL.md, the model card.
std::string model_card(const Evaluation& e, const TrainRecord& r);

// The names of a corpus's sources: the members of "sources" in DIR/split.json, which
// scripts/corpus.sh writes beside train.txt ("austen", "sotu", "wordnet"). The training tools read
// them before training, so that a corpus without its record fails at once, not hours later.
std::vector<std::string> corpus_sources(const std::string& dir);

// WordNet's licence as a MODEL.md section: its notice and disclaimer must appear on all copies
// and modifications, so every card of a model trained on WordNet text quotes it.
std::string wordnet_licence_markdown();

}  // namespace attnlens::eval
