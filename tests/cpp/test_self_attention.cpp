// Multi-head self-attention: known answers against a float64 reference, the trace, init.
#include "compare.hpp"
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
// heads, attend per head (reference attention), concatenate, project. `tolerance` is set to
// ref::mha_tolerance() for these inputs: the float32 layer's worst-case error.
std::vector<double> reference_mha(const std::vector<float>& x, int L, int E, int H,
                                  const SelfAttentionWeights& w, bool causal,
                                  double* tolerance = nullptr) {
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
  if (tolerance) {
    const double w_max = std::max({ref::max_abs(w.wq.reshaped()), ref::max_abs(w.wk.reshaped()),
                                   ref::max_abs(w.wv.reshaped()), ref::max_abs(w.wo.reshaped())});
    const double b_max =
        std::max({ref::max_abs(w.bq), ref::max_abs(w.bk), ref::max_abs(w.bv), ref::max_abs(w.bo)});
    const double projected = std::max({ref::max_abs(q), ref::max_abs(k), ref::max_abs(v)});
    // This reference rounds q, k and v to float before attending: u |value| more.
    *tolerance = ref::mha_tolerance(E, H, L, ref::max_abs(x), w_max, b_max, projected,
                                    ref::max_abs(concat), std::ldexp(projected, -24))
                     .output;
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

// A layer of E dimensions and H heads with the config's default seed and initialisation.
SelfAttention layer_of(int E, int H) {
  SelfAttentionConfig config;
  config.model_dim = E;
  config.num_heads = H;
  return SelfAttention(config);
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
  // With W = I every projection is exact, so both compute attention(x, x, x) in float32.
  const auto tol = ref::twice(ref::attention_tolerance(x, x, x, 4, 5, 0.5));
  CHECK(testing::close(r.output.data, expected.output.data, tol.output, {5, 4}));
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
      double tol = 0.0;
      const auto expected = reference_mha(x, L, E, H, w, causal, &tol);
      CHECK(testing::close(r.output.data, expected, tol, {L, E}));
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
  double tol = 0.0;
  const auto expected = reference_mha(x, L, E, H, w, false, &tol);
  CHECK(testing::close(r.output.data, expected, tol, {L, E}));
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
  CHECK(t.scale == 0.5f);  // 1 / sqrt(4), exact
  CHECK(t.x.data == x);
  CHECK(t.q.shape == Shape{H, L, d});
  CHECK(t.scores.shape == Shape{H, L, L});
  CHECK(t.mask.shape == Shape{L, L});
  CHECK(t.weights.data == r.weights.data);
  CHECK(t.output.data == r.output.data);
  const double u = std::ldexp(1.0, -24);
  // Q = x W_Q, head h = columns h*d .. h*d + d - 1. Two float32 products of E terms: each within
  // gamma(E) E max|x| max|W| of the exact value (gamma(n) = n u / (1 - n u)).
  const Eigen::Map<const RowMatrixXf> xm(x.data(), L, E);
  const RowMatrixXf q = xm * layer.weights().wq;
  std::vector<float> q_heads;
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < L; ++i) {
      for (int c = 0; c < d; ++c)
        q_heads.push_back(q(i, h * d + c));
    }
  }
  const double gamma_e = E * u / (1 - E * u);
  CHECK(testing::close(
      t.q.data, q_heads,
      2 * gamma_e * E * ref::max_abs(x) * ref::max_abs(layer.weights().wq.reshaped()), t.q.shape));
  // scores = q_h k_h^T from the trace's own q and k: d products summed in float32, within
  // gamma(d) d max|q| max|k| of the float64 product.
  std::vector<double> qk;
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < L; ++i) {
      for (int j = 0; j < L; ++j) {
        double dot = 0.0;
        for (int c = 0; c < d; ++c)
          dot += static_cast<double>(t.q.data[static_cast<std::size_t>((h * L + i) * d + c)]) *
                 t.k.data[static_cast<std::size_t>((h * L + j) * d + c)];
        qk.push_back(dot);
      }
    }
  }
  const double gamma_d = d * u / (1 - d * u);
  CHECK(testing::close(t.scores.data, qk,
                       gamma_d * d * ref::max_abs(t.q.data) * ref::max_abs(t.k.data),
                       t.scores.shape));
  for (std::size_t i = 0; i < t.scores.data.size(); ++i) {
    CHECK(t.scaled.data[i] == t.scores.data[i] * t.scale);
  }
  // The masked stage is the scaled scores where causal lets a key through (the same
  // multiplication, so the same bits) and -inf elsewhere, as the mask says.
  REQUIRE(t.masked.shape == Shape{H, L, L});
  std::vector<float> expected_masked;
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < L; ++i) {
      for (int j = 0; j < L; ++j) {
        CHECK(t.mask.data[static_cast<std::size_t>(i * L + j)] == (j > i ? -INFINITY : 0.0f));
        expected_masked.push_back(
            j > i ? -INFINITY : t.scaled.data[static_cast<std::size_t>((h * L + i) * L + j)]);
      }
    }
  }
  CHECK(testing::close(t.masked.data, expected_masked, 0.0, t.masked.shape));
  // weights = softmax(masked), head output = weights V, concat = heads side by side.
  const auto attend = ref::twice(ref::attention_tolerance(t.q.data, t.k.data, t.v.data, d, L, 0.5));
  const Eigen::Map<const RowMatrixXf> concat(t.concat.data.data(), L, E);
  for (int h = 0; h < H; ++h) {
    RowMatrixXf logits = Eigen::Map<const RowMatrixXf>(t.masked.data.data() + h * L * L, L, L);
    attnlens::softmax_rows(logits);
    const Eigen::Map<const RowMatrixXf> w(t.weights.data.data() + h * L * L, L, L);
    CHECK(testing::close(w, logits, attend.weights, {L, L}));
    const Eigen::Map<const RowMatrixXf> v(t.v.data.data() + h * L * d, L, d);
    const Eigen::Map<const RowMatrixXf> o(t.head_outputs.data.data() + h * L * d, L, d);
    // The head output from the unnormalised weights, divided after the product, against the
    // normalised weights times V: each a sum of L terms (<= 1 times max|v|), rounded
    // differently, plus the division: within 2 gamma(L + 1) max|v|.
    const double gamma_l = (L + 1) * u / (1 - (L + 1) * u);
    CHECK(testing::close(o, RowMatrixXf(w * v), 2 * gamma_l * ref::max_abs(t.v.data), {L, d}));
    CHECK(testing::close(concat.middleCols(h * d, d), o, 0.0, {L, d}));
  }
  const RowMatrixXf out = concat * layer.weights().wo;
  CHECK(testing::close(
      r.output.data, out,
      2 * gamma_e * E * ref::max_abs(t.concat.data) * ref::max_abs(layer.weights().wo.reshaped()),
      {L, E}));
}

TEST_CASE("a batch gives the same answers as one sequence at a time", "[self_attention]") {
  std::mt19937 gen(89);
  const int B = 3, L = 4, E = 6;
  const auto x = ref::random_vector(B * L * E, gen);
  const SelfAttention layer = layer_of(E, 3);
  const auto batched = layer.forward(view(x, {B, L, E}));
  CHECK(batched.weights.shape == Shape{B, 3, L, L});
  for (int b = 0; b < B; ++b) {
    const std::vector<float> xb(x.begin() + b * L * E, x.begin() + (b + 1) * L * E);
    const auto single = layer.forward(view(xb, {L, E}));
    const std::vector<float> part(batched.output.data.begin() + b * L * E,
                                  batched.output.data.begin() + (b + 1) * L * E);
    // The same slices through the same code, which does not depend on addresses: exact.
    CHECK(part == single.output.data);
  }
}

TEST_CASE("causal self-attention: earlier outputs ignore later tokens",
          "[self_attention][invariant]") {
  std::mt19937 gen(97);
  const int L = 5, E = 8;
  auto x = ref::random_vector(L * E, gen);
  const SelfAttention layer = layer_of(E, 2);
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
  const double largest = ref::max_abs(xavier.weights().wq.reshaped());  // NaN if any is NaN
  CHECK(largest <= bound);
  // 16384 uniform draws all below 0.95 of the bound: probability 0.975^16384, about 1e-180.
  CHECK(largest > 0.95 * bound);
  config.init = Init::Normal;
  const SelfAttention normal(config);
  const auto& w = normal.weights().wk;
  const double var = w.cast<double>().array().square().mean();
  // The mean of n = 16384 squared N(0, s^2) draws has standard deviation s^2 sqrt(2 / n), under
  // 1.2 % of s^2: 5 % is more than four standard deviations (and fails on NaN).
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

TEST_CASE("forward's row entropy: within its bound of the weights' float64 entropy",
          "[self_attention][entropy]") {
  // Flat to sharp rows (x scaled by 0.05 to 20), 1 to 300 keys, causal and full, and inputs so
  // large that the float64 (Exact) schedule runs, where the entropy comes from the weights.
  const double u = std::ldexp(1.0, -24);
  std::mt19937 gen(20261125);
  const int E = 32, H = 4;
  SelfAttentionConfig config;
  config.model_dim = E;
  config.num_heads = H;
  config.seed = 5;
  const SelfAttention layer(config);
  for (const int L : {1, 7, 64, 300}) {
    for (const double spread : {0.05, 1.0, 20.0, 1e18}) {
      for (const bool causal : {false, true}) {
        CAPTURE(L, spread, causal);
        auto x = ref::random_vector(static_cast<std::size_t>(L * E), gen);
        for (float& v : x)
          v = static_cast<float>(v * spread);
        ForwardOptions fo;
        fo.causal = causal;
        fo.entropy = true;
        const auto r = layer.forward(view(x, {L, E}), fo);
        REQUIRE(r.entropy.shape == Shape{H, L});
        std::vector<double> expected;
        double largest = 0.0;
        for (int row = 0; row < H * L; ++row) {
          double h = 0.0;
          for (int j = 0; j < L; ++j) {
            const double p = r.weights.data[static_cast<std::size_t>(row * L + j)];
            if (p > 0.0) h -= p * std::log(p);
          }
          expected.push_back(h);
          largest = std::max(largest, h);
        }
        // kernels.cpp, softmax_row: gamma(k + 1) (1 + 2 H) + 6u + 6u H with k = n / 2W + 2W + 3
        // for n = L keys; over W = 4, 8 and 16, k <= n / 8 + 40 here. The Exact schedule's
        // row_entropy() is well within it.
        const double k = L / 8.0 + 41.0;
        const double gamma = k * u / (1 - k * u);
        const double tol = gamma * (1 + 2 * largest) + 6 * u + 6 * u * largest;
        CHECK(testing::close(r.entropy.data, expected, tol, r.entropy.shape));
        // Scores of 1e36 take the float64 schedule, whose entropy is row_entropy() of its
        // weights, to the bit (this proves that path ran).
        if (spread > 1e10) {
          CHECK(r.entropy.data ==
                attnlens::row_entropy(attnlens::ConstTensorView{r.weights.data.data(), {H, L, L}})
                    .data);
        }
        if (causal) CHECK(r.entropy.data[0] == 0.0f);  // the first row sees one key
      }
    }
  }
  // Without the option there is none.
  CHECK(layer.forward(view(ref::random_vector(E, gen), {1, E})).entropy.data.empty());
}

TEST_CASE("forward with trace_head: a batch keeps that head's score stages",
          "[self_attention][trace]") {
  std::mt19937 gen(101);
  const int B = 2, L = 5, E = 8, H = 2;
  const auto x = ref::random_vector(B * L * E, gen);
  const SelfAttention layer = layer_of(E, H);
  ForwardOptions fo;
  // Ordinary inputs (the fast path), then inputs of 1e18 (scores of about 1e36: the float64
  // path, whose score stages are made one head at a time too).
  for (const float spread : {1.0f, 1e18f}) {
    CAPTURE(spread);
    std::vector<float> xs = x;
    for (float& v : xs)
      v *= spread;
    fo.trace = true;
    fo.trace_head.reset();
    const auto all = layer.forward(view(xs, {B, L, E}), fo);
    fo.trace_head = 1;
    const auto one = layer.forward(view(xs, {B, L, E}), fo);
    REQUIRE(one.trace->scores.shape == Shape{B, 1, L, L});
    for (int b = 0; b < B; ++b) {
      // Slot (b, 1) of every head's trace is slot (b, 0) of the one head's: the same bits.
      for (const auto member : {&attnlens::Trace::scores, &attnlens::Trace::masked}) {
        const auto from = ((*all.trace).*member).data.begin() + (b * H + 1) * L * L;
        const auto to = ((*one.trace).*member).data.begin() + b * L * L;
        CHECK(std::vector<float>(from, from + L * L) == std::vector<float>(to, to + L * L));
      }
    }
    CHECK(one.trace->q.data == all.trace->q.data);
  }
  fo.trace_head = 2;
  testing::require_error(
      [&] {
        layer.forward(view(x, {B, L, E}), fo);
      },
      attnlens::ErrorCode::BAD_ARGUMENT, {"trace_head must be between 0 and 1", "got 2"});
}

TEST_CASE(
    "forward with trace_results = false: no copies of the weights and output, the rest the "
    "same bits",
    "[self_attention][trace]") {
  std::mt19937 gen(107);
  const int B = 2, L = 6, E = 8, H = 2;
  const auto x = ref::random_vector(B * L * E, gen);
  const SelfAttention layer = layer_of(E, H);
  for (const bool causal : {true, false}) {
    for (const Shape& shape : {Shape{L, E}, Shape{B, L, E}}) {
      CAPTURE(causal, shape.size());
      ForwardOptions fo;
      fo.causal = causal;
      fo.trace = true;
      fo.entropy = true;
      const auto copied = layer.forward(view(x, shape), fo);
      fo.trace_results = false;
      const auto lean = layer.forward(view(x, shape), fo);
      REQUIRE(lean.trace);
      CHECK(lean.trace->weights.data.empty());
      CHECK(lean.trace->output.data.empty());
      CHECK(copied.trace->weights.data == copied.weights.data);
      CHECK(copied.trace->output.data == copied.output.data);
      CHECK(lean.weights.data == copied.weights.data);
      CHECK(lean.output.data == copied.output.data);
      CHECK(lean.entropy.data == copied.entropy.data);
      CHECK(lean.trace->scale == copied.trace->scale);
      for (const auto member :
           {&attnlens::Trace::x, &attnlens::Trace::q, &attnlens::Trace::k, &attnlens::Trace::v,
            &attnlens::Trace::scores, &attnlens::Trace::scaled, &attnlens::Trace::mask,
            &attnlens::Trace::masked, &attnlens::Trace::head_outputs, &attnlens::Trace::concat}) {
        CHECK(((*lean.trace).*member).shape == ((*copied.trace).*member).shape);
        CHECK(((*lean.trace).*member).data == ((*copied.trace).*member).data);
      }
      // The mask, written in place: 0 where a key is visible, -inf above the diagonal if causal.
      const auto& mask = lean.trace->mask;
      REQUIRE(mask.shape == Shape{L, L});
      for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j)
          CHECK(mask.data[static_cast<std::size_t>(i * L + j)] ==
                (causal && j > i ? -INFINITY : 0.0f));
    }
  }
}
