#include <attnlens/explain.hpp>

#include "check.hpp"

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
  ForwardResult r = layer.forward(ex.embeddings.view(), forward);
  if (r.trace) ex.trace = std::move(*r.trace);
  ex.weights = std::move(r.weights);
  ex.output = std::move(r.output);

  const Eigen::Map<const RowMatrixXf> out(ex.output.data.data(), L, E);
  const RowMatrixXf contextual = x + out;
  ex.contextual = to_tensor(contextual);
  ex.pca = pca_2d(x, contextual);

  const int H = options.num_heads;
  const std::int64_t slice = L * L;
  for (int h = 0; h < (options.trace ? H : 0); ++h) {
    // Only entries the mask lets through count: masked scores never reach the softmax.
    std::vector<float> raw;
    std::vector<float> scaled;
    raw.reserve(static_cast<std::size_t>(slice));
    scaled.reserve(static_cast<std::size_t>(slice));
    for (std::int64_t i = 0; i < slice; ++i) {
      if (ex.trace.mask.data[static_cast<std::size_t>(i)] == 0.0f) {
        raw.push_back(ex.trace.scores.data[static_cast<std::size_t>(h * slice + i)]);
        scaled.push_back(ex.trace.scaled.data[static_cast<std::size_t>(h * slice + i)]);
      }
    }
    ex.stats.raw_score_variance.push_back(
        finite_variance(raw.data(), static_cast<std::int64_t>(raw.size())));
    ex.stats.scaled_score_variance.push_back(
        finite_variance(scaled.data(), static_cast<std::int64_t>(scaled.size())));
  }
  ex.stats.entropy = row_entropy(ex.weights.view());
  ex.mean_weights = Tensor({L, L});
  Eigen::Map<RowMatrixXf> mean(ex.mean_weights.data.data(), L, L);
  for (int h = 0; h < H; ++h)
    mean += Eigen::Map<const RowMatrixXf>(ex.weights.data.data() + h * slice, L, L);
  mean /= static_cast<float>(H);
  return ex;
}

}  // namespace attnlens
