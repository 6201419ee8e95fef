// Private: the buffers a GPT-2 model keeps between calls — activations for the backward pass,
// logits, and the backward pass's scratch (one set per training thread). Grown when a call needs
// more, never shrunk, so a training loop allocates nothing of its own once warm (attention() still
// allocates its results). Every buffer starts on a 64-byte boundary, so Eigen's vectorised
// reductions and exp/tanh split the same elements into the same packets on every run.
#pragma once

#include "core/matmul.hpp"
#include "models/gpt2/layout.hpp"

#include <attnlens/attention.hpp>
#include <attnlens/gpt2.hpp>

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace attnlens::detail {

using AlignedFloats = std::vector<float, Eigen::aligned_allocator<float>>;

// One block's activations, for B·T = N rows, d = H·hd.
struct Gpt2BlockActivations {
  float* ln1 = nullptr;       // (N, d) ln_1 output
  float* ln1_mean = nullptr;  // (N)
  float* ln1_rstd = nullptr;  // (N)
  float* q = nullptr;         // (B, H, T, hd)
  float* k = nullptr;         // (B, H, T, hd)
  float* v = nullptr;         // (B, H, T, hd)
  AttentionResult attention;  // output (B, H, T, hd); weights (B, H, T, T) when kept
  float* atty = nullptr;      // (N, d) heads side by side
  float* res2 = nullptr;      // (N, d) stream after the attention
  float* ln2 = nullptr;       // (N, d)
  float* ln2_mean = nullptr;  // (N)
  float* ln2_rstd = nullptr;  // (N)
  float* fch = nullptr;       // (N, 4d) mlp.c_fc output, GELU's input
  float* fch_gelu = nullptr;  // (N, 4d)
  float* res3 = nullptr;      // (N, d) stream after the block
};

// The buffers of one forward/backward pass over B x T tokens (one per training thread).
struct Gpt2Activations {
  std::int64_t B = 0, T = 0;

  float* encoded = nullptr;   // (N, d) wte[ids] + wpe
  float* qkv = nullptr;       // (N, 3d) c_attn output before the split into heads
  float* lnf = nullptr;       // (N, d)
  float* lnf_mean = nullptr;  // (N)
  float* lnf_rstd = nullptr;  // (N)
  float* logits = nullptr;    // (N, V) when asked; becomes dlogits in the backward pass
  // One slot per block when training, else a single slot reused by every block.
  std::vector<Gpt2BlockActivations> blocks;

  // Backward scratch (null unless prepared for backward).
  float* dres = nullptr;     // (N, d) gradient of the residual stream
  float* dln = nullptr;      // (N, d) gradient of a LayerNorm's output
  float* datty = nullptr;    // (N, d)
  float* dheads = nullptr;   // (B, H, T, hd)
  float* dq = nullptr;       // (B, H, T, hd)
  float* dk = nullptr;       // (B, H, T, hd)
  float* dv = nullptr;       // (B, H, T, hd)
  float* dqkv = nullptr;     // (N, 3d)
  float* dfch = nullptr;     // (N, 4d)
  float* dscores = nullptr;  // (T, T)

  // Points every buffer for a call on B x T tokens: `slots` block slots (1 or layers), logits
  // when `logits`, the backward scratch when `backward`. Throws OUT_OF_MEMORY.
  void prepare(const Gpt2Config& config, std::int64_t B, std::int64_t T, int slots, bool logits,
               bool backward);

 private:
  AlignedFloats storage_;
};

struct Gpt2Workspace {
  Gpt2Layout layout;
  // parts[0] serves every call; training on t threads uses parts[0 .. t-1], one per share of
  // the batch, with gradients of part p > 0 in part_grads[p - 1] until they are summed.
  std::vector<Gpt2Activations> parts = std::vector<Gpt2Activations>(1);
  std::vector<std::vector<float>> part_grads;
  // [B, T] ids copied out of a [B, T + 1] batch for train_step.
  std::vector<std::int32_t> inputs, targets;
  // The blocks' weight matrices packed for forward() and cached forwards (not for training,
  // whose every step changes them), under the model's stamp.
  WeightPanels panels;
};

// Throws Error(BAD_ARGUMENT) for a row of options.logit_rows outside [0, rows) (rows = B · T),
// naming it, when options.logits asks for logits.
void check_logit_rows(const Gpt2ForwardOptions& options, std::int64_t rows);

// The logits of `rows` (indices into the (N, d) final-LayerNorm output `lnf`, any order) =
// lnf[rows] · wteᵀ, one product over the gathered rows (the unembedding is read once): row k of
// the result at out + k · V ([rows.size(), V]), or with `out_at_rows` at out + rows[k] · V (out
// [N, V], the other rows left as they are). Each row equals a product over all N rows within
// float32 rounding (natively Eigen may pick another kernel for fewer rows; WebAssembly's packed
// kernel gives the same bits).
void unembed_rows(float* out, const float* lnf, const float* wte,
                  const std::vector<std::int64_t>& rows, std::int64_t d, std::int64_t V,
                  bool out_at_rows = false);

// A number no model had before: models take one when made and whenever their parameters
// change, so a cache can tell whether it was filled by this model as it is now.
std::uint64_t next_model_stamp() noexcept;

}  // namespace attnlens::detail
