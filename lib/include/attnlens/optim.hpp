// attnlens — training: AdamW, a warm-up + cosine learning-rate schedule, gradient clipping.
//
// Everything works on one flat float32 array of parameters and a gradient array of the same
// layout (as Gpt2Model keeps them), so one loop updates a whole model. Results are
// deterministic: the same inputs give the same bits on every run (no threads, no libm calls
// whose last bit varies: β^t is computed by repeated squaring, not pow()).
#pragma once

#include <cstdint>
#include <vector>

namespace attnlens {

// AdamW (Loshchilov & Hutter), with PyTorch's torch.optim.AdamW update:
//   m = β1 m + (1 − β1) g,   v = β2 v + (1 − β2) g²
//   m̂ = m / (1 − β1^t),      v̂ = v / (1 − β2^t)
//   θ = θ − lr · (m̂ / (sqrt(v̂) + ε) + λ θ)      (λ only on parameters that decay)
// Defaults are nanoGPT's for GPT-2 training.
struct AdamWConfig {
  float beta1 = 0.9f;          // first-moment decay; 0 <= beta1 < 1
  float beta2 = 0.95f;         // second-moment decay; 0 <= beta2 < 1
  float eps = 1e-8f;           // added to sqrt(v̂); > 0
  float weight_decay = 0.1f;   // λ, decoupled; >= 0 (0 = plain Adam)
  float max_grad_norm = 1.0f;  // global-norm clipping threshold; 0 = no clipping
};

// Throws Error(BAD_ARGUMENT) naming the field when a value is out of its range or not finite.
void validate(const AdamWConfig& config);

// A contiguous run of the flat parameter array that shares one weight-decay rule.
struct ParamSegment {
  std::int64_t offset = 0;  // first element
  std::int64_t count = 0;   // number of elements
  bool decay = false;       // apply weight decay (nanoGPT: every 2-D matrix, incl. embeddings)
};

// AdamW's moments and step count: what a training run must keep, besides the parameters, to
// resume bit for bit.
struct AdamWState {
  std::vector<float> m;    // first moments, one per parameter (same layout as the parameters)
  std::vector<float> v;    // second moments, one per parameter; >= 0
  std::int64_t steps = 0;  // updates taken (t in the bias corrections)
};

class AdamW {
 public:
  // Moments for `parameter_count` parameters, zero-initialised. Throws BAD_ARGUMENT for an
  // invalid config or a negative count, OUT_OF_MEMORY when the moments cannot be allocated.
  AdamW(const AdamWConfig& config, std::int64_t parameter_count);

  // One update of params[0, parameter_count) from grads (same layout). `segments` must cover
  // the array exactly, in order, without gaps; `lr` is the learning rate (finite, >= 0).
  // Throws BAD_ARGUMENT for a bad lr or segment list, NON_FINITE (naming the parameter's index)
  // when the update would leave a parameter or a moment non-finite; either way before changing
  // anything.
  void step(float* params, const float* grads, const std::vector<ParamSegment>& segments, float lr);

  // Forgets the moments and the step count (a fresh start with the same config).
  void reset();

  // New hyper-parameters for the following steps; the moments and step count stay (bias
  // corrections use the new β at the current step, as PyTorch). Throws as validate(AdamWConfig).
  void set_config(const AdamWConfig& config);

  // A copy of the moments and the step count.
  AdamWState state() const;

  // Restores a state() of an optimizer with the same parameter count: the following steps then
  // give the same bits as that optimizer's would. Throws BAD_ARGUMENT (before changing anything)
  // when m or v does not hold parameter_count() values, a moment is not finite, a second moment
  // is negative, or steps < 0.
  void set_state(const AdamWState& state);

  const AdamWConfig& config() const noexcept { return config_; }
  std::int64_t steps() const noexcept { return steps_; }
  std::int64_t parameter_count() const noexcept { return static_cast<std::int64_t>(m_.size()); }

 private:
  AdamWConfig config_;
  std::vector<float> m_;
  std::vector<float> v_;
  std::int64_t steps_ = 0;
};

// Scales grads[0, count) in place so that their L2 norm is at most `max_norm` (no change when
// it already is, or when max_norm is 0). Returns the norm before clipping, accumulated in
// float64 in index order. Throws NON_FINITE when the norm is NaN or infinite (a diverged step:
// the caller decides what to do; the gradients are left unchanged), BAD_ARGUMENT when max_norm
// is negative or not finite.
float clip_grad_norm(float* grads, std::int64_t count, float max_norm);

// Learning rate at a step: linear warm-up from max_lr / warmup_steps to max_lr over the first
// `warmup_steps` steps, then a cosine decay to `min_lr` at step `total_steps`, then min_lr.
// Steps count from 0 (step 0 uses max_lr / warmup_steps; nanoGPT's schedule).
struct LrSchedule {
  float max_lr = 3e-4f;             // peak rate; finite, > 0
  float min_lr = 3e-5f;             // floor; 0 <= min_lr <= max_lr
  std::int64_t warmup_steps = 100;  // >= 0 (0 = start at max_lr)
  std::int64_t total_steps = 1000;  // > warmup_steps
};

// Throws Error(BAD_ARGUMENT) naming the field when the schedule is inconsistent.
void validate(const LrSchedule& schedule);

// The rate at `step` (>= 0). Deterministic on every platform (the cosine is computed with
// attnlens' own portable cos). Throws BAD_ARGUMENT for a bad schedule or a negative step.
float learning_rate(const LrSchedule& schedule, std::int64_t step);

}  // namespace attnlens
