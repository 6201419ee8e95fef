// attnlens — what the residual stream predicts and who wrote it: the logit lens and direct
// logit attribution, for every family Model loads (attnlens/model.hpp).
//
// The logit lens (Model::unembed) applies a model's own prediction head to the residual stream
// after any layer, as if the layers after it were not there: a decoder's final norm and its
// unembedding, BERT's masked-LM head.
//
// Direct logit attribution (Model::attribute) splits one logit of a pre-norm model into what
// each part of the network wrote into the residual stream. The stream before the final norm is
// a sum: the embeddings, each attention head's write (its slice of the merged heads through its
// rows of the output projection), each output projection's bias, each MLP's output. The final
// norm is linear once its scale is frozen at the value it has for the whole stream (1/σ for a
// LayerNorm, whose centring is linear too; 1/rms for an RMSNorm), so the logit is the sum of
// each part through the frozen norm onto the token's unembedding row, plus the norm's and the
// head's biases. The parts then add up to the logit exactly, up to float32 rounding of the
// forward (tests/cpp/test_gpt2.cpp and test_llama.cpp check it against float64 references written
// from the models' published code; test_bert.cpp the lens).
#pragma once

#include <attnlens/tensor.hpp>

#include <cstdint>

namespace attnlens {

struct LogitAttribution {
  std::int64_t row = 0;    // b · T + t: the position whose prediction is split
  std::int32_t token = 0;  // the token whose logit is split (the model's first when asked for -1)
  float logit = 0;         // the model's logit of `token` at `row` (its forward's)
  double scale = 0;        // the final norm's frozen 1/σ (LayerNorm) or 1/rms (RMSNorm) at `row`
  double embeddings = 0;   // the stream before the first layer (token and position embeddings)
  Tensor heads;            // [layers, heads]: each head's write
  Tensor attention_bias;   // [layers]: each attention output projection's bias (0 without one)
  Tensor mlps;             // [layers]: each MLP's output, its biases included
  double constant = 0;     // the final norm's bias and the head's bias, for `token`
  // embeddings + Σ heads + Σ attention_bias + Σ mlps + constant: the logit the parts add up to
  // (in float64; the model's `logit` differs by its float32 rounding).
  double total() const noexcept;
};

}  // namespace attnlens
