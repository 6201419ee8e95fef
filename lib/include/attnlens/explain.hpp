// attnlens — explain(): from a sentence to every number of one self-attention layer.
//
//   text -> tokens -> embeddings (+ positions) = X -> Q, K, V -> scores -> scaled -> masked
//        -> weights -> head outputs -> concat -> W_O -> output;  contextual = X + output
//        -> PCA of X and of the contextual embeddings
#pragma once

#include <attnlens/analysis.hpp>
#include <attnlens/self_attention.hpp>
#include <attnlens/text.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace attnlens {

enum class Positional {
  Sinusoidal,  // add sinusoidal_positions() to the token embeddings
  None,        // token embeddings only: full attention is then blind to word order
};

// Default and hard upper limit on the tokens one explanation covers.
inline constexpr int kDefaultMaxTokens = 256;
inline constexpr int kMaxTokensLimit = 1024;

struct ExplainOptions {
  bool causal = true;        // causal (decoder) or full (encoder) attention
  int model_dim = 64;        // E: 1 .. kMaxModelDim, divisible by num_heads
  int num_heads = 4;         // H: 1 .. kMaxHeads
  std::uint64_t seed = 7;    // seeds the weights and the hashed embeddings
  Init init = Init::Xavier;  // weight initialisation
  Positional positional = Positional::Sinusoidal;
  int max_tokens = kDefaultMaxTokens;  // 1 .. kMaxTokensLimit
  bool truncate = false;  // over max_tokens: keep the first max_tokens instead of failing
  // Record every stage (Explanation::trace) and the score variances, which the every-step view
  // shows. false leaves the trace empty and the variances without entries: the weights, output,
  // PCA and entropy are the same, and a long text is explained several times faster (the trace
  // holds three more [H, L, L] tensors, four with trace_results; see trace_head).
  bool trace = true;
  // With trace: record the [H, L, L] stages (scores, scaled, masked) and the score variances of
  // this head only, as [1, L, L] and one variance each; the other stages keep every head. The
  // every-step view shows one head at a time: at 512 tokens and 8 heads the trace then costs a
  // fraction of the whole one. Unset: every head. 0 .. num_heads - 1.
  std::optional<int> trace_head;
  // With trace: fill trace.weights and trace.output, copies of the result's weights and output.
  // false leaves them empty (the result's hold the same numbers) and saves copying [H, L, L]
  // floats: 8 MB at 512 tokens and 8 heads. The WebAssembly binding always sets it false and
  // gives the JS trace the result's arrays.
  bool trace_results = true;
};

struct ExplainStats {
  std::int64_t total_tokens = 0;           // tokens in the whole sentence
  bool truncated = false;                  // true if only the first max_tokens were used
  std::vector<double> raw_score_variance;  // [H] variance of Q_h K_hᵀ (unmasked); [] if !trace,
                                           // [1] (that head's) with trace_head
  std::vector<double> scaled_score_variance;  // the same after multiplying by the scale
  Tensor entropy;                             // [H, L] entropy of each weight row (nats),
                                              // from the softmax (ForwardResult::entropy)
};

struct Explanation {
  std::vector<Token> tokens;         // the tokens explained (L of them)
  Tensor token_embeddings;           // [L, E]
  Tensor positions;                  // [L, E] (zeros with Positional::None)
  Tensor embeddings;                 // [L, E] X = token_embeddings + positions
  SelfAttentionWeights projections;  // W_Q, W_K, W_V, W_O ([E, E])
  Trace trace;                       // every stage; see self_attention.hpp (empty if !trace)
  Tensor weights;                    // [H, L, L]
  Tensor mean_weights;               // [L, L] the mean of the heads' weights
  Tensor output;                     // [L, E] the attention layer's output
  Tensor contextual;                 // [L, E] X + output (the residual stream)
  Pca2D pca;                         // fitted on X, applied to the contextual rows
  ExplainStats stats;
};

// Throws INVALID_UTF8 (bad text), EMPTY_INPUT (no tokens), TOO_LARGE (more than max_tokens
// tokens and truncate is false), BAD_ARGUMENT (an option out of range).
Explanation explain(std::string_view sentence, const ExplainOptions& options = {});

}  // namespace attnlens
