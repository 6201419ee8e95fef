// What `npm run eval` (and the end of `npm run train`) measures: held-out loss in nats per
// token next to unigram and bigram baselines over the same tokens, and per head a
// previous-token score and an induction score.
#pragma once

#include <attnlens/gpt2.hpp>

#include <cstdint>
#include <vector>

namespace attnlens::eval {

// Unigram and bigram models of a token stream, fitted by counting.
//   unigram: add-one (Laplace) smoothing over the whole vocabulary,
//            P(b) = (c(b) + 1) / (N + V).
//   bigram:  interpolated Kneser–Ney (Chen & Goodman's interpolated absolute discounting with
//            continuation counts), the strongest standard bigram:
//            P(b | a) = max(c(a b) − D, 0) / c(a) + D · N1+(a •) / c(a) · Pc(b),
//            Pc(b) = (N1+(• b) + 1) / (N1+(• •) + V)  (continuation counts, add-one so that no
//            token has probability 0), D = n1 / (n1 + 2 n2) from the counts of bigram types
//            seen once and twice; P(b | a) = Pc(b) for a history a never seen.
// Every count comes from the training stream; nothing is tuned on held-out text.
class NgramModel {
 public:
  // Counts the pairs (stream[i], stream[i + 1]) and the tokens stream[1 ..] (the targets).
  // Ids must lie in [0, vocab_size).
  NgramModel(const std::vector<std::int32_t>& stream, std::int32_t vocab_size);

  // −ln P(b) and −ln P(b | a), in nats.
  double unigram_nll(std::int32_t b) const;
  double bigram_nll(std::int32_t a, std::int32_t b) const;

  double discount() const noexcept { return discount_; }

 private:
  std::int32_t vocab_size_;
  double total_ = 0.0;                // N, the targets counted
  std::vector<double> unigram_;       // c(b)
  std::vector<double> history_;       // c(a) as a history
  std::vector<double> followers_;     // N1+(a •)
  std::vector<double> continuation_;  // N1+(• b)
  double continuation_total_ = 0.0;   // N1+(• •), the bigram types
  std::vector<std::vector<std::pair<std::int32_t, double>>> pairs_;  // a -> sorted (b, c(a b))
  double discount_ = 0.75;
};

// Mean losses in nats per token over the same targets.
struct LossReport {
  std::int64_t tokens = 0;  // targets scored
  double model = 0.0;
  double unigram = 0.0;
  double bigram = 0.0;
};

// The stream cut into windows of length + 1 tokens with stride `length` (inputs w[0 .. T),
// targets w[1 .. T]; the last window may be shorter, down to 2 tokens): every token but the
// first is a target exactly once. At most max_windows windows, spread evenly over the stream
// (all of them when max_windows <= 0).
std::vector<std::vector<std::int32_t>> windows(const std::vector<std::int32_t>& stream, int length,
                                               std::int64_t max_windows);

// The model's loss and both baselines' on the windows' targets (the baselines see the same
// (previous token, target) pairs as the model). The model's loss is summed in float64.
LossReport evaluate_loss(Gpt2Model& model, const std::vector<std::vector<std::int32_t>>& windows,
                         const NgramModel& ngrams);

// A [layers][heads] table of scores.
using HeadTable = std::vector<std::vector<double>>;

// Previous-token score of each head: the mean attention weight from position i to i − 1, over
// every i >= 1 of every window (the windows' first `length` tokens are the inputs).
HeadTable previous_token_scores(Gpt2Model& model,
                                const std::vector<std::vector<std::int32_t>>& windows);

// Induction probe: sequences of `length` uniformly random tokens (every id but end_of_text) in
// which a segment of n tokens, n uniform on [min_n, max_n], appears twice: first at a random
// offset s, then right after itself (s + n); the offsets vary with each trial so no fixed
// distance or position explains the scores.
struct InductionProbe {
  int trials = 64;
  int min_n = 8;
  int max_n = 40;
  std::uint64_t seed = 12345;
};

struct InductionReport {
  // Per head: the mean attention from each token of the second copy (position s + n + j) to
  // the token after its earlier occurrence (s + j + 1), over j = 0 .. n − 1 and the trials.
  HeadTable scores;
  // Mean loss (nats per token) predicting the tokens of the first copy (after its first token)
  // and of the second copy (after its first token): induction makes the second far lower.
  double first_copy_loss = 0.0;
  double second_copy_loss = 0.0;
};

// Runs the probe on sequences of the model's context length (at most `length` tokens).
// Throws Error(BAD_ARGUMENT) when 2 · max_n does not fit into `length` or min_n < 2.
InductionReport induction_scores(Gpt2Model& model, int length, std::int32_t end_of_text,
                                 const InductionProbe& probe = {});

// The largest entry of a table and where it is.
struct BestHead {
  int layer = 0;
  int head = 0;
  double score = 0.0;
};
BestHead best_head(const HeadTable& table);

}  // namespace attnlens::eval
