// Multi-head self-attention: known answers against a float64 reference, the trace, init.
#include "helpers.hpp"
#include "reference.hpp"

#include <cmath>

using attnlens::ForwardOptions;
using attnlens::Init;
using attnlens::RowMatrixXf;
using attnlens::SelfAttention;
using attnlens::SelfAttentionConfig;
using attnlens::SelfAttentionWeights;
using attnlens::Shape;
using testing::view;

namespace {

RowMatrixXf random_matrix(int rows, int cols, std::mt19937& gen) {
  const auto values = ref::random_vector(static_cast<std::size_t>(rows * cols), gen);
  return Eigen::Map<const RowMatrixXf>(values.data(), rows, cols);
}

// Multi-head self-attention in float64 from the definition: project, split columns into
// heads, attend per head (reference attention), concatenate, project.
std::vector<double> reference_mha(const std::vector<float>& x, int L, int E, int H,
                                  const SelfAttentionWeights& w, bool causal) {
  const int d = E / H;
  auto project = [&](const RowMatrixXf& m, const Eigen::VectorXf& b) {
    std::vector<double> y(static_cast<std::size_t>(L * E), 0.0);
    for (int i = 0; i < L; ++i) {
      for (int o = 0; o < E; ++o) {
        double s = b.size() ? b[o] : 0.0;
        for (int e = 0; e < E; ++e)
          s += static_cast<double>(x[static_cast<std::size_t>(i * E + e)]) * m(e, o);
        y[static_cast<std::size_t>(i * E + o)] = s;
      }
    }
    return y;
  };
  const auto q = project(w.wq, w.bq), k = project(w.wk, w.bk), v = project(w.wv, w.bv);
  std::vector<double> concat(static_cast<std::size_t>(L * E));
  for (int h = 0; h < H; ++h) {
    std::vector<float> qh, kh, vh;
    for (int i = 0; i < L; ++i) {
      for (int c = 0; c < d; ++c) {
        qh.push_back(static_cast<float>(q[static_cast<std::size_t>(i * E + h * d + c)]));
        kh.push_back(static_cast<float>(k[static_cast<std::size_t>(i * E + h * d + c)]));
        vh.push_back(static_cast<float>(v[static_cast<std::size_t>(i * E + h * d + c)]));
      }
    }
    ref::Options o;
    o.causal = causal;
    const auto r = ref::attention(qh, {L, d}, kh, {L, d}, vh, {L, d}, o);
    for (int i = 0; i < L; ++i) {
      for (int c = 0; c < d; ++c)
        concat[static_cast<std::size_t>(i * E + h * d + c)] =
            r.output[static_cast<std::size_t>(i * d + c)];
    }
  }
  std::vector<double> out(static_cast<std::size_t>(L * E));
  for (int i = 0; i < L; ++i) {
    for (int o = 0; o < E; ++o) {
      double s = w.bo.size() ? w.bo[o] : 0.0;
      for (int e = 0; e < E; ++e)
        s += concat[static_cast<std::size_t>(i * E + e)] * w.wo(e, o);
      out[static_cast<std::size_t>(i * E + o)] = s;
    }
  }
  return out;
}

SelfAttentionWeights random_weights(int E, bool bias, std::mt19937& gen) {
  SelfAttentionWeights w;
  w.wq = random_matrix(E, E, gen);
  w.wk = random_matrix(E, E, gen);
  w.wv = random_matrix(E, E, gen);
  w.wo = random_matrix(E, E, gen);
  if (bias) {
    w.bq = random_matrix(E, 1, gen).col(0);
    w.bk = random_matrix(E, 1, gen).col(0);
    w.bv = random_matrix(E, 1, gen).col(0);
    w.bo = random_matrix(E, 1, gen).col(0);
  }
  return w;
}

}  // namespace

TEST_CASE("one head with identity weights is attention(x, x, x)", "[self_attention][known]") {
  std::mt19937 gen(71);
  const auto x = ref::random_vector(5 * 4, gen);
  SelfAttentionConfig config;
  config.model_dim = 4;
  config.num_heads = 1;
  config.init = Init::Identity;
  const SelfAttention layer(config);
  ForwardOptions fo;
  fo.causal = true;
  const auto r = layer.forward(view(x, {5, 4}), fo);
  attnlens::AttentionOptions ao;
  ao.causal = true;
  const auto expected = attnlens::attention(view(x, {5, 4}), view(x, {5, 4}), view(x, {5, 4}), ao);
  CHECK(ref::max_abs_diff(r.output.data, expected.output.data) < 1e-6);
  CHECK(r.weights.shape == Shape{1, 5, 5});
}

TEST_CASE("multi-head known answer with and without biases", "[self_attention][known]") {
  std::mt19937 gen(73);
  const int L = 6, E = 8, H = 2;
  const auto x = ref::random_vector(L * E, gen);
  for (bool bias : {false, true}) {
    for (bool causal : {false, true}) {
      const SelfAttentionWeights w = random_weights(E, bias, gen);
      const SelfAttention layer(E, H, w);
      ForwardOptions fo;
      fo.causal = causal;
      const auto r = layer.forward(view(x, {L, E}), fo);
      INFO("bias " << bias << " causal " << causal);
      CHECK(ref::max_abs_diff(r.output.data, reference_mha(x, L, E, H, w, causal)) < 1e-5);
    }
  }
}

TEST_CASE("without the output projection (W_O = I): the head concatenation",
          "[self_attention][known]") {
  std::mt19937 gen(79);
  const int L = 4, E = 6, H = 3;
  const auto x = ref::random_vector(L * E, gen);
  SelfAttentionWeights w = random_weights(E, false, gen);
  w.wo = RowMatrixXf::Identity(E, E);
  const SelfAttention layer(E, H, w);
  ForwardOptions fo;
  fo.trace = true;
  const auto r = layer.forward(view(x, {L, E}), fo);
  CHECK(ref::max_abs_diff(r.output.data, reference_mha(x, L, E, H, w, false)) < 1e-5);
  CHECK(r.output.data == r.trace->concat.data);
}

TEST_CASE("the trace holds every stage, consistently", "[self_attention][trace]") {
  std::mt19937 gen(83);
  const int L = 5, E = 8, H = 2, d = 4;
  const auto x = ref::random_vector(L * E, gen);
  SelfAttentionConfig config;
  config.model_dim = E;
  config.num_heads = H;
  config.seed = 3;
  const SelfAttention layer(config);
  ForwardOptions fo;
  fo.causal = true;
  fo.trace = true;
  const auto r = layer.forward(view(x, {L, E}), fo);
  REQUIRE(r.trace);
  const attnlens::Trace& t = *r.trace;
  CHECK(t.scale == Approx(0.5f));
  CHECK(t.x.data == x);
  CHECK(t.q.shape == Shape{H, L, d});
  CHECK(t.scores.shape == Shape{H, L, L});
  CHECK(t.mask.shape == Shape{L, L});
  CHECK(t.weights.data == r.weights.data);
  CHECK(t.output.data == r.output.data);
  // Q = x W_Q, head h = columns h*d .. h*d + d - 1.
  const Eigen::Map<const RowMatrixXf> xm(x.data(), L, E);
  const RowMatrixXf q = xm * layer.weights().wq;
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < L; ++i) {
      for (int c = 0; c < d; ++c)
        CHECK(t.q.data[static_cast<std::size_t>((h * L + i) * d + c)] ==
              Approx(q(i, h * d + c)).margin(1e-6));
    }
  }
  for (std::size_t i = 0; i < t.scores.data.size(); ++i) {
    CHECK(t.scaled.data[i] == t.scores.data[i] * t.scale);
  }
  for (int i = 0; i < L; ++i) {
    for (int j = 0; j < L; ++j) {
      CHECK(t.mask.data[static_cast<std::size_t>(i * L + j)] == (j > i ? -INFINITY : 0.0f));
    }
  }
  // weights = softmax(scaled + mask), head output = weights V, concat = heads side by side.
  for (int h = 0; h < H; ++h) {
    RowMatrixXf logits = Eigen::Map<const RowMatrixXf>(t.scaled.data.data() + h * L * L, L, L) +
                         Eigen::Map<const RowMatrixXf>(t.mask.data.data(), L, L);
    attnlens::softmax_rows(logits);
    const Eigen::Map<const RowMatrixXf> w(t.weights.data.data() + h * L * L, L, L);
    CHECK((logits - w).cwiseAbs().maxCoeff() < 1e-7);
    const Eigen::Map<const RowMatrixXf> v(t.v.data.data() + h * L * d, L, d);
    const Eigen::Map<const RowMatrixXf> o(t.head_outputs.data.data() + h * L * d, L, d);
    CHECK(((w * v) - o).cwiseAbs().maxCoeff() < 1e-6);
    const Eigen::Map<const RowMatrixXf> concat(t.concat.data.data(), L, E);
    CHECK((concat.middleCols(h * d, d) - o).cwiseAbs().maxCoeff() == 0.0f);
  }
  const Eigen::Map<const RowMatrixXf> concat(t.concat.data.data(), L, E);
  const RowMatrixXf out = concat * layer.weights().wo;
  CHECK((out - Eigen::Map<const RowMatrixXf>(r.output.data.data(), L, E)).cwiseAbs().maxCoeff() <
        1e-6);
}

TEST_CASE("a batch gives the same answers as one sequence at a time", "[self_attention]") {
  std::mt19937 gen(89);
  const int B = 3, L = 4, E = 6;
  const auto x = ref::random_vector(B * L * E, gen);
  SelfAttentionConfig config;
  config.model_dim = E;
  config.num_heads = 3;
  const SelfAttention layer(config);
  const auto batched = layer.forward(view(x, {B, L, E}));
  CHECK(batched.weights.shape == Shape{B, 3, L, L});
  for (int b = 0; b < B; ++b) {
    const std::vector<float> xb(x.begin() + b * L * E, x.begin() + (b + 1) * L * E);
    const auto single = layer.forward(view(xb, {L, E}));
    const std::vector<float> part(batched.output.data.begin() + b * L * E,
                                  batched.output.data.begin() + (b + 1) * L * E);
    CHECK(ref::max_abs_diff(part, single.output.data) < 1e-6);
  }
}

TEST_CASE("causal self-attention: earlier outputs ignore later tokens",
          "[self_attention][invariant]") {
  std::mt19937 gen(97);
  const int L = 5, E = 8;
  auto x = ref::random_vector(L * E, gen);
  SelfAttentionConfig config;
  config.model_dim = E;
  config.num_heads = 2;
  const SelfAttention layer(config);
  ForwardOptions fo;
  fo.causal = true;
  const auto before = layer.forward(view(x, {L, E}), fo);
  for (int e = 0; e < E; ++e)
    x[static_cast<std::size_t>((L - 1) * E + e)] += 5.0f;
  const auto after = layer.forward(view(x, {L, E}), fo);
  for (int i = 0; i < (L - 1) * E; ++i)
    CHECK(before.output.data[static_cast<std::size_t>(i)] ==
          after.output.data[static_cast<std::size_t>(i)]);
  CHECK(before.output.data.back() != after.output.data.back());
  fo.causal = false;
  const auto full_before = layer.forward(view(x, {L, E}), fo);
  x[0] += 1.0f;
  const auto full_after = layer.forward(view(x, {L, E}), fo);
  CHECK(full_before.output.data[static_cast<std::size_t>((L - 1) * E)] !=
        full_after.output.data[static_cast<std::size_t>((L - 1) * E)]);
}

TEST_CASE("initialisations have the documented distributions", "[self_attention][init]") {
  SelfAttentionConfig config;
  config.model_dim = 128;
  config.num_heads = 4;
  config.init = Init::Xavier;
  const SelfAttention xavier(config);
  const double bound = std::sqrt(6.0 / 256.0);
  CHECK(xavier.weights().wq.cwiseAbs().maxCoeff() <= bound);
  CHECK(xavier.weights().wq.cwiseAbs().maxCoeff() > 0.95 * bound);
  config.init = Init::Normal;
  const SelfAttention normal(config);
  const auto& w = normal.weights().wk;
  const double var = w.cast<double>().array().square().mean();
  CHECK(var == Approx(1.0 / 128.0).epsilon(0.05));
  config.init = Init::Identity;
  config.bias = true;
  const SelfAttention identity(config);
  CHECK(identity.weights().wv.isIdentity());
  CHECK(identity.weights().bq.size() == 128);
  CHECK(identity.weights().bq.isZero());
  // Each projection has its own stream.
  CHECK(xavier.weights().wq != xavier.weights().wk);
}

TEST_CASE("same seed: bit-identical weights and outputs, other seeds differ",
          "[self_attention][determinism]") {
  SelfAttentionConfig config;
  config.model_dim = 16;
  config.num_heads = 4;
  config.seed = 1234;
  const SelfAttention a(config), b(config);
  config.seed = 1235;
  const SelfAttention c(config);
  CHECK(a.weights().wq == b.weights().wq);
  CHECK(a.weights().wo == b.weights().wo);
  CHECK(a.weights().wq != c.weights().wq);
  std::mt19937 gen(101);
  const auto x = ref::random_vector(3 * 16, gen);
  CHECK(a.forward(view(x, {3, 16})).output.data == b.forward(view(x, {3, 16})).output.data);
}
