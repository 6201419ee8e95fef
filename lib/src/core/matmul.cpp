#include "core/matmul.hpp"

#include "core/kernels.hpp"

#include <attnlens/tensor.hpp>

#include <new>
#include <utility>

namespace attnlens::detail {
namespace {

using ConstMap = Eigen::Map<const RowMatrixXf>;
using MutableMap = Eigen::Map<RowMatrixXf>;

// Eigen's GEMM for c (+)= alpha · lhs · rhs; lhs and rhs are maps or their transposes.
template <typename Lhs, typename Rhs>
void product(MutableMap& c, const Lhs& lhs, const Rhs& rhs, bool accumulate, float alpha) {
  if (!accumulate) c.setZero();
  if (alpha == 1.0f) {
    c.noalias() += lhs * rhs;
  } else {
    c.noalias() += alpha * (lhs * rhs);
  }
}

}  // namespace

void matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
            std::int64_t K, bool transpose_a, bool transpose_b, bool accumulate, float alpha) {
#if defined(__wasm_simd128__)
  // Eigen 3.4 has no WebAssembly SIMD: its product is scalar there. The attention kernels'
  // packed micro-kernel is SIMD128 (fused with relaxed SIMD). Natively Eigen's GEMM stays.
  packed_matmul(c, a, b, M, N, K, transpose_a, transpose_b, accumulate, alpha);
  return;
#endif
  MutableMap cm(c, M, N);
  if (K == 0) {
    if (!accumulate) cm.setZero();
    return;
  }
  const ConstMap am(a, transpose_a ? K : M, transpose_a ? M : K);
  const ConstMap bm(b, transpose_b ? N : K, transpose_b ? K : N);
  if (transpose_a && transpose_b) {
    product(cm, am.transpose(), bm.transpose(), accumulate, alpha);
  } else if (transpose_a) {
    product(cm, am.transpose(), bm, accumulate, alpha);
  } else if (transpose_b) {
    product(cm, am, bm.transpose(), accumulate, alpha);
  } else {
    product(cm, am, bm, accumulate, alpha);
  }
}

void WeightPanels::sync(std::uint64_t stamp) {
  if (stamp != stamp_) clear();
  stamp_ = stamp;
}

void WeightPanels::matmul(float* c, const float* a, const float* w, std::int64_t M, std::int64_t N,
                          std::int64_t K, bool accumulate) {
#if defined(__wasm_simd128__)
  if (packs_operand(M)) {
    auto found = panels_.find(w);
    if (found == panels_.end()) {
      try {
        std::vector<float> packed(static_cast<std::size_t>(panel_floats(K, N)));
        pack_panels(w, K, N, packed.data());
        found = panels_.emplace(w, std::move(packed)).first;
      } catch (const std::bad_alloc&) {
        // No room for a second copy: this matrix is packed per product (an empty entry, so that
        // the allocation is not tried again at every product).
        found = panels_.emplace(w, std::vector<float>{}).first;
      }
    }
    if (static_cast<std::int64_t>(found->second.size()) == panel_floats(K, N)) {
      panels_matmul(c, a, found->second.data(), M, N, K, accumulate);
      return;
    }
  }
#endif
  detail::matmul(c, a, w, M, N, K, false, false, accumulate);
}

std::int64_t WeightPanels::bytes() const {
  std::int64_t total = 0;
  for (const auto& [w, packed] : panels_)
    total += static_cast<std::int64_t>(packed.size() * sizeof(float));
  return total;
}

void WeightPanels::clear() {
  panels_.clear();
}

}  // namespace attnlens::detail
