// Private: where each GPT-2 tensor sits in the flat parameter array (and the gradient array,
// which has the same layout), in Hugging Face's checkpoint order.
#pragma once

#include <attnlens/gpt2.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::detail {

// What a tensor is, which decides its initialisation and weight decay.
enum class Gpt2Role {
  Embedding,       // wte, wpe: N(0, 0.02²), decays
  Matrix,          // c_attn, mlp.c_fc weights: N(0, 0.02²), decays
  ResidualMatrix,  // attn.c_proj, mlp.c_proj weights: N(0, (0.02 / sqrt(2 layers))²), decays
  NormWeight,      // LayerNorm weights: 1, no decay
  Bias,            // projection and LayerNorm biases: 0, no decay
};

// One checkpoint tensor: its name (without "transformer."), shape, role and first element.
struct Gpt2TensorInfo {
  std::string name;
  Gpt2Role role = Gpt2Role::Bias;
  Shape shape;
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

// Offsets of one block's tensors.
struct Gpt2BlockOffsets {
  std::int64_t ln1_w = -1, ln1_b = -1;    // [d]; -1 (none) without attention_norm
  std::int64_t attn_w, attn_b;            // c_attn [d, 3d], [3d]
  std::int64_t attn_proj_w, attn_proj_b;  // attn.c_proj [d, d], [d]
  std::int64_t ln2_w, ln2_b;              // [d]
  std::int64_t fc_w, fc_b;                // mlp.c_fc [d, 4d], [4d]
  std::int64_t fc_proj_w, fc_proj_b;      // mlp.c_proj [4d, d], [d]
};

struct Gpt2Layout {
  std::vector<Gpt2TensorInfo> tensors;  // checkpoint order; offsets increase, no gaps
  std::int64_t wte = 0;                 // [V, d]
  std::int64_t wpe = 0;                 // [C, d]
  std::vector<Gpt2BlockOffsets> blocks;
  std::int64_t lnf_w = 0, lnf_b = 0;  // [d]
  std::int64_t total = 0;             // parameter count
};

// The layout of a validated config.
Gpt2Layout gpt2_layout(const Gpt2Config& config);

// Pointers to one block's tensors in a flat array (parameters or gradients).
template <typename F>
struct Gpt2Block {
  F *ln1_w, *ln1_b, *attn_w, *attn_b, *attn_proj_w, *attn_proj_b;
  F *ln2_w, *ln2_b, *fc_w, *fc_b, *fc_proj_w, *fc_proj_b;
};

// ln1_w and ln1_b are null for a model without attention_norm (no ln_1 tensors).
template <typename F>
Gpt2Block<F> gpt2_block(const Gpt2BlockOffsets& o, F* base) {
  F* const ln1_w = o.ln1_w < 0 ? nullptr : base + o.ln1_w;
  F* const ln1_b = o.ln1_b < 0 ? nullptr : base + o.ln1_b;
  return {ln1_w,
          ln1_b,
          base + o.attn_w,
          base + o.attn_b,
          base + o.attn_proj_w,
          base + o.attn_proj_b,
          base + o.ln2_w,
          base + o.ln2_b,
          base + o.fc_w,
          base + o.fc_b,
          base + o.fc_proj_w,
          base + o.fc_proj_b};
}

}  // namespace attnlens::detail
