// AdamW, gradient clipping and the learning-rate schedule: known answers, a float64 reference of
// PyTorch's AdamW update, and the wiring of Gpt2Model::train_step.
#include "gpt2_reference.hpp"
#include "helpers.hpp"

#include <attnlens/gpt2.hpp>
#include <attnlens/optim.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using attnlens::AdamW;
using attnlens::AdamWConfig;
using attnlens::ErrorCode;
using attnlens::LrSchedule;
using attnlens::ParamSegment;
using testing::require_error;

TEST_CASE("AdamW follows PyTorch's update, with decay only where asked", "[gpt2]") {
  AdamWConfig config;
  config.beta1 = 0.9f;
  config.beta2 = 0.999f;
  config.eps = 1e-8f;
  config.weight_decay = 0.1f;
  std::vector<float> params = {1.0f, -2.0f, 0.5f, 3.0f, -0.25f};
  const std::vector<ParamSegment> segments = {{0, 2, true}, {2, 3, false}};
  AdamW adamw(config, 5);

  // The float64 reference: torch.optim.AdamW's step written out.
  std::vector<double> p(params.begin(), params.end()), m(5, 0.0), v(5, 0.0);
  const double b1 = config.beta1, b2 = config.beta2, eps = config.eps, wd = config.weight_decay;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> grad_dist(-1.0f, 1.0f);
  for (int step = 1; step <= 5; ++step) {
    std::vector<float> grads(5);
    for (float& g : grads)
      g = grad_dist(gen);
    grads[2] = 0.0f;  // a zero gradient moves a parameter only through its moments
    const float lr = 0.01f * static_cast<float>(step);
    adamw.step(params.data(), grads.data(), segments, lr);
    for (std::size_t i = 0; i < 5; ++i) {
      const bool decays = i < 2;
      if (decays) p[i] *= 1.0 - static_cast<double>(lr) * wd;
      m[i] = b1 * m[i] + (1 - b1) * grads[i];
      v[i] = b2 * v[i] + (1 - b2) * grads[i] * grads[i];
      const double m_hat = m[i] / (1 - std::pow(b1, step));
      const double v_hat = v[i] / (1 - std::pow(b2, step));
      p[i] -= static_cast<double>(lr) * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
  CHECK(adamw.steps() == 5);
  // Each float32 update rounds a handful of operations on O(1) values: a few ulp (~1e-7) per
  // step, five steps: 1e-6 absolute on parameters of size <= 3.
  const auto cmp = gpt2ref::compare("AdamW parameters", params, p, 1e-6, 0.0);
  INFO(cmp.report);
  CHECK(cmp.ok);

  // First step from zero moments: m̂ = g and v̂ = g², so each parameter moves by lr · sign(g)
  // (plus the decay) — the well-known first AdamW step.
  AdamW fresh(config, 2);
  std::vector<float> q = {1.0f, 1.0f};
  const std::vector<float> g = {0.5f, -0.003f};
  fresh.step(q.data(), g.data(), {{0, 1, true}, {1, 1, false}}, 0.1f);
  CHECK(q[0] == Approx(1.0 * (1 - 0.1 * 0.1) - 0.1).epsilon(1e-6));
  CHECK(q[1] == Approx(1.0 + 0.1).epsilon(1e-6));

  fresh.reset();
  CHECK(fresh.steps() == 0);
}

TEST_CASE("AdamW, clipping and schedule reject bad settings before changing anything", "[gpt2]") {
  AdamWConfig bad;
  bad.beta1 = 1.0f;
  require_error([&] { AdamW(bad, 3); }, ErrorCode::BAD_ARGUMENT, {"AdamW beta1 is 1"});
  bad = {};
  bad.eps = 0.0f;
  require_error([&] { AdamW(bad, 3); }, ErrorCode::BAD_ARGUMENT, {"AdamW eps is 0"});
  bad = {};
  bad.weight_decay = -0.1f;
  require_error([&] { AdamW(bad, 3); }, ErrorCode::BAD_ARGUMENT, {"weight_decay is -0.1"});
  bad = {};
  bad.max_grad_norm = NAN;
  require_error([&] { attnlens::validate(bad); }, ErrorCode::BAD_ARGUMENT, {"max_grad_norm"});
  require_error([&] { AdamW({}, -1); }, ErrorCode::BAD_ARGUMENT, {"parameter_count is -1"});

  AdamW adamw({}, 3);
  std::vector<float> p = {1, 2, 3};
  const std::vector<float> g = {1, 1, 1};
  require_error(
      [&] {
        adamw.step(p.data(), g.data(), {{0, 2, true}}, 0.1f);
      },
      ErrorCode::BAD_ARGUMENT, {"segments cover 2 parameters but 3 were given"});
  require_error(
      [&] {
        adamw.step(p.data(), g.data(), {{0, 1, true}, {2, 1, true}}, 0.1f);
      },
      ErrorCode::BAD_ARGUMENT, {"segment 1 starts at 2", "expected a start at 1"});
  require_error(
      [&] {
        adamw.step(p.data(), g.data(), {{0, 3, true}}, INFINITY);
      },
      ErrorCode::BAD_ARGUMENT, {"learning rate is inf"});
  CHECK(p == std::vector<float>{1, 2, 3});
  CHECK(adamw.steps() == 0);

  // A finite rate that would overflow a parameter: refused, with parameters, moments and the
  // step count as they were (the first pass computes every new value before any is written).
  AdamWConfig decaying;
  decaying.weight_decay = 0.1f;
  AdamW refusing(decaying, 3);
  refusing.step(p.data(), g.data(), {{0, 3, true}}, 0.01f);
  const std::vector<float> kept = p;
  const attnlens::AdamWState state = refusing.state();
  require_error(
      [&] {
        refusing.step(p.data(), g.data(), {{0, 3, true}}, 3e38f);
      },
      ErrorCode::NON_FINITE, {"would make parameter 0 non-finite", "nothing was changed"});
  CHECK(p == kept);
  CHECK(refusing.steps() == 1);
  CHECK(refusing.state().m == state.m);
  CHECK(refusing.state().v == state.v);
  // An overflowing gradient (its square is infinite): refused the same way.
  const std::vector<float> huge = {1e30f, 1.0f, 1.0f};
  require_error(
      [&] {
        refusing.step(p.data(), huge.data(), {{0, 3, true}}, 0.01f);
      },
      ErrorCode::NON_FINITE, {"parameter 0"});
  CHECK(p == kept);
  CHECK(refusing.state().v == state.v);

  LrSchedule s;
  s.min_lr = 2 * s.max_lr;
  require_error([&] { attnlens::learning_rate(s, 0); }, ErrorCode::BAD_ARGUMENT, {"min_lr"});
  s = {};
  s.total_steps = s.warmup_steps;
  require_error([&] { attnlens::learning_rate(s, 0); }, ErrorCode::BAD_ARGUMENT,
                {"total_steps is 100", "greater than warmup_steps = 100"});
  require_error([&] { attnlens::learning_rate({}, -1); }, ErrorCode::BAD_ARGUMENT, {"step is -1"});
}

TEST_CASE("gradient clipping by global norm", "[gpt2]") {
  std::vector<float> g = {3.0f, 4.0f};
  CHECK(attnlens::clip_grad_norm(g.data(), 2, 1.0f) == 5.0f);
  // Scaled by 1/5: 0.6 and 0.8, each within one rounding of the float32 product.
  CHECK(g[0] == Approx(0.6).epsilon(1e-7));
  CHECK(g[1] == Approx(0.8).epsilon(1e-7));
  CHECK(attnlens::clip_grad_norm(g.data(), 2, 2.0f) == Approx(1.0).epsilon(1e-7));
  CHECK(g[0] == Approx(0.6).epsilon(1e-7));  // under the limit: unchanged
  std::vector<float> big = {30.0f, 40.0f};
  CHECK(attnlens::clip_grad_norm(big.data(), 2, 0.0f) == 50.0f);  // 0: measure only
  CHECK(big == std::vector<float>{30.0f, 40.0f});
  std::vector<float> diverged = {1.0f, NAN};
  require_error([&] { attnlens::clip_grad_norm(diverged.data(), 2, 1.0f); }, ErrorCode::NON_FINITE,
                {"gradient norm is nan"});
  CHECK(diverged[0] == 1.0f);
  require_error([&] { attnlens::clip_grad_norm(g.data(), 2, -1.0f); }, ErrorCode::BAD_ARGUMENT,
                {"max_grad_norm is -1"});
}

TEST_CASE("learning rate: linear warm-up, cosine decay to a floor", "[gpt2]") {
  LrSchedule s;
  s.max_lr = 1e-3f;
  s.min_lr = 1e-4f;
  s.warmup_steps = 10;
  s.total_steps = 110;
  using attnlens::learning_rate;
  const double kPi = 3.14159265358979323846;
  // Warm-up: (step + 1) / 10 of the peak.
  CHECK(learning_rate(s, 0) == Approx(1e-4).epsilon(1e-6));
  CHECK(learning_rate(s, 4) == Approx(5e-4).epsilon(1e-6));
  CHECK(learning_rate(s, 9) == Approx(1e-3).epsilon(1e-6));
  // Cosine from the peak at step 10 through the midpoint (max + min) / 2 at step 60 to the floor.
  CHECK(learning_rate(s, 10) == Approx(1e-3).epsilon(1e-6));
  CHECK(learning_rate(s, 60) == Approx(5.5e-4).epsilon(1e-6));
  CHECK(learning_rate(s, 35) ==
        Approx(1e-4 + 0.9e-3 * 0.5 * (1 + std::cos(kPi / 4))).epsilon(1e-6));
  CHECK(learning_rate(s, 110) == Approx(1e-4).epsilon(1e-6));
  CHECK(learning_rate(s, 5000) == Approx(1e-4).epsilon(1e-6));
  for (std::int64_t step = 10; step < 110; ++step)
    CHECK(learning_rate(s, step + 1) <= learning_rate(s, step));
  s.warmup_steps = 0;
  CHECK(learning_rate(s, 0) == Approx(1e-3).epsilon(1e-6));
}

TEST_CASE("Gpt2Model::train_step is gradients, clipping, then AdamW over the segments", "[gpt2]") {
  const attnlens::Gpt2Config c{1, 2, 8, 6, 9};
  attnlens::Gpt2Model trained = attnlens::Gpt2Model::random(c, 3);
  attnlens::Gpt2Model manual = attnlens::Gpt2Model::random(c, 3);
  AdamWConfig config;
  config.max_grad_norm = 0.05f;  // small enough that this step is clipped
  trained.set_optimizer(config);
  const std::vector<std::int32_t> batch = {1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6};
  const float loss = trained.train_step(attnlens::TokenIds{batch.data(), 2, 7}, 3e-3f);

  // Inference-only models hold no gradient array; gradients() reports zeros until the first.
  CHECK(manual.gradient_data().empty());
  for (const auto& [name, g] : manual.gradients()) {
    INFO(name);
    CHECK(std::all_of(g.data.begin(), g.data.end(), [](float x) { return x == 0.0f; }));
  }
  const std::vector<std::int32_t> inputs = {1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5};
  const std::vector<std::int32_t> targets = {2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6};
  CHECK(manual.loss_and_gradients(attnlens::TokenIds{inputs.data(), 2, 6},
                                  attnlens::TokenIds{targets.data(), 2, 6}) == loss);
  std::vector<float> params = manual.parameters(), grads = manual.gradient_data();
  const float norm = attnlens::clip_grad_norm(grads.data(), manual.num_parameters(), 0.05f);
  CHECK(norm == trained.last_grad_norm());
  CHECK(norm > 0.05f);
  AdamW adamw(config, manual.num_parameters());
  adamw.step(params.data(), grads.data(), manual.segments(), 3e-3f);
  CHECK(params == trained.parameters());  // bit-identical
  CHECK(grads == trained.gradient_data());
  CHECK(trained.steps() == 1);
}
