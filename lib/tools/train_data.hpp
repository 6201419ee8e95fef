// The training data of `npm run train`: documents, token streams and the seeded batch sampler
// with its mix of repeated spans (what makes induction heads form early).
#pragma once

#include <attnlens/bpe.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace attnlens::train {

// The documents of a corpus file as scripts/corpus.sh writes it (one paragraph per line, every
// document followed by one empty line): each document's paragraphs joined by '\n', without the
// final newline. Empty documents are skipped. The views point into `text`.
std::vector<std::string_view> split_documents(std::string_view text);

// The token stream of a corpus: each document's ids followed by `end_of_text`, as GPT-2's
// training data separates documents.
std::vector<std::int32_t> token_stream(const BpeTokenizer& tokenizer,
                                       const std::vector<std::string_view>& documents,
                                       std::int32_t end_of_text);

// Which rows of each batch carry a repeat, and how long the repeats are.
struct RepeatMix {
  // Rows 0 .. span_rows - 1 of every batch: a natural window in which a span of the window
  // itself is copied to a later place (the repeat stays inside natural text).
  int span_rows = 2;
  // The next random_rows rows: a natural window into which a segment of uniformly random
  // tokens is written twice, at two random places. Measured on this machine: with 2 such rows
  // (28.7 M tokens), 6 (the committed model, 28.7 M), 12 (stopped at 18.9 M) and 16 (4.1 M),
  // no induction head formed (best score <= 0.02, second-copy loss at chance); 6 keeps the
  // held-out loss 0.68 nats below the bigram baseline.
  int random_rows = 6;
  // Repeat lengths are uniform on [min_length, max_length] tokens, and every offset is random:
  // only an induction circuit (find the earlier occurrence, copy what followed it) predicts the
  // second copy, never a fixed distance back (a fixed length is solved by position instead).
  int min_length = 6;
  int max_length = 48;
};

// Batches [B, T + 1] drawn from a token stream, a function of (seed, step) alone: the same
// step gives the same batch in every run, resumed or not, on every platform (attnlens::Rng).
class BatchSampler {
 public:
  // stream: the training tokens (at least length + 1 of them); batch, length: B and T;
  // vocab_size: random tokens are drawn from [0, vocab_size) except end_of_text.
  // Throws Error(BAD_ARGUMENT) for a stream too short, a mix whose rows exceed the batch or
  // whose lengths do not fit twice into length + 1 tokens.
  BatchSampler(const std::vector<std::int32_t>& stream, int batch, int length,
               std::int32_t vocab_size, std::int32_t end_of_text, std::uint64_t seed,
               const RepeatMix& mix);

  // Writes batch `step` into out[0 .. B (T + 1)), row-major.
  void fill(std::int64_t step, std::vector<std::int32_t>& out) const;

 private:
  const std::vector<std::int32_t>& stream_;
  int batch_;
  int length_;
  std::int32_t vocab_size_;
  std::int32_t end_of_text_;
  std::uint64_t seed_;
  RepeatMix mix_;
};

}  // namespace attnlens::train
