// attnlens — options by name, for command lines, bindings and configuration files.
//
// Names match the JS API: "xavier" | "normal" | "identity", "sinusoidal" | "none",
// "top-left" | "bottom-right", and the ExplainOptions keys in camelCase.
#pragma once

#include <attnlens/attention.hpp>
#include <attnlens/explain.hpp>
#include <attnlens/self_attention.hpp>

#include <array>
#include <string_view>

namespace attnlens {

// The names of each enum's values, in enum order: the one list that parsing, error messages and
// the JS package's choices come from.
inline constexpr std::array<std::string_view, 3> kInitNames = {"normal", "xavier", "identity"};
inline constexpr std::array<std::string_view, 2> kPositionalNames = {"sinusoidal", "none"};
inline constexpr std::array<std::string_view, 2> kCausalAlignNames = {"top-left", "bottom-right"};

// The name of a value, e.g. init_name(Init::Xavier) == "xavier".
std::string_view init_name(Init init) noexcept;
std::string_view positional_name(Positional positional) noexcept;
std::string_view causal_align_name(CausalAlign align) noexcept;

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
