// Private: the one matrix product behind the GPT-2 model (every projection, the unembedding,
// the attention backward's products). One function so that a faster kernel can replace it in
// one place (e.g. the attention kernels' packed micro-kernel in WebAssembly).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace attnlens::detail {

// c[M, N] = alpha · op(a) · op(b)          (accumulate = false)
// c[M, N] += alpha · op(a) · op(b)         (accumulate = true)
// All row-major and contiguous. op(a) is [M, K]: a is stored [M, K], or [K, M] when
// transpose_a. op(b) is [K, N]: b is stored [K, N], or [N, K] when transpose_b. c must not
// overlap a or b. With K = 0 the product is zero (c is zeroed or left as it is).
void matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
            std::int64_t K, bool transpose_a, bool transpose_b, bool accumulate,
            float alpha = 1.0f);

// A model's weight matrices packed once for the products of its forward passes. In WebAssembly
// matmul packs its right-hand operand into the micro-kernel's panels in every product: for
// GPT-2 small's 32-token forward that is 340 MB of weights read and rewritten, a third of the
// forward's time (docs/performance.md, "Weights packed once"). Here each matrix is packed on
// its first product and kept (as much memory again as the matrices) until the model's
// parameters change. Natively Eigen's product packs for itself and nothing is kept.
class WeightPanels {
 public:
  // Forgets every packed matrix when `stamp` differs from the one they were packed under (a
  // model's stamp changes with its parameters).
  void sync(std::uint64_t stamp);
  // c (+)= a · w for a [M, K] and the weight w [K, N] (both row-major), through w's panels when
  // matmul would pack w (packed on first use; when the memory for them cannot be had, w is
  // packed per product as before). The same bits as matmul(c, a, w, M, N, K, false, false,
  // accumulate).
  void matmul(float* c, const float* a, const float* w, std::int64_t M, std::int64_t N,
              std::int64_t K, bool accumulate);
  // Bytes held by packed matrices.
  std::int64_t bytes() const;
  void clear();

 private:
  std::uint64_t stamp_ = 0;
  std::unordered_map<const float*, std::vector<float>> panels_;
};

}  // namespace attnlens::detail
