#include "eval_metrics.hpp"

#include <attnlens/random.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <cmath>

namespace attnlens::eval {
namespace {

constexpr int kBatch = 8;  // windows per forward call

std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(hi - lo + 1));
}

// Calls f(first, count) for runs of at most kBatch consecutive windows of equal length.
template <typename F>
void for_each_batch(const std::vector<std::vector<std::int32_t>>& windows, F&& f) {
  std::size_t i = 0;
  while (i < windows.size()) {
    std::size_t j = i + 1;
    while (j < windows.size() && j - i < kBatch && windows[j].size() == windows[i].size())
      ++j;
    f(i, j - i);
    i = j;
  }
}

// Inputs [count, n - 1] and targets [count, n - 1] of windows[first, first + count).
void split_batch(const std::vector<std::vector<std::int32_t>>& windows, std::size_t first,
                 std::size_t count, std::vector<std::int32_t>& inputs,
                 std::vector<std::int32_t>& targets) {
  inputs.clear();
  targets.clear();
  for (std::size_t k = first; k < first + count; ++k) {
    const std::vector<std::int32_t>& w = windows[k];
    inputs.insert(inputs.end(), w.begin(), w.end() - 1);
    targets.insert(targets.end(), w.begin() + 1, w.end());
  }
}

}  // namespace

NgramModel::NgramModel(const std::vector<std::int32_t>& stream, std::int32_t vocab_size)
    : vocab_size_(vocab_size),
      unigram_(static_cast<std::size_t>(vocab_size), 0.0),
      history_(static_cast<std::size_t>(vocab_size), 0.0),
      followers_(static_cast<std::size_t>(vocab_size), 0.0),
      continuation_(static_cast<std::size_t>(vocab_size), 0.0),
      pairs_(static_cast<std::size_t>(vocab_size)) {
  for (const std::int32_t id : stream) {
    if (id < 0 || id >= vocab_size) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "token id ", id, " is outside [0, ", vocab_size, ")");
    }
  }
  if (stream.size() < 2) detail::fail(ErrorCode::BAD_ARGUMENT, "the stream needs 2 tokens");
  // Pair counts: sort the (a, b) keys and count runs.
  std::vector<std::uint64_t> keys(stream.size() - 1);
  for (std::size_t i = 0; i + 1 < stream.size(); ++i) {
    keys[i] =
        static_cast<std::uint64_t>(stream[i]) << 32 | static_cast<std::uint32_t>(stream[i + 1]);
    unigram_[static_cast<std::size_t>(stream[i + 1])] += 1.0;
    history_[static_cast<std::size_t>(stream[i])] += 1.0;
  }
  total_ = static_cast<double>(keys.size());
  std::sort(keys.begin(), keys.end());
  double once = 0.0, twice = 0.0;
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    while (j < keys.size() && keys[j] == keys[i])
      ++j;
    const double count = static_cast<double>(j - i);
    const auto a = static_cast<std::int32_t>(keys[i] >> 32);
    const auto b = static_cast<std::int32_t>(keys[i] & 0xFFFFFFFFu);
    pairs_[static_cast<std::size_t>(a)].emplace_back(b, count);
    followers_[static_cast<std::size_t>(a)] += 1.0;
    continuation_[static_cast<std::size_t>(b)] += 1.0;
    continuation_total_ += 1.0;
    once += count == 1.0 ? 1.0 : 0.0;
    twice += count == 2.0 ? 1.0 : 0.0;
    i = j;
  }
  if (once > 0.0) discount_ = once / (once + 2.0 * twice);
}

double NgramModel::unigram_nll(std::int32_t b) const {
  return -std::log((unigram_[static_cast<std::size_t>(b)] + 1.0) / (total_ + vocab_size_));
}

double NgramModel::bigram_nll(std::int32_t a, std::int32_t b) const {
  const double pc =
      (continuation_[static_cast<std::size_t>(b)] + 1.0) / (continuation_total_ + vocab_size_);
  const double ca = history_[static_cast<std::size_t>(a)];
  if (ca == 0.0) return -std::log(pc);
  const auto& row = pairs_[static_cast<std::size_t>(a)];
  const auto it = std::lower_bound(
      row.begin(), row.end(), b,
      [](const std::pair<std::int32_t, double>& p, std::int32_t id) { return p.first < id; });
  const double cab = it != row.end() && it->first == b ? it->second : 0.0;
  const double p = std::max(cab - discount_, 0.0) / ca +
                   discount_ * followers_[static_cast<std::size_t>(a)] / ca * pc;
  return -std::log(p);
}

std::vector<std::vector<std::int32_t>> windows(const std::vector<std::int32_t>& stream, int length,
                                               std::int64_t max_windows) {
  std::vector<std::vector<std::int32_t>> all;
  const std::size_t n = stream.size();
  for (std::size_t start = 0; start + 1 < n; start += static_cast<std::size_t>(length)) {
    const std::size_t end = std::min(n, start + static_cast<std::size_t>(length) + 1);
    all.emplace_back(stream.begin() + static_cast<std::ptrdiff_t>(start),
                     stream.begin() + static_cast<std::ptrdiff_t>(end));
  }
  if (max_windows <= 0 || static_cast<std::int64_t>(all.size()) <= max_windows) return all;
  std::vector<std::vector<std::int32_t>> picked;
  for (std::int64_t k = 0; k < max_windows; ++k) {
    const std::size_t i =
        static_cast<std::size_t>(k * static_cast<std::int64_t>(all.size()) / max_windows);
    picked.push_back(std::move(all[i]));
  }
  return picked;
}

LossReport evaluate_loss(Gpt2Model& model, const std::vector<std::vector<std::int32_t>>& windows,
                         const NgramModel& ngrams) {
  LossReport r;
  std::vector<std::int32_t> inputs, targets;
  for_each_batch(windows, [&](std::size_t first, std::size_t count) {
    split_batch(windows, first, count, inputs, targets);
    const std::int64_t T = static_cast<std::int64_t>(windows[first].size()) - 1;
    const std::int64_t B = static_cast<std::int64_t>(count);
    const float mean = model.loss(TokenIds{inputs.data(), B, T}, TokenIds{targets.data(), B, T});
    r.model += static_cast<double>(mean) * static_cast<double>(B * T);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      r.unigram += ngrams.unigram_nll(targets[i]);
      r.bigram += ngrams.bigram_nll(inputs[i], targets[i]);
    }
    r.tokens += B * T;
  });
  if (r.tokens > 0) {
    r.model /= static_cast<double>(r.tokens);
    r.unigram /= static_cast<double>(r.tokens);
    r.bigram /= static_cast<double>(r.tokens);
  }
  return r;
}

HeadTable previous_token_scores(Gpt2Model& model,
                                const std::vector<std::vector<std::int32_t>>& windows) {
  const int L = model.config().layers, H = model.config().heads;
  HeadTable sum(static_cast<std::size_t>(L), std::vector<double>(static_cast<std::size_t>(H)));
  std::int64_t rows = 0;
  std::vector<std::int32_t> inputs, targets;
  Gpt2ForwardOptions options;
  options.attention = true;
  for_each_batch(windows, [&](std::size_t first, std::size_t count) {
    split_batch(windows, first, count, inputs, targets);
    const std::int64_t T = static_cast<std::int64_t>(windows[first].size()) - 1;
    const std::int64_t B = static_cast<std::int64_t>(count);
    if (T < 2) return;
    // attention is [layers, B, heads, T, T]
    const Tensor att = model.forward(TokenIds{inputs.data(), B, T}, options).attention;
    for (int l = 0; l < L; ++l) {
      for (std::int64_t b = 0; b < B; ++b) {
        for (int h = 0; h < H; ++h) {
          const float* a = att.data.data() + (((l * B + b) * H + h) * T) * T;
          double s = 0.0;
          for (std::int64_t i = 1; i < T; ++i)
            s += a[i * T + i - 1];
          sum[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)] += s;
        }
      }
    }
    rows += B * (T - 1);
  });
  for (auto& layer : sum) {
    for (double& s : layer)
      s = rows > 0 ? s / static_cast<double>(rows) : 0.0;
  }
  return sum;
}

InductionReport induction_scores(Gpt2Model& model, int length, std::int32_t end_of_text,
                                 const InductionProbe& probe) {
  const int L = model.config().layers, H = model.config().heads;
  const std::int32_t V = model.config().vocab_size;
  const std::int64_t T = std::min(length, model.config().context);
  if (probe.min_n < 2 || probe.max_n < probe.min_n || 2 * probe.max_n > T) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "induction probe lengths [", probe.min_n, ", ",
                 probe.max_n, "] must be >= 2 and fit twice into ", T, " tokens");
  }
  InductionReport r;
  r.scores.assign(static_cast<std::size_t>(L), std::vector<double>(static_cast<std::size_t>(H)));
  std::int64_t pairs = 0, first_count = 0, second_count = 0;
  Gpt2ForwardOptions options;
  options.attention = true;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(T));
  for (int trial = 0; trial < probe.trials; ++trial) {
    Rng rng(mix_seed(probe.seed, static_cast<std::uint64_t>(trial)));
    const std::int64_t n = uniform_int(rng, probe.min_n, probe.max_n);
    const std::int64_t s = uniform_int(rng, 0, T - 2 * n);
    for (std::int32_t& id : ids) {
      id = static_cast<std::int32_t>(uniform_int(rng, 0, V - 2));
      if (id >= end_of_text) ++id;
    }
    std::copy_n(ids.begin() + s, n, ids.begin() + s + n);

    const Gpt2Output out = model.forward(TokenIds{ids.data(), 1, T}, options);
    // attention is [layers, 1, heads, T, T]
    for (int l = 0; l < L; ++l) {
      for (int h = 0; h < H; ++h) {
        const float* a = out.attention.data.data() + ((l * H + h) * T) * T;
        double sum = 0.0;
        for (std::int64_t j = 0; j < n; ++j)
          sum += a[(s + n + j) * T + (s + j + 1)];
        r.scores[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)] += sum;
      }
    }
    pairs += n;
    // logits are [1, T, V]: position p predicts ids[p + 1]. The copies' tokens after their
    // first: first copy s + 1 .. s + n − 1, second s + n + 1 .. s + 2n − 1.
    auto nll = [&](std::int64_t p) {
      const float* z = out.logits.data.data() + p * V;
      double m = z[0];
      for (std::int32_t v = 1; v < V; ++v)
        m = std::max(m, static_cast<double>(z[v]));
      double e = 0.0;
      for (std::int32_t v = 0; v < V; ++v)
        e += std::exp(static_cast<double>(z[v]) - m);
      return m + std::log(e) - z[ids[static_cast<std::size_t>(p + 1)]];
    };
    for (std::int64_t j = 1; j < n; ++j) {
      r.first_copy_loss += nll(s + j - 1);
      r.second_copy_loss += nll(s + n + j - 1);
    }
    first_count += n - 1;
    second_count += n - 1;
  }
  for (auto& layer : r.scores) {
    for (double& x : layer)
      x /= static_cast<double>(pairs);
  }
  r.first_copy_loss /= static_cast<double>(first_count);
  r.second_copy_loss /= static_cast<double>(second_count);
  return r;
}

BestHead best_head(const HeadTable& table) {
  BestHead best{0, 0, -1.0};
  for (std::size_t l = 0; l < table.size(); ++l) {
    for (std::size_t h = 0; h < table[l].size(); ++h) {
      if (table[l][h] > best.score) {
        best = BestHead{static_cast<int>(l), static_cast<int>(h), table[l][h]};
      }
    }
  }
  return best;
}

}  // namespace attnlens::eval
