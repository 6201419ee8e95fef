// What a causal model's cache keeps row by row besides its keys and values: each layer·head's
// attention rows and the logits of the rows some call asked for. A causal row t depends on
// tokens 0 .. t only, so an edit keeps the rows before it as they are and an append adds its
// own. Both are stored per row rather than as [n, n] and [n, V] blocks so that nothing is
// re-laid when the sentence grows: a block re-laid per keystroke cost a 308-token figure of
// GPT-2 small 55 MB of attention and 62 MB of logits copied for one new token (and a Qwen
// vocabulary 187 MB of logits).
#pragma once

#include <attnlens/tensor.hpp>

#include <cstdint>
#include <vector>

namespace attnlens::detail {

class CausalRows {
 public:
  // Empty, for `groups` attention rows per token (layers × heads) and `vocab` logits.
  void reset(std::int64_t groups, std::int64_t vocab);
  // Keeps rows [0, kept) and makes room for rows up to `total` (the new ones without logits).
  void resize(std::int64_t kept, std::int64_t total);
  std::int64_t rows() const noexcept { return static_cast<std::int64_t>(logits_.size()); }

  // Row t of group g: its t + 1 weights over keys 0 .. t (the keys after it are masked).
  void set_attention(std::int64_t g, std::int64_t t, const float* weights);
  // Rows [from, T) of every group as [groups, T - from, T], zeros after each row's diagonal.
  void copy_attention(float* out, std::int64_t from, std::int64_t T) const;

  bool has_logits(std::int64_t t) const { return !logits_[static_cast<std::size_t>(t)].empty(); }
  // Row t's logits (vocab floats), storage made on first use.
  float* logits(std::int64_t t);
  const float* logits(std::int64_t t) const { return logits_[static_cast<std::size_t>(t)].data(); }

 private:
  std::int64_t groups_ = 0, vocab_ = 0;
  // Per group, the rows one after another: row t at t (t + 1) / 2.
  std::vector<std::vector<float>> attention_;
  std::vector<std::vector<float>> logits_;
};

// A full [layers, B, heads, T, T] attention cut to the query rows [from, T): [layers, B, heads,
// T - from, T] (from 0: the tensor as it is). `from` must lie in [0, T] (check_attention_from).
Tensor attention_rows_from(Tensor attention, std::int64_t from);

// BAD_ARGUMENT unless 0 <= from <= T.
void check_attention_from(std::int64_t from, std::int64_t T);

}  // namespace attnlens::detail
