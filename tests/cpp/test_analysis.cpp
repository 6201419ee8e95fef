// PCA, score variance, entropy, and explain() end to end.
#include "compare.hpp"
#include "helpers.hpp"
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <random>

using attnlens::RowMatrixXf;
using attnlens::Shape;

namespace {

const double u = std::ldexp(1.0, -24);  // float32 rounding, relative

}  // namespace

TEST_CASE("PCA of points on a line: one axis, signed distances", "[analysis][pca]") {
  // Points t * (3, 4) / 5 for t = -2, 0, 1, 4 (mean 0.75).
  RowMatrixXf x(4, 2);
  const double ts[] = {-2, 0, 1, 4};
  for (int i = 0; i < 4; ++i)
    x.row(i) << static_cast<float>(ts[i] * 0.6), static_cast<float>(ts[i] * 0.8);
  const auto pca = attnlens::pca_2d(x, x);
  // The points are rounded to float32 (u |x| <= 2e-7 for |x| <= 3.2), so they leave the line by
  // that much; PCA runs in float64 and rounds its results to float32 once (u relative, values
  // up to 3.25). 1e-6 covers both.
  CHECK(testing::close(pca.explained, {1.0, 0.0}, 1e-6));
  CHECK(testing::close(pca.components.row(0), {0.6, 0.8}, 1e-6));
  std::vector<double> along;
  for (double t : ts) {
    along.push_back(t - 0.75);
    along.push_back(0.0);
  }
  CHECK(testing::close(pca.original, along, 1e-6, {4, 2}));
  CHECK(pca.contextual == pca.original);
}

TEST_CASE("PCA sign convention: negating the data keeps the components", "[analysis][pca]") {
  std::mt19937 gen(107);
  std::normal_distribution<float> n(0, 1);
  RowMatrixXf x(10, 5);
  for (int i = 0; i < x.size(); ++i)
    x.data()[i] = n(gen) * static_cast<float>(1 + i % 5);
  const auto a = attnlens::pca_2d(x, x);
  const RowMatrixXf neg = -x;
  const auto b = attnlens::pca_2d(neg, neg);
  // Negation is exact and leaves the centred products unchanged: the same bits.
  CHECK(testing::close(a.components, b.components, 0.0, {2, 5}));
  for (int c = 0; c < 2; ++c) {
    Eigen::Index at = 0;
    a.components.row(c).cwiseAbs().maxCoeff(&at);
    CHECK(a.components(c, at) > 0);
  }
  CHECK(a.explained[0] >= a.explained[1]);
  // More tokens than dimensions and fewer go through different decompositions; both agree.
  const RowMatrixXf wide = x.transpose();  // 5 x 10: Gram path
  const auto w = attnlens::pca_2d(wide, wide);
  // Fractions computed in float64 and each rounded once to float32 (u relative).
  CHECK(static_cast<double>(w.explained[0]) + w.explained[1] <= 1.0 + 2 * u);
  // A float64 unit vector rounded to float32 entry by entry: its norm is 1 within u.
  CHECK(w.components.row(0).cast<double>().norm() == Approx(1.0).epsilon(0).margin(2 * u));
}

TEST_CASE("PCA projects contextual rows with the original fit", "[analysis][pca]") {
  RowMatrixXf x(3, 2), y(3, 2);
  x << 0, 0, 2, 0, 4, 0;
  y << 1, 0, 3, 1, 5, 0;
  const auto pca = attnlens::pca_2d(x, y);
  CHECK(pca.mean[0] == 2.0f);
  // Small integers, computed in float64 and rounded once: within u of -1 and 3.
  CHECK(testing::close(pca.contextual.col(0), {-1.0, 1.0, 3.0}, 3 * u));
}

TEST_CASE("row entropy: one-hot 0, uniform log S, empty row 0", "[analysis]") {
  const std::vector<float> w = {1, 0, 0, 0, 0.25f, 0.25f, 0.25f, 0.25f, 0, 0, 0, 0};
  const auto h = attnlens::row_entropy(attnlens::ConstTensorView{w.data(), {3, 4}});
  CHECK(h.shape == Shape{3});
  // Computed in float64 and rounded once to float32: within u log(4) of the exact values.
  CHECK(testing::close(h.data, {0.0, std::log(4.0), 0.0}, u * std::log(4.0), {3}));
}

TEST_CASE("row entropy without libm: within its bound of float64 -sum p ln p", "[analysis]") {
  // Softmax rows of random scores, flat (scale 0.1) to sharp (scale 30), of 7, 64 and 512 keys,
  // and a row of awkward weights: tiny, denormal, exactly 1/2 and 1/4, near sqrt(2) times a
  // power of two (where the reduction switches), zeros, NaN and a negative entry (both skipped).
  std::mt19937_64 gen(20261125);
  std::normal_distribution<double> normal;
  std::vector<float> w;
  std::vector<double> expected;
  const auto add_row = [&](const std::vector<float>& row) {
    double h = 0.0;
    for (float p : row)
      if (p > 0.0f) h -= static_cast<double>(p) * std::log(static_cast<double>(p));
    w.insert(w.end(), row.begin(), row.end());
    expected.push_back(h);
  };
  double largest = 0.0;
  for (int S : {7, 64, 512}) {
    for (double scale : {0.1, 1.0, 5.0, 30.0}) {
      std::vector<double> z(static_cast<std::size_t>(S));
      for (double& x : z)
        x = scale * normal(gen);
      const double top = *std::max_element(z.begin(), z.end());
      double sum = 0.0;
      for (double& x : z)
        sum += (x = std::exp(x - top));
      std::vector<float> row;
      for (double x : z)
        row.push_back(static_cast<float>(x / sum));
      row.resize(512, 0.0f);  // rows of one length; zero weights add nothing
      add_row(row);
    }
  }
  std::vector<float> odd = {
      1e-30f, 1e-40f, 0.5f, 0.25f, std::ldexp(1.41421f, -10), std::ldexp(1.41422f, -10),
      0.0f,   -0.1f,  NAN};
  odd.resize(512, 0.0f);
  add_row(odd);
  for (double h : expected)
    largest = std::max(largest, h);
  const auto h = attnlens::row_entropy(attnlens::ConstTensorView{w.data(), {13, 512}});
  // analysis.cpp: per entry p (3.0e-8 + 4u |ln p|), so per row 3.0e-8 + 4u H, plus u H for the
  // result's rounding to float32. (The weights sum to 1 within float32 rounding; the odd row's
  // to 0.75.)
  CHECK(testing::close(h.data, expected, 3.0e-8 + 5 * u * largest, {13}));
}

TEST_CASE("variance: scaling by s multiplies it by s^2, masked entries skipped", "[analysis]") {
  const std::vector<float> raw = {1, 2, 3, 4, -INFINITY};
  std::vector<float> scaled;
  for (float r : raw)
    scaled.push_back(r * 0.5f);
  // Small binary fractions, summed in float64: exact.
  CHECK(attnlens::finite_variance(raw.data(), 5) == 1.25);
  CHECK(attnlens::finite_variance(scaled.data(), 5) == 1.25 * 0.25);
  // With a mask, only entries where it is 0 count: {1, 3}, mean 2, variance 1 (exact).
  const std::vector<float> mask = {0, -INFINITY, 0, -INFINITY, 0};
  CHECK(attnlens::finite_variance(raw.data(), 5, mask.data()) == 1.0);
}

TEST_CASE("variance: four lanes at a time, against a one-at-a-time float64 two-pass variance",
          "[analysis]") {
  std::mt19937 gen(29);
  std::normal_distribution<float> normal(3.0f, 2.0f);
  std::uniform_int_distribution<int> pick(0, 9);
  for (int count = 0; count <= 67; ++count) {
    for (const bool masked : {false, true}) {
      CAPTURE(count, masked);
      std::vector<float> data, mask;
      for (int i = 0; i < count; ++i) {
        // Mostly ordinary numbers; some NaN and infinities (never counted) and, with a mask,
        // entries it hides (-inf or any nonzero value).
        const int kind = pick(gen);
        data.push_back(kind == 0   ? NAN
                       : kind == 1 ? INFINITY
                       : kind == 2 ? -INFINITY
                                   : normal(gen));
        const int m = pick(gen);
        mask.push_back(m == 0 ? -INFINITY : m == 1 ? 1.0f : 0.0f);
      }
      std::vector<double> seen;
      for (int i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (std::isfinite(data[k]) && (!masked || mask[k] == 0.0f)) seen.push_back(data[k]);
      }
      double mean = 0.0;
      for (double v : seen)
        mean += v;
      mean /= std::max<double>(1.0, static_cast<double>(seen.size()));
      double var = 0.0;
      for (double v : seen)
        var += (v - mean) * (v - mean);
      var /= std::max<double>(1.0, static_cast<double>(seen.size()));
      const double got =
          attnlens::finite_variance(data.data(), count, masked ? mask.data() : nullptr);
      // Both two-pass in float64, summed in different orders: within (2n + 4) 2^-53 of the
      // variance (the bound the explain test below derives); exactly 0 when nothing counts.
      const auto n = static_cast<double>(seen.size());
      CHECK(testing::close({got}, {var}, (2 * n + 4) * std::ldexp(var, -53)));
      if (seen.empty()) CHECK(got == 0.0);
    }
  }
}

TEST_CASE("explain: tokens, shapes, causal zeros, residual, stats", "[explain]") {
  attnlens::ExplainOptions o;
  o.model_dim = 32;
  o.num_heads = 4;
  const auto ex = attnlens::explain("The cat sat on the mat.", o);
  const std::int64_t L = 7;
  REQUIRE(static_cast<std::int64_t>(ex.tokens.size()) == L);
  CHECK(ex.embeddings.shape == Shape{L, 32});
  CHECK(ex.weights.shape == Shape{4, L, L});
  CHECK(ex.trace.q.shape == Shape{4, L, 8});
  CHECK(ex.pca.original.rows() == L);
  for (int h = 0; h < 4; ++h) {
    for (int i = 0; i < L; ++i) {
      for (int j = i + 1; j < L; ++j)
        CHECK(ex.weights.data[static_cast<std::size_t>((h * L + i) * L + j)] == 0.0f);
    }
  }
  for (std::size_t i = 0; i < ex.contextual.data.size(); ++i) {
    CHECK(ex.contextual.data[i] == ex.embeddings.data[i] + ex.output.data[i]);
  }
  // The same word at two positions: same token embedding, different input (positions differ).
  CHECK(ex.token_embeddings.data[0] == ex.token_embeddings.data[4 * 32]);
  CHECK(ex.embeddings.data[0] != ex.embeddings.data[4 * 32]);
  CHECK(ex.stats.total_tokens == L);
  CHECK_FALSE(ex.stats.truncated);
  REQUIRE(ex.stats.raw_score_variance.size() == 4);
  for (int h = 0; h < 4; ++h) {
    // Scaled by 1/sqrt(8): the variance drops by that factor squared. The scaled scores are
    // rounded to float32 (each moves by u |s|), which moves the variance by at most
    // 2 std(s) u max|s| + (u max|s|)^2: relative 2 u max|s| / std(s) + u^2 (...).
    const auto h_ = static_cast<std::size_t>(h);
    const double raw = ex.stats.raw_score_variance[h_];
    const std::vector<float> scores(ex.trace.scores.data.begin() + h * L * L,
                                    ex.trace.scores.data.begin() + (h + 1) * L * L);
    // Against a float64 two-pass variance of the scores causal lets through (j <= i), summed in
    // another order (each term divided by n first). Both are two-pass: each square within 3
    // roundings and a sum of n non-negative terms within n - 1 more, so each result is within
    // (n + 2) 2^-53 of the variance of the float scores (the mean's own error moves it only in
    // the second order); together (2n + 4) 2^-53 (n = 28 scores).
    std::vector<double> seen;
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j <= i; ++j)
        seen.push_back(scores[static_cast<std::size_t>(i * L + j)]);
    }
    double seen_mean = 0.0;
    for (double s : seen)
      seen_mean += s / static_cast<double>(seen.size());
    double seen_var = 0.0;
    for (double s : seen)
      seen_var += (s - seen_mean) * (s - seen_mean) / static_cast<double>(seen.size());
    const auto n = static_cast<double>(seen.size());
    CHECK(testing::close({raw}, {seen_var}, (2 * n + 4) * std::ldexp(seen_var, -53)));
    const double s_max = ref::max_abs(scores) / std::sqrt(8.0);
    const double tol = 2 * std::sqrt(raw / 8.0) * u * s_max + (u * s_max) * (u * s_max);
    CHECK(testing::close({ex.stats.scaled_score_variance[h_]}, {raw / 8.0}, tol));
  }
  CHECK(ex.stats.entropy.shape == Shape{4, L});
  CHECK(ex.stats.entropy.data[0] == 0.0f);  // the first causal row has one key
  REQUIRE(ex.mean_weights.shape == Shape{L, L});
  std::vector<double> means;
  for (std::int64_t c = 0; c < L * L; ++c) {
    double sum = 0.0;
    for (int h = 0; h < 4; ++h)
      sum += ex.weights.data[static_cast<std::size_t>(h * L * L + c)];
    means.push_back(sum / 4.0);
  }
  // Four weights <= 1 summed in float32 (3 roundings of values <= 4) and divided by 4 (exact).
  CHECK(testing::close(ex.mean_weights.data, means, 3 * u, {L, L}));
}

TEST_CASE("explain: full differs from causal, no positions makes full order-blind", "[explain]") {
  attnlens::ExplainOptions o;
  o.causal = false;
  o.positional = attnlens::Positional::None;
  const auto a = attnlens::explain("dog bites man", o);
  const auto b = attnlens::explain("man bites dog", o);
  // Without positions, full attention is a set function: "dog"'s output row is the same.
  const std::vector<float> dog_a(a.output.data.begin(), a.output.data.begin() + 64);
  const std::vector<float> dog_b(b.output.data.begin() + 2 * 64, b.output.data.end());
  // The same exact answer computed with the keys in another order: two float32 layers, each
  // within ref::mha_tolerance() of it.
  const auto& w = a.projections;
  const double w_max = std::max({ref::max_abs(w.wq.reshaped()), ref::max_abs(w.wk.reshaped()),
                                 ref::max_abs(w.wv.reshaped()), ref::max_abs(w.wo.reshaped())});
  const double projected = std::max(
      {ref::max_abs(a.trace.q.data), ref::max_abs(a.trace.k.data), ref::max_abs(a.trace.v.data)});
  const auto tol =
      ref::twice(ref::mha_tolerance(64, 4, 3, ref::max_abs(a.embeddings.data), w_max, 0.0,
                                    projected, ref::max_abs(a.trace.concat.data)));
  CHECK(testing::close(dog_a, dog_b, tol.output, {64}));
  o.causal = true;
  const auto c = attnlens::explain("dog bites man", o);
  CHECK(c.weights.data != a.weights.data);
}

TEST_CASE("explain: same seed bit-identical, other seed differs, truncation",
          "[explain][determinism]") {
  attnlens::ExplainOptions o;
  const auto a = attnlens::explain("attention is all you need", o);
  const auto b = attnlens::explain("attention is all you need", o);
  CHECK(a.weights.data == b.weights.data);
  CHECK(a.output.data == b.output.data);
  CHECK(a.pca.original == b.pca.original);
  o.seed = 8;
  CHECK(attnlens::explain("attention is all you need", o).weights.data != a.weights.data);
  o.max_tokens = 3;
  o.truncate = true;
  const auto t = attnlens::explain("attention is all you need", o);
  CHECK(t.tokens.size() == 3);
  CHECK(t.stats.truncated);
  CHECK(t.stats.total_tokens == 5);
}

TEST_CASE("explain without the trace: the same weights, output, PCA and entropy, no stages",
          "[explain]") {
  const auto same = [](const attnlens::Tensor& a, const attnlens::Tensor& b) {
    return a.shape == b.shape && a.data == b.data;
  };
  for (const bool causal : {true, false}) {
    attnlens::ExplainOptions o;
    o.causal = causal;
    o.num_heads = 2;
    o.model_dim = 16;
    const auto full = attnlens::explain("the cat sat on the mat because it was tired", o);
    o.trace = false;
    const auto lean = attnlens::explain("the cat sat on the mat because it was tired", o);
    // Both run the same operations on the same numbers: bit-identical, not merely close.
    CHECK(same(lean.weights, full.weights));
    CHECK(same(lean.mean_weights, full.mean_weights));
    CHECK(same(lean.output, full.output));
    CHECK(same(lean.contextual, full.contextual));
    CHECK(lean.pca.original == full.pca.original);
    CHECK(lean.pca.contextual == full.pca.contextual);
    CHECK(same(lean.stats.entropy, full.stats.entropy));
    CHECK(lean.tokens.size() == full.tokens.size());
    CHECK(lean.trace.scores.data.empty());
    CHECK(lean.trace.weights.data.empty());
    CHECK(lean.stats.raw_score_variance.empty());
    CHECK(full.stats.raw_score_variance.size() == 2);
    CHECK(same(full.trace.weights, full.weights));
    CHECK(same(full.trace.output, full.output));
    // trace_results = false: the trace without its copies of the weights and output (what the
    // WebAssembly binding asks for), every other number the same.
    o.trace = true;
    o.trace_results = false;
    const auto shared = attnlens::explain("the cat sat on the mat because it was tired", o);
    CHECK(shared.trace.weights.data.empty());
    CHECK(shared.trace.output.data.empty());
    CHECK(same(shared.weights, full.weights));
    CHECK(same(shared.mean_weights, full.mean_weights));
    CHECK(same(shared.output, full.output));
    CHECK(same(shared.trace.masked, full.trace.masked));
    CHECK(same(shared.trace.mask, full.trace.mask));
    CHECK(same(shared.trace.concat, full.trace.concat));
    CHECK(shared.stats.raw_score_variance == full.stats.raw_score_variance);
    CHECK(shared.stats.scaled_score_variance == full.stats.scaled_score_variance);
  }
}

TEST_CASE("explain with traceHead: that head's score stages and variances, the rest unchanged",
          "[explain]") {
  const auto same = [](const attnlens::Tensor& a, const attnlens::Tensor& b) {
    return a.shape == b.shape && a.data == b.data;
  };
  // The head's slot of each score stage, from a trace of every head.
  const auto head_of = [](const attnlens::Tensor& t, std::int64_t h) {
    const std::int64_t n = t.shape[1] * t.shape[2];
    return std::vector<float>(t.data.begin() + h * n, t.data.begin() + (h + 1) * n);
  };
  for (const bool causal : {true, false}) {
    attnlens::ExplainOptions o;
    o.causal = causal;
    o.num_heads = 4;
    o.model_dim = 32;
    const std::string text = "the cat sat on the mat because it was tired";
    const auto full = attnlens::explain(text, o);
    for (const int h : {0, 2, 3}) {
      CAPTURE(causal, h);
      o.trace_head = h;
      const auto one = attnlens::explain(text, o);
      const std::int64_t L = static_cast<std::int64_t>(one.tokens.size());
      // The same operations on the same numbers: bit-identical.
      for (const auto member :
           {&attnlens::Trace::scores, &attnlens::Trace::scaled, &attnlens::Trace::masked}) {
        CHECK((one.trace.*member).shape == Shape{1, L, L});
        CHECK((one.trace.*member).data == head_of(full.trace.*member, h));
      }
      for (const auto member :
           {&attnlens::Trace::q, &attnlens::Trace::k, &attnlens::Trace::v,
            &attnlens::Trace::head_outputs, &attnlens::Trace::weights, &attnlens::Trace::concat,
            &attnlens::Trace::output, &attnlens::Trace::mask, &attnlens::Trace::x}) {
        CHECK(same(one.trace.*member, full.trace.*member));
      }
      CHECK(same(one.weights, full.weights));
      CHECK(same(one.stats.entropy, full.stats.entropy));
      REQUIRE(one.stats.raw_score_variance.size() == 1);
      CHECK(one.stats.raw_score_variance[0] == full.stats.raw_score_variance[h]);
      CHECK(one.stats.scaled_score_variance[0] == full.stats.scaled_score_variance[h]);
    }
    o.trace_head.reset();
  }
  attnlens::ExplainOptions bad;
  bad.num_heads = 4;
  for (const int h : {-1, 4}) {
    bad.trace_head = h;
    testing::require_error([&] { attnlens::explain("hi there", bad); },
                           attnlens::ErrorCode::BAD_ARGUMENT,
                           {"traceHead must be between 0 and numHeads - 1 = 3", std::to_string(h)});
  }
}
