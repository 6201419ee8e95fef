#include "nn/ablation.hpp"

#include "core/check.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <new>
#include <vector>

namespace attnlens {

const char* ablation_kind_name(AblationKind kind) noexcept {
  return kind == AblationKind::Mean ? "mean" : "zero";
}

}  // namespace attnlens

namespace attnlens::detail {

void check_ablation(const Ablation& ablation, std::int64_t layers, std::int64_t heads) {
  const std::vector<AblatedHead>& list = ablation.heads;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const AblatedHead& h = list[i];
    if (h.layer < 0 || h.layer >= layers) {
      fail(ErrorCode::BAD_ARGUMENT, "ablate[", i, "] names layer ", h.layer,
           "; the model's layers are 0 to ", layers - 1);
    }
    if (h.head < 0 || h.head >= heads) {
      fail(ErrorCode::BAD_ARGUMENT, "ablate[", i, "] names head ", h.head,
           "; the model's heads are 0 to ", heads - 1);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (list[j].layer == h.layer && list[j].head == h.head) {
        fail(ErrorCode::BAD_ARGUMENT, "ablate[", i, "] names layer ", h.layer, " head ", h.head,
             " again (ablate[", j, "]); name each head once");
      }
    }
  }
}

void ablate_heads(float* merged, const Ablation& ablation, std::int64_t layer, std::int64_t B,
                  std::int64_t T, std::int64_t heads, std::int64_t head_dim, bool causal,
                  const std::int32_t* mask) {
  const std::int64_t width = heads * head_dim;
  std::vector<double> sum(static_cast<std::size_t>(head_dim));
  for (const AblatedHead& a : ablation.heads) {
    if (a.layer != layer) continue;
    const std::int64_t offset = a.head * head_dim;
    for (std::int64_t b = 0; b < B; ++b) {
      float* rows = merged + b * T * width + offset;  // row t's slice at rows + t · width
      if (ablation.kind == AblationKind::Zero) {
        for (std::int64_t t = 0; t < T; ++t)
          std::fill(rows + t * width, rows + t * width + head_dim, 0.0f);
        continue;
      }
      std::fill(sum.begin(), sum.end(), 0.0);
      if (causal) {
        // The running mean: row t's slice is read (into the sum) before it is replaced.
        for (std::int64_t t = 0; t < T; ++t) {
          float* row = rows + t * width;
          for (std::int64_t e = 0; e < head_dim; ++e) {
            sum[static_cast<std::size_t>(e)] += row[e];
            row[e] =
                static_cast<float>(sum[static_cast<std::size_t>(e)] / static_cast<double>(t + 1));
          }
        }
        continue;
      }
      std::int64_t count = 0;
      for (std::int64_t t = 0; t < T; ++t) {
        if (mask != nullptr && mask[b * T + t] == 0) continue;
        ++count;
        for (std::int64_t e = 0; e < head_dim; ++e)
          sum[static_cast<std::size_t>(e)] += rows[t * width + e];
      }
      for (std::int64_t t = 0; t < T; ++t) {
        for (std::int64_t e = 0; e < head_dim; ++e) {
          rows[t * width + e] = count == 0 ? 0.0f
                                           : static_cast<float>(sum[static_cast<std::size_t>(e)] /
                                                                static_cast<double>(count));
        }
      }
    }
  }
}

}  // namespace attnlens::detail

namespace attnlens::detail {

void value_weighted(float* norms, float* mixed, const float* v, const float* o_w,
                    const float* weights, std::int64_t B, std::int64_t heads, std::int64_t kv_heads,
                    std::int64_t T, std::int64_t head_dim, std::int64_t d, const Ablation* ablation,
                    std::int64_t layer) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const Matrix>;
  const std::int64_t H = heads, hd = head_dim, group = heads / kv_heads;
  const auto finite = [&](double x, const char* what) {
    if (!std::isfinite(x)) {
      fail(ErrorCode::NON_FINITE, "the value-weighted attention of layer ", layer,
           " overflowed in ", what,
           ": the values through the output projection are too large for these inputs");
    }
  };
  std::vector<char> off(static_cast<std::size_t>(H), 0);
  if (ablation != nullptr) {
    for (const AblatedHead& a : ablation->heads)
      if (a.layer == layer) off[static_cast<std::size_t>(a.head)] = 1;
  }
  try {
    std::vector<Matrix> f(static_cast<std::size_t>(H));             // f_h(x_j) as rows [T, d]
    std::vector<double> gram(static_cast<std::size_t>(T * H * H));  // <f_h, f_h'> per token
    std::vector<double> a(static_cast<std::size_t>(H));
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        Matrix& fh = f[static_cast<std::size_t>(h)];
        if (off[static_cast<std::size_t>(h)]) {
          fh = Matrix::Zero(T, d);
          continue;
        }
        // One product per head, vectorised (float32 sums of hd terms, as the forward's own).
        fh.noalias() = ConstMap(v + (b * kv_heads + h / group) * T * hd, T, hd) *
                       ConstMap(o_w + h * hd * d, hd, d);
      }
      for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t k = h; k < H; ++k) {
          // Summed in float64: a float32 sum of squares would overflow at norms of 1e19, long
          // before the forward's own values do.
          const Eigen::VectorXd dots =
              f[static_cast<std::size_t>(h)]
                  .cast<double>()
                  .cwiseProduct(f[static_cast<std::size_t>(k)].cast<double>())
                  .rowwise()
                  .sum();
          for (std::int64_t j = 0; j < T; ++j)
            gram[static_cast<std::size_t>((j * H + h) * H + k)] =
                gram[static_cast<std::size_t>((j * H + k) * H + h)] = dots[j];
        }
        for (std::int64_t j = 0; j < T; ++j) {
          const double n = std::sqrt(gram[static_cast<std::size_t>((j * H + h) * H + h)]);
          finite(n, "a value's norm");
          norms[(b * H + h) * T + j] = static_cast<float>(n);
        }
      }
      for (std::int64_t i = 0; i < T; ++i) {
        for (std::int64_t j = 0; j < T; ++j) {
          for (std::int64_t h = 0; h < H; ++h)
            a[static_cast<std::size_t>(h)] = weights[((b * H + h) * T + i) * T + j];
          const double* g = gram.data() + j * H * H;
          double s = 0.0;
          for (std::int64_t h = 0; h < H; ++h) {
            const double ah = a[static_cast<std::size_t>(h)];
            if (ah == 0.0) continue;
            for (std::int64_t k = 0; k < H; ++k)
              s += ah * a[static_cast<std::size_t>(k)] * g[h * H + k];
          }
          finite(s, "a sum over the heads");
          mixed[(b * T + i) * T + j] = static_cast<float>(std::sqrt(std::max(s, 0.0)));
        }
      }
    }
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::OUT_OF_MEMORY, "the value-weighted attention of layer ", layer,
         " could not allocate its values through the output projection [heads, T, d] (", H, " x ",
         T, " x ", d, ")");
  }
}

}  // namespace attnlens::detail
