#include "nn/causal_rows.hpp"

#include "core/check.hpp"

#include <algorithm>

namespace attnlens::detail {

namespace {
constexpr std::size_t triangle(std::int64_t rows) {
  return static_cast<std::size_t>(rows * (rows + 1) / 2);
}
}  // namespace

void CausalRows::reset(std::int64_t groups, std::int64_t vocab) {
  groups_ = groups;
  vocab_ = vocab;
  attention_.assign(static_cast<std::size_t>(groups), {});
  logits_.clear();
}

void CausalRows::resize(std::int64_t kept, std::int64_t total) {
  // (std::vector grows its capacity geometrically: an append moves a group's rows now and then,
  // not at every token.)
  for (auto& rows : attention_) {
    rows.resize(triangle(kept));
    rows.resize(triangle(total), 0.0f);
  }
  logits_.resize(static_cast<std::size_t>(kept));
  logits_.resize(static_cast<std::size_t>(total));
}

void CausalRows::set_attention(std::int64_t g, std::int64_t t, const float* weights) {
  std::copy(
      weights, weights + t + 1,
      attention_[static_cast<std::size_t>(g)].begin() + static_cast<std::ptrdiff_t>(triangle(t)));
}

void CausalRows::copy_attention(float* out, std::int64_t from, std::int64_t T) const {
  const std::int64_t R = T - from;
  for (std::int64_t g = 0; g < groups_; ++g) {
    const std::vector<float>& rows = attention_[static_cast<std::size_t>(g)];
    for (std::int64_t t = from; t < T; ++t) {
      float* row = out + (g * R + (t - from)) * T;
      const auto begin = rows.begin() + static_cast<std::ptrdiff_t>(triangle(t));
      std::copy(begin, begin + t + 1, row);
      std::fill(row + t + 1, row + T, 0.0f);
    }
  }
}

float* CausalRows::logits(std::int64_t t) {
  std::vector<float>& row = logits_[static_cast<std::size_t>(t)];
  if (row.empty()) row.resize(static_cast<std::size_t>(vocab_));
  return row.data();
}

Tensor attention_rows_from(Tensor attention, std::int64_t from) {
  if (from == 0 || attention.shape.size() != 5) return attention;
  const std::int64_t groups = attention.shape[0] * attention.shape[1] * attention.shape[2];
  const std::int64_t T = attention.shape[4], R = T - from;
  Tensor out({attention.shape[0], attention.shape[1], attention.shape[2], R, T});
  for (std::int64_t g = 0; g < groups; ++g) {
    std::copy(attention.data.begin() + (g * T + from) * T, attention.data.begin() + (g + 1) * T * T,
              out.data.begin() + g * R * T);
  }
  return out;
}

void check_attention_from(std::int64_t from, std::int64_t T) {
  if (from < 0 || from > T) {
    fail(ErrorCode::BAD_ARGUMENT, "attention_from is ", from, "; it must lie in [0, ", T,
         "] (the first query row to return, of ", T, " tokens)");
  }
}

}  // namespace attnlens::detail
