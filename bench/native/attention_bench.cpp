// Google Benchmark suite: attnlens::attention over the shapes of bench/run.mjs, with the plain
// reference path beside it. GFLOP/s counts 4·B·H·L²·D (two products), as the table does.
#include <benchmark/benchmark.h>
#include <attnlens/attnlens.hpp>

#include <vector>

namespace {

enum Mode { kFull, kCausal, kWeights, kStreaming, kReference };

void BM_Attention(benchmark::State& state) {
  const long L = state.range(0);
  const long H = 8, D = 64;
  const auto mode = static_cast<Mode>(state.range(1));
  attnlens::Rng rng(1);
  std::vector<float> data(static_cast<std::size_t>(3 * H * L * D));
  for (float& x : data)
    x = static_cast<float>(rng.uniform(-1.0, 1.0));
  const std::size_t n = static_cast<std::size_t>(H * L * D);
  const attnlens::Shape shape = {1, H, L, D};
  const attnlens::ConstTensorView q{data.data(), shape}, k{data.data() + n, shape},
      v{data.data() + 2 * n, shape};
  attnlens::AttentionOptions o;
  o.causal = mode == kCausal;
  o.return_weights = mode == kWeights;
  o.streaming = mode == kStreaming;
  for (auto _ : state) {
    auto r = mode == kReference ? attnlens::attention_reference(q, k, v, o)
                                : attnlens::attention(q, k, v, o);
    benchmark::DoNotOptimize(r.output.data.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(4.0 * H * L * L * D * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_Attention)
    ->ArgNames({"L", "mode"})
    ->ArgsProduct({{64, 256, 1024}, {kFull, kCausal, kWeights, kStreaming, kReference}})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
