// attnlens_train_encoder: trains the attnlens encoder, a BERT-layout masked language model on
// the same corpus and tokenizer as the causal model (`npm run train -- --encoder`).
//
//   attnlens_train_encoder [--corpus DIR] [--out DIR] [--work DIR] [--fresh] [--steps N] ...
//   attnlens_train_encoder --evaluate [--out DIR]     (the committed model's numbers again)
//
// 1. Reads DIR/train.txt and DIR/heldout.txt (scripts/corpus.sh), learns the causal model's
//    byte-level BPE (the same corpus, size and algorithm give the same vocabulary) and appends
//    [CLS], [SEP], [MASK] and [PAD].
// 2. Trains BertForMaskedLM's architecture with AdamW on windows [CLS] ... [SEP] of the token
//    stream, 15 % of the tokens predicted (encoder_data.hpp), printing progress and an ETA, the
//    held-out masked-token loss and the best previous- and next-token heads as it goes, and
//    saving a resumable state in --work (weights and AdamW's moments in F32, the step).
// 3. Writes --out (models/attnlens-encoder): model.safetensors (F16), config.json (Hugging
//    Face's BertForMaskedLM reads it), vocab.json and merges.txt, eval.json and MODEL.md,
//    evaluated on the F16 weights as shipped.
#include <attnlens/attnlens.hpp>

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "encoder_data.hpp"
#include "eval_report.hpp"
#include "train_data.hpp"
#include "train_progress.hpp"
#include "train_state.hpp"
#include "warm_start.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace attnlens;

constexpr std::size_t kMaxCorpusFile = std::size_t{1} << 30;
constexpr const char* kEndOfText = "<|endoftext|>";
const std::vector<std::string> kSpecials = {"[CLS]", "[SEP]", "[MASK]", "[PAD]"};

struct Options {
  // The causal model's corpus and vocabulary size (scripts/corpus.sh --wordnet): the page links
  // the two models' tokens by position, so both read text with one tokenizer.
  std::string corpus = "build/corpus-wordnet";
  std::string out = "models/attnlens-encoder";
  std::string work = "build/train-encoder-wordnet-warm";
  // The encoder to start from (warm_start.hpp): build/encoder-4096, the encoder attnlens shipped
  // before WordNet joined the corpus (scripts/train.sh restores it); "none": from scratch, with
  // the initialisation below.
  std::string init_from = "build/encoder-4096";
  bool fresh = false;
  bool evaluate = false;
  std::int32_t vocab = 8192;
  BertConfig model = [] {
    BertConfig c;
    c.layers = 2;
    c.heads = 4;
    c.d_model = 128;
    c.intermediate = 512;
    c.context = 128;
    c.type_vocab_size = 2;
    return c;
  }();
  // The committed encoder's run: 3 000 steps from build/encoder-4096 on two threads. (That
  // encoder trained from scratch for 5 000 steps; from scratch on the corpus with WordNet, 5 000
  // steps left its best previous- and next-token heads far weaker: web/train/RECIPE.md.)
  int batch = 64;
  std::int64_t steps = 3000;
  std::uint64_t seed = 1;
  int threads = 2;
  float max_lr = 1e-3f;
  float min_lr = 1e-4f;
  std::int64_t warmup = 300;
  float weight_decay = 0.01f;
  float grad_clip = 1.0f;
  double mask_rate = 0.15;
  // How the position embeddings start: "sinusoidal" (the Transformer's sines and cosines at the
  // word embeddings' scale) or "normal" (BERT's N(0, 0.02²)). See sinusoidal_positions().
  std::string position_init = "sinusoidal";
  // How the query and key weights start: "lecun" (N(0, 1/d_model)) or "bert" (N(0, 0.02²), as
  // every other matrix). See lecun_query_key().
  std::string qk_init = "lecun";
  std::int64_t log_every = 25;
  std::int64_t eval_every = 250;
  std::int64_t save_every = 250;
};

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

double parse_real(const std::string& flag, const std::string& value, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(x >= lo && x <= hi)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants a number in [", lo, ", ", hi, "], not ",
                 value);
  }
  return x;
}

void usage(const Options& d) {
  std::printf(
      "usage: attnlens_train_encoder [options]\n"
      "  --corpus DIR --out DIR --work DIR   (default %s, %s, %s)\n"
      "  --init-from DIR    start from the trained encoder in DIR (default %s), its word\n"
      "                     embeddings and MLM bias mapped to this run's vocabulary by the\n"
      "                     tokens' bytes; \"none\": from scratch (--position-init, --qk-init)\n"
      "  --fresh            ignore a saved state and start over\n"
      "  --evaluate         evaluate the model in --out: print its held-out loss and heads\n"
      "  --vocab N          BPE vocabulary before the 4 special tokens (default %d)\n"
      "  --layers N --heads N --d-model N --intermediate N --context N  (default %d, %d, %d, %d, "
      "%d)\n"
      "  --batch N --steps N --seed N --threads N   (default %d, %lld, %llu, %d)\n"
      "  --lr X --min-lr X --warmup N --weight-decay X --grad-clip X --mask-rate X\n"
      "                     (default %g, %g, %lld, %g, %g, %g)\n"
      "  --position-init sinusoidal|normal   how the position embeddings start (default %s)\n"
      "  --qk-init lecun|bert   query and key weights from N(0, 1/d_model) or N(0, 0.02²) "
      "(default %s)\n"
      "  --log-every N --eval-every N --save-every N  (default %lld, %lld, %lld)\n",
      d.corpus.c_str(), d.out.c_str(), d.work.c_str(), d.init_from.c_str(), d.vocab, d.model.layers,
      d.model.heads, d.model.d_model, d.model.intermediate, d.model.context, d.batch,
      static_cast<long long>(d.steps), static_cast<unsigned long long>(d.seed), d.threads, d.max_lr,
      d.min_lr, static_cast<long long>(d.warmup), d.weight_decay, d.grad_clip, d.mask_rate,
      d.position_init.c_str(), d.qk_init.c_str(), static_cast<long long>(d.log_every),
      static_cast<long long>(d.eval_every), static_cast<long long>(d.save_every));
}

// BERT's position embeddings set to the Transformer's sinusoids (PE[p, 2k] = sin(p / 10000^(2k/d)),
// PE[p, 2k + 1] = cos(...)) times 0.02·√2, so that each row has the norm of a word embedding drawn
// from N(0, 0.02²). A shift by one position is then the same rotation for every p, which a
// head's W_Q·W_Kᵀ can hold in its few dimensions; with random rows it needs one pair per
// position, and a full-attention model trained from them stayed on a plateau with every head
// uniform (held-out loss 5.92 against unigram 6.68 after 2 000 steps; MODEL.md, "Training").
BertModel sinusoidal_positions(BertModel model) {
  TensorList tensors = model.to_tensors();
  bool found = false;
  for (auto& [name, t] : tensors) {
    if (name.find("position_embeddings.weight") == std::string::npos) continue;
    const std::int64_t positions = t.shape[0], d = t.shape[1];
    const double scale = 0.02 * std::sqrt(2.0);
    for (std::int64_t p = 0; p < positions; ++p) {
      for (std::int64_t i = 0; i < d; ++i) {
        const double angle =
            static_cast<double>(p) /
            std::pow(10000.0, static_cast<double>(i - i % 2) / static_cast<double>(d));
        t.data[static_cast<std::size_t>(p * d + i)] =
            static_cast<float>(scale * (i % 2 == 0 ? std::sin(angle) : std::cos(angle)));
      }
    }
    found = true;
  }
  if (!found) detail::fail(ErrorCode::BAD_ARGUMENT, "the model has no position embeddings to set");
  return BertModel::from_tensors(model.config(), tensors);
}

// The query and key weights scaled from BERT's N(0, 0.02²) to N(0, 1/d_model). With 0.02 at
// d_model 128, a score q·k/√d_head has a standard deviation near 0.05, so every head starts
// uniform, and the gradient that would make it attend anywhere is proportional to the other
// matrix, as small: two runs with it (normal and sinusoidal positions) had every head at
// exactly 1/128 on its previous and next token after 6 M tokens (MODEL.md, "Why this recipe").
BertModel lecun_query_key(BertModel model) {
  TensorList tensors = model.to_tensors();
  const double scale = 1.0 / std::sqrt(static_cast<double>(model.config().d_model)) / 0.02;
  int found = 0;
  for (auto& [name, t] : tensors) {
    const bool query_key = name.find(".attention.self.query.weight") != std::string::npos ||
                           name.find(".attention.self.key.weight") != std::string::npos;
    if (!query_key) continue;
    for (float& x : t.data)
      x = static_cast<float>(x * scale);
    ++found;
  }
  if (found != 2 * model.config().layers)
    detail::fail(ErrorCode::BAD_ARGUMENT, "found ", found, " query and key matrices, not ",
                 2 * model.config().layers);
  return BertModel::from_tensors(model.config(), tensors);
}

std::string fingerprint(const Options& o, const std::vector<std::int32_t>& stream,
                        std::uint64_t init_hash) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "attnlens_train_encoder v1; vocab %d; model %d/%d/%d/%d/%d; batch %d; steps %lld; "
                "seed %llu; threads %d; lr %.9g..%.9g warmup %lld; wd %.9g; clip %.9g; mask %.9g; "
                "positions %s; qk %s; eval every %lld; stream ",
                o.vocab, o.model.layers, o.model.heads, o.model.d_model, o.model.intermediate,
                o.model.context, o.batch, static_cast<long long>(o.steps),
                static_cast<unsigned long long>(o.seed), o.threads, o.max_lr, o.min_lr,
                static_cast<long long>(o.warmup), o.weight_decay, o.grad_clip, o.mask_rate,
                o.position_init.c_str(), o.qk_init.c_str(), static_cast<long long>(o.eval_every));
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(
                    hash_bytes(std::string_view(reinterpret_cast<const char*>(stream.data()),
                                                stream.size() * sizeof(std::int32_t)),
                               0)));
  std::string fp = std::string(buf) + hash;
  if (o.init_from != "none") {
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(init_hash));
    fp += std::string("; init from ") + hash;
  }
  return fp;
}

// The data every step and evaluation needs.
struct Data {
  BpeTokenizer tokenizer;
  train::EncoderSpecials specials;
  std::vector<std::int32_t> train, heldout;
  std::vector<bool> punctuation;     // per id: the token is punctuation (and spaces) only
  std::vector<std::string> sources;  // the corpus's sources (its split.json), for the card
};

Data prepare(const Options& o) {
  // Read first: a corpus without its record fails before the tokenizer is learned.
  std::vector<std::string> sources = eval::corpus_sources(o.corpus);
  const std::string train_text = corpus::read_file(o.corpus + "/train.txt", kMaxCorpusFile);
  const std::string heldout_text = corpus::read_file(o.corpus + "/heldout.txt", kMaxCorpusFile);
  const std::vector<std::string_view> train_docs = train::split_documents(train_text);
  const std::vector<std::string_view> heldout_docs = train::split_documents(heldout_text);
  Data d{train_bpe(train_docs, o.vocab), {}, {}, {}, {}, std::move(sources)};
  const std::int32_t eot = d.tokenizer.token_to_id(kEndOfText);
  d.specials.first_special = d.tokenizer.vocab_size();
  d.tokenizer.add_special_tokens(kSpecials);
  d.specials.cls = d.tokenizer.token_to_id("[CLS]");
  d.specials.sep = d.tokenizer.token_to_id("[SEP]");
  d.specials.mask = d.tokenizer.token_to_id("[MASK]");
  d.specials.pad = d.tokenizer.token_to_id("[PAD]");
  d.train = train::token_stream(d.tokenizer, train_docs, eot);
  d.heldout = train::token_stream(d.tokenizer, heldout_docs, eot);
  for (std::int32_t id = 0; id < d.tokenizer.vocab_size(); ++id) {
    const std::string& bytes = d.tokenizer.token_bytes(id);
    bool punct = id < d.specials.first_special && id != eot && !bytes.empty();
    bool any = false;
    for (const char ch : bytes) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x80 || std::isalnum(c)) punct = false;
      if (c != ' ') any = true;
    }
    d.punctuation.push_back(punct && any);
  }
  std::printf(
      "tokenizer: byte-level BPE, %d tokens learned on the training split + %zu special "
      "tokens (ids %d..%d)\n",
      d.specials.first_special, kSpecials.size(), d.specials.first_special,
      d.tokenizer.vocab_size() - 1);
  std::printf("tokens: %zu train, %zu held out\n", d.train.size(), d.heldout.size());
  return d;
}

struct Evaluation {
  train::MlmLoss loss;
  train::HeadPatterns heads;
  int loss_windows = 0;
  int head_windows = 0;
};

Evaluation evaluate(BertModel& model, const Data& d, int T, int loss_windows, int head_windows,
                    double mask_rate) {
  Evaluation e;
  e.loss_windows = loss_windows;
  e.head_windows = head_windows;
  const train::MlmSampler held(d.heldout, 1, T, d.specials, 0, mask_rate);
  e.loss = train::evaluate_mlm(model, held.fixed(loss_windows, 777), T, d.train,
                               model.config().vocab_size);
  // Unmasked windows for the head patterns: the fixed set with its labels undone.
  train::MlmBatch plain = held.fixed(head_windows, 778);
  for (std::size_t i = 0; i < plain.ids.size(); ++i) {
    if (plain.labels[i] >= 0) plain.ids[i] = plain.labels[i];
  }
  e.heads = train::head_patterns(model, plain.ids, head_windows, T, d.punctuation);
  return e;
}

struct Best {
  int layer = 0, head = 0;
  double score = -1.0;
};
Best best_of(const std::vector<std::vector<double>>& table) {
  Best b;
  for (std::size_t l = 0; l < table.size(); ++l) {
    for (std::size_t h = 0; h < table[l].size(); ++h) {
      if (table[l][h] > b.score) b = Best{static_cast<int>(l), static_cast<int>(h), table[l][h]};
    }
  }
  return b;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

std::string table_json(const std::vector<std::vector<double>>& t) {
  std::string out = "[";
  for (std::size_t l = 0; l < t.size(); ++l) {
    out += l ? ", [" : "[";
    for (std::size_t h = 0; h < t[l].size(); ++h)
      out += format("%s%.4f", h ? ", " : "", t[l][h]);
    out += "]";
  }
  return out + "]";
}

std::string eval_json(const Evaluation& e, const Options& o, const train::TrainState& s,
                      std::int64_t parameters, const train::WarmStartRecord& start) {
  const train::HeadPatterns& p = e.heads;
  std::string out = "{\n";
  out += format("  \"model\": \"attnlens-encoder\",\n  \"parameters\": %lld,\n  \"steps\": %lld,\n",
                static_cast<long long>(parameters), static_cast<long long>(s.step));
  out += format("  \"tokens_seen\": %lld,\n  \"seconds\": %.1f,\n",
                static_cast<long long>(s.step * o.batch * o.model.context), s.seconds);
  out += train::warm_start_json(start, "  ");
  out += format(
      "  \"heldout\": {\"windows\": %d, \"masked_tokens\": %lld, \"model\": %.4f, \"unigram\": "
      "%.4f},\n",
      e.loss_windows, static_cast<long long>(e.loss.tokens), e.loss.model, e.loss.unigram);
  out += format("  \"head_windows\": %d,\n", e.head_windows);
  out += "  \"heads\": {\"previous\": " + table_json(p.previous) +
         ", \"next\": " + table_json(p.next) + ", \"self\": " + table_json(p.self) +
         ", \"cls\": " + table_json(p.cls) + ", \"sep\": " + table_json(p.sep) +
         ", \"punctuation\": " + table_json(p.punctuation) +
         ", \"entropy\": " + table_json(p.entropy) + "},\n";
  out += "  \"curve\": " + train::curve_json(s.curve, "  ") + "\n}\n";
  return out;
}

std::string model_card(const Evaluation& e, const Options& o, const train::TrainState& s,
                       std::int64_t parameters, const Data& d,
                       const train::WarmStartRecord& start) {
  const train::HeadPatterns& p = e.heads;
  const Best prev = best_of(p.previous), next = best_of(p.next);
  const double gap = e.loss.unigram - e.loss.model;
  std::string md =
      "# attnlens-encoder: a 2-layer BERT-layout masked language model trained by attnlens\n\n";
  md += format(
      "A small encoder trained %s by attnlens' own C++ (forward, hand-written backward "
      "pass, AdamW) with `npm run train -- --encoder`, on the same corpus and tokenizer as the "
      "causal model (`models/attnlens/`), so that the page can show what trained *full* "
      "attention does next to trained causal attention. Its held-out masked-token loss is "
      "%.3f nats against %.3f for a unigram model (%.3f below; target 2.5). Its strongest "
      "previous-token head, layer %d head %d, scores %.3f and its strongest next-token head, layer "
      "%d head %d, %.3f (targets 0.8).\n\n",
      start.dir.empty()
          ? "from scratch"
          : format("from the encoder of `%s` (the table below says how)", start.dir.c_str())
                .c_str(),
      e.loss.model, e.loss.unigram, gap, prev.layer, prev.head, prev.score, next.layer, next.head,
      next.score);
  md += "## Files\n\n| file | what |\n| --- | --- |\n";
  md += format(
      "| `model.safetensors` | the weights, F16, %lld parameters, Hugging Face's "
      "BertForMaskedLM names (`bert.embeddings.word_embeddings.weight`, ..., "
      "`cls.predictions.bias`; the decoder is tied to the word embeddings) |\n",
      static_cast<long long>(parameters));
  md +=
      "| `config.json` | Hugging Face `BertConfig` (`model_type` bert, `BertForMaskedLM`) |\n"
      "| `vocab.json`, `merges.txt` | the causal model's byte-level BPE with `[CLS]`, `[SEP]`, "
      "`[MASK]` and `[PAD]` appended (ids " +
      std::to_string(d.specials.first_special) + " to " +
      std::to_string(d.tokenizer.vocab_size() - 1) +
      "); attnlens reads them as `[CLS] text [SEP]`, a written `[MASK]` as the mask token |\n"
      "| `eval.json` | the numbers below and the training curve |\n\n";
  const bool wordnet = std::find(d.sources.begin(), d.sources.end(), "wordnet") != d.sources.end();
  if (wordnet) {
    md +=
        "## Data and licences\n\nThe causal model's corpus (its card, `models/attnlens/MODEL.md`, "
        "lists the sources and the held-out rule): Jane Austen's novels, State of the Union "
        "addresses and WordNet 3.0's definitions and examples.\n\n";
    md += eval::wordnet_licence_markdown();
  }
  md += "## Architecture and training\n\n| setting | value |\n| --- | --- |\n";
  md +=
      format("| layers, heads, d_model, intermediate, context | %d, %d, %d, %d, %d |\n",
             o.model.layers, o.model.heads, o.model.d_model, o.model.intermediate, o.model.context);
  if (start.dir.empty()) {
    md += format(
        "| blocks | post-LayerNorm (BERT), exact GELU, LayerNorm eps 1e-12, learned positions "
        "(started %s) |\n",
        o.position_init == "sinusoidal" ? "as the Transformer's sinusoids times 0.02·√2"
                                        : "from N(0, 0.02²)");
    md +=
        format("| initial weights | N(0, 0.02²) as BERT's%s |\n",
               o.qk_init == "lecun" ? ", except the query and key matrices: N(0, 1/d_model)" : "");
  } else {
    md +=
        "| blocks | post-LayerNorm (BERT), exact GELU, LayerNorm eps 1e-12, learned positions |\n";
    md += format(
        "| initial weights | those of `%s`%s, an encoder of the same blocks with a %d-token "
        "vocabulary (`--init-from`; `scripts/train.sh` says how that folder is made, and its own "
        "card is in it): every weight copied as stored there (F16); of this vocabulary's %d "
        "tokens, %lld are tokens of the old one (the same bytes; the four special tokens by "
        "their text) and take their embedding and MLM bias, %lld are new and take the mean of "
        "those of the old tokens the old tokenizer splits them into |\n",
        start.dir.c_str(),
        start.step.empty() ? "" : format(" (trained for %s steps)", start.step.c_str()).c_str(),
        start.old_size, d.tokenizer.vocab_size(), static_cast<long long>(start.same),
        static_cast<long long>(start.composed));
  }
  md += format(
      "| objective | masked LM: %.0f%% of each window's tokens predicted; of those 80%% "
      "shown as [MASK], 10%% as a random token, 10%% unchanged |\n",
      100 * o.mask_rate);
  md += format(
      "| windows | [CLS] + %d stream tokens + [SEP], at random places of the training "
      "split |\n",
      o.model.context - 2);
  md += format("| steps, batch | %lld steps of %d windows (%.1f M tokens) |\n",
               static_cast<long long>(s.step), o.batch,
               static_cast<double>(s.step) * o.batch * o.model.context / 1e6);
  md += format(
      "| optimizer | AdamW 0.9 / 0.95, weight decay %g on matrices and embeddings, "
      "clipping at %g; warm-up %lld steps to %g, cosine to %g |\n",
      o.weight_decay, o.grad_clip, static_cast<long long>(o.warmup), o.max_lr, o.min_lr);
  md += format("| seed, threads | %llu, %d |\n| wall time | %s of training |\n\n",
               static_cast<unsigned long long>(o.seed), o.threads,
               train::format_duration(s.seconds).c_str());
  // When the best previous- or next-token head first passed 0.05 and 0.5 (the curve's points).
  const auto first_past = [&](double bar) -> const train::CurvePoint* {
    for (const train::CurvePoint& p : s.curve)
      if (std::max(p.previous_token, p.next_token) >= bar) return &p;
    return nullptr;
  };
  const auto when = [&](double bar) {
    const train::CurvePoint* p = first_past(bar);
    return p ? format("%.2f at step %lld (%.1f M tokens)", bar, static_cast<long long>(p->step),
                      static_cast<double>(p->tokens) / 1e6)
             : format("%.2f at no step of this run", bar);
  };
  if (!start.dir.empty()) {
    md += format(
        "Why a warm start: trained from scratch on this corpus and vocabulary with the first "
        "stage's recipe (5 000 steps, the initialisation its card describes), the encoder's best "
        "previous- and next-token heads stayed far weaker than the first stage's "
        "(`web/train/RECIPE.md` has the numbers). Started from `%s`, it keeps the heads it "
        "grew while it learns the new vocabulary. Its best head's scores along the way are in "
        "the curve below.\n\n",
        start.dir.c_str());
  } else {
    md += "Why this recipe: from BERT's initialisation (every matrix and embedding N(0, 0.02²)) ";
    md +=
        "this recipe stayed on a plateau: after 2 000 steps (16 M tokens) the held-out loss was "
        "5.92 against the unigram's 6.68 and every head spread its weight evenly (previous- and "
        "next-token scores 0.008, that is 1/128). At d_model 128, weights of 0.02 give scores "
        "q·k/√d_head with a standard deviation near 0.05, so every head starts uniform, and the "
        "gradient that would make one attend somewhere is proportional to the other matrix, as "
        "small. So the query and key matrices start from N(0, 1/d_model), and the positions as "
        "sinusoids (a shift by one position is then the same rotation at every position); with "
        "the sinusoids alone the heads were still even after 750 steps. With both, the best head "
        "passed " +
        when(0.05) + " and " + when(0.5) +
        ": a phase change, as the training page's induction head has. "
        "`--position-init normal --qk-init bert` trains from BERT's initialisation.\n\n";
  }
  md += format(
      "## Results\n\nMasked-token loss on %d held-out windows (%lld predicted tokens, the "
      "same masks every time), nats per token: model **%.3f**, unigram %.3f.\n\n",
      e.loss_windows, static_cast<long long>(e.loss.tokens), e.loss.model, e.loss.unigram);
  md += format(
      "### Heads\n\nMean attention over %d unmasked held-out windows, in the categories "
      "of Clark et al. 2019 (\"What Does BERT Look At?\"): to the previous and next "
      "token, itself, [CLS], [SEP] and punctuation; entropy in nats (broad above "
      "3.8). The label is the category over its threshold (±1 and self 0.5, the "
      "others 0.6), else broad or mixed.\n\n",
      e.head_windows);
  md +=
      "| layer | head | previous | next | self | [CLS] | [SEP] | punctuation | entropy | label |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (int l = 0; l < o.model.layers; ++l) {
    for (int h = 0; h < o.model.heads; ++h) {
      const auto u = static_cast<std::size_t>(l), v = static_cast<std::size_t>(h);
      md += format("| %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %s |\n", l, h,
                   p.previous[u][v], p.next[u][v], p.self[u][v], p.cls[u][v], p.sep[u][v],
                   p.punctuation[u][v], p.entropy[u][v], train::head_label(p, l, h).c_str());
    }
  }
  md +=
      "\n## Training curve\n\nHeld-out masked-token loss on 64 fixed windows and the best "
      "heads on 16, as the trainer measured them (every point is in `eval.json`).\n\n"
      "| step | tokens | train loss | held-out loss | best previous | best next |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: |\n";
  const std::size_t n = s.curve.size(), stride = std::max<std::size_t>(1, n / 20);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % stride != 0 && i + 1 != n) continue;
    const train::CurvePoint& c = s.curve[i];
    md += format("| %lld | %.1f M | %.3f | %.3f | %.3f | %.3f |\n", static_cast<long long>(c.step),
                 static_cast<double>(c.tokens) / 1e6, c.train_loss, c.heldout_loss,
                 c.previous_token, c.next_token);
  }
  md +=
      "\n## Reproduce and evaluate\n\n`npm run train -- --encoder` prepares the corpus, builds the "
      "tools natively and runs `attnlens_train_encoder` with these settings (its defaults); an "
      "interrupted run resumes from `build/train-encoder-wordnet-warm/state`. `npm run eval` "
      "evaluates "
      "the "
      "committed files again.\n\n## Known limits\n\n- Tiny: 2 layers of width 128, a 128-token "
      "context. It fills masks with plausible words of its corpora, not with knowledge.\n" +
      std::string(
          wordnet ? "- Its English is Jane Austen's, that of presidential addresses and WordNet's "
                    "definitions and examples, with their biases.\n"
                  : "- Its English is Jane Austen's and that of presidential addresses, with "
                    "their biases.\n") +
      "- Token types are in the layout (BERT's) but the training used type 0 only.\n";
  return md;
}

int run(const Options& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  // The folder of a warm start, read first: a wrong --init-from fails before the corpus is.
  std::optional<train::WarmStart> warm;
  if (!o.evaluate && o.init_from != "none") {
    warm = train::read_warm_start("--init-from", o.init_from);
  }
  const Data d = prepare(o);
  BertConfig config = o.model;
  config.vocab_size = d.tokenizer.vocab_size();
  const int T = config.context;

  if (o.evaluate) {
    ModelFiles files;
    const std::string weights = corpus::read_file(o.out + "/model.safetensors", kMaxCorpusFile);
    const std::string cfg = corpus::read_file(o.out + "/config.json", kMaxCorpusFile);
    files.weights = reinterpret_cast<const std::uint8_t*>(weights.data());
    files.weights_size = weights.size();
    files.texts.emplace("config.json", cfg);
    LoadedModel loaded = load_model(files);
    const Evaluation e = evaluate(*loaded.model->bert(), d, T, 256, 64, o.mask_rate);
    std::printf("held-out masked-token loss %.4f (unigram %.4f) on %lld tokens\n", e.loss.model,
                e.loss.unigram, static_cast<long long>(e.loss.tokens));
    for (int l = 0; l < config.layers; ++l) {
      for (int h = 0; h < config.heads; ++h)
        std::printf("layer %d head %d: %s\n", l, h, train::head_label(e.heads, l, h).c_str());
    }
    return 0;
  }

  train::VocabularyMap vocabulary_map;
  std::unique_ptr<Model> model;
  if (!warm) {
    BertModel initial = BertModel::random(config, o.seed);
    if (o.position_init == "sinusoidal") initial = sinusoidal_positions(std::move(initial));
    if (o.qk_init == "lecun") initial = lecun_query_key(std::move(initial));
    model = as_model(std::move(initial));
  } else {
    model = as_model(train::warm_bert(config, *warm, d.tokenizer, vocabulary_map));
    std::printf(
        "init: from %s (vocabulary %d): every weight as stored there; of this run's %d tokens, "
        "%lld have the same bytes as one of its tokens, %lld take the mean of the pieces its "
        "tokenizer splits them into\n",
        o.init_from.c_str(), vocabulary_map.old_size, d.tokenizer.vocab_size(),
        static_cast<long long>(vocabulary_map.same),
        static_cast<long long>(vocabulary_map.composed));
  }
  model->set_threads(o.threads);
  AdamWConfig adamw;
  adamw.weight_decay = o.weight_decay;
  adamw.max_grad_norm = o.grad_clip;
  model->set_optimizer(adamw);
  LrSchedule schedule{o.max_lr, o.min_lr, o.warmup, o.steps};
  validate(schedule);
  const train::MlmSampler sampler(d.train, o.batch, T, d.specials, o.seed, o.mask_rate);
  std::printf(
      "model: BERT layout, %d layers, %d heads, d_model %d, intermediate %d, context %d, "
      "vocab %d: %lld parameters\n",
      config.layers, config.heads, config.d_model, config.intermediate, config.context,
      config.vocab_size, static_cast<long long>(model->num_parameters()));
  std::printf(
      "training: %lld steps of %d x %d tokens = %.1fM tokens, lr %g -> %g (warm-up %lld, "
      "cosine), AdamW wd %g, clip %g, mask rate %g, seed %llu, %d threads\n",
      static_cast<long long>(o.steps), o.batch, T, static_cast<double>(o.steps) * o.batch * T / 1e6,
      o.max_lr, o.min_lr, static_cast<long long>(o.warmup), o.weight_decay, o.grad_clip,
      o.mask_rate, static_cast<unsigned long long>(o.seed), o.threads);

  const std::string state_dir = o.work + "/state";
  train::TrainState state;
  state.fingerprint = fingerprint(o, d.train, warm ? warm->hash : 0);
  if (!o.fresh) {
    if (std::optional<train::TrainState> saved =
            train::load_state(state_dir, state.fingerprint, model)) {
      state = std::move(*saved);
      std::printf("resuming from %s at step %lld (%s of training so far)\n", state_dir.c_str(),
                  static_cast<long long>(state.step),
                  train::format_duration(state.seconds).c_str());
    }
  }
  const auto quick = [&](train::CurvePoint& p) {
    const Evaluation e = evaluate(*model->bert(), d, T, 64, 16, o.mask_rate);
    p.heldout_loss = e.loss.model;
    p.previous_token = best_of(e.heads.previous).score;
    p.next_token = best_of(e.heads.next).score;
    return e.loss.unigram;
  };
  const auto describe = [](const train::CurvePoint& p, double unigram) {
    return format(
        "  eval @ step %lld (%.1fM tokens): held-out masked-token loss %.4f (unigram "
        "%.3f), best previous-token head %.3f, best next-token head %.3f",
        static_cast<long long>(p.step), static_cast<double>(p.tokens) / 1e6, p.heldout_loss,
        unigram, p.previous_token, p.next_token);
  };
  if (state.curve.empty()) {
    train::CurvePoint p;
    p.lr = learning_rate(schedule, 0);
    const double unigram = quick(p);
    p.train_loss = p.heldout_loss;
    state.curve.push_back(p);
    std::printf("%s\n", describe(p, unigram).c_str());
  }

  const std::int64_t tokens_per_step = static_cast<std::int64_t>(o.batch) * T;
  train::Progress progress(state.step, o.steps, tokens_per_step, o.log_every,
                           isatty(fileno(stdout)) != 0);
  const double seconds_before = state.seconds;
  train::MlmBatch batch;
  double interval_loss = 0.0;
  std::int64_t interval_steps = 0;
  for (std::int64_t step = state.step; step < o.steps; ++step) {
    sampler.fill(step, batch);
    const float lr = learning_rate(schedule, step);
    const float loss = model->train_step(ModelInputs{TokenIds{batch.ids.data(), o.batch, T}},
                                         TokenIds{batch.labels.data(), o.batch, T}, lr);
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
      const double unigram = quick(p);
      p.seconds = seconds_before + progress.elapsed();
      state.seconds = p.seconds;
      state.curve.push_back(p);
      progress.message(describe(p, unigram));
      interval_loss = 0.0;
      interval_steps = 0;
    }
    if (state.step % o.save_every == 0 || state.step == o.steps)
      train::save_state(state_dir, *model, state);
  }

  // The shipped model: F16, evaluated as loaded.
  CheckpointSaveOptions save;
  save.dtype = Dtype::F16;
  save.metadata = {{"model", "attnlens-encoder"}, {"step", std::to_string(state.step)}};
  const std::unique_ptr<Tokenizer> tokenizer = as_encoder_tokenizer(d.tokenizer);
  const auto files = save_model(*model, tokenizer.get(), save);
  std::filesystem::create_directories(o.out);
  ModelFiles shipped;
  for (const auto& [name, bytes] : files) {
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    corpus::write_file(o.out + "/" + name, text);
    if (name == "model.safetensors") {
      shipped.weights = bytes.data();
      shipped.weights_size = bytes.size();
    } else {
      shipped.texts.emplace(name, text);
    }
  }
  LoadedModel loaded = load_model(shipped);
  std::printf("evaluating the F16 model on 256 held-out windows ...\n");
  const Evaluation e = evaluate(*loaded.model->bert(), d, T, 256, 64, o.mask_rate);
  train::WarmStartRecord start;
  if (warm) start = train::warm_start_record(*warm, vocabulary_map);
  corpus::write_file(o.out + "/eval.json", eval_json(e, o, state, model->num_parameters(), start));
  corpus::write_file(o.out + "/MODEL.md",
                     model_card(e, o, state, model->num_parameters(), d, start));
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf(
      "held-out masked-token loss %.4f (unigram %.4f); wrote %s/ (this invocation took %s)\n",
      e.loss.model, e.loss.unigram, o.out.c_str(), train::format_duration(total).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const Options defaults;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        usage(defaults);
        return 0;
      }
      if (flag == "--fresh" || flag == "--evaluate") {
        (flag == "--fresh" ? o.fresh : o.evaluate) = true;
        continue;
      }
      if (i + 1 >= argc) {
        std::fprintf(stderr, "attnlens_train_encoder: %s needs a value (see --help)\n",
                     flag.c_str());
        return 2;
      }
      const std::string v = argv[++i];
      if (flag == "--corpus")
        o.corpus = v;
      else if (flag == "--init-from")
        o.init_from = v;
      else if (flag == "--out")
        o.out = v;
      else if (flag == "--work")
        o.work = v;
      else if (flag == "--vocab")
        o.vocab = static_cast<std::int32_t>(parse_int(flag, v, 257, 65536));
      else if (flag == "--layers")
        o.model.layers = static_cast<int>(parse_int(flag, v, 1, 64));
      else if (flag == "--heads")
        o.model.heads = static_cast<int>(parse_int(flag, v, 1, 64));
      else if (flag == "--d-model")
        o.model.d_model = static_cast<int>(parse_int(flag, v, 8, 4096));
      else if (flag == "--intermediate")
        o.model.intermediate = static_cast<int>(parse_int(flag, v, 8, 16384));
      else if (flag == "--context")
        o.model.context = static_cast<int>(parse_int(flag, v, 8, 4096));
      else if (flag == "--batch")
        o.batch = static_cast<int>(parse_int(flag, v, 1, 4096));
      else if (flag == "--steps")
        o.steps = parse_int(flag, v, 1, 100000000);
      else if (flag == "--seed")
        o.seed = static_cast<std::uint64_t>(parse_int(flag, v, 0, std::int64_t{1} << 62));
      else if (flag == "--threads")
        o.threads = static_cast<int>(parse_int(flag, v, 1, kGpt2MaxThreads));
      else if (flag == "--lr")
        o.max_lr = static_cast<float>(parse_real(flag, v, 0, 1));
      else if (flag == "--min-lr")
        o.min_lr = static_cast<float>(parse_real(flag, v, 0, 1));
      else if (flag == "--warmup")
        o.warmup = parse_int(flag, v, 0, 100000000);
      else if (flag == "--weight-decay")
        o.weight_decay = static_cast<float>(parse_real(flag, v, 0, 10));
      else if (flag == "--grad-clip")
        o.grad_clip = static_cast<float>(parse_real(flag, v, 0, 1000));
      else if (flag == "--mask-rate")
        o.mask_rate = parse_real(flag, v, 0.001, 0.999);
      else if (flag == "--position-init") {
        if (v != "sinusoidal" && v != "normal") {
          detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants sinusoidal or normal, not ", v);
        }
        o.position_init = v;
      } else if (flag == "--qk-init") {
        if (v != "lecun" && v != "bert") {
          detail::fail(ErrorCode::BAD_ARGUMENT, flag, " wants lecun or bert, not ", v);
        }
        o.qk_init = v;
      } else if (flag == "--log-every")
        o.log_every = parse_int(flag, v, 1, 100000000);
      else if (flag == "--eval-every")
        o.eval_every = parse_int(flag, v, 1, 100000000);
      else if (flag == "--save-every")
        o.save_every = parse_int(flag, v, 1, 100000000);
      else {
        std::fprintf(stderr, "attnlens_train_encoder: unknown option %s (see --help)\n",
                     flag.c_str());
        return 2;
      }
    }
    return run(o);
  } catch (const attnlens::Error& e) {
    std::fprintf(stderr, "attnlens_train_encoder: %s: %s\n", attnlens::error_code_name(e.code()),
                 e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlens_train_encoder: %s\n", e.what());
  }
  return 1;
}
