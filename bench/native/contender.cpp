// attnlens natively, as one contender of bench/run.mjs:
//   attnlens_bench_contender --data=F --L=256 --H=8 --D=64 --mode=full|causal|weights|streaming
//                            --reps=N [--out=F]
// Prints {"ms": median} and writes the output as raw float32 when --out is given.
#include <attnlens/attnlens.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos)
      args[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  const long L = std::atol(args["L"].c_str());
  const long H = args.count("H") ? std::atol(args["H"].c_str()) : 8;
  const long D = args.count("D") ? std::atol(args["D"].c_str()) : 64;
  const int reps = args.count("reps") ? std::atoi(args["reps"].c_str()) : 10;
  const std::string mode = args["mode"];
  const std::size_t n = static_cast<std::size_t>(H * L * D);
  std::vector<float> all(3 * n);
  std::FILE* f = std::fopen(args["data"].c_str(), "rb");
  if (!f || std::fread(all.data(), sizeof(float), all.size(), f) != all.size()) {
    std::fprintf(stderr, "contender: cannot read %s\n", args["data"].c_str());
    return 1;
  }
  std::fclose(f);
  const attnlens::Shape shape = {1, H, L, D};
  const attnlens::ConstTensorView q{all.data(), shape}, k{all.data() + n, shape},
      v{all.data() + 2 * n, shape};
  attnlens::AttentionOptions o;
  o.causal = mode == "causal" || mode == "streaming-causal" || mode == "causal-reference";
  o.return_weights = mode == "weights";
  o.streaming = mode == "streaming" || mode == "streaming-causal";
  const bool reference = mode == "reference" || mode == "causal-reference";
  attnlens::AttentionResult r;
  const auto run = [&] {
    r = reference ? attnlens::attention_reference(q, k, v, o) : attnlens::attention(q, k, v, o);
  };
  run();
  run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  if (args.count("out")) {
    std::FILE* out = std::fopen(args["out"].c_str(), "wb");
    std::fwrite(r.output.data.data(), sizeof(float), r.output.data.size(), out);
    std::fclose(out);
  }
  std::printf("{\"ms\": %.6f}\n", times[times.size() / 2]);
  return 0;
}
