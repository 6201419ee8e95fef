#include <attnlens/explain.hpp>

#include "core/check.hpp"
#include "core/kernels.hpp"

#include <cmath>
#include <utility>

namespace attnlens {

Explanation explain(std::string_view sentence, const ExplainOptions& options) {
  if (options.max_tokens < 1 || options.max_tokens > kMaxTokensLimit) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "maxTokens must be between 1 and ", kMaxTokensLimit,
                 "; got ", options.max_tokens);
  }
  SelfAttentionConfig config;
  config.model_dim = options.model_dim;
  config.num_heads = options.num_heads;
  config.seed = options.seed;
  config.init = options.init;
  const SelfAttention layer(config);  // validates model_dim and num_heads
  if (options.trace_head && (*options.trace_head < 0 || *options.trace_head >= options.num_heads)) {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "traceHead must be between 0 and numHeads - 1 = ", options.num_heads - 1, "; got ",
                 *options.trace_head);
  }

  Explanation ex;
  ex.tokens = tokenize(sentence);
  ex.stats.total_tokens = static_cast<std::int64_t>(ex.tokens.size());
  if (ex.tokens.empty()) {
    detail::fail(ErrorCode::EMPTY_INPUT, "sentence has no tokens; type at least one word");
  }
  if (ex.stats.total_tokens > options.max_tokens) {
    if (!options.truncate) {
      detail::fail(ErrorCode::TOO_LARGE, "sentence has ", ex.stats.total_tokens,
                   " tokens, over the limit of ", options.max_tokens,
                   " (set truncate to explain the first ", options.max_tokens, ")");
    }
    ex.tokens.resize(static_cast<std::size_t>(options.max_tokens));
    ex.stats.truncated = true;
  }
  const std::int64_t L = static_cast<std::int64_t>(ex.tokens.size());
  const int E = options.model_dim;

  const RowMatrixXf tokens = token_embeddings(ex.tokens, E, options.seed);
  const RowMatrixXf positions = options.positional == Positional::Sinusoidal
                                    ? sinusoidal_positions(L, E)
                                    : RowMatrixXf(RowMatrixXf::Zero(L, E));
  const RowMatrixXf x = tokens + positions;
  const auto to_tensor = [](const RowMatrixXf& m) {
    return Tensor({m.rows(), m.cols()}, std::vector<float>(m.data(), m.data() + m.size()));
  };
  ex.token_embeddings = to_tensor(tokens);
  ex.positions = to_tensor(positions);
  ex.embeddings = to_tensor(x);
  ex.projections = layer.weights();

  ForwardOptions forward;
  forward.causal = options.causal;
  forward.trace = options.trace;
  forward.trace_head = options.trace_head;
  forward.trace_results = options.trace_results;
  forward.entropy = true;
  ForwardResult r = layer.forward(ex.embeddings.view(), forward);
  if (r.trace) ex.trace = std::move(*r.trace);
  ex.weights = std::move(r.weights);
  ex.output = std::move(r.output);
  ex.stats.entropy = std::move(r.entropy);

  const Eigen::Map<const RowMatrixXf> out(ex.output.data.data(), L, E);
  const RowMatrixXf contextual = x + out;
  ex.contextual = to_tensor(contextual);
  ex.pca = pca_2d(x, contextual);

  const int H = options.num_heads;
  const std::int64_t slice = L * L;
  const int traced = options.trace ? (options.trace_head ? 1 : H) : 0;
  // Only entries the mask lets through count: masked scores never reach the softmax.
  const float* mask = traced > 0 ? ex.trace.mask.data.data() : nullptr;
  for (int h = 0; h < traced; ++h) {
    const float* raw = ex.trace.scores.data.data() + h * slice;
    const float* scaled = ex.trace.scaled.data.data() + h * slice;
    ex.stats.raw_score_variance.push_back(finite_variance(raw, slice, mask));
    ex.stats.scaled_score_variance.push_back(finite_variance(scaled, slice, mask));
  }
  ex.mean_weights = Tensor({L, L});
  detail::mean_of_slices(ex.weights.data.data(), H, slice, ex.mean_weights.data.data());
  return ex;
}

}  // namespace attnlens
