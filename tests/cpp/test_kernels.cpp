// The fast kernels (blocked and streaming) against the plain reference path: all masks, GQA,
// both causal alignments, sizes that are not multiples of the vector width or the block size,
// single tokens.
#include "compare.hpp"
#include "helpers.hpp"
#include "reference.hpp"

#include <attnlens/model.hpp>

#include "core/kernels.hpp"
#include "core/matmul.hpp"
#include "core/parallel.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

using attnlens::AttentionOptions;
using attnlens::CausalAlign;
using attnlens::MaskView;
using attnlens::Shape;
using testing::view;

namespace {

struct Inputs {
  Shape qs, ks, vs, ms;
  std::vector<float> q, k, v, add_mask;
  std::vector<std::uint8_t> bool_mask;
};

Inputs make(std::mt19937& gen, int B, int Hq, int Hkv, int L, int S, int E, int Ev,
            bool batch_mask) {
  Inputs in;
  in.qs = {B, Hq, L, E};
  in.ks = {B, Hkv, S, E};
  in.vs = {B, Hkv, S, Ev};
  in.ms = batch_mask ? Shape{B, 1, L, S} : Shape{L, S};
  in.q = ref::random_vector(static_cast<std::size_t>(B * Hq * L * E), gen, -2, 2);
  in.k = ref::random_vector(static_cast<std::size_t>(B * Hkv * S * E), gen, -2, 2);
  in.v = ref::random_vector(static_cast<std::size_t>(B * Hkv * S * Ev), gen, -2, 2);
  std::uniform_int_distribution<int> pick(0, 4);
  const auto n = static_cast<std::size_t>(attnlens::shape_numel(in.ms));
  for (std::size_t i = 0; i < n; ++i) {
    const int p = pick(gen);
    in.bool_mask.push_back(p != 0);
    in.add_mask.push_back(p == 0 ? -INFINITY : 0.25f * static_cast<float>(p - 2));
  }
  return in;
}

// Runs the reference and both fast schedules with the same options and compares them: two
// float32 computations of the same answer, each within attention_tolerance() of it.
void compare_paths(const Inputs& in, AttentionOptions o) {
  o.return_weights = true;
  const auto reference =
      attnlens::attention_reference(view(in.q, in.qs), view(in.k, in.ks), view(in.v, in.vs), o);
  const auto blocked =
      attnlens::attention(view(in.q, in.qs), view(in.k, in.ks), view(in.v, in.vs), o);
  o.return_weights = false;
  o.streaming = true;
  const auto streaming =
      attnlens::attention(view(in.q, in.qs), view(in.k, in.ks), view(in.v, in.vs), o);
  // Masked weights are exactly zero on every path.
  REQUIRE(blocked.weights.data.size() == reference.weights.data.size());
  for (std::size_t i = 0; i < reference.weights.data.size(); ++i) {
    if (reference.weights.data[i] == 0.0f) REQUIRE(blocked.weights.data[i] == 0.0f);
  }
  const std::int64_t E = in.qs.back(), S = in.ks[2];
  const double mask_max = o.mask.kind == attnlens::MaskKind::Additive ? 0.5 : 0.0;
  const auto tol =
      ref::twice(ref::attention_tolerance(in.q, in.k, in.v, E, S, 1 / std::sqrt(E), mask_max));
  const Shape& out = reference.output.shape;
  CHECK(testing::close(blocked.output.data, reference.output.data, tol.output, out));
  CHECK(testing::close(blocked.weights.data, reference.weights.data, tol.weights,
                       reference.weights.shape));
  CHECK(testing::close(streaming.output.data, reference.output.data, tol.output, out));
}

}  // namespace

TEST_CASE("fast paths equal the reference: odd sizes, every mask, both alignments", "[kernels]") {
  std::mt19937 gen(4242);
  const int sizes[][6] = {
      // L, S, E, Ev, Hq, Hkv
      {1, 1, 1, 1, 1, 1},      {1, 9, 3, 5, 2, 1},      {5, 1, 4, 4, 1, 1},
      {7, 7, 16, 16, 2, 2},    {13, 29, 7, 9, 3, 1},    {64, 64, 64, 64, 2, 1},
      {65, 63, 17, 33, 1, 1},  {150, 200, 8, 16, 2, 2}, {200, 130, 32, 8, 1, 1},
      {33, 257, 24, 40, 4, 2},
  };
  for (const auto& s : sizes) {
    for (int variant = 0; variant < 6; ++variant) {
      const Inputs in = make(gen, 2, s[4], s[5], s[0], s[1], s[2], s[3], variant % 2 == 1);
      AttentionOptions o;
      o.causal = variant >= 2;
      o.causal_align = variant >= 4 ? CausalAlign::BottomRight : CausalAlign::TopLeft;
      const int mask_kind = variant % 3;
      if (mask_kind == 1) o.mask = MaskView::boolean(in.bool_mask.data(), in.ms);
      if (mask_kind == 2) o.mask = MaskView::additive(in.add_mask.data(), in.ms);
      INFO("L " << s[0] << " S " << s[1] << " E " << s[2] << " Ev " << s[3] << " variant "
                << variant);
      compare_paths(in, o);
    }
  }
}

TEST_CASE("causal fast path: exact zeros above the diagonal past block edges", "[kernels]") {
  std::mt19937 gen(77);
  const int L = 150;
  const auto q = ref::random_vector(L * 8, gen, -3, 3);
  AttentionOptions o;
  o.causal = true;
  o.return_weights = true;
  const auto r = attnlens::attention(view(q, {L, 8}), view(q, {L, 8}), view(q, {L, 8}), o);
  REQUIRE(r.weights.data.size() == static_cast<std::size_t>(L * L));
  std::vector<double> sums(L, 0.0);
  for (int i = 0; i < L; ++i) {
    for (int j = 0; j < L; ++j) {
      const float w = r.weights.data[static_cast<std::size_t>(i * L + j)];
      if (j > i) REQUIRE(w == 0.0f);
      sums[static_cast<std::size_t>(i)] += w;
    }
  }
  // Row i sums i + 1 exponentials: 1 within (i + 2) u (see "weight rows sum to one").
  CHECK(testing::close(sums, std::vector<double>(L, 1.0), (L + 2) * std::ldexp(1.0, -24)));
}

TEST_CASE("streaming: no L x S limit, no weights, large logits stay finite", "[kernels]") {
  std::mt19937 gen(91);
  const int L = 300;
  const auto q = ref::random_vector(L * 4, gen);
  AttentionOptions o;
  o.max_elements = 50000;  // below L * S = 90000: only streaming may run
  o.streaming = true;
  const auto r = attnlens::attention(view(q, {L, 4}), view(q, {L, 4}), view(q, {L, 4}), o);
  CHECK(r.weights.empty());
  AttentionOptions plain;
  const auto expected =
      attnlens::attention_reference(view(q, {L, 4}), view(q, {L, 4}), view(q, {L, 4}), plain);
  const auto tol = ref::twice(ref::attention_tolerance(q, q, q, 4, L, 0.5));
  CHECK(testing::close(r.output.data, expected.output.data, tol.output, {L, 4}));
  o.streaming = false;
  testing::require_error(
      [&] {
        attnlens::attention(view(q, {L, 4}), view(q, {L, 4}), view(q, {L, 4}), o);
      },
      attnlens::ErrorCode::TOO_LARGE, {"score matrix"});
  o.streaming = true;
  o.return_weights = true;
  testing::require_error(
      [&] {
        attnlens::attention(view(q, {L, 4}), view(q, {L, 4}), view(q, {L, 4}), o);
      },
      attnlens::ErrorCode::BAD_ARGUMENT, {"streaming"});
  // Logits of ±1e4 across tiles: the online rescaling must not overflow.
  std::vector<float> big(200, 0.0f);
  for (int i = 0; i < 200; ++i)
    big[static_cast<std::size_t>(i)] = (i % 2 ? 100.0f : -100.0f) * static_cast<float>(1 + i % 3);
  AttentionOptions s;
  s.streaming = true;
  s.scale = 1.0f;
  const auto huge =
      attnlens::attention(view(big, {200, 1}), view(big, {200, 1}), view(big, {200, 1}), s);
  for (float x : huge.output.data)
    CHECK(std::isfinite(x));
  s.streaming = false;
  const auto huge_ref = attnlens::attention_reference(view(big, {200, 1}), view(big, {200, 1}),
                                                      view(big, {200, 1}), s);
  // Each row's best keys all hold the same value (±300 or ±200...) and every other logit is at
  // least 1e4 lower (weight below e^-10000, i.e. 0 or a denormal), so the exact output is that
  // value. Each path sums n <= S equal terms and multiplies by 1/n (or divides by n): within
  // (S + 1) u of it, relative. A wrong rescaling across tiles would be off by whole values.
  const double tied = 2 * 300.0 * (200 + 1) * std::ldexp(1.0, -24);
  CHECK(testing::close(huge.output.data, huge_ref.output.data, tied, {200, 1}));
}

TEST_CASE("the same inputs at different addresses give the same bits", "[kernels][determinism]") {
  std::mt19937 gen(5);
  const auto q = ref::random_vector(37 * 11, gen);
  std::vector<float> shifted(q.size() + 1);
  std::copy(q.begin(), q.end(), shifted.begin() + 1);
  const attnlens::ConstTensorView moved{shifted.data() + 1, {37, 11}};
  AttentionOptions o;
  o.return_weights = true;
  const auto a = attnlens::attention(view(q, {37, 11}), view(q, {37, 11}), view(q, {37, 11}), o);
  const auto b = attnlens::attention(moved, moved, moved, o);
  CHECK(a.output.data == b.output.data);
  CHECK(a.weights.data == b.weights.data);
}

TEST_CASE("packed product: every transpose, accumulate and alpha against float64", "[kernels]") {
  // The product detail::matmul runs in WebAssembly, tested natively too: sizes around the
  // tile (kRows rows, 2W-column panels, 4-deep steps) and below it, K = 1, and the K = 0 rule.
  std::mt19937 gen(11);
  for (const auto& [M, N, K] : std::vector<std::array<std::int64_t, 3>>{
           {1, 1, 1},
           {3, 5, 7},
           {6, 8, 4},
           {13, 17, 19},
           {37, 9, 130},
           {64, 33, 1},
           // Nine panels: two groups of four packed row by row, then one of a 6-column panel.
           {7, 70, 33},
           {5, 70, 0},
           // At most 4 rows (not transposed, alpha 1): the
           // few-rows path, with its strips and tails.
           {1, 70, 37},
           {2, 33, 8},
           {4, 67, 130},
           {4, 4, 3},
           // Over a panel block of rows with a small B: B
           // packed once and swept by each row group.
           {250, 21, 13},
       }) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool ta = variant & 1, tb = variant & 2, acc = variant & 4;
      const float alpha = variant == 3 ? 0.125f : variant == 6 ? -1.5f : 1.0f;
      const auto a = ref::random_vector(static_cast<std::size_t>(M * K), gen, -2, 2);
      const auto b = ref::random_vector(static_cast<std::size_t>(K * N), gen, -2, 2);
      auto c = ref::random_vector(static_cast<std::size_t>(M * N), gen, -2, 2);
      std::vector<double> expected(c.size());
      double bound = 0.0;
      for (std::int64_t m = 0; m < M; ++m) {
        for (std::int64_t n = 0; n < N; ++n) {
          double sum = 0.0, magnitude = 0.0;
          for (std::int64_t k = 0; k < K; ++k) {
            const double x = ta ? a[k * M + m] : a[m * K + k];
            const double y = tb ? b[n * K + k] : b[k * N + n];
            sum += alpha * x * y;
            magnitude += std::abs(alpha * x * y);
          }
          const double before = acc ? c[m * N + n] : 0.0;
          expected[m * N + n] = before + sum;
          // alpha · x rounds once (u), each of the K products once and the K − 1 sums
          // (γ_{K+1} ≤ (K + 2)u of the magnitudes), adding to c once: |c| + |sum| times u.
          const double u = std::ldexp(1.0, -24);
          bound = std::max(bound, (K + 3) * u * magnitude + u * (std::abs(before) + std::abs(sum)));
        }
      }
      INFO("M " << M << ", N " << N << ", K " << K << ", transpose_a " << ta << ", transpose_b "
                << tb << ", accumulate " << acc << ", alpha " << alpha);
      attnlens::detail::packed_matmul(c.data(), a.data(), b.data(), M, N, K, ta, tb, acc, alpha);
      CHECK(testing::close(c, expected, bound, {M, N}));
    }
  }
}

TEST_CASE("packed product: the same bits by either schedule, whatever the rows", "[kernels]") {
  // Up to a block of rows, or with a B over the large-operand size (K·N > 2^20), the product goes
  // panel by panel per block of rows; more rows by a small B sweep a packed B once per row group.
  // Each output sums its K terms in the same order either way, so a product of many rows equals,
  // bit for bit, the same rows multiplied in slices of 50 (each within one block, and none of at
  // most four rows, which the few-rows path sums in another order).
  std::mt19937 gen(12);
  // 296 rows by a small B: 49 row groups of 6 and a tail of 2 (the swept schedule), slices of 50
  // and a last one of 46. 230 rows by a large B: blocks of rows, the last one short (14-row tiles
  // of AVX-512 make 224-row blocks), against slices of 50 and 30.
  for (const auto& [M, N, K] :
       std::vector<std::array<std::int64_t, 3>>{{296, 45, 37}, {230, 2049, 513}}) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool ta = variant & 1, tb = variant & 2, acc = variant & 4;
      const float alpha = variant == 3 ? 0.125f : 1.0f;
      const auto a = ref::random_vector(static_cast<std::size_t>(M * K), gen, -2, 2);
      const auto b = ref::random_vector(static_cast<std::size_t>(K * N), gen, -2, 2);
      const auto c0 = ref::random_vector(static_cast<std::size_t>(M * N), gen, -2, 2);
      auto whole = c0;
      attnlens::detail::packed_matmul(whole.data(), a.data(), b.data(), M, N, K, ta, tb, acc,
                                      alpha);
      auto sliced = c0;
      for (std::int64_t m0 = 0; m0 < M; m0 += 50) {
        // op(a)'s rows m0 .. m0 + n - 1: a slice of a's rows, or of its columns when transposed.
        const std::int64_t n = std::min<std::int64_t>(50, M - m0);
        std::vector<float> rows(static_cast<std::size_t>(n * K));
        for (std::int64_t m = 0; m < n; ++m) {
          for (std::int64_t k = 0; k < K; ++k)
            rows[m * K + k] = ta ? a[k * M + m0 + m] : a[(m0 + m) * K + k];
        }
        attnlens::detail::packed_matmul(sliced.data() + m0 * N, rows.data(), b.data(), n, N, K,
                                        false, tb, acc, alpha);
      }
      INFO("M " << M << ", N " << N << ", K " << K << ", transpose_a " << ta << ", transpose_b "
                << tb << ", accumulate " << acc << ", alpha " << alpha);
      CHECK(testing::close(sliced, whole, 0.0, {M, N}));
    }
  }
}

TEST_CASE("weights packed ahead: the same bits as packing in every product", "[kernels]") {
  // A model's weight matrix packed once (pack_panels) and multiplied by panels_matmul, or kept
  // by WeightPanels, against packed_matmul packing it in the product: the same kernel calls in
  // the same order, so the same bits, by every schedule: a few rows (WeightPanels reads b in
  // place, as matmul does), up to a block of rows, more rows by a small b (the swept schedule)
  // and by a large one (K·N > 2^20), panels cut short past N.
  std::mt19937 gen(13);
  for (const auto& [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{1, 70, 37},
                                                                        {4, 67, 130},
                                                                        {5, 70, 33},
                                                                        {32, 200, 64},
                                                                        {97, 13, 7},
                                                                        {296, 45, 37},
                                                                        {230, 2049, 513},
                                                                        {7, 9, 0}}) {
    for (const bool acc : {false, true}) {
      const auto a = ref::random_vector(static_cast<std::size_t>(M * K), gen, -2, 2);
      const auto b = ref::random_vector(static_cast<std::size_t>(K * N), gen, -2, 2);
      const auto c0 = ref::random_vector(static_cast<std::size_t>(M * N), gen, -2, 2);
      auto expected = c0;
      attnlens::detail::packed_matmul(expected.data(), a.data(), b.data(), M, N, K, false, false,
                                      acc, 1.0f);
      INFO("M " << M << ", N " << N << ", K " << K << ", accumulate " << acc);
      if (attnlens::detail::packs_operand(M)) {
        std::vector<float> panels(static_cast<std::size_t>(attnlens::detail::panel_floats(K, N)),
                                  -7.0f);
        attnlens::detail::pack_panels(b.data(), K, N, panels.data());
        auto c = c0;
        attnlens::detail::panels_matmul(c.data(), a.data(), panels.data(), M, N, K, acc);
        CHECK(testing::close(c, expected, 0.0, {M, N}));
      }
      // Twice through WeightPanels: packed on the first product, reused on the second; the bits
      // of detail::matmul (packed_matmul in WebAssembly, Eigen natively).
      auto product = c0;
      attnlens::detail::matmul(product.data(), a.data(), b.data(), M, N, K, false, false, acc);
      attnlens::detail::WeightPanels kept;
      kept.sync(1);
      for (int round = 0; round < 2; ++round) {
        auto c = c0;
        kept.matmul(c.data(), a.data(), b.data(), M, N, K, acc);
        INFO("round " << round);
        CHECK(testing::close(c, product, 0.0, {M, N}));
      }
#if defined(__wasm_simd128__)
      // Packed only where matmul packs, and only in WebAssembly (natively Eigen packs).
      CHECK((kept.bytes() > 0) == (attnlens::detail::packs_operand(M) && K > 0));
#else
      CHECK(kept.bytes() == 0);
#endif
      kept.sync(2);  // another stamp: the parameters changed
      CHECK(kept.bytes() == 0);
    }
  }
}

TEST_CASE(
    "compute threads: every part runs once, errors come back, a call inside a part runs alone",
    "[kernels][threads]") {
  using attnlens::detail::parallel_parts;
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  CHECK(attnlens::detail::set_compute_threads(3) == 1);  // no threads in this build
#else
  CHECK(attnlens::detail::set_compute_threads(3) == 3);
  CHECK(attnlens::detail::compute_threads() == 3);
#endif
  const int threads = attnlens::detail::compute_threads();
  for (int round = 0; round < 50; ++round) {
    // (Catch2's assertions are for the test's own thread: the parts only count.)
    std::vector<std::atomic<int>> runs(8);
    std::atomic<int> seen_parts{0}, inner_parts{0};
    parallel_parts(8, [&](int part, int parts) {
      runs[static_cast<std::size_t>(part)] += 1;
      seen_parts = parts;
      // A call from inside a part runs its parts on its own thread.
      parallel_parts(4, [&](int, int inner) { inner_parts += inner; });
    });
    INFO("round " << round);
    REQUIRE(seen_parts == threads);
    CHECK(inner_parts == threads);
    for (int p = 0; p < 8; ++p)
      CHECK(runs[static_cast<std::size_t>(p)] == (p < threads ? 1 : 0));
  }
  CHECK_THROWS_WITH(parallel_parts(8,
                                   [&](int part, int parts) {
                                     if (part == parts - 1) throw std::runtime_error("last part");
                                   }),
                    "last part");
  CHECK(attnlens::detail::set_compute_threads(1) == 1);
  // The public setter names a bad count.
  CHECK_THROWS_WITH(attnlens::set_compute_threads(0), "threads is 0; it must be in [1, 64]");
  CHECK_THROWS_WITH(attnlens::set_compute_threads(65), "threads is 65; it must be in [1, 64]");
  CHECK(attnlens::compute_threads() == 1);
}

TEST_CASE("compute threads: products split over them give the same bits as one thread",
          "[kernels][threads]") {
  // Each thread computes whole columns of C (panels, or rows of a transposed B), each output
  // summed as on one thread: the same bits. Shapes over the split threshold (2^18 multiply-adds):
  // a few rows by B read in place, both layouts (a cached forward's new token, the tied
  // unembedding), a block of rows panel by panel, and weights packed ahead; widths not a multiple
  // of a thread's share.
  std::mt19937 gen(14);
  for (const auto& [M, N, K] : std::vector<std::array<std::int64_t, 3>>{
           {1, 2305, 768}, {3, 1000, 300}, {4, 777, 513}, {32, 2304, 96}, {13, 1027, 260}}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool tb = variant & 1, acc = variant & 2;
      const auto a = ref::random_vector(static_cast<std::size_t>(M * K), gen, -2, 2);
      const auto b = ref::random_vector(static_cast<std::size_t>(K * N), gen, -2, 2);
      const auto c0 = ref::random_vector(static_cast<std::size_t>(M * N), gen, -2, 2);
      std::vector<float> panels(static_cast<std::size_t>(attnlens::detail::panel_floats(K, N)));
      attnlens::detail::pack_panels(b.data(), K, N, panels.data());
      const auto products = [&] {
        auto c = c0;
        attnlens::detail::packed_matmul(c.data(), a.data(), b.data(), M, N, K, false, tb, acc,
                                        1.0f);
        auto d = c0;
        if (!tb && attnlens::detail::packs_operand(M))
          attnlens::detail::panels_matmul(d.data(), a.data(), panels.data(), M, N, K, acc);
        return std::make_pair(c, d);
      };
      REQUIRE(attnlens::detail::set_compute_threads(1) == 1);
      const auto one = products();
      attnlens::detail::set_compute_threads(3);
      const auto three = products();
      attnlens::detail::set_compute_threads(1);
      INFO("M " << M << ", N " << N << ", K " << K << ", transpose_b " << tb << ", accumulate "
                << acc);
      CHECK(testing::close(three.first, one.first, 0.0, {M, N}));
      CHECK(testing::close(three.second, one.second, 0.0, {M, N}));
    }
  }
}

TEST_CASE("mean of slices: the plain loop's bits across its L1 chunks", "[kernels]") {
  std::mt19937 gen(31);
  std::uniform_real_distribution<float> weight(0.0f, 1.0f);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{4095}, std::int64_t{4096},
                               std::int64_t{4097}, std::int64_t{3 * 4096 + 5}}) {
    for (const int slices : {1, 3, 8}) {
      CAPTURE(n, slices);
      std::vector<float> data(static_cast<std::size_t>(n * slices));
      for (float& w : data)
        w = weight(gen);
      data[0] = -0.0f;  // every slice's first entry -0: the plain loop from 0 gives +0
      for (int h = 0; h < slices; ++h)
        data[static_cast<std::size_t>(h * n)] = -0.0f;
      std::vector<float> expected(static_cast<std::size_t>(n));
      for (std::int64_t c = 0; c < n; ++c) {
        float sum = 0.0f;
        for (int h = 0; h < slices; ++h)
          sum += data[static_cast<std::size_t>(h * n + c)];
        expected[static_cast<std::size_t>(c)] = sum / static_cast<float>(slices);
      }
      std::vector<float> out(static_cast<std::size_t>(n), 42.0f);
      attnlens::detail::mean_of_slices(data.data(), slices, n, out.data());
      // Bit for bit (memcmp: +0 and -0 differ, which == would not see).
      CHECK(std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) == 0);
      CHECK_FALSE(std::signbit(out[0]));
    }
  }
  std::vector<float> out(3, 0.0f);
  attnlens::detail::mean_of_slices(nullptr, 0, 3, out.data());
  CHECK(std::isnan(out[0]));
  CHECK(std::isnan(out[2]));
}
