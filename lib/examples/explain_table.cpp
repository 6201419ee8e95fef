// Prints the attention of a sentence as tables, causal and full, averaged over heads.
//
//   attnlens_explain [--modelDim=64] [--numHeads=4] [--seed=7] [--init=xavier]
//                    [--positional=sinusoidal|none] [sentence...]
#include <attnlens/attnlens.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Width of a token in terminal columns: count UTF-8 lead bytes (good enough for a table).
std::size_t display_width(const std::string& s) {
  std::size_t width = 0;
  for (unsigned char c : s)
    width += (c & 0xC0) != 0x80;
  return width;
}

std::string fit(const std::string& s, std::size_t width) {
  std::string out;
  std::size_t used = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0)
      len = 4;
    else if (c >= 0xE0)
      len = 3;
    else if (c >= 0xC0)
      len = 2;
    if (used + 1 > width) break;
    out += s.substr(i, len);
    ++used;
    i += len;
  }
  return out + std::string(width - display_width(out), ' ');
}

void print_table(const attnlens::Explanation& ex, const char* title) {
  const auto L = static_cast<std::int64_t>(ex.tokens.size());
  const std::int64_t H = ex.weights.shape[0];
  std::cout << "\n"
            << title << " attention, mean of " << H << " heads (row = query, column = key)\n";
  std::cout << fit("", 10);
  for (const auto& t : ex.tokens)
    std::cout << ' ' << fit(t.text, 6);
  std::cout << "   entropy\n";
  for (std::int64_t i = 0; i < L; ++i) {
    std::cout << fit(ex.tokens[static_cast<std::size_t>(i)].text, 10);
    double entropy = 0.0;
    for (std::int64_t j = 0; j < L; ++j) {
      double mean = 0.0;
      for (std::int64_t h = 0; h < H; ++h)
        mean += ex.weights.data[static_cast<std::size_t>((h * L + i) * L + j)];
      mean /= static_cast<double>(H);
      char cell[16];
      std::snprintf(cell, sizeof cell, "%6.3f", mean);
      std::cout << ' ' << cell;
    }
    for (std::int64_t h = 0; h < H; ++h)
      entropy += ex.stats.entropy.data[static_cast<std::size_t>(h * L + i)];
    char cell[16];
    std::snprintf(cell, sizeof cell, "%8.3f", entropy / static_cast<double>(H));
    std::cout << "   " << cell << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  attnlens::ExplainOptions options;
  std::string sentence;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto eq = arg.find('=');
      if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
        attnlens::set_explain_option(options, arg.substr(2, eq - 2), arg.substr(eq + 1));
      } else {
        sentence += (sentence.empty() ? "" : " ") + arg;
      }
    }
    if (sentence.empty()) sentence = "The cat sat on the mat.";

    options.causal = true;
    const attnlens::Explanation causal = attnlens::explain(sentence, options);
    options.causal = false;
    const attnlens::Explanation full = attnlens::explain(sentence, options);

    std::cout << "attnlens " << attnlens::kVersion << ": \"" << sentence << "\"\n";
    std::cout << causal.tokens.size() << " tokens, model dim " << options.model_dim << ", "
              << options.num_heads << " heads of dim " << options.model_dim / options.num_heads
              << ", seed " << options.seed << "\n";
    print_table(causal, "Causal");
    print_table(full, "Full");
    std::cout << "\nWhy scale by 1/sqrt(d_k): variance of the scores per head (causal)\n";
    for (std::size_t h = 0; h < causal.stats.raw_score_variance.size(); ++h) {
      std::printf("  head %zu: raw %8.3f   scaled %8.3f\n", h, causal.stats.raw_score_variance[h],
                  causal.stats.scaled_score_variance[h]);
    }
    std::printf("\nPCA of X explains %.1f%% + %.1f%% of its variance.\n",
                100.0 * causal.pca.explained[0], 100.0 * causal.pca.explained[1]);
  } catch (const attnlens::Error& e) {
    std::cerr << "attnlens_explain: " << attnlens::error_code_name(e.code()) << ": " << e.what()
              << '\n';
    return 1;
  }
  return 0;
}
