#include <attnlens/optim.hpp>
#include <attnlens/random.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <cmath>
#include <new>

namespace attnlens {
namespace {

constexpr double kPi = 3.14159265358979323846;

void require_in(float value, float lo, float hi, bool hi_open, const char* name) {
  if (!std::isfinite(value) || value < lo || (hi_open ? value >= hi : value > hi)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, name, " is ", value, "; it must be in [", lo, ", ", hi,
                 hi_open ? ")" : "]");
  }
}

// base^n by repeated squaring: IEEE multiplications only, so the same bits on every platform
// (std::pow's last bit differs between C libraries).
double power(double base, std::int64_t n) {
  double result = 1.0;
  while (n > 0) {
    if (n & 1) result *= base;
    base *= base;
    n >>= 1;
  }
  return result;
}

}  // namespace

void validate(const AdamWConfig& c) {
  require_in(c.beta1, 0.0f, 1.0f, true, "AdamW beta1");
  require_in(c.beta2, 0.0f, 1.0f, true, "AdamW beta2");
  if (!std::isfinite(c.eps) || c.eps <= 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW eps is ", c.eps, "; it must be finite and > 0");
  }
  if (!std::isfinite(c.weight_decay) || c.weight_decay < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW weight_decay is ", c.weight_decay,
                 "; it must be finite and >= 0");
  }
  if (!std::isfinite(c.max_grad_norm) || c.max_grad_norm < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW max_grad_norm is ", c.max_grad_norm,
                 "; it must be finite and >= 0 (0 turns clipping off)");
  }
}

AdamW::AdamW(const AdamWConfig& config, std::int64_t parameter_count) : config_(config) {
  validate(config);
  if (parameter_count < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW parameter_count is ", parameter_count,
                 "; it must be >= 0");
  }
  try {
    m_.assign(static_cast<std::size_t>(parameter_count), 0.0f);
    v_.assign(static_cast<std::size_t>(parameter_count), 0.0f);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "AdamW could not allocate its moments for ",
                 parameter_count, " parameters");
  }
}

void AdamW::reset() {
  std::fill(m_.begin(), m_.end(), 0.0f);
  std::fill(v_.begin(), v_.end(), 0.0f);
  steps_ = 0;
}

AdamWState AdamW::state() const {
  return AdamWState{m_, v_, steps_};
}

void AdamW::set_state(const AdamWState& state) {
  const std::int64_t n = parameter_count();
  if (static_cast<std::int64_t>(state.m.size()) != n ||
      static_cast<std::int64_t>(state.v.size()) != n) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW state: m holds ", state.m.size(), " and v ",
                 state.v.size(), " values; the optimizer has ", n, " parameters");
  }
  if (state.steps < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW state: steps is ", state.steps,
                 "; it must be >= 0");
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const float m = state.m[static_cast<std::size_t>(i)];
    const float v = state.v[static_cast<std::size_t>(i)];
    if (!std::isfinite(m) || !std::isfinite(v) || v < 0.0f) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW state: moments at index ", i, " are m = ", m,
                   ", v = ", v, "; they must be finite and v >= 0");
    }
  }
  m_ = state.m;
  v_ = state.v;
  steps_ = state.steps;
}

void AdamW::set_config(const AdamWConfig& config) {
  validate(config);
  config_ = config;
}

void AdamW::step(float* params, const float* grads, const std::vector<ParamSegment>& segments,
                 float lr) {
  const std::int64_t n = parameter_count();
  if (!std::isfinite(lr) || lr < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "learning rate is ", lr, "; it must be finite and >= 0");
  }
  std::int64_t covered = 0;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (segments[s].offset != covered || segments[s].count < 0) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW segment ", s, " starts at ", segments[s].offset,
                   " with ", segments[s].count, " elements; expected a start at ", covered,
                   " (segments must cover the parameters in order, without gaps)");
    }
    covered += segments[s].count;
  }
  if (covered != n) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW segments cover ", covered, " parameters but ", n,
                 " were given");
  }
  if (n > 0 && (params == nullptr || grads == nullptr)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "AdamW step needs parameter and gradient data");
  }

  const std::int64_t step = steps_ + 1;
  const double beta1_power = power(config_.beta1, step);
  const double beta2_power = power(config_.beta2, step);
  // PyTorch's AdamW: θ ← θ (1 − lr λ); θ ← θ − (lr / bc1) · m / (sqrt(v) / sqrt(bc2) + ε).
  const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.eps;
  const float step_size = static_cast<float>(lr / (1.0 - beta1_power));
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - beta2_power));
  const float decay_factor = 1.0f - lr * config_.weight_decay;
  float* m = m_.data();
  float* v = v_.data();
  // Two passes: the first computes every new value and writes nothing, so an update that would
  // leave a parameter or a moment non-finite (a huge rate, an overflowing gradient) is refused
  // with the model as it was; the second writes the same values.
  for (const bool write : {false, true}) {
    for (const ParamSegment& seg : segments) {
      const float keep = seg.decay ? decay_factor : 1.0f;
      const std::int64_t end = seg.offset + seg.count;
      for (std::int64_t i = seg.offset; i < end; ++i) {
        const float g = grads[i];
        const float mi = b1 * m[i] + (1.0f - b1) * g;
        const float vi = b2 * v[i] + (1.0f - b2) * (g * g);
        const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
        const float p = params[i] * keep - step_size * (mi / denom);
        if (write) {
          m[i] = mi;
          v[i] = vi;
          params[i] = p;
        } else if (!std::isfinite(p) || !std::isfinite(mi) || !std::isfinite(vi)) {
          detail::fail(ErrorCode::NON_FINITE, "the AdamW update at learning rate ", lr,
                       " would make parameter ", i, " non-finite (gradient ", g, ", value ",
                       params[i], " -> ", p,
                       "); nothing was changed (a smaller learning rate "
                       "or gradient clipping keeps the update finite)");
        }
      }
    }
  }
  steps_ = step;
}

float clip_grad_norm(float* grads, std::int64_t count, float max_norm) {
  if (!std::isfinite(max_norm) || max_norm < 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "max_grad_norm is ", max_norm,
                 "; it must be finite and >= 0 (0 turns clipping off)");
  }
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double g = grads[i];
    sum += g * g;
  }
  const double norm = std::sqrt(sum);
  if (!std::isfinite(norm)) {
    detail::fail(ErrorCode::NON_FINITE, "the gradient norm is ", norm,
                 " (a NaN or infinite gradient: the step diverged; lower the learning rate)");
  }
  if (max_norm > 0.0f && norm > max_norm) {
    const float factor = static_cast<float>(max_norm / norm);
    for (std::int64_t i = 0; i < count; ++i)
      grads[i] *= factor;
  }
  return static_cast<float>(norm);
}

void validate(const LrSchedule& s) {
  if (!std::isfinite(s.max_lr) || s.max_lr <= 0.0f) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "schedule max_lr is ", s.max_lr,
                 "; it must be finite and > 0");
  }
  if (!std::isfinite(s.min_lr) || s.min_lr < 0.0f || s.min_lr > s.max_lr) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "schedule min_lr is ", s.min_lr,
                 "; it must be in [0, max_lr = ", s.max_lr, "]");
  }
  if (s.warmup_steps < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "schedule warmup_steps is ", s.warmup_steps,
                 "; it must be >= 0");
  }
  if (s.total_steps <= s.warmup_steps) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "schedule total_steps is ", s.total_steps,
                 "; it must be greater than warmup_steps = ", s.warmup_steps);
  }
}

float learning_rate(const LrSchedule& s, std::int64_t step) {
  validate(s);
  if (step < 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "schedule step is ", step, "; it must be >= 0");
  }
  if (step < s.warmup_steps) {
    return static_cast<float>(static_cast<double>(s.max_lr) * static_cast<double>(step + 1) /
                              static_cast<double>(s.warmup_steps));
  }
  if (step >= s.total_steps) return s.min_lr;
  // progress 0 at the end of warm-up, 1 at total_steps; the factor falls from 1 to 0.
  const double progress = static_cast<double>(step - s.warmup_steps) /
                          static_cast<double>(s.total_steps - s.warmup_steps);
  const double factor = 0.5 * (1.0 + detmath::cos(kPi * progress));
  return static_cast<float>(s.min_lr + factor * (static_cast<double>(s.max_lr) - s.min_lr));
}

}  // namespace attnlens
