// explain() with options decoded from the input (FuzzedDataProvider reads them from its end)
// and the remaining bytes as the sentence.
//
// Options are in range (valid mode) or drawn from a range around the limits (wild mode). Oracles:
//   - out-of-range options never succeed; valid options fail only with INVALID_UTF8, EMPTY_INPUT
//     or (without truncate) TOO_LARGE;
//   - on success: 1 <= L <= max_tokens, shapes as documented, every number finite, each weight
//     row sums to 1 (tolerance below), causal weights above the diagonal exactly 0.
#include "fuzz.hpp"

#include <attnlens/explain.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>

namespace {

bool finite(const attnlens::Tensor& t) {
  for (const float x : t.data) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

void check_shape(const attnlens::Tensor& t, const attnlens::Shape& expected, const char* name) {
  fuzz::check(t.shape == expected && t.numel() == attnlens::shape_numel(expected),
              "%s is %s, expected %s", name, attnlens::shape_to_string(t.shape).c_str(),
              attnlens::shape_to_string(expected).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  attnlens::ExplainOptions o;
  const bool wild = in.ConsumeIntegralInRange(0, 7) == 7;
  if (wild) {
    o.num_heads = in.ConsumeIntegralInRange<int>(-1, 66);
    o.model_dim = in.ConsumeIntegralInRange<int>(-1, 130);
    o.max_tokens = in.ConsumeIntegralInRange<int>(-1, 66);
  } else {
    o.num_heads = in.ConsumeIntegralInRange<int>(1, 8);
    o.model_dim = o.num_heads * in.ConsumeIntegralInRange<int>(1, 16);
    o.max_tokens = in.ConsumeIntegralInRange<int>(1, 64);
  }
  o.causal = in.ConsumeBool();
  o.seed = in.ConsumeIntegral<std::uint32_t>();
  o.init = static_cast<attnlens::Init>(in.ConsumeIntegralInRange<int>(0, 2));
  o.positional = in.ConsumeBool() ? attnlens::Positional::Sinusoidal : attnlens::Positional::None;
  o.truncate = in.ConsumeBool();
  const std::string sentence = in.ConsumeRemainingBytesAsString();
  const bool valid_options = o.num_heads >= 1 && o.num_heads <= attnlens::kMaxHeads &&
                             o.model_dim >= 1 && o.model_dim <= attnlens::kMaxModelDim &&
                             o.model_dim % o.num_heads == 0 && o.max_tokens >= 1 &&
                             o.max_tokens <= attnlens::kMaxTokensLimit;

  attnlens::Explanation ex;
  try {
    ex = attnlens::explain(sentence, o);
  } catch (const attnlens::Error& e) {
    using attnlens::ErrorCode;
    if (!valid_options) {
      fuzz::expect_code(e, "explain", ErrorCode::BAD_ARGUMENT, ErrorCode::INVALID_UTF8,
                        ErrorCode::EMPTY_INPUT, ErrorCode::TOO_LARGE);
    } else if (o.truncate) {
      fuzz::expect_code(e, "explain", ErrorCode::INVALID_UTF8, ErrorCode::EMPTY_INPUT);
    } else {
      fuzz::expect_code(e, "explain", ErrorCode::INVALID_UTF8, ErrorCode::EMPTY_INPUT,
                        ErrorCode::TOO_LARGE);
    }
    return 0;
  }
  fuzz::check(valid_options, "explain accepted model_dim %d, num_heads %d, max_tokens %d",
              o.model_dim, o.num_heads, o.max_tokens);

  const auto L = static_cast<std::int64_t>(ex.tokens.size());
  const std::int64_t H = o.num_heads, E = o.model_dim;
  fuzz::check(L >= 1 && L <= o.max_tokens, "%lld tokens with max_tokens %d",
              static_cast<long long>(L), o.max_tokens);
  fuzz::check(ex.stats.truncated == (ex.stats.total_tokens > L),
              "truncated is %d with %lld of %lld tokens", ex.stats.truncated,
              static_cast<long long>(L), static_cast<long long>(ex.stats.total_tokens));
  check_shape(ex.weights, {H, L, L}, "weights");
  check_shape(ex.output, {L, E}, "output");
  check_shape(ex.contextual, {L, E}, "contextual");
  check_shape(ex.embeddings, {L, E}, "embeddings");
  fuzz::check(finite(ex.weights) && finite(ex.output) && finite(ex.contextual) &&
                  finite(ex.embeddings) && finite(ex.mean_weights),
              "a result holds NaN or an infinity");

  // Row sums. Whatever the logits, each weight is e_j / sum(e) with e_j from a float exp
  // (relative error <= 2 ulp = 4u, u = 2^-24), the sum of L floats (relative error <= (L-1)u)
  // and one division or reciprocal-multiply (<= 2u): each weight is off by a factor within
  // 1 +- (L + 5)u, so |sum - 1| <= (L + 5)u. Logit rounding does not enter: any logits give
  // weights that sum to 1 exactly. Exp results below 2^-125 may be flushed to 0: L * 2^-125 more.
  const double u = std::ldexp(1.0, -24);
  const double tolerance = static_cast<double>(L + 5) * u + static_cast<double>(L) * 0x1p-125;
  for (std::int64_t h = 0; h < H; ++h) {
    for (std::int64_t i = 0; i < L; ++i) {
      const float* row = ex.weights.data.data() + (h * L + i) * L;
      double sum = 0.0;
      for (std::int64_t j = 0; j < L; ++j) {
        fuzz::check(row[j] >= 0.0f && row[j] <= 1.0f, "weight [%lld, %lld, %lld] = %g",
                    static_cast<long long>(h), static_cast<long long>(i), static_cast<long long>(j),
                    static_cast<double>(row[j]));
        if (o.causal && j > i) {
          fuzz::check(row[j] == 0.0f, "causal weight [%lld, %lld, %lld] above the diagonal is %g",
                      static_cast<long long>(h), static_cast<long long>(i),
                      static_cast<long long>(j), static_cast<double>(row[j]));
        }
        sum += row[j];
      }
      fuzz::check(std::abs(sum - 1.0) <= tolerance,
                  "weight row [%lld, %lld] sums to %.9g (tolerance %.3g)",
                  static_cast<long long>(h), static_cast<long long>(i), sum, tolerance);
    }
  }
  return 0;
}
