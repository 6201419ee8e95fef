#include <attnlens/options.hpp>

#include "core/check.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace attnlens {
namespace {

std::int64_t parse_integer(std::string_view key, std::string_view value, std::int64_t lo,
                           std::int64_t hi) {
  std::int64_t out = 0;
  const auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (err != std::errc() || end != value.data() + value.size() || value.empty() || out < lo ||
      out > hi) {
    detail::fail(ErrorCode::BAD_ARGUMENT, key, " must be an integer from ", lo, " to ", hi,
                 "; got \"", value, "\"");
  }
  return out;
}

bool parse_bool(std::string_view key, std::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  detail::fail(ErrorCode::BAD_ARGUMENT, key, " must be true or false; got \"", value, "\"");
}

// The index of `value` in `names`; BAD_ARGUMENT listing them otherwise, e.g.
// init must be "normal", "xavier" or "identity"; got "kaiming".
template <std::size_t N>
std::size_t parse_choice(std::string_view key, const std::array<std::string_view, N>& names,
                         std::string_view value) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == value) return i;
  }
  std::string list;
  for (std::size_t i = 0; i < N; ++i) {
    list += i == 0 ? "\"" : (i + 1 == N ? " or \"" : ", \"");
    list += names[i];
    list += '"';
  }
  detail::fail(ErrorCode::BAD_ARGUMENT, key, " must be ", list, "; got \"", value, "\"");
}

}  // namespace

std::string_view init_name(Init init) noexcept {
  return kInitNames[static_cast<std::size_t>(init)];
}

std::string_view positional_name(Positional positional) noexcept {
  return kPositionalNames[static_cast<std::size_t>(positional)];
}

std::string_view causal_align_name(CausalAlign align) noexcept {
  return kCausalAlignNames[static_cast<std::size_t>(align)];
}

Init parse_init(std::string_view name) {
  return static_cast<Init>(parse_choice("init", kInitNames, name));
}

Positional parse_positional(std::string_view name) {
  return static_cast<Positional>(parse_choice("positional", kPositionalNames, name));
}

CausalAlign parse_causal_align(std::string_view name) {
  return static_cast<CausalAlign>(parse_choice("causalAlign", kCausalAlignNames, name));
}

void set_explain_option(ExplainOptions& options, std::string_view key, std::string_view value) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (key == "causal") {
    options.causal = parse_bool(key, value);
  } else if (key == "modelDim") {
    options.model_dim = static_cast<int>(parse_integer(key, value, 1, kIntMax));
  } else if (key == "numHeads") {
    options.num_heads = static_cast<int>(parse_integer(key, value, 1, kIntMax));
  } else if (key == "seed") {
    options.seed = static_cast<std::uint64_t>(
        parse_integer(key, value, 0, std::numeric_limits<std::int64_t>::max()));
  } else if (key == "init") {
    options.init = parse_init(value);
  } else if (key == "positional") {
    options.positional = parse_positional(value);
  } else if (key == "maxTokens") {
    options.max_tokens = static_cast<int>(parse_integer(key, value, 1, kIntMax));
  } else if (key == "truncate") {
    options.truncate = parse_bool(key, value);
  } else {
    detail::fail(ErrorCode::UNKNOWN_OPTION, "unknown option \"", key,
                 "\"; known options: causal, modelDim, numHeads, seed, init, positional, "
                 "maxTokens, truncate");
  }
}

}  // namespace attnlens
