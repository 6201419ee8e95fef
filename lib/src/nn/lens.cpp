#include "nn/lens.hpp"

#include "core/check.hpp"
#include "core/matmul.hpp"
#include "nn/block.hpp"
#include "nn/layers.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <new>
#include <vector>

namespace attnlens {

double LogitAttribution::total() const noexcept {
  double sum = embeddings + constant;
  for (float x : heads.data)
    sum += x;
  for (float x : attention_bias.data)
    sum += x;
  for (float x : mlps.data)
    sum += x;
  return sum;
}

}  // namespace attnlens

namespace attnlens::detail {

void check_head_output_rows(const std::vector<std::int64_t>& rows, std::int64_t N) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= N) {
      fail(ErrorCode::BAD_ARGUMENT, "head_output_rows[", i, "] is ", rows[i], ", outside [0, ", N,
           ") (rows are b · T + t)");
    }
  }
}

void head_writes(float* out, const float* merged, const float* o_w,
                 const std::vector<std::int64_t>& rows, std::int64_t heads, std::int64_t hd,
                 std::int64_t d) {
  std::vector<double> sum(static_cast<std::size_t>(d));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const float* z = merged + rows[r] * heads * hd;
    for (std::int64_t h = 0; h < heads; ++h) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::int64_t e = 0; e < hd; ++e) {
        const double a = z[h * hd + e];
        const float* w = o_w + (h * hd + e) * d;
        for (std::int64_t c = 0; c < d; ++c)
          sum[static_cast<std::size_t>(c)] += a * w[c];
      }
      float* o = out + (static_cast<std::int64_t>(r) * heads + h) * d;
      for (std::int64_t c = 0; c < d; ++c)
        o[c] = static_cast<float>(sum[static_cast<std::size_t>(c)]);
    }
  }
}

void check_stream_rows(const Tensor& rows, std::int64_t d, std::int64_t V) {
  if (rows.shape.size() != 2 || rows.shape[1] != d || rows.shape[0] < 1) {
    fail(ErrorCode::BAD_ARGUMENT, "rows have shape ", shape_to_string(rows.shape),
         "; unembed takes [R, ", d, "] with R >= 1 (rows of the residual stream)");
  }
  const std::int64_t R = rows.shape[0];
  require_at_most(R * V, kDefaultMaxElements, "the logits [rows, vocab_size]");
  for (std::int64_t r = 0; r < R; ++r) {
    if (!std::isfinite(finite_max_abs(rows.data.data() + r * d, d))) {
      fail(ErrorCode::NON_FINITE, "row ", r, " of the residual stream is not finite");
    }
  }
}

Tensor unembed_prenorm(const Readout& readout, const Tensor& rows) {
  const std::int64_t d = readout.d, V = readout.vocab;
  if (readout.unembedding == nullptr) {
    fail(ErrorCode::BAD_ARGUMENT, "this model has no prediction head, so nothing to unembed");
  }
  check_stream_rows(rows, d, V);
  const std::int64_t R = rows.shape[0];
  Tensor out;
  std::vector<float> normed, mean, rstd;
  try {
    out = Tensor({R, V});
    normed.resize(static_cast<std::size_t>(R * d));
    mean.resize(static_cast<std::size_t>(R));
    rstd.resize(static_cast<std::size_t>(R));
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "unembed could not allocate the logits of ", R, " rows");
  }
  if (readout.layernorm) {
    layernorm_forward(normed.data(), mean.data(), rstd.data(), rows.data.data(), readout.norm_w,
                      readout.norm_b, R, d, readout.eps);
  } else {
    rmsnorm_forward(normed.data(), rows.data.data(), readout.norm_w, R, d, readout.eps,
                    readout.plus_one);
  }
  matmul(out.data.data(), normed.data(), readout.unembedding, R, V, d, false, true, false);
  if (readout.bias != nullptr) {
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t v = 0; v < V; ++v)
        out.data[static_cast<std::size_t>(r * V + v)] += readout.bias[v];
  }
  if (!std::isfinite(finite_max_abs(out.data.data(), R * V))) {
    fail(ErrorCode::NON_FINITE, "the logits of these rows overflow float32");
  }
  return out;
}

void check_attribution(std::int64_t row, std::int32_t token, std::int64_t N, std::int64_t V) {
  if (row < 0 || row >= N) {
    fail(ErrorCode::BAD_ARGUMENT, "row is ", row, ", outside [0, ", N, ") (rows are b · T + t)");
  }
  if (token < -1 || token >= V) {
    fail(ErrorCode::BAD_ARGUMENT, "token is ", token, ", outside the vocabulary [0, ", V,
         ") (-1: the token the model ranks first)");
  }
}

LogitAttribution attribute_prenorm(const Readout& readout, const ModelOutput& out, std::int64_t row,
                                   std::int32_t token) {
  const std::int64_t L = readout.layers, H = readout.heads, d = readout.d;
  if (token < 0) {  // the model's first choice (the lowest id among equal logits)
    const std::vector<float>& logits = out.logits.data;
    token =
        static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  const std::int64_t N = out.hidden_states.shape[1] * out.hidden_states.shape[2];
  const auto stream = [&](std::int64_t l) {
    return out.hidden_states.data.data() + (l * N + row) * d;
  };
  // The frozen norm: a part c reaches the logit as Σ_k c_k u_k − mean(c) Σ_k u_k (LayerNorm) or
  // Σ_k c_k u_k (RMSNorm), u_k = scale · w_k · U[token, k].
  const float* x = stream(L);
  double mean = 0;
  if (readout.layernorm) {
    for (std::int64_t k = 0; k < d; ++k)
      mean += x[k];
    mean /= static_cast<double>(d);
  }
  double second = 0;
  for (std::int64_t k = 0; k < d; ++k)
    second += (x[k] - mean) * (x[k] - mean);
  const double scale = 1.0 / std::sqrt(second / static_cast<double>(d) + readout.eps);
  std::vector<double> u(static_cast<std::size_t>(d));
  double u_sum = 0;
  const float* U = readout.unembedding + static_cast<std::int64_t>(token) * d;
  for (std::int64_t k = 0; k < d; ++k) {
    const double w = readout.plus_one ? 1.0 + readout.norm_w[k] : readout.norm_w[k];
    u[static_cast<std::size_t>(k)] = scale * w * U[k];
    u_sum += u[static_cast<std::size_t>(k)];
  }
  const auto through = [&](const double* c) {
    double dot = 0, sum = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      dot += c[k] * u[static_cast<std::size_t>(k)];
      sum += c[k];
    }
    return readout.layernorm ? dot - sum / static_cast<double>(d) * u_sum : dot;
  };

  LogitAttribution a;
  a.row = row;
  a.token = token;
  a.logit = out.logits.data[static_cast<std::size_t>(token)];
  a.scale = scale;
  a.heads = Tensor({L, H});
  a.attention_bias = Tensor({L});
  a.mlps = Tensor({L});
  std::vector<double> part(static_cast<std::size_t>(d)), rest(static_cast<std::size_t>(d));
  for (std::int64_t k = 0; k < d; ++k)
    part[static_cast<std::size_t>(k)] = stream(0)[k];
  a.embeddings = through(part.data());
  for (std::int64_t l = 0; l < L; ++l) {
    const float* before = stream(l);
    const float* after = stream(l + 1);
    for (std::int64_t k = 0; k < d; ++k)
      rest[static_cast<std::size_t>(k)] = static_cast<double>(after[k]) - before[k];
    for (std::int64_t h = 0; h < H; ++h) {
      const float* w = out.head_outputs.data.data() + (l * H + h) * d;
      for (std::int64_t k = 0; k < d; ++k) {
        part[static_cast<std::size_t>(k)] = w[k];
        rest[static_cast<std::size_t>(k)] -= w[k];
      }
      a.heads.data[static_cast<std::size_t>(l * H + h)] = static_cast<float>(through(part.data()));
    }
    const float* b = readout.o_bias[static_cast<std::size_t>(l)];
    for (std::int64_t k = 0; k < d; ++k) {
      part[static_cast<std::size_t>(k)] = b != nullptr ? b[k] : 0.0;
      rest[static_cast<std::size_t>(k)] -= part[static_cast<std::size_t>(k)];
    }
    a.attention_bias.data[static_cast<std::size_t>(l)] = static_cast<float>(through(part.data()));
    a.mlps.data[static_cast<std::size_t>(l)] = static_cast<float>(through(rest.data()));
  }
  double constant = readout.bias != nullptr ? readout.bias[token] : 0.0;
  if (readout.layernorm && readout.norm_b != nullptr) {
    for (std::int64_t k = 0; k < d; ++k)
      constant += static_cast<double>(readout.norm_b[k]) * U[k];
  }
  a.constant = constant;
  return a;
}

}  // namespace attnlens::detail
