// attnlens — options by name, for command lines, bindings and configuration files.
//
// Names match the JS API: "xavier" | "normal" | "identity", "sinusoidal" | "none",
// "top-left" | "bottom-right", and the ExplainOptions keys in camelCase.
#pragma once

#include <attnlens/attention.hpp>
#include <attnlens/explain.hpp>
#include <attnlens/self_attention.hpp>

#include <string_view>

namespace attnlens {

// Each throws Error(BAD_ARGUMENT) naming the accepted values when `name` is not one of them.
Init parse_init(std::string_view name);
Positional parse_positional(std::string_view name);
CausalAlign parse_causal_align(std::string_view name);

// Sets one ExplainOptions field from text. Keys: "causal" (true/false), "modelDim", "numHeads",
// "seed", "init", "positional", "maxTokens", "truncate". Throws Error(UNKNOWN_OPTION) for any
// other key and Error(BAD_ARGUMENT) for a value that does not parse; range checks happen in
// explain().
void set_explain_option(ExplainOptions& options, std::string_view key, std::string_view value);

}  // namespace attnlens
