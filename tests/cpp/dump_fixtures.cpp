// Writes native results as JSON for the JS suite, which checks that the WebAssembly build
// agrees with the native one on the same inputs (tests/js/native-agreement.test.mjs).
//   attnlens_dump_fixtures OUT.json
// Inputs come from the portable generator and are written out too, so JS reads the very bytes.
#include <attnlens/attnlens.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

void write_floats(std::FILE* out, const float* data, std::size_t n) {
  std::fputc('[', out);
  for (std::size_t i = 0; i < n; ++i)
    std::fprintf(out, "%s%.9g", i ? "," : "", static_cast<double>(data[i]));
  std::fputc(']', out);
}

void write_tensor(std::FILE* out, const char* name, const attnlens::Tensor& t, bool comma = true) {
  std::fprintf(out, "\"%s\":{\"shape\":[", name);
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    std::fprintf(out, "%s%lld", i ? "," : "", static_cast<long long>(t.shape[i]));
  std::fprintf(out, "],\"data\":");
  write_floats(out, t.data.data(), t.data.size());
  std::fprintf(out, "}%s", comma ? "," : "");
}

attnlens::Tensor random_tensor(attnlens::Shape shape, attnlens::Rng& rng) {
  attnlens::Tensor t(std::move(shape));
  for (float& x : t.data)
    x = static_cast<float>(rng.normal());
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attnlens_dump_fixtures OUT.json\n");
    return 2;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  attnlens::Rng rng(2026);
  std::fprintf(out, "{\"attention\":[");
  struct Case {
    attnlens::Shape q, kv;
    bool causal;
    attnlens::CausalAlign align;
  };
  const std::vector<Case> cases = {
      {{7, 5}, {7, 5}, false, attnlens::CausalAlign::TopLeft},
      {{2, 4, 9, 8}, {2, 4, 9, 8}, true, attnlens::CausalAlign::TopLeft},
      {{1, 6, 5, 16}, {1, 2, 11, 16}, true, attnlens::CausalAlign::BottomRight},
      {{1, 8, 64, 64}, {1, 8, 64, 64}, false, attnlens::CausalAlign::TopLeft},
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const auto q = random_tensor(cases[c].q, rng);
    const auto k = random_tensor(cases[c].kv, rng);
    const auto v = random_tensor(cases[c].kv, rng);
    attnlens::AttentionOptions o;
    o.causal = cases[c].causal;
    o.causal_align = cases[c].align;
    o.return_weights = true;
    const auto r = attnlens::attention(q.view(), k.view(), v.view(), o);
    std::fprintf(out, "%s{\"causal\":%s,\"causalAlign\":\"%s\",", c ? "," : "",
                 o.causal ? "true" : "false",
                 o.causal_align == attnlens::CausalAlign::TopLeft ? "top-left" : "bottom-right");
    write_tensor(out, "q", q);
    write_tensor(out, "k", k);
    write_tensor(out, "v", v);
    write_tensor(out, "output", r.output);
    write_tensor(out, "weights", r.weights, false);
    std::fputc('}', out);
  }
  const char* sentence = "The quick brown fox jumps over the lazy dog, naïvely 🦊!";
  attnlens::ExplainOptions eo;
  eo.model_dim = 32;
  eo.num_heads = 4;
  eo.seed = 11;
  const auto ex = attnlens::explain(sentence, eo);
  std::fprintf(out,
               "],\"explain\":{\"sentence\":\"%s\",\"options\":{\"modelDim\":32,\"numHeads\":4,"
               "\"seed\":11},",
               sentence);
  std::fprintf(out, "\"tokens\":[");
  for (std::size_t i = 0; i < ex.tokens.size(); ++i)
    std::fprintf(out, "%s\"%s\"", i ? "," : "", ex.tokens[i].text.c_str());
  std::fprintf(out, "],");
  write_tensor(out, "tokenEmbeddings", ex.token_embeddings);
  write_tensor(out, "positions", ex.positions);
  write_tensor(out, "wq",
               attnlens::Tensor({32, 32}, std::vector<float>(ex.projections.wq.data(),
                                                             ex.projections.wq.data() + 32 * 32)));
  write_tensor(out, "weights", ex.weights);
  write_tensor(out, "output", ex.output, false);
  std::fprintf(out, "}}\n");
  std::fclose(out);
  return 0;
}
