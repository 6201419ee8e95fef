// attnlens — multi-head self-attention with an optional trace of every stage.
//
// For x [L, E] (or [B, L, E]) and H heads of width d = E / H:
//   Q = x W_Q + b_Q,  K = x W_K + b_K,  V = x W_V + b_V          (W shaped [in, out] = [E, E])
//   head h uses columns h*d .. h*d + d - 1 of Q, K and V
//   A_h = softmax(Q_h K_hᵀ / sqrt(d) + mask),  O_h = A_h V_h
//   output = concat(O_0 .. O_{H-1}) W_O + b_O
#pragma once

#include <attnlens/attention.hpp>
#include <attnlens/tensor.hpp>

#include <cstdint>
#include <optional>

namespace attnlens {

// Weight initialisation. Biases, when present, start at zero.
enum class Init {
  Normal,    // W ~ N(0, 1/E): keeps the variance of x W equal to that of x
  Xavier,    // W ~ U(-a, a), a = sqrt(6 / (E + E)) (Glorot; PyTorch's MultiheadAttention)
  Identity,  // W = I: Q = K = V = x, so the attention pattern is x's own similarity
};

// Largest model dimension and head count accepted.
inline constexpr int kMaxModelDim = 1024;
inline constexpr int kMaxHeads = 64;

struct SelfAttentionConfig {
  int model_dim = 64;      // E; 1 .. kMaxModelDim, a multiple of num_heads
  int num_heads = 4;       // H; 1 .. kMaxHeads
  std::uint64_t seed = 0;  // seeds the portable generator (random.hpp)
  Init init = Init::Xavier;
  bool bias = false;  // allocate zero biases b_Q, b_K, b_V, b_O
};

// The four projections, row-major [E, E]; biases [E] or empty (no bias).
struct SelfAttentionWeights {
  RowMatrixXf wq, wk, wv, wo;
  Eigen::VectorXf bq, bk, bv, bo;
};

struct ForwardOptions {
  bool causal = false;         // query i attends keys j <= i
  std::optional<float> scale;  // default 1 / sqrt(E / H)
  bool trace = false;          // fill ForwardResult::trace
  // With trace: the [H, L, L] stages (scores, scaled, masked) of this head only, as [1, L, L]
  // ([B, 1, L, L] for a batch). Unset: every head. 0 .. H - 1. (A score beyond float32, which
  // the trace reports as NON_FINITE, is then only looked for in this head.)
  std::optional<int> trace_head;
  // With trace: fill the trace's weights and output, copies of the result's. false leaves them
  // empty and saves the copy ([H, L, L] floats: 8 MB at 512 tokens and 8 heads) for a caller
  // that reads those numbers from the result.
  bool trace_results = true;
  bool entropy = false;  // fill ForwardResult::entropy
};

// The stages of a traced forward pass in the order the data flows through them, one list for
// the Trace struct below, the WebAssembly bindings' export and the JS declarations (a test
// checks that attnlens.d.ts names exactly these): X(member, "jsName", "shape", "meaning").
// Shapes are for x [L, E] with H heads of width d; a batched x [B, L, E] adds a leading B to
// each (except `mask`, which is shared). With ForwardOptions::trace_head, H is 1 in scores,
// scaled and masked.
#define ATTNLENS_TRACE_STAGES(X)                                                                  \
  X(x, "x", "[L, E]", "the input")                                                                \
  X(q, "q", "[H, L, d]", "per-head queries: columns h*d .. h*d + d - 1 of x W_Q + b_Q")           \
  X(k, "k", "[H, L, d]", "per-head keys: x W_K + b_K, split the same way")                        \
  X(v, "v", "[H, L, d]", "per-head values: x W_V + b_V, split the same way")                      \
  X(scores, "scores", "[H, L, L]", "Q_h K_h^T")                                                   \
  X(scaled, "scaled", "[H, L, L]", "scores * scale")                                              \
  X(mask, "mask", "[L, L]", "the additive causal mask: 0, or -inf where a key is hidden")         \
  X(masked, "masked", "[H, L, L]", "the logits softmax reads: scaled + mask, -inf where masked")  \
  X(weights, "weights", "[H, L, L]", "softmax(masked): the same numbers as the result's weights") \
  X(head_outputs, "headOutputs", "[H, L, d]", "weights_h V_h")                                    \
  X(concat, "concat", "[L, E]", "the heads' outputs side by side")                                \
  X(output, "output", "[L, E]", "concat W_O + b_O: the same numbers as the result's output")

// Every stage of one forward pass; see ATTNLENS_TRACE_STAGES for each tensor (weights and
// output are empty with ForwardOptions::trace_results = false).
struct Trace {
  float scale = 0.0f;  // the factor applied to the raw scores
#define ATTNLENS_TRACE_MEMBER(member, name, shape, meaning) Tensor member;
  ATTNLENS_TRACE_STAGES(ATTNLENS_TRACE_MEMBER)
#undef ATTNLENS_TRACE_MEMBER
};

struct ForwardResult {
  Tensor output;               // [L, E] or [B, L, E]
  Tensor weights;              // [H, L, L] or [B, H, L, L]
  std::optional<Trace> trace;  // when ForwardOptions::trace
  // When ForwardOptions::entropy: [H, L] or [B, H, L], the entropy (natural log) of each row of
  // weights, as row_entropy() defines it, taken from the softmax's own sums in the fast path
  // (a copy and a dot product per row instead of a logarithm per weight): within
  // 5e-6 (1 + 2 H) + 4e-7 (1 + H) of the weights' own entropy H at 512 keys (kernels.cpp,
  // softmax_row, gives the bound for any length).
  Tensor entropy;
};

class SelfAttention {
 public:
  // Random (or identity) weights from the config. Throws Error(BAD_ARGUMENT) for a model_dim
  // or num_heads out of range or a model_dim not divisible by num_heads.
  explicit SelfAttention(const SelfAttentionConfig& config);

  // Given weights. Throws Error(SHAPE_MISMATCH) if a matrix is not [E, E] or a bias not [E] or
  // empty, Error(NON_FINITE) if a weight is NaN or infinite, Error(BAD_ARGUMENT) as above.
  SelfAttention(int model_dim, int num_heads, SelfAttentionWeights weights);

  int model_dim() const noexcept { return model_dim_; }
  int num_heads() const noexcept { return num_heads_; }
  int head_dim() const noexcept { return model_dim_ / num_heads_; }
  const SelfAttentionWeights& weights() const noexcept { return weights_; }

  // x: [L, E] or [B, L, E], finite. Each head runs through attention()'s kernels and its
  // overflow rule (attention.hpp): scores beyond float32 are computed in float64. Throws
  // SHAPE_MISMATCH, EMPTY_INPUT (L = 0 or B = 0), TOO_LARGE (any tensor over
  // kDefaultMaxElements), NON_FINITE for NaN or infinity in x, and for float32 values the pass
  // must hold that do not fit float32: a projection (x W + b, concat W_O + b_O) or, with
  // options.trace, a score stage; the message names which and where.
  ForwardResult forward(const ConstTensorView& x, const ForwardOptions& options = {}) const;

 private:
  int model_dim_;
  int num_heads_;
  SelfAttentionWeights weights_;
};

}  // namespace attnlens
