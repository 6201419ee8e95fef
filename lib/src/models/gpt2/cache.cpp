// GPT-2's forward pass from a prefix: a causal model's row t depends on tokens 0 .. t only, so
// after an edit the rows before the first changed token are kept, with every layer's keys and
// values, and only the rows from there on are computed: their queries attend over the kept keys
// and their own (attention() with the causal mask aligned bottom-right, as a KV cache needs).
#include <attnlens/gpt2.hpp>

#include "core/check.hpp"
#include "core/matmul.hpp"
#include "models/gpt2/layout.hpp"
#include "models/gpt2/workspace.hpp"
#include "nn/ablation.hpp"
#include "nn/causal_rows.hpp"
#include "nn/layers.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

namespace attnlens {

struct Gpt2Cache::Data {
  std::uint64_t stamp = 0;  // the model's stamp when filled (0: empty)
  std::vector<std::int32_t> ids;
  // Per layer, keys and values [H, n, hd] of the n cached tokens.
  std::vector<std::vector<float>> keys, values;
  // Kept rows (each only if every call so far asked for it): attention (in `rows`, each
  // layer·head's), residuals [layers + 1, n, d].
  bool attention_kept = false, residuals_kept = false;
  std::vector<float> residuals;
  // Every row's final LayerNorm output [n, d]; in `rows`, the logits of the rows some call
  // asked for (a row's logits are computed when a call first asks for them).
  std::vector<float> final_norm;
  detail::CausalRows rows;
  std::int64_t reused = 0;
};

Gpt2Cache::Gpt2Cache() : data_(std::make_unique<Data>()) {}
Gpt2Cache::Gpt2Cache(Gpt2Cache&&) noexcept = default;
Gpt2Cache& Gpt2Cache::operator=(Gpt2Cache&&) noexcept = default;
Gpt2Cache::~Gpt2Cache() = default;

std::int64_t Gpt2Cache::tokens() const noexcept {
  return data_ ? static_cast<std::int64_t>(data_->ids.size()) : 0;
}

std::int64_t Gpt2Cache::reused() const noexcept {
  return data_ ? data_->reused : 0;
}

void Gpt2Cache::clear() noexcept {
  if (data_) *data_ = Data{};
}

namespace {

// Rows [0, keep) of a [groups, n, width] array, re-laid as [groups, n_new, width] with room for
// rows [keep, n_new) (left zero).
std::vector<float> regroup(const std::vector<float>& old, std::int64_t groups, std::int64_t n,
                           std::int64_t keep, std::int64_t n_new, std::int64_t width) {
  std::vector<float> out(static_cast<std::size_t>(groups * n_new * width), 0.0f);
  for (std::int64_t g = 0; g < groups; ++g) {
    std::copy(old.begin() + g * n * width, old.begin() + (g * n + keep) * width,
              out.begin() + g * n_new * width);
  }
  return out;
}

}  // namespace

Gpt2Output Gpt2Model::forward(const TokenIds& ids, Gpt2Cache& cache,
                              const Gpt2ForwardOptions& options) {
  if (ids.batch != 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "a cached forward takes one sequence; ids has ",
                 ids.batch, " (use forward() without a cache for a batch)");
  }
  if (!cache.data_) cache.data_ = std::make_unique<Gpt2Cache::Data>();
  Gpt2Cache::Data& c = *cache.data_;
  if (detail::computes_without_cache(options)) {
    Gpt2Output out = forward(ids, options);
    c.reused = 0;
    return out;
  }
  // The checks, and the results' sizes, are forward()'s: a plain call on an empty input fails
  // the same way.
  if (ids.length < 1 || ids.length > config_.context || ids.data == nullptr) {
    return forward(ids, options);  // throws forward()'s error
  }
  for (std::int64_t t = 0; t < ids.length; ++t) {
    if (ids.data[t] < 0 || ids.data[t] >= config_.vocab_size) return forward(ids, options);
  }
  const std::int64_t T = ids.length, L = config_.layers, H = config_.heads, d = config_.d_model;
  const std::int64_t hd = d / H, V = config_.vocab_size;
  detail::check_logit_rows(options, T);
  detail::check_attention_from(options.attention_from, T);
  detail::require_at_most(T * V, options.max_elements, "the logits [B, T, vocab_size]");
  if (options.attention) {
    detail::require_at_most(L * H * T * T, options.max_elements,
                            "the attention weights [layers, B, heads, T, T]");
  }
  if (options.residuals) {
    detail::require_at_most((L + 1) * T * d, options.max_elements,
                            "the residual streams [layers + 1, B, T, d_model]");
  }

  // How many rows can be kept: the common prefix with what the cache computed, if this model,
  // as it is now, computed it, and it kept every kind of row this call asks for.
  std::int64_t keep = 0;
  std::int64_t n = static_cast<std::int64_t>(c.ids.size());
  if (c.stamp == stamp_ && (!options.attention || c.attention_kept) &&
      (!options.residuals || c.residuals_kept)) {
    while (keep < std::min(n, T) && c.ids[static_cast<std::size_t>(keep)] == ids.data[keep])
      ++keep;
  }
  // The last row must be computed whenever something was appended or edited; a shorter
  // sentence (deletions at the end) is wholly kept.
  if (keep == 0) {
    n = 0;
    c = Gpt2Cache::Data{};
    c.stamp = stamp_;
    c.attention_kept = options.attention;
    c.residuals_kept = options.residuals;
    c.keys.assign(static_cast<std::size_t>(L), {});
    c.values.assign(static_cast<std::size_t>(L), {});
    c.rows.reset(c.attention_kept ? L * H : 0, V);
  }
  const std::int64_t fresh = T - keep;  // rows to compute
  c.reused = keep;

  // A throw part-way (an overflow in a block, a failed allocation) would leave rows half
  // computed under the new ids: the cache starts over instead, never serving them.
  try {
    // Re-lay the kept rows for T tokens (nothing to move for the same tokens again, as when the
    // figure asks for more rows' logits).
    if (keep < n || T != n) {
      for (std::int64_t l = 0; l < L; ++l) {
        const auto i = static_cast<std::size_t>(l);
        c.keys[i] = regroup(c.keys[i], H, n, keep, T, hd);
        c.values[i] = regroup(c.values[i], H, n, keep, T, hd);
      }
      c.final_norm = regroup(c.final_norm, 1, n, keep, T, d);
      c.rows.resize(keep, T);
      if (c.residuals_kept) c.residuals = regroup(c.residuals, L + 1, n, keep, T, d);
    }
    c.ids.assign(ids.data, ids.data + T);

    if (fresh > 0) {
      work_->panels.sync(stamp_);
      const detail::Gpt2Layout& layout = work_->layout;
      const float* P = params_.data();
      // The fresh rows' activations, one layer at a time.
      std::vector<float> x(static_cast<std::size_t>(fresh * d)), h(x.size()),
          qkv(static_cast<std::size_t>(fresh * 3 * d));
      std::vector<float> q(x.size()), kn(x.size()), vn(x.size()), atty(x.size()),
          mlp(static_cast<std::size_t>(fresh * 4 * d)), act(mlp.size()),
          mean(static_cast<std::size_t>(fresh)), rstd(mean.size());
      for (std::int64_t r = 0; r < fresh; ++r) {
        const std::int64_t t = keep + r;
        for (std::int64_t e = 0; e < d; ++e) {
          x[static_cast<std::size_t>(r * d + e)] =
              P[layout.wte + std::int64_t{ids.data[t]} * d + e] + P[layout.wpe + t * d + e];
        }
      }
      const auto keep_residual = [&](std::int64_t slot) {
        if (!c.residuals_kept) return;
        std::copy(x.begin(), x.end(), c.residuals.begin() + (slot * T + keep) * d);
      };
      keep_residual(0);
      for (std::int64_t l = 0; l < L; ++l) {
        const detail::Gpt2Block<const float> p = detail::gpt2_block(layout.blocks[l], P);
        const auto i = static_cast<std::size_t>(l);
        const float* attn_in = x.data();
        if (config_.attention_norm) {
          detail::layernorm_forward(h.data(), mean.data(), rstd.data(), x.data(), p.ln1_w, p.ln1_b,
                                    fresh, d);
          attn_in = h.data();
        }
        detail::linear_forward(qkv.data(), attn_in, p.attn_w, p.attn_b, nullptr, fresh, d, 3 * d,
                               &work_->panels);
        detail::split_heads(q.data(), kn.data(), vn.data(), qkv.data(), 1, fresh, H, hd);
        for (std::int64_t head = 0; head < H; ++head) {
          std::copy(kn.begin() + head * fresh * hd, kn.begin() + (head + 1) * fresh * hd,
                    c.keys[i].begin() + (head * T + keep) * hd);
          std::copy(vn.begin() + head * fresh * hd, vn.begin() + (head + 1) * fresh * hd,
                    c.values[i].begin() + (head * T + keep) * hd);
        }
        AttentionOptions o;
        o.causal = true;
        o.causal_align = CausalAlign::BottomRight;
        o.scale = 1.0f / std::sqrt(static_cast<float>(hd));
        o.return_weights = c.attention_kept;
        AttentionResult a;
        try {
          a = attention(ConstTensorView{q.data(), {1, H, fresh, hd}},
                        ConstTensorView{c.keys[i].data(), {1, H, T, hd}},
                        ConstTensorView{c.values[i].data(), {1, H, T, hd}}, o);
        } catch (const Error& e) {
          detail::fail(e.code(), "GPT-2 block ", l, " attention: ", e.what());
        }
        if (c.attention_kept) {
          for (std::int64_t head = 0; head < H; ++head)
            for (std::int64_t r = 0; r < fresh; ++r)
              c.rows.set_attention(l * H + head, keep + r,
                                   a.weights.data.data() + (head * fresh + r) * T);
        }
        detail::merge_heads(atty.data(), a.output.data.data(), 1, fresh, H, hd);
        // The residual stream in place: x += atty W + b, then x += MLP(ln_2(x)).
        detail::linear_forward(h.data(), atty.data(), p.attn_proj_w, p.attn_proj_b, x.data(), fresh,
                               d, d, &work_->panels);
        std::swap(x, h);
        detail::layernorm_forward(h.data(), mean.data(), rstd.data(), x.data(), p.ln2_w, p.ln2_b,
                                  fresh, d);
        detail::linear_forward(mlp.data(), h.data(), p.fc_w, p.fc_b, nullptr, fresh, d, 4 * d,
                               &work_->panels);
        detail::gelu_forward(act.data(), mlp.data(), fresh * 4 * d);
        detail::linear_forward(h.data(), act.data(), p.fc_proj_w, p.fc_proj_b, x.data(), fresh,
                               4 * d, d, &work_->panels);
        std::swap(x, h);
        if (!std::isfinite(detail::finite_max_abs(x.data(), fresh * d))) {
          detail::fail(ErrorCode::NON_FINITE, "the forward pass overflowed float32 in block ", l,
                       " (h.", l, "): the weights are finite but too large for these inputs");
        }
        keep_residual(l + 1);
      }
      detail::layernorm_forward(c.final_norm.data() + keep * d, mean.data(), rstd.data(), x.data(),
                                P + layout.lnf_w, P + layout.lnf_b, fresh, d);
    }

    // The logits asked for that no call computed yet, in one product.
    std::vector<std::int64_t> missing;
    if (options.logits) {
      if (options.logit_rows.empty()) {
        for (std::int64_t t = 0; t < T; ++t)
          if (!c.rows.has_logits(t)) missing.push_back(t);
      } else {
        for (const std::int64_t t : options.logit_rows)
          if (!c.rows.has_logits(t)) missing.push_back(t);
        std::sort(missing.begin(), missing.end());
        missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
      }
    }
    if (!missing.empty()) {
      std::vector<float> computed(missing.size() * static_cast<std::size_t>(V));
      detail::unembed_rows(computed.data(), c.final_norm.data(), params_.data() + work_->layout.wte,
                           missing, d, V);
      if (!std::isfinite(detail::finite_max_abs(computed.data(),
                                                static_cast<std::int64_t>(computed.size())))) {
        detail::fail(ErrorCode::NON_FINITE,
                     "the forward pass overflowed float32 in the logits: the weights are finite "
                     "but too large for these inputs");
      }
      for (std::size_t k = 0; k < missing.size(); ++k) {
        std::copy(computed.begin() + static_cast<std::ptrdiff_t>(k) * V,
                  computed.begin() + static_cast<std::ptrdiff_t>(k + 1) * V,
                  c.rows.logits(missing[k]));
      }
    }
  } catch (...) {
    c = Gpt2Cache::Data{};
    throw;
  }

  Gpt2Output out;
  try {
    if (options.logits && !options.logit_rows.empty()) {
      const auto R = static_cast<std::int64_t>(options.logit_rows.size());
      out.logits = Tensor({R, V});
      for (std::int64_t k = 0; k < R; ++k) {
        const float* row = c.rows.logits(options.logit_rows[static_cast<std::size_t>(k)]);
        std::copy(row, row + V, out.logits.data.begin() + k * V);
      }
    } else if (options.logits) {
      out.logits = Tensor({1, T, V});
      for (std::int64_t t = 0; t < T; ++t)
        std::copy(c.rows.logits(t), c.rows.logits(t) + V, out.logits.data.begin() + t * V);
    }
    if (options.attention) {
      const std::int64_t from = options.attention_from;
      out.attention = Tensor({L, 1, H, T - from, T});
      c.rows.copy_attention(out.attention.data.data(), from, T);
    }
    if (options.residuals) out.residuals = Tensor({L + 1, 1, T, d}, c.residuals);
  } catch (const std::bad_alloc&) {
    detail::fail(ErrorCode::OUT_OF_MEMORY, "the GPT-2 forward pass could not allocate its results");
  }
  return out;
}

}  // namespace attnlens
