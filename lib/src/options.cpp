#include <attnlens/options.hpp>

#include "check.hpp"

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

}  // namespace

Init parse_init(std::string_view name) {
  if (name == "xavier") return Init::Xavier;
  if (name == "normal") return Init::Normal;
  if (name == "identity") return Init::Identity;
  detail::fail(ErrorCode::BAD_ARGUMENT,
               "init must be \"xavier\", \"normal\" or \"identity\"; got \"", name, "\"");
}

Positional parse_positional(std::string_view name) {
  if (name == "sinusoidal") return Positional::Sinusoidal;
  if (name == "none") return Positional::None;
  detail::fail(ErrorCode::BAD_ARGUMENT, "positional must be \"sinusoidal\" or \"none\"; got \"",
               name, "\"");
}

CausalAlign parse_causal_align(std::string_view name) {
  if (name == "top-left") return CausalAlign::TopLeft;
  if (name == "bottom-right") return CausalAlign::BottomRight;
  detail::fail(ErrorCode::BAD_ARGUMENT,
               "causalAlign must be \"top-left\" or \"bottom-right\"; got \"", name, "\"");
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
