// Google Benchmark suite for the GPT-2 model: forward of 64 tokens on the 2-layer d = 128 model
// (4 heads, context 128, vocab 4096) and on a GPT-2-small-shaped one (random weights), and
// training steps (forward + backward + AdamW) of the 2-layer model at B = 16, T = 128 on one
// and two threads.
// Counters: tokens/s, and GFLOP/s from the usual 2·params·tokens (forward) and 6·params·tokens
// (training) estimates plus the attention products.
#include <benchmark/benchmark.h>
#include <attnlens/gpt2.hpp>
#include <attnlens/random.hpp>

#include <vector>

namespace {

const attnlens::Gpt2Config kSmall{2, 4, 128, 128, 4096};
const attnlens::Gpt2Config kGpt2Small{12, 12, 768, 1024, 50257};

std::vector<std::int32_t> random_ids(std::int64_t n, int vocab, std::uint64_t seed) {
  attnlens::Rng rng(seed);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (auto& id : ids)
    id = static_cast<std::int32_t>(rng.next_u64() % static_cast<std::uint64_t>(vocab));
  return ids;
}

// Multiply-adds of one forward pass over T tokens per sequence, counted as 2 FLOPs each:
// every parameter matrix once per token (the unembedding is wte) and the two attention
// products over the causal triangle.
double forward_flops(const attnlens::Gpt2Config& c, std::int64_t B, std::int64_t T) {
  const double d = c.d_model, tokens = static_cast<double>(B * T);
  const double matrices = c.layers * 12.0 * d * d + static_cast<double>(c.vocab_size) * d;
  const double attention = c.layers * 2.0 * d * (T * (T + 1) / 2.0) * B;
  return 2.0 * (matrices * tokens + attention);
}

// Built once per process on first use (GPT-2 small's 124 M seeded normals take seconds).
attnlens::Gpt2Model& small_model() {
  static attnlens::Gpt2Model model = attnlens::Gpt2Model::random(kSmall, 1);
  return model;
}
attnlens::Gpt2Model& gpt2_small_model() {
  static attnlens::Gpt2Model model = attnlens::Gpt2Model::random(kGpt2Small, 1);
  return model;
}

void BM_Forward(benchmark::State& state, bool gpt2_small, bool weights) {
  const attnlens::Gpt2Config& c = gpt2_small ? kGpt2Small : kSmall;
  attnlens::Gpt2Model& model = gpt2_small ? gpt2_small_model() : small_model();
  const std::int64_t T = 64;
  const auto ids = random_ids(T, c.vocab_size, 2);
  attnlens::Gpt2ForwardOptions options;
  options.attention = weights;
  // A first call outside the timing grows the model's buffers (later calls reuse them).
  model.forward(attnlens::TokenIds{ids.data(), 1, T}, options);
  for (auto _ : state) {
    auto out = model.forward(attnlens::TokenIds{ids.data(), 1, T}, options);
    benchmark::DoNotOptimize(out.logits.data.data());
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(T), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(forward_flops(c, 1, T) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TrainStep(benchmark::State& state) {
  const std::int64_t B = state.range(0), T = state.range(1);
  attnlens::Gpt2Model model = attnlens::Gpt2Model::random(kSmall, 1);
  model.set_threads(static_cast<int>(state.range(2)));
  const auto batch = random_ids(B * (T + 1), kSmall.vocab_size, 3);
  // The first step allocates the activations, gradients and AdamW's moments: not timed.
  model.train_step(attnlens::TokenIds{batch.data(), B, T + 1}, 1e-4f);
  for (auto _ : state) {
    const float loss = model.train_step(attnlens::TokenIds{batch.data(), B, T + 1}, 1e-4f);
    benchmark::DoNotOptimize(loss);
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(3.0 * forward_flops(kSmall, B, T) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Forward, small_64_tokens, false, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Forward, small_64_tokens_with_attention, false, true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Forward, gpt2_small_64_tokens, true, false)->Unit(benchmark::kMillisecond);
// Real time: with threads, CPU time would count only the calling thread.
BENCHMARK(BM_TrainStep)
    ->ArgNames({"B", "T", "threads"})
    ->Args({16, 128, 1})
    ->Args({16, 128, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
