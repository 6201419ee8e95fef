// Private: the GPT-2 layers' forward and backward passes, one function each (llm.c's shape).
// N = B·T rows of activations; every array is row-major and contiguous. Backward functions
// accumulate (+=) into parameter gradients and say for each activation gradient whether they
// write or accumulate. Reductions and exp/tanh run through Eigen on the caller's buffers;
// callers pass buffers whose start alignment does not change between runs (Gpt2Workspace
// allocates them aligned) so results are bit-identical run to run.
#pragma once

#include <cstdint>

namespace attnlens::detail {

class WeightPanels;  // core/matmul.hpp

inline constexpr float kLayerNormEps = 1e-5f;

// out[b, t, :] = wte[ids[b, t], :] + wpe[p, :] (+ wtt[types[b, t], :] when wtt is not null),
// where p is positions[b, t] when positions is not null, else t.
// out is (B, T, d), ids, types and positions are (B, T), wte is (V, d), wpe is (context, d), wtt
// is (type_vocab, d); ids, types and positions already checked.
void embed_forward(float* out, const std::int32_t* ids, const float* wte, const float* wpe,
                   std::int64_t B, std::int64_t T, std::int64_t d,
                   const std::int32_t* types = nullptr, const float* wtt = nullptr,
                   const std::int32_t* positions = nullptr);

// dwte[ids[b, t], :] += dout[b, t, :],  dwpe[p, :] += dout[b, t, :]   (in index order; p as in
// embed_forward), and dwtt[types[b, t], :] += dout[b, t, :] when dwtt is not null.
void embed_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* ids,
                    std::int64_t B, std::int64_t T, std::int64_t d,
                    const std::int32_t* types = nullptr, float* dwtt = nullptr,
                    const std::int32_t* positions = nullptr);

// out = (x − mean) · rstd · w + b per row, rstd = 1 / sqrt(var + eps) (biased variance; GPT-2's
// eps is 1e-5, BERT's 1e-12). x, out are (N, d) (out may be x); mean, rstd are (N), kept for the
// backward pass (null: not kept). b may be null (a LayerNorm without bias, ModernBERT's).
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w,
                       const float* b, std::int64_t N, std::int64_t d, float eps = kLayerNormEps);

// dx += LayerNorm'(dout); dw, db += their gradients. x is the forward input (N, d).
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x,
                        const float* w, const float* mean, const float* rstd, std::int64_t N,
                        std::int64_t d);

// out[n, :] = x[n, :] · w + b: x (N, in), w (in, out), b (out), out (N, out). When `residual` is
// non-null (N, out), it is added too: out = residual + x w + b. With `panels` (an inference
// forward's), w's product goes through its packed copy there: the same bits.
void linear_forward(float* out, const float* x, const float* w, const float* b,
                    const float* residual, std::int64_t N, std::int64_t in, std::int64_t out_dim,
                    WeightPanels* panels = nullptr);

// dx = dout · wᵀ (written, not accumulated); dw += xᵀ · dout; db += column sums of dout.
void linear_backward(float* dx, float* dw, float* db, const float* dout, const float* x,
                     const float* w, std::int64_t N, std::int64_t in, std::int64_t out_dim);

// dst += src, n elements.
void add_into(float* dst, const float* src, std::int64_t n);

// out = 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))), n elements.
void gelu_forward(float* out, const float* x, std::int64_t n);

// grad = GELU'(x) · grad, in place: on entry dL/dout, on exit dL/dx.
void gelu_backward(float* grad, const float* x, std::int64_t n);

// The exact GELU (BERT's "gelu", PyTorch's default): out = 0.5 x (1 + erf(x / sqrt 2)).
void gelu_erf_forward(float* out, const float* x, std::int64_t n);

// grad = GELU_erf'(x) · grad in place, GELU_erf'(x) = Φ(x) + x φ(x).
void gelu_erf_backward(float* grad, const float* x, std::int64_t n);

// qkv (B, T, 3d) -> q, k, v (B, H, T, hd) with d = H·hd; column block 0 is q, 1 is k, 2 is v.
void split_heads(float* q, float* k, float* v, const float* qkv, std::int64_t B, std::int64_t T,
                 std::int64_t H, std::int64_t hd);

// dq, dk, dv (B, H, T, hd) -> dqkv (B, T, 3d): the inverse of split_heads.
void join_heads(float* dqkv, const float* dq, const float* dk, const float* dv, std::int64_t B,
                std::int64_t T, std::int64_t H, std::int64_t hd);

// heads (B, H, T, hd) -> out (B, T, H·hd), heads side by side; and the inverse.
void merge_heads(float* out, const float* heads, std::int64_t B, std::int64_t T, std::int64_t H,
                 std::int64_t hd);
void unmerge_heads(float* heads, const float* x, std::int64_t B, std::int64_t T, std::int64_t H,
                   std::int64_t hd);

// Backward of O = softmax(scale · Q Kᵀ + mask) V for every (b, h) slice, given the forward
// weights P (B, H, T, T), which are exactly 0 at masked keys:
//   dV = Pᵀ dO,  dP = dO Vᵀ,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),  dQ = scale dS K,  dK = scale dSᵀ Q
// `causal`: only keys j <= t were visible (the rows are visited that far). Full attention
// visits every key; a key masked out (padding) has P = 0, so its dS is 0 too.
// q, k, v, dout, dq, dk, dv are (B, H, T, hd); dq, dk, dv are written. scratch holds T·T floats.
void attention_backward(float* dq, float* dk, float* dv, float* scratch, const float* dout,
                        const float* q, const float* k, const float* v, const float* weights,
                        std::int64_t B, std::int64_t H, std::int64_t T, std::int64_t hd,
                        float scale, bool causal = true);

// Cross-entropy of softmax(logits) against targets, summed over the rows whose target is not
// -1 (targets already checked to be -1 or in [0, V)). logits is (N, V). With write_gradient the
// logits are replaced by their gradient: (softmax − onehot) · grad_scale on counted rows, 0 on
// ignored rows. Returns the sum of −log p(target), accumulated in float64.
double cross_entropy(float* logits, const std::int32_t* targets, std::int64_t N, std::int64_t V,
                     bool write_gradient, float grad_scale);

}  // namespace attnlens::detail
