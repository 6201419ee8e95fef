// The masked-LM data and measures of `npm run train -- --encoder`: windows of the token stream
// between [CLS] and [SEP], 15 % of their tokens to predict (80 % shown as [MASK], 10 % as a
// random token, 10 % as they are, as BERT's pre-training does), the held-out masked-token loss
// next to a unigram baseline, and each head's attention pattern in the categories of Clark et
// al. 2019, "What Does BERT Look At?".
#pragma once

#include <attnlens/bert.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::train {

// The encoder's special tokens: ids from first_special on are [CLS], [SEP], [MASK], [PAD];
// random replacements are drawn below first_special.
struct EncoderSpecials {
  std::int32_t cls = -1, sep = -1, mask = -1, pad = -1;
  std::int32_t first_special = 0;
};

// One masked batch: ids and labels [B, T] (labels -1 where nothing is predicted).
struct MlmBatch {
  std::vector<std::int32_t> ids, labels;
};

// Batches of B windows of T tokens ([CLS], T - 2 stream tokens, [SEP]), a function of
// (seed, step) alone, as BatchSampler (train_data.hpp): the same step gives the same batch in
// every run, resumed or not, on every platform. Each inner position is predicted with
// probability mask_rate.
class MlmSampler {
 public:
  // Throws Error(BAD_ARGUMENT) for a stream shorter than a window or a rate outside (0, 1).
  MlmSampler(const std::vector<std::int32_t>& stream, int batch, int length,
             const EncoderSpecials& specials, std::uint64_t seed, double mask_rate);
  void fill(std::int64_t step, MlmBatch& out) const;
  // `count` windows spread evenly over the stream, masked with `seed` (the fixed evaluation set).
  MlmBatch fixed(int count, std::uint64_t seed) const;

 private:
  void row(std::uint64_t row_seed, std::int64_t start, std::int32_t* ids,
           std::int32_t* labels) const;
  const std::vector<std::int32_t>& stream_;
  int batch_;
  int length_;
  EncoderSpecials specials_;
  std::uint64_t seed_;
  double mask_rate_;
};

// Mean masked-token loss of the model and of a unigram model (add-one counts of the training
// stream) on the same predicted tokens.
struct MlmLoss {
  std::int64_t tokens = 0;
  double model = 0.0;
  double unigram = 0.0;
};
MlmLoss evaluate_mlm(BertModel& model, const MlmBatch& batch, int length,
                     const std::vector<std::int32_t>& train_stream, std::int32_t vocab_size);

// Each head's pattern over unmasked windows (Clark et al. 2019): the mean attention from a
// token to the previous token, the next token, itself, [CLS], [SEP] and punctuation, and the
// mean entropy of its rows (nats). Indexed [layer][head].
struct HeadPatterns {
  std::vector<std::vector<double>> previous, next, self, cls, sep, punctuation, entropy;
};
HeadPatterns head_patterns(BertModel& model, const std::vector<std::int32_t>& ids, int windows,
                           int length, const std::vector<bool>& is_punctuation);

// A head's label in those categories: "previous token 0.96", "[SEP] 0.71", "broad (3.9 nats)",
// or "mixed" (thresholds of Clark et al.: ±1 and self > 0.5, special tokens and punctuation
// > 0.6, broad = entropy > 3.8 nats).
std::string head_label(const HeadPatterns& p, int layer, int head);

}  // namespace attnlens::train
