// Private: the one matrix product behind the GPT-2 model (every projection, the unembedding,
// the attention backward's products). One function so that a faster kernel can replace it in
// one place (e.g. the attention kernels' packed micro-kernel in WebAssembly).
#pragma once

#include <cstdint>

namespace attnlens::detail {

// c[M, N] = alpha · op(a) · op(b)          (accumulate = false)
// c[M, N] += alpha · op(a) · op(b)         (accumulate = true)
// All row-major and contiguous. op(a) is [M, K]: a is stored [M, K], or [K, M] when
// transpose_a. op(b) is [K, N]: b is stored [K, N], or [N, K] when transpose_b. c must not
// overlap a or b. With K = 0 the product is zero (c is zeroed or left as it is).
void matmul(float* c, const float* a, const float* b, std::int64_t M, std::int64_t N,
            std::int64_t K, bool transpose_a, bool transpose_b, bool accumulate,
            float alpha = 1.0f);

}  // namespace attnlens::detail
