#include "encoder_data.hpp"

#include <attnlens/random.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlens::train {
namespace {

std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(hi - lo + 1));
}

}  // namespace

MlmSampler::MlmSampler(const std::vector<std::int32_t>& stream, int batch, int length,
                       const EncoderSpecials& specials, std::uint64_t seed, double mask_rate)
    : stream_(stream),
      batch_(batch),
      length_(length),
      specials_(specials),
      seed_(seed),
      mask_rate_(mask_rate) {
  if (length < 3 || static_cast<std::int64_t>(stream.size()) < length) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "the training stream has ", stream.size(),
                 " tokens; windows of ", length, " need at least that many (and length >= 3)");
  }
  if (!(mask_rate > 0.0 && mask_rate < 1.0)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "mask rate is ", mask_rate, "; it must be in (0, 1)");
  }
}

void MlmSampler::row(std::uint64_t row_seed, std::int64_t start, std::int32_t* ids,
                     std::int32_t* labels) const {
  Rng rng(row_seed);
  const int inner = length_ - 2;
  ids[0] = specials_.cls;
  labels[0] = -1;
  ids[length_ - 1] = specials_.sep;
  labels[length_ - 1] = -1;
  for (int t = 0; t < inner; ++t) {
    const std::int32_t token = stream_[static_cast<std::size_t>(start + t)];
    ids[t + 1] = token;
    labels[t + 1] = -1;
    if (rng.uniform() >= mask_rate_) continue;
    labels[t + 1] = token;
    const double how = rng.uniform();
    if (how < 0.8) {
      ids[t + 1] = specials_.mask;
    } else if (how < 0.9) {
      ids[t + 1] = static_cast<std::int32_t>(uniform_int(rng, 0, specials_.first_special - 1));
    }
  }
}

void MlmSampler::fill(std::int64_t step, MlmBatch& out) const {
  out.ids.resize(static_cast<std::size_t>(batch_) * static_cast<std::size_t>(length_));
  out.labels.resize(out.ids.size());
  const std::int64_t last_start = static_cast<std::int64_t>(stream_.size()) - (length_ - 2);
  for (int b = 0; b < batch_; ++b) {
    const std::uint64_t row_seed =
        mix_seed(seed_, static_cast<std::uint64_t>(step) * 4096u + static_cast<unsigned>(b));
    Rng pick(mix_seed(row_seed, 1));
    const std::int64_t start = uniform_int(pick, 0, last_start);
    row(row_seed, start, out.ids.data() + b * length_, out.labels.data() + b * length_);
  }
}

MlmBatch MlmSampler::fixed(int count, std::uint64_t seed) const {
  MlmBatch out;
  out.ids.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(length_));
  out.labels.resize(out.ids.size());
  const std::int64_t span = static_cast<std::int64_t>(stream_.size()) - (length_ - 2);
  for (int w = 0; w < count; ++w) {
    const std::int64_t start = span * w / count;
    row(mix_seed(seed, static_cast<std::uint64_t>(w)), start, out.ids.data() + w * length_,
        out.labels.data() + w * length_);
  }
  return out;
}

MlmLoss evaluate_mlm(BertModel& model, const MlmBatch& batch, int length,
                     const std::vector<std::int32_t>& train_stream, std::int32_t vocab_size) {
  // Unigram: add-one counts over the training stream (every id, specials included, gets 1).
  std::vector<double> counts(static_cast<std::size_t>(vocab_size), 1.0);
  for (const std::int32_t id : train_stream)
    counts[static_cast<std::size_t>(id)] += 1.0;
  const double total = static_cast<double>(train_stream.size()) + vocab_size;
  MlmLoss out;
  const int windows = static_cast<int>(batch.ids.size()) / length;
  const int per_call = 16;
  for (int w0 = 0; w0 < windows; w0 += per_call) {
    const int n = std::min(per_call, windows - w0);
    BertForwardOptions o;
    o.logits = true;
    for (int r = 0; r < n * length; ++r) {
      if (batch.labels[static_cast<std::size_t>(w0 * length + r)] >= 0) o.logit_rows.push_back(r);
    }
    if (o.logit_rows.empty()) continue;
    const BertOutput r =
        model.forward(BertInputs{TokenIds{batch.ids.data() + w0 * length, n, length}}, o);
    const std::int64_t V = model.config().vocab_size;
    for (std::size_t k = 0; k < o.logit_rows.size(); ++k) {
      const float* row = r.logits.data.data() + static_cast<std::int64_t>(k) * V;
      const std::int32_t label =
          batch.labels[static_cast<std::size_t>(w0 * length + o.logit_rows[k])];
      double max = -INFINITY;
      for (std::int64_t v = 0; v < V; ++v)
        max = std::max(max, static_cast<double>(row[v]));
      double sum = 0.0;
      for (std::int64_t v = 0; v < V; ++v)
        sum += std::exp(static_cast<double>(row[v]) - max);
      out.model += std::log(sum) + max - static_cast<double>(row[label]);
      out.unigram -= std::log(counts[static_cast<std::size_t>(label)] / total);
      ++out.tokens;
    }
  }
  if (out.tokens > 0) {
    out.model /= static_cast<double>(out.tokens);
    out.unigram /= static_cast<double>(out.tokens);
  }
  return out;
}

HeadPatterns head_patterns(BertModel& model, const std::vector<std::int32_t>& ids, int windows,
                           int length, const std::vector<bool>& is_punctuation) {
  const BertConfig& c = model.config();
  const int L = c.layers, H = c.heads, T = length;
  HeadPatterns p;
  for (auto* table : {&p.previous, &p.next, &p.self, &p.cls, &p.sep, &p.punctuation, &p.entropy})
    table->assign(static_cast<std::size_t>(L),
                  std::vector<double>(static_cast<std::size_t>(H), 0.0));
  double rows = 0.0, interior = 0.0;
  for (int w = 0; w < windows; ++w) {
    const std::int32_t* x = ids.data() + static_cast<std::int64_t>(w) * T;
    BertForwardOptions o;
    o.attention = true;
    const BertOutput r = model.forward(BertInputs{TokenIds{x, 1, T}}, o);
    for (int l = 0; l < L; ++l) {
      for (int h = 0; h < H; ++h) {
        const float* a = r.attention.data.data() + (static_cast<std::int64_t>(l) * H + h) * T * T;
        const auto u = static_cast<std::size_t>(l), v = static_cast<std::size_t>(h);
        for (int i = 0; i < T; ++i) {
          const float* row = a + static_cast<std::int64_t>(i) * T;
          double entropy = 0.0, punct = 0.0;
          for (int j = 0; j < T; ++j) {
            if (row[j] > 0.0f) entropy -= row[j] * std::log(static_cast<double>(row[j]));
            const std::int32_t id = x[j];
            if (id < static_cast<std::int32_t>(is_punctuation.size()) &&
                is_punctuation[static_cast<std::size_t>(id)])
              punct += row[j];
          }
          p.entropy[u][v] += entropy;
          p.punctuation[u][v] += punct;
          p.self[u][v] += row[i];
          p.cls[u][v] += row[0];
          p.sep[u][v] += row[T - 1];
          // ±1: inner tokens only (the specials at the ends have no real neighbour).
          if (i >= 1 && i <= T - 2) {
            p.previous[u][v] += row[i - 1];
            p.next[u][v] += row[i + 1];
          }
        }
      }
    }
    rows += T;
    interior += T - 2;
  }
  for (int l = 0; l < L; ++l) {
    for (int h = 0; h < H; ++h) {
      const auto u = static_cast<std::size_t>(l), v = static_cast<std::size_t>(h);
      for (auto* table : {&p.self, &p.cls, &p.sep, &p.punctuation, &p.entropy})
        (*table)[u][v] /= rows;
      p.previous[u][v] /= interior;
      p.next[u][v] /= interior;
    }
  }
  return p;
}

std::string head_label(const HeadPatterns& p, int layer, int head) {
  const auto u = static_cast<std::size_t>(layer), v = static_cast<std::size_t>(head);
  struct Candidate {
    const char* name;
    double score;
    double threshold;
  };
  const Candidate candidates[] = {
      {"previous token", p.previous[u][v], 0.5},
      {"next token", p.next[u][v], 0.5},
      {"self", p.self[u][v], 0.5},
      {"[CLS]", p.cls[u][v], 0.6},
      {"[SEP]", p.sep[u][v], 0.6},
      {"punctuation", p.punctuation[u][v], 0.6},
  };
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (c.score > c.threshold && (best == nullptr || c.score > best->score)) best = &c;
  }
  char buffer[64];
  if (best != nullptr) {
    std::snprintf(buffer, sizeof buffer, "%s %.2f", best->name, best->score);
  } else if (p.entropy[u][v] > 3.8) {
    std::snprintf(buffer, sizeof buffer, "broad (%.1f nats)", p.entropy[u][v]);
  } else {
    std::snprintf(buffer, sizeof buffer, "mixed");
  }
  return buffer;
}

}  // namespace attnlens::train
