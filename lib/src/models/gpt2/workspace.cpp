#include "models/gpt2/workspace.hpp"

#include "core/check.hpp"
#include "core/matmul.hpp"

#include <algorithm>
#include <atomic>
#include <new>

namespace attnlens::detail {
namespace {

constexpr std::int64_t kAlignFloats = 16;  // 64 bytes

std::int64_t round_up(std::int64_t n) {
  return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

}  // namespace

void Gpt2Activations::prepare(const Gpt2Config& config, std::int64_t B_, std::int64_t T_, int slots,
                              bool logits_wanted, bool backward) {
  B = B_;
  T = T_;
  const std::int64_t N = B * T, d = config.d_model, V = config.vocab_size;
  // Two passes over the same carving: the first only counts (base == null), the second points.
  auto carve = [&](float* base) {
    std::int64_t used = 0;
    auto take = [&](std::int64_t count) {
      float* p = base == nullptr ? nullptr : base + used;
      used += round_up(count);
      return p;
    };
    auto take_if = [&](bool wanted, std::int64_t count) { return wanted ? take(count) : nullptr; };
    encoded = take(N * d);
    qkv = take(N * 3 * d);
    lnf = take(N * d);
    lnf_mean = take(N);
    lnf_rstd = take(N);
    logits = take_if(logits_wanted, N * V);
    blocks.resize(static_cast<std::size_t>(slots));
    for (Gpt2BlockActivations& a : blocks) {
      a.ln1 = take_if(config.attention_norm, N * d);
      a.ln1_mean = take_if(config.attention_norm, N);
      a.ln1_rstd = take_if(config.attention_norm, N);
      a.q = take(N * d);
      a.k = take(N * d);
      a.v = take(N * d);
      a.atty = take(N * d);
      a.res2 = take(N * d);
      a.ln2 = take(N * d);
      a.ln2_mean = take(N);
      a.ln2_rstd = take(N);
      a.fch = take(N * 4 * d);
      a.fch_gelu = take(N * 4 * d);
      a.res3 = take(N * d);
    }
    dres = take_if(backward, N * d);
    dln = take_if(backward, N * d);
    datty = take_if(backward, N * d);
    dheads = take_if(backward, N * d);
    dq = take_if(backward, N * d);
    dk = take_if(backward, N * d);
    dv = take_if(backward, N * d);
    dqkv = take_if(backward, N * 3 * d);
    dfch = take_if(backward, N * 4 * d);
    dscores = take_if(backward, T * T);
    return used;
  };
  const std::int64_t needed = carve(nullptr);
  if (static_cast<std::int64_t>(storage_.size()) < needed) {
    try {
      storage_.clear();
      storage_.shrink_to_fit();
      storage_.resize(static_cast<std::size_t>(needed));
    } catch (const std::bad_alloc&) {
      fail(ErrorCode::OUT_OF_MEMORY, "the GPT-2 model could not allocate ", needed,
           " floats of activations for ", B, " x ", T, " tokens");
    }
  }
  carve(storage_.data());
}

std::uint64_t next_model_stamp() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

void check_logit_rows(const Gpt2ForwardOptions& options, std::int64_t rows) {
  if (!options.logits) return;
  for (std::size_t k = 0; k < options.logit_rows.size(); ++k) {
    const std::int64_t row = options.logit_rows[k];
    if (row < 0 || row >= rows) {
      fail(ErrorCode::BAD_ARGUMENT, "logit_rows[", k, "] = ", row, " is outside [0, ", rows,
           ") (rows are b · T + t)");
    }
  }
}

void unembed_rows(float* out, const float* lnf, const float* wte,
                  const std::vector<std::int64_t>& rows, std::int64_t d, std::int64_t V,
                  bool out_at_rows) {
  const auto R = static_cast<std::int64_t>(rows.size());
  if (R == 0) return;
  // One run of consecutive rows (the usual case: every fresh row, or the rows after a prefix)
  // needs no copy either way.
  bool consecutive = true;
  for (std::int64_t k = 1; k < R && consecutive; ++k)
    consecutive = rows[static_cast<std::size_t>(k)] == rows[0] + k;
  if (consecutive) {
    matmul(out + (out_at_rows ? rows[0] * V : 0), lnf + rows[0] * d, wte, R, V, d, false, true,
           false);
    return;
  }
  std::vector<float> picked(static_cast<std::size_t>(R * d));
  for (std::int64_t k = 0; k < R; ++k) {
    std::copy(lnf + rows[static_cast<std::size_t>(k)] * d,
              lnf + (rows[static_cast<std::size_t>(k)] + 1) * d, picked.begin() + k * d);
  }
  if (!out_at_rows) {
    matmul(out, picked.data(), wte, R, V, d, false, true, false);
    return;
  }
  std::vector<float> result(static_cast<std::size_t>(R * V));
  matmul(result.data(), picked.data(), wte, R, V, d, false, true, false);
  for (std::int64_t k = 0; k < R; ++k) {
    std::copy(result.begin() + k * V, result.begin() + (k + 1) * V,
              out + rows[static_cast<std::size_t>(k)] * V);
  }
}

}  // namespace attnlens::detail
