// Private: the buffers a BERT-family model keeps between calls: one set of activations per
// training thread (every layer's, for the backward pass) or a single layer's for inference, and
// the backward pass's scratch. Buffers grow when a call needs more and are never shrunk; each is
// 64-byte aligned, so Eigen's reductions split the same elements the same way on every run.
#pragma once

#include "core/matmul.hpp"
#include "models/bert/layout.hpp"

#include <attnlens/attention.hpp>

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace attnlens::detail {

using BertFloats = std::vector<float, Eigen::aligned_allocator<float>>;

// One layer's activations over N = B·T rows.
struct BertLayerActivations {
  BertFloats q, k, v;                  // (B, H, T, hd)
  AttentionResult attention;           // output (B, H, T, hd); weights (B, H, T, T) when kept
  BertFloats atty;                     // (N, d) heads side by side
  BertFloats r1;                       // (N, d) input + attention output projection
  BertFloats h1, h1_mean, h1_rstd;     // LayerNorm of r1
  BertFloats f, g;                     // (N, I) intermediate before and after GELU
  BertFloats r2;                       // (N, d) h1 + output projection
  BertFloats out, out_mean, out_rstd;  // LayerNorm of r2: the layer's output
};

// The buffers of one pass over B x T tokens.
struct BertActivations {
  BertFloats emb_sum;                        // (N, d) word + position + token type
  BertFloats emb, emb_mean, emb_rstd;        // its LayerNorm: the first layer's input
  BertFloats qkv;                            // (N, 3d)
  std::vector<std::uint8_t> mask;            // (B, 1, T, T) boolean, when some key is padding
  std::vector<BertLayerActivations> layers;  // every layer's when training, else one reused
  // The masked-LM head over R gathered rows.
  std::vector<std::int64_t> rows;
  BertFloats head_in, head_t, head_u, head_v, head_mean, head_rstd;  // (R, d), (R)
  BertFloats logits;                                                 // (R, V)
  std::vector<std::int32_t> row_labels;                              // (R)
  // Backward scratch.
  BertFloats dres, dtmp, datty, dheads, dq, dk, dv, dqkv, dfc, dscores, dhead_a, dhead_b;
};

struct BertWorkspace {
  BertLayout layout;
  std::vector<BertActivations> parts = std::vector<BertActivations>(1);
  std::vector<std::vector<float>> part_grads;
  // The layers' weight matrices packed for forward() (not for training, whose every step changes
  // them; train_step forgets them).
  WeightPanels panels;
};

// Resizes `buffer` to at least n floats (never shrinks). Throws OUT_OF_MEMORY naming `what`.
void grow_to(BertFloats& buffer, std::int64_t n, const char* what);

}  // namespace attnlens::detail
