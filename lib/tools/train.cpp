// attnlens_train: trains the attnlens model (the last step of `npm run train`).
//
//   attnlens_train [--corpus DIR] [--out DIR] [--work DIR] [--sample FILE] [--fresh]
//                  [--steps N] [--seed N] [--threads N] ... (every setting: --help)
//
// 1. Reads DIR/train.txt and DIR/heldout.txt (scripts/corpus.sh), learns a byte-level BPE
//    vocabulary on the training split and encodes both splits into token streams.
// 2. Trains a GPT-2-layout model with AdamW (warm-up then cosine decay, gradient clipping) on
//    batches drawn from a seed, some rows carrying repeats (train_data.hpp), printing a progress
//    line, held-out loss and head scores as it goes, and saving a resumable state in --work.
// 3. Writes --out (models/attnlens): model.safetensors (F16), config.json, vocab.json,
//    merges.txt, eval.json and MODEL.md, evaluated on the F16 weights as shipped.
//
// Same corpus, settings and seed give the same model bit for bit on the same machine and build
// (Eigen's blocking depends on the CPU's caches, and the gradient sums on --threads): the
// state's fingerprint holds every setting and a hash of the data, and an interrupted run
// resumes from its last state to the same bits.
#include <attnlens/attnlens.hpp>

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "eval_metrics.hpp"
#include "eval_report.hpp"
#include "train_data.hpp"
#include "train_progress.hpp"
#include "train_state.hpp"
#include "warm_start.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace attnlens;

constexpr std::size_t kMaxCorpusFile = std::size_t{1} << 30;
constexpr const char* kEndOfText = "<|endoftext|>";

// The defaults are the committed model's run, the second of two stages (scripts/train.sh): it
// starts from build/model-4096, the model attnlens shipped before it (4 096 tokens, trained from
// scratch on build/corpus for 56 000 steps at lr 3e-3 -> 3e-4), and learns the 8 192-token
// vocabulary of the corpus with WordNet.
struct Options {
  std::string corpus = "build/corpus-wordnet";
  std::string out = "models/attnlens";
  std::string work = "build/train-wordnet-warm";
  std::string sample = "tests/fixtures/corpus/heldout_sample.txt";
  // A trained model folder to start from instead of random weights (its vocabulary may differ:
  // warm_start.hpp); "none": GPT-2's initialisation.
  std::string init_from = "build/model-4096";
  bool fresh = false;
  std::int32_t vocab = 8192;
  // GPT-2's blocks, with the LayerNorm before attention: the recipe of the committed model.
  // --attention-norm 0 drops it (Gpt2Config::attention_norm), as the training page does since it
  // grew a shifted circuit with it (web/train/RECIPE.md, session 7); on this corpus that did not
  // grow an induction head either in 4 000 steps (web/train/RECIPE.md, "The text model").
  Gpt2Config model{2, 4, 128, 128, 4096};
  int batch = 16;
  // The committed model: 16 000 steps (32.8 M tokens) from the first stage's weights, whose
  // induction head it keeps. The first stage (from scratch) took 56 000 steps (114.7 M tokens) at
  // lr 3e-3 -> 3e-4, long enough for the induction head, which formed at 65 M tokens while the
  // learning rate was still high (a 14 000-step run of those settings grew none).
  std::int64_t steps = 16000;
  std::uint64_t seed = 1;
  int threads = 2;
  float max_lr = 1e-3f;
  float min_lr = 1e-4f;
  std::int64_t warmup = 300;
  float weight_decay = 0.1f;
  float grad_clip = 1.0f;
  train::RepeatMix mix;
  std::int64_t log_every = 50;
  std::int64_t eval_every = 250;
  std::int64_t save_every = 500;
};

// Flag name -> how to parse its value (flag, value) into the options.
using Setter = std::function<void(const std::string&, const std::string&)>;

std::int64_t parse_int(const std::string& flag, const std::string& value, std::int64_t lo,
                       std::int64_t hi) {
  char* end = nullptr;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || n < lo || n > hi) {
    detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants an integer in [", lo, ", ", hi, "], not ",
                 value);
  }
  return n;
}

float parse_float(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(x >= 0.0) || x > 1e3) {
    detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants a number >= 0, not ", value);
  }
  return static_cast<float>(x);
}

std::map<std::string, Setter> setters(Options& o) {
  auto integer = [](auto& field, std::int64_t lo, std::int64_t hi) {
    return [&field, lo, hi](const std::string& flag, const std::string& v) {
      field = static_cast<std::remove_reference_t<decltype(field)>>(parse_int(flag, v, lo, hi));
    };
  };
  auto real = [](float& field) {
    return
        [&field](const std::string& flag, const std::string& v) { field = parse_float(flag, v); };
  };
  auto text = [](std::string& field) {
    return [&field](const std::string&, const std::string& v) { field = v; };
  };
  return {
      {"--corpus", text(o.corpus)},
      {"--out", text(o.out)},
      {"--work", text(o.work)},
      {"--sample", text(o.sample)},
      {"--init-from", text(o.init_from)},
      {"--vocab", integer(o.vocab, 257, 65536)},
      {"--layers", integer(o.model.layers, 1, 64)},
      {"--heads", integer(o.model.heads, 1, 64)},
      {"--d-model", integer(o.model.d_model, 8, 4096)},
      {"--context", integer(o.model.context, 16, 4096)},
      {"--attention-norm",
       [&o](const std::string& flag, const std::string& v) {
         if (v != "0" && v != "1")
           detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants 0 or 1, not ", v);
         o.model.attention_norm = v == "1";
       }},
      {"--batch", integer(o.batch, 1, 4096)},
      {"--steps", integer(o.steps, 1, 100000000)},
      {"--seed", integer(o.seed, 0, std::int64_t{1} << 62)},
      {"--threads", integer(o.threads, 1, kGpt2MaxThreads)},
      {"--lr", real(o.max_lr)},
      {"--min-lr", real(o.min_lr)},
      {"--warmup", integer(o.warmup, 0, 100000000)},
      {"--weight-decay", real(o.weight_decay)},
      {"--grad-clip", real(o.grad_clip)},
      {"--span-rows", integer(o.mix.span_rows, 0, 4096)},
      {"--random-rows", integer(o.mix.random_rows, 0, 4096)},
      {"--min-repeat", integer(o.mix.min_length, 1, 4096)},
      {"--max-repeat", integer(o.mix.max_length, 1, 4096)},
      {"--log-every", integer(o.log_every, 1, 100000000)},
      {"--eval-every", integer(o.eval_every, 1, 100000000)},
      {"--save-every", integer(o.save_every, 1, 100000000)},
  };
}

void usage(const Options& d) {
  std::printf(
      "usage: attnlens_train [options]\n"
      "  --corpus DIR       train.txt and heldout.txt (default %s)\n"
      "  --out DIR          the model folder written at the end (default %s)\n"
      "  --work DIR         resumable state and the tokenizer (default %s)\n"
      "  --sample FILE      held-out sample recorded in eval.json (default %s)\n"
      "  --init-from DIR    start from the trained model in DIR (a folder as --out writes;\n"
      "                     default %s) instead of random weights, its token embeddings\n"
      "                     mapped to this run's vocabulary by the tokens' bytes; \"none\":\n"
      "                     GPT-2's random initialisation\n"
      "  --fresh            ignore a saved state and start over\n"
      "  --vocab N          BPE vocabulary size (default %d)\n"
      "  --layers N --heads N --d-model N --context N   (default %d, %d, %d, %d)\n"
      "  --attention-norm 0|1  GPT-2's LayerNorm before attention (default %d)\n"
      "  --batch N --steps N --seed N --threads N       (default %d, %lld, %llu, %d)\n"
      "  --lr X --min-lr X --warmup N --weight-decay X --grad-clip X\n"
      "                     (default %g, %g, %lld, %g, %g)\n"
      "  --span-rows N --random-rows N --min-repeat N --max-repeat N\n"
      "                     rows per batch with a repeated span / random segment, and the\n"
      "                     repeat lengths (default %d, %d, %d, %d)\n"
      "  --log-every N --eval-every N --save-every N    (default %lld, %lld, %lld)\n",
      d.corpus.c_str(), d.out.c_str(), d.work.c_str(), d.sample.c_str(), d.init_from.c_str(),
      d.vocab, d.model.layers, d.model.heads, d.model.d_model, d.model.context,
      d.model.attention_norm ? 1 : 0, d.batch, static_cast<long long>(d.steps),
      static_cast<unsigned long long>(d.seed), d.threads, d.max_lr, d.min_lr,
      static_cast<long long>(d.warmup), d.weight_decay, d.grad_clip, d.mix.span_rows,
      d.mix.random_rows, d.mix.min_length, d.mix.max_length, static_cast<long long>(d.log_every),
      static_cast<long long>(d.eval_every), static_cast<long long>(d.save_every));
}

std::string hex(std::uint64_t x) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

std::uint64_t hash_ids(const std::vector<std::int32_t>& ids) {
  return hash_bytes(std::string_view(reinterpret_cast<const char*>(ids.data()),
                                     ids.size() * sizeof(std::int32_t)),
                    0);
}

// Every setting that changes the trained bits, and the data (and the model started from).
std::string fingerprint(const Options& o, const std::vector<std::int32_t>& train_stream,
                        std::uint64_t init_hash) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "attnlens_train v1; vocab %d; model %d/%d/%d/%d; batch %d; steps %lld; seed %llu; "
                "threads %d; lr %.9g..%.9g warmup %lld; wd %.9g; clip %.9g; mix %d/%d %d..%d; "
                "eval every %lld%s",
                o.vocab, o.model.layers, o.model.heads, o.model.d_model, o.model.context, o.batch,
                static_cast<long long>(o.steps), static_cast<unsigned long long>(o.seed), o.threads,
                o.max_lr, o.min_lr, static_cast<long long>(o.warmup), o.weight_decay, o.grad_clip,
                o.mix.span_rows, o.mix.random_rows, o.mix.min_length, o.mix.max_length,
                static_cast<long long>(o.eval_every),
                o.model.attention_norm ? "" : "; no attention norm");
  std::string fp = std::string(buf) + "; train stream " + hex(hash_ids(train_stream));
  if (o.init_from != "none") fp += "; init from " + hex(init_hash);
  return fp;
}

std::string machine_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
}

// The trainer's quick look during training: held-out loss on fixed windows, the best
// previous-token and induction heads.
struct QuickEval {
  std::vector<std::vector<std::int32_t>> loss_windows;
  std::vector<std::vector<std::int32_t>> head_windows;
  eval::InductionProbe probe;
};

void quick_eval(Gpt2Model& model, const QuickEval& q, const eval::NgramModel& ngrams,
                std::int32_t eot, int length, train::CurvePoint& point) {
  point.heldout_loss = eval::evaluate_loss(model, q.loss_windows, ngrams).model;
  point.previous_token = eval::best_head(eval::previous_token_scores(model, q.head_windows)).score;
  const eval::InductionReport ind = eval::induction_scores(model, length, eot, q.probe);
  point.induction = eval::best_head(ind.scores).score;
  point.first_copy_loss = ind.first_copy_loss;
  point.second_copy_loss = ind.second_copy_loss;
}

std::string describe(const train::CurvePoint& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "  eval @ step %lld (%.1fM tokens): held-out loss %.4f, best previous-token head "
                "%.3f, best induction head %.3f, copy losses %.3f (first) %.3f (second)",
                static_cast<long long>(p.step), static_cast<double>(p.tokens) / 1e6, p.heldout_loss,
                p.previous_token, p.induction, p.first_copy_loss, p.second_copy_loss);
  return buf;
}

int run(const Options& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  // The folder of a warm start, read first: a wrong --init-from fails before the corpus is.
  std::optional<train::WarmStart> warm;
  if (o.init_from != "none") warm = train::read_warm_start("--init-from", o.init_from);
  // 1. Data and tokenizer.
  const std::vector<std::string> sources = eval::corpus_sources(o.corpus);
  const std::string train_text = corpus::read_file(o.corpus + "/train.txt", kMaxCorpusFile);
  const std::string heldout_text = corpus::read_file(o.corpus + "/heldout.txt", kMaxCorpusFile);
  const std::string sample_text = corpus::read_file(o.sample, kMaxCorpusFile);
  const std::vector<std::string_view> train_docs = train::split_documents(train_text);
  const std::vector<std::string_view> heldout_docs = train::split_documents(heldout_text);
  std::printf("corpus: %s: %zu documents, %zu bytes (train); %zu documents, %zu bytes (held out)\n",
              o.corpus.c_str(), train_docs.size(), train_text.size(), heldout_docs.size(),
              heldout_text.size());

  const BpeTokenizer tokenizer = train_bpe(train_docs, o.vocab);
  const std::int32_t eot = tokenizer.token_to_id(kEndOfText);
  std::printf("tokenizer: byte-level BPE, %d tokens (%zu merges) learned on the training split\n",
              tokenizer.vocab_size(), tokenizer.merge_count());
  eval::Streams streams;
  streams.train = train::token_stream(tokenizer, train_docs, eot);
  streams.heldout = train::token_stream(tokenizer, heldout_docs, eot);
  streams.sample = train::token_stream(tokenizer, train::split_documents(sample_text), eot);
  std::printf("tokens: %zu train (%.2f bytes/token), %zu held out, %zu in the sample\n",
              streams.train.size(),
              static_cast<double>(train_text.size()) / static_cast<double>(streams.train.size()),
              streams.heldout.size(), streams.sample.size());

  // 2. Model, optimizer, sampler.
  Gpt2Config config = o.model;
  config.vocab_size = tokenizer.vocab_size();
  // The model behind the family interface (its state is saved and resumed through it); the
  // training loop and the evaluations use the GPT-2 class itself.
  train::VocabularyMap vocabulary_map;
  std::unique_ptr<Model> model;
  if (!warm) {
    model = as_model(Gpt2Model::random(config, o.seed));
  } else {
    model = as_model(train::warm_gpt2(config, *warm, tokenizer, vocabulary_map));
    std::printf(
        "init: from %s (vocabulary %d): every weight as stored there; of this run's %d tokens, "
        "%lld have the same bytes as one of its tokens and take its embedding, %lld take the "
        "mean of the embeddings of the pieces its tokenizer splits them into (%lld of them end "
        "inside a UTF-8 character: the longest old tokens)\n",
        o.init_from.c_str(), vocabulary_map.old_size, tokenizer.vocab_size(),
        static_cast<long long>(vocabulary_map.same),
        static_cast<long long>(vocabulary_map.composed),
        static_cast<long long>(vocabulary_map.cut));
  }
  model->set_threads(o.threads);
  AdamWConfig adamw;
  adamw.weight_decay = o.weight_decay;
  adamw.max_grad_norm = o.grad_clip;
  model->set_optimizer(adamw);
  LrSchedule schedule{o.max_lr, o.min_lr, o.warmup, o.steps};
  validate(schedule);
  const int T = config.context;
  const train::BatchSampler sampler(streams.train, o.batch, T, config.vocab_size, eot, o.seed,
                                    o.mix);
  std::printf(
      "model: GPT-2 layout, %d layers, %d heads, d_model %d, context %d, vocab %d: "
      "%lld parameters\n",
      config.layers, config.heads, config.d_model, config.context, config.vocab_size,
      static_cast<long long>(model->num_parameters()));
  std::printf(
      "training: %lld steps of %d x %d tokens = %.1fM tokens, lr %g -> %g (warm-up %lld, "
      "cosine), AdamW wd %g, clip %g, seed %llu, %d threads; repeat rows per batch: %d "
      "span + %d random, lengths %d..%d\n",
      static_cast<long long>(o.steps), o.batch, T, static_cast<double>(o.steps) * o.batch * T / 1e6,
      o.max_lr, o.min_lr, static_cast<long long>(o.warmup), o.weight_decay, o.grad_clip,
      static_cast<unsigned long long>(o.seed), o.threads, o.mix.span_rows, o.mix.random_rows,
      o.mix.min_length, o.mix.max_length);

  const eval::NgramModel ngrams(streams.train, config.vocab_size);
  QuickEval quick;
  quick.loss_windows = eval::windows(streams.heldout, T, 64);
  quick.head_windows = eval::windows(streams.heldout, T, 16);
  quick.probe.trials = 16;

  // Resume.
  const std::string state_dir = o.work + "/state";
  const std::string fp = fingerprint(o, streams.train, warm ? warm->hash : 0);
  train::TrainState state;
  state.fingerprint = fp;
  if (!o.fresh) {
    if (std::optional<train::TrainState> saved = train::load_state(state_dir, fp, model)) {
      state = std::move(*saved);
      std::printf("resuming from %s at step %lld (%s of training so far)\n", state_dir.c_str(),
                  static_cast<long long>(state.step),
                  train::format_duration(state.seconds).c_str());
    }
  }
  if (state.curve.empty()) {
    train::CurvePoint p;
    p.lr = learning_rate(schedule, 0);
    quick_eval(*model->gpt2(), quick, ngrams, eot, T, p);
    p.train_loss = p.heldout_loss;
    state.curve.push_back(p);
    std::printf("%s\n", describe(p).c_str());
  }

  // 3. The loop.
  const std::int64_t tokens_per_step = static_cast<std::int64_t>(o.batch) * T;
  train::Progress progress(state.step, o.steps, tokens_per_step, o.log_every,
                           isatty(fileno(stdout)) != 0);
  const double seconds_before = state.seconds;
  std::vector<std::int32_t> batch;
  double interval_loss = 0.0;
  std::int64_t interval_steps = 0;
  for (std::int64_t step = state.step; step < o.steps; ++step) {
    sampler.fill(step, batch);
    const float lr = learning_rate(schedule, step);
    const float loss = model->gpt2()->train_step(TokenIds{batch.data(), o.batch, T + 1}, lr);
    interval_loss += loss;
    ++interval_steps;
    progress.step(step, loss, lr);
    state.step = step + 1;
    state.seconds = seconds_before + progress.elapsed();
    if (state.step % o.eval_every == 0 || state.step == o.steps) {
      train::CurvePoint p;
      p.step = state.step;
      p.tokens = state.step * tokens_per_step;
      p.train_loss = interval_loss / static_cast<double>(interval_steps);
      p.lr = lr;
      quick_eval(*model->gpt2(), quick, ngrams, eot, T, p);
      p.seconds = seconds_before + progress.elapsed();
      state.seconds = p.seconds;
      state.curve.push_back(p);
      progress.message(describe(p));
      interval_loss = 0.0;
      interval_steps = 0;
    }
    if (state.step % o.save_every == 0 || state.step == o.steps) {
      train::save_state(state_dir, *model, state);
    }
  }
  std::printf("training: %lld steps, %.1fM tokens in %s\n", static_cast<long long>(state.step),
              static_cast<double>(state.step * tokens_per_step) / 1e6,
              train::format_duration(state.seconds).c_str());

  // 4. The shipped model: F16 weights, evaluated as loaded.
  CheckpointSaveOptions save;
  save.dtype = Dtype::F16;
  save.metadata = {{"model", "attnlens"}, {"step", std::to_string(state.step)}};
  const CheckpointFiles files = save_checkpoint(*model->gpt2(), &tokenizer, save);
  CheckpointFileViews views;
  views.model_safetensors = files.model_safetensors.data();
  views.model_safetensors_size = files.model_safetensors.size();
  views.config_json = files.config_json;
  views.vocab_json = files.vocab_json;
  views.merges_txt = files.merges_txt;
  Checkpoint shipped = load_checkpoint(views);

  eval::EvalOptions eval_options;
  eval_options.length = T;
  std::printf("evaluating the F16 model on the whole held-out split ...\n");
  const eval::Evaluation e = eval::evaluate(shipped.model, streams, eot, eval_options);
  eval::print_evaluation(stdout, e);

  eval::TrainRecord r;
  r.config = config;
  r.parameters = model->num_parameters();
  r.tokenizer_size = tokenizer.vocab_size();
  r.merges = static_cast<std::int64_t>(tokenizer.merge_count());
  r.seed = o.seed;
  r.steps = state.step;
  r.batch = o.batch;
  r.length = T;
  r.tokens_seen = state.step * tokens_per_step;
  r.train_tokens = static_cast<std::int64_t>(streams.train.size());
  r.heldout_tokens = static_cast<std::int64_t>(streams.heldout.size());
  r.max_lr = o.max_lr;
  r.min_lr = o.min_lr;
  r.warmup_steps = o.warmup;
  r.weight_decay = o.weight_decay;
  r.grad_clip = o.grad_clip;
  r.span_rows = o.mix.span_rows;
  r.random_rows = o.mix.random_rows;
  r.min_repeat = o.mix.min_length;
  r.max_repeat = o.mix.max_length;
  r.threads = o.threads;
  r.seconds = state.seconds;
  r.machine = machine_description();
  r.build = ATTNLENS_TRAIN_BUILD;
  r.sample_file = o.sample;
  r.corpus_dir = o.corpus;
  r.sources = sources;
  if (warm) r.init = train::warm_start_record(*warm, vocabulary_map);
  r.curve = state.curve;

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  const std::string_view weights(reinterpret_cast<const char*>(files.model_safetensors.data()),
                                 files.model_safetensors.size());
  corpus::write_file(o.out + "/model.safetensors", weights);
  corpus::write_file(o.out + "/config.json", files.config_json);
  corpus::write_file(o.out + "/vocab.json", files.vocab_json);
  corpus::write_file(o.out + "/merges.txt", files.merges_txt);
  corpus::write_file(o.out + "/eval.json", eval::eval_json(e, r));
  corpus::write_file(o.out + "/MODEL.md", eval::model_card(e, r));
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf(
      "wrote %s/: model.safetensors (%zu bytes, F16), config.json, vocab.json, merges.txt, "
      "eval.json, MODEL.md (this invocation took %s)\n",
      o.out.c_str(), files.model_safetensors.size(), train::format_duration(total).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const Options defaults;
  try {
    const std::map<std::string, Setter> table = setters(options);
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        usage(defaults);
        return 0;
      }
      if (flag == "--fresh") {
        options.fresh = true;
        continue;
      }
      const auto it = table.find(flag);
      if (it == table.end()) {
        std::fprintf(stderr, "attnlens_train: unknown option %s (see --help)\n", flag.c_str());
        return 2;
      }
      if (i + 1 >= argc) {
        std::fprintf(stderr, "attnlens_train: %s needs a value\n", flag.c_str());
        return 2;
      }
      it->second(flag, argv[i + 1]);
      ++i;
    }
    options.model.vocab_size = options.vocab;
    return run(options);
  } catch (const attnlens::Error& e) {
    std::fprintf(stderr, "attnlens_train: %s: %s\n", attnlens::error_code_name(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlens_train: %s\n", e.what());
  }
  return 1;
}
