// attnlens_eval: evaluates a trained model (`npm run eval`, on the committed models/attnlens).
//
//   attnlens_eval [--model DIR] [--corpus DIR] [--sample FILE] [--heldout-windows N]
//
//   --model DIR          model.safetensors, config.json, vocab.json, merges.txt and (if there)
//                        eval.json (default models/attnlens)
//   --corpus DIR         train.txt and heldout.txt from scripts/corpus.sh --wordnet (default
//                        build/corpus-wordnet)
//   --sample FILE        the held-out sample the tests use
//                        (default tests/fixtures/corpus/heldout_sample.txt)
//   --heldout-windows N  score N windows spread over the held-out split instead of all of them
//
// Prints the held-out loss in nats per token next to a unigram and a bigram baseline fitted on
// the training split (same tokens), the previous-token and induction score of every head as
// layers × heads tables, the model card's three targets, and how the numbers compare with the ones
// eval.json recorded at training time.
#include <attnlens/attnlens.hpp>

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "eval_metrics.hpp"
#include "eval_report.hpp"
#include "io/json.hpp"
#include "train_data.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

using namespace attnlens;

constexpr std::size_t kMaxFile = std::size_t{1} << 30;

struct Options {
  std::string model = "models/attnlens";
  std::string corpus = "build/corpus-wordnet";
  std::string sample = "tests/fixtures/corpus/heldout_sample.txt";
  std::int64_t heldout_windows = 0;
};

// evaluation.<section>.<key> of eval.json, or NaN when absent.
double recorded(const detail::JsonValue& root, const char* section, const char* key) {
  const detail::JsonValue* e = root.find("evaluation");
  const detail::JsonValue* s = e != nullptr ? e->find(section) : nullptr;
  const detail::JsonValue* v = s != nullptr ? s->find(key) : nullptr;
  return v != nullptr && v->is_number() ? v->as_number() : std::nan("");
}

void compare(const char* what, double then, double now) {
  if (std::isnan(then)) return;
  std::printf("  %-36s %10.4f %10.4f %+10.5f\n", what, then, now, now - then);
}

int run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::string weights = corpus::read_file(o.model + "/model.safetensors", kMaxFile);
  const std::string config = corpus::read_file(o.model + "/config.json", kMaxFile);
  const std::string vocab = corpus::read_file(o.model + "/vocab.json", kMaxFile);
  const std::string merges = corpus::read_file(o.model + "/merges.txt", kMaxFile);
  CheckpointFileViews views;
  views.model_safetensors = reinterpret_cast<const std::uint8_t*>(weights.data());
  views.model_safetensors_size = weights.size();
  views.config_json = config;
  views.vocab_json = vocab;
  views.merges_txt = merges;
  Checkpoint checkpoint = load_checkpoint(views);
  const Gpt2Config& c = checkpoint.model.config();
  const BpeTokenizer& tokenizer = *checkpoint.tokenizer;
  const std::int32_t eot = tokenizer.token_to_id("<|endoftext|>");
  if (eot < 0) {
    detail::fail(ErrorCode::BAD_FILE, o.model, "/vocab.json: no <|endoftext|> token");
  }
  std::printf(
      "model: %s: %d layers, %d heads, d_model %d, context %d, vocab %d, %lld "
      "parameters\n",
      o.model.c_str(), c.layers, c.heads, c.d_model, c.context, c.vocab_size,
      static_cast<long long>(checkpoint.model.num_parameters()));

  const std::string train_text = corpus::read_file(o.corpus + "/train.txt", kMaxFile);
  const std::string heldout_text = corpus::read_file(o.corpus + "/heldout.txt", kMaxFile);
  const std::string sample_text = corpus::read_file(o.sample, kMaxFile);
  eval::Streams streams;
  streams.train = train::token_stream(tokenizer, train::split_documents(train_text), eot);
  streams.heldout = train::token_stream(tokenizer, train::split_documents(heldout_text), eot);
  streams.sample = train::token_stream(tokenizer, train::split_documents(sample_text), eot);
  std::printf("tokens: %zu train, %zu held out, %zu in %s\n", streams.train.size(),
              streams.heldout.size(), streams.sample.size(), o.sample.c_str());

  eval::EvalOptions options;
  options.length = c.context;
  options.heldout_windows = o.heldout_windows;
  const eval::Evaluation e = eval::evaluate(checkpoint.model, streams, eot, options);
  eval::print_evaluation(stdout, e);

  const eval::BestHead prev = eval::best_head(e.previous_token);
  const eval::BestHead ind = eval::best_head(e.induction.scores);
  const double gap = e.heldout.bigram - e.heldout.model;
  std::printf("targets:\n");
  std::printf("  held-out loss >= 0.5 below the bigram: %.3f below   %s\n", gap,
              gap >= 0.5 ? "met" : "MISSED");
  std::printf("  a previous-token head >= 0.6: layer %d head %d, %.3f   %s\n", prev.layer,
              prev.head, prev.score, prev.score >= 0.6 ? "met" : "MISSED");
  std::printf("  an induction head >= 0.4: layer %d head %d, %.3f   %s\n", ind.layer, ind.head,
              ind.score, ind.score >= 0.4 ? "met" : "MISSED");

  const std::string recorded_path = o.model + "/eval.json";
  if (std::filesystem::exists(recorded_path)) {
    const std::string text = corpus::read_file(recorded_path, kMaxFile);
    const detail::JsonValue root = detail::parse_json(text, recorded_path);
    std::printf("compared with %s (recorded at training time):\n", recorded_path.c_str());
    std::printf("  %-36s %10s %10s %10s\n", "", "recorded", "now", "change");
    if (o.heldout_windows == 0)
      compare("held-out loss", recorded(root, "heldout", "loss"), e.heldout.model);
    compare("held-out sample loss", recorded(root, "sample", "loss"), e.sample.model);
    compare("held-out sample bigram", recorded(root, "sample", "bigram"), e.sample.bigram);
    compare("best previous-token score", recorded(root, "best_previous_token", "score"),
            prev.score);
    compare("best induction score", recorded(root, "best_induction", "score"), ind.score);
  }
  std::printf("took %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: attnlens_eval [--model DIR] [--corpus DIR] [--sample FILE] "
          "[--heldout-windows N]\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "attnlens_eval: %s needs a value (see --help)\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--model") {
      o.model = value;
    } else if (flag == "--corpus") {
      o.corpus = value;
    } else if (flag == "--sample") {
      o.sample = value;
    } else if (flag == "--heldout-windows") {
      char* end = nullptr;
      o.heldout_windows = std::strtoll(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || o.heldout_windows < 0) {
        std::fprintf(stderr, "attnlens_eval: --heldout-windows wants an integer >= 0, not %s\n",
                     value.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "attnlens_eval: unknown option %s (see --help)\n", flag.c_str());
      return 2;
    }
  }
  try {
    return run(o);
  } catch (const attnlens::Error& e) {
    std::fprintf(stderr, "attnlens_eval: %s: %s\n", attnlens::error_code_name(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlens_eval: %s\n", e.what());
  }
  return 1;
}
