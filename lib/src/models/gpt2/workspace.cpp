#include "models/gpt2/workspace.hpp"

#include "core/check.hpp"

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

}  // namespace attnlens::detail
