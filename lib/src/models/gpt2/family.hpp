// Private: the GPT-2 family's entry in the model registry (lib/src/models/registry.cpp).
#pragma once

#include <attnlens/model.hpp>

namespace attnlens::detail {

// Loads a GPT-2 folder: model.safetensors, config.json, and vocab.json + merges.txt when given
// (load_checkpoint's rules and messages).
LoadedModel load_gpt2(const ModelFiles& files);

}  // namespace attnlens::detail
