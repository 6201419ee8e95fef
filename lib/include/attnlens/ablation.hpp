// attnlens — switching attention heads off (ablation), in every family's forward pass.
//
// A head's output is its attention-weighted values, one head_dim slice of the vector the
// attention's output projection multiplies. Ablating the head replaces that slice before the
// projection, so the head adds nothing of its own to the residual stream (zero), or adds what
// it adds on average (mean). Zero ablation equals the forward of the same weights with the
// head's rows of the output projection set to 0 (tests/cpp/test_gpt2.cpp, test_bert.cpp and
// test_llama.cpp check it on every family); the projection's bias is kept, as it belongs to no
// head.
#pragma once

#include <cstdint>
#include <vector>

namespace attnlens {

enum class AblationKind {
  Zero,  // the head's output is 0
  // The head's output at each position is its mean over the sentence's positions: over
  // positions 0 .. t in a causal model (a row must read no later token, so the figure of a
  // prefix does not change as the sentence grows), over the tokens the attention mask keeps
  // (all when there is none) in an encoder.
  Mean,
};

// "zero" or "mean".
const char* ablation_kind_name(AblationKind kind) noexcept;

struct AblatedHead {
  int layer = 0;  // 0 .. layers - 1
  int head = 0;   // a query head, 0 .. heads - 1
};

struct Ablation {
  std::vector<AblatedHead> heads;  // none: the forward as trained
  AblationKind kind = AblationKind::Zero;
  bool empty() const noexcept { return heads.empty(); }
};

}  // namespace attnlens
