// An independent float64 Llama-family decoder for the tests: plain loops over explicit indices,
// written from transformers' modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py and
// modeling_gemma3.py (shared with the library: nothing). Parameters come in by checkpoint name with
// torch's layouts (Linear weights [out, in]); a bias or a q/k norm is used when its tensor is
// given, so the reference does not take the library's word on which a family has.
//
//   h = embed_tokens[ids]
//   per layer:  a = input_layernorm(h)                          (RMSNorm: x / sqrt(mean x² + eps) ·
//   w)
//               q, k, v = q_proj(a), k_proj(a), v_proj(a)      split into heads of head_dim
//               q, k = q_norm(q), k_norm(k)                     (Qwen3: RMSNorm over head_dim)
//               q, k = q cos + rotate_half(q) sin, ...          (rotate_half(x) = [-x2, x1])
//               w = softmax(q kᵀ / sqrt(head_dim) + causal)     key/value head h / (H / H_kv)
//               h = h + o_proj(w v)
//               m = post_attention_layernorm(h)
//               h = h + down_proj(silu(gate_proj(m)) · up_proj(m))
//   logits = lm_head(norm(h))                                   (lm_head = embed_tokens if tied)
//
// Gemma 3 (Gemma3DecoderLayer) differs by data: every RMSNorm · (1 + w); h = embed · sqrt(d);
// QK-norm; scores · query_pre_attn_scalar^-0.5; a sliding layer masks keys j <= i - window
// (masking_utils' sliding_window_overlay: kv_idx > q_idx - sliding_window) and rotates by
// rope_local_base_freq (rotary_emb_local); and the block is
//               h = h + post_attention_layernorm(o_proj(w v))
//               h = h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)))
// with mlp(m) = down_proj(gelu_tanh(gate_proj(m)) · up_proj(m)). Gemma 2 (modeling_gemma2.py) is
// the same block without QK-norm and with one rotary base, and soft-caps: a scaled score s
// becomes attn_logit_softcapping · tanh(s / attn_logit_softcapping) before the mask, a logit
// final_logit_softcapping · tanh(logit / final_logit_softcapping).
#pragma once

#include "ablation_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llamaref {

struct Rope {
  double theta = 10000.0;
  std::string type = "default";  // "default", "linear", "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max_position_embeddings = 8192.0;
};

struct Config {
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  double eps = 1e-6;
  Rope rope;
  bool tied = false;
  // Variations of other families, for the block's description: no rotation at all, every
  // RMSNorm scaling by (1 + w) (Gemma's), the embeddings multiplied by a constant.
  bool rotary = true;
  bool norm_plus_one = false;
  double embedding_scale = 1.0;
  double attention_scale = 0.0;  // multiplies q·k; 0 means 1 / sqrt(head_dim)
  // Gemma 3: norms before and after attention and MLP, the tanh-GELU gate, and per layer a
  // window (0: none) whose layers rotate by local_rope.
  bool gemma = false;
  std::vector<int> window;  // per layer, or empty
  Rope local_rope;
  double attn_softcap = 0.0;  // Gemma 2: 0 none
  double final_softcap = 0.0;
};

using Vec = std::vector<double>;
using Params = std::map<std::string, Vec>;

struct Output {
  Vec logits;          // [B, T, V]
  Vec attention;       // [layers, B, H, T, T]
  Vec hidden;          // [layers + 1, B, T, hidden]: the residual stream
  Vec value_norms;     // [layers, B, H, T]: ablation_reference.hpp
  Vec value_weighted;  // [layers, B, T, T]
  // What each part writes into the residual stream (lens_reference.hpp): each head's slice of
  // the merged heads through its columns of o_proj [layers, B · T, H, hidden], each MLP's
  // output [layers, B · T, hidden].
  Vec head_writes;
  Vec mlp_writes;
};

namespace impl {

inline std::size_t z(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

// y[n, o] = b[o] + Σ_i x[n, i] W[o, i]     (torch's Linear: W [out, in])
inline Vec linear(const Params& p, const std::string& name, const Vec& x, int N, int in, int out) {
  const Vec& w = p.at(name + ".weight");
  const auto bias = p.find(name + ".bias");
  Vec y(z(std::int64_t{N} * out));
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < out; ++o) {
      double s = bias == p.end() ? 0.0 : bias->second[z(o)];
      for (int i = 0; i < in; ++i)
        s += x[z(std::int64_t{n} * in + i)] * w[z(std::int64_t{o} * in + i)];
      y[z(std::int64_t{n} * out + o)] = s;
    }
  }
  return y;
}

// Rows of width d: x / sqrt(mean(x²) + eps) · w, or · (1 + w) with plus_one.
inline Vec rmsnorm(const Vec& x, const Vec& w, std::int64_t rows, int d, double eps,
                   bool plus_one) {
  Vec y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double ms = 0;
    for (int i = 0; i < d; ++i)
      ms += x[z(r * d + i)] * x[z(r * d + i)];
    ms /= d;
    const double inv = 1.0 / std::sqrt(ms + eps);
    for (int i = 0; i < d; ++i)
      y[z(r * d + i)] = x[z(r * d + i)] * inv * (plus_one ? 1.0 + w[z(i)] : w[z(i)]);
  }
  return y;
}

// inv_freq as _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters and
// _compute_llama3_parameters (written as their torch.where selections) give it.
inline Vec inv_freq(const Rope& r, int head_dim) {
  const double pi = 3.14159265358979323846;
  Vec inv(z(head_dim / 2));
  for (int i = 0; i < head_dim / 2; ++i)
    inv[z(i)] = 1.0 / std::pow(r.theta, (2.0 * i) / head_dim);
  if (r.type == "linear") {
    for (double& f : inv)
      f /= r.factor;
  }
  if (r.type == "llama3") {
    const double low_freq_wavelen = r.original_max_position_embeddings / r.low_freq_factor;
    const double high_freq_wavelen = r.original_max_position_embeddings / r.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2 * pi / f;
      const double llama = wavelen > low_freq_wavelen ? f / r.factor : f;
      const double smooth = (r.original_max_position_embeddings / wavelen - r.low_freq_factor) /
                            (r.high_freq_factor - r.low_freq_factor);
      const double smoothed = (1 - smooth) * llama / r.factor + smooth * llama;
      const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
      f = medium ? smoothed : llama;
    }
  }
  return inv;
}

}  // namespace impl

inline Output forward(const Config& c, const Params& p, const std::vector<std::int32_t>& ids, int B,
                      int T, const ablationref::Spec* ablate = nullptr) {
  using impl::z;
  const int d = c.hidden, H = c.heads, Hkv = c.kv_heads, hd = c.head_dim, V = c.vocab;
  const int N = B * T, group = H / Hkv, half = hd / 2;
  Output out;
  out.attention.assign(z(std::int64_t{c.layers} * B * H * T * T), 0.0);
  Vec h(z(std::int64_t{N} * d));
  const Vec& embed = p.at("model.embed_tokens.weight");
  for (int n = 0; n < N; ++n) {
    for (int i = 0; i < d; ++i)
      h[z(std::int64_t{n} * d + i)] = embed[z(std::int64_t{ids[z(n)]} * d + i)] * c.embedding_scale;
  }
  out.hidden = h;

  // cos and sin of emb = cat(freqs, freqs), freqs[t, i] = t · inv_freq[i].
  const Vec global_inv = impl::inv_freq(c.rope, hd);
  const Vec local_inv = impl::inv_freq(c.local_rope, hd);
  const auto window_of = [&](int l) { return c.window.empty() ? 0 : c.window[impl::z(l)]; };
  const Vec* inv_of_layer = &global_inv;
  const auto rotate = [&](Vec& x, int heads) {  // x [N, heads, hd], token n at position n % T
    const Vec& inv = *inv_of_layer;
    for (int n = 0; n < N; ++n) {
      const int t = n % T;
      for (int head = 0; head < heads; ++head) {
        double* row = x.data() + (std::int64_t{n} * heads + head) * hd;
        Vec rotated(z(hd));
        for (int i = 0; i < hd; ++i) {
          const double angle = t * inv[z(i % half)];
          const double rot_half = i < half ? -row[i + half] : row[i - half];
          rotated[z(i)] = row[i] * std::cos(angle) + rot_half * std::sin(angle);
        }
        for (int i = 0; i < hd; ++i)
          row[i] = rotated[z(i)];
      }
    }
  };

  for (int l = 0; l < c.layers; ++l) {
    const std::string pre = "model.layers." + std::to_string(l) + ".";
    const Vec a =
        impl::rmsnorm(h, p.at(pre + "input_layernorm.weight"), N, d, c.eps, c.norm_plus_one);
    Vec q = impl::linear(p, pre + "self_attn.q_proj", a, N, d, H * hd);
    Vec k = impl::linear(p, pre + "self_attn.k_proj", a, N, d, Hkv * hd);
    const Vec v = impl::linear(p, pre + "self_attn.v_proj", a, N, d, Hkv * hd);
    if (p.count(pre + "self_attn.q_norm.weight") != 0) {
      q = impl::rmsnorm(q, p.at(pre + "self_attn.q_norm.weight"), std::int64_t{N} * H, hd, c.eps,
                        c.norm_plus_one);
      k = impl::rmsnorm(k, p.at(pre + "self_attn.k_norm.weight"), std::int64_t{N} * Hkv, hd, c.eps,
                        c.norm_plus_one);
    }
    const int window = window_of(l);
    inv_of_layer = window > 0 ? &local_inv : &global_inv;
    if (c.rotary) {
      rotate(q, H);
      rotate(k, Hkv);
    }
    // Key j is visible to query i when j <= i (causal) and, in a window, i - j < window.
    const auto visible = [&](int i, int j) { return j <= i && (window == 0 || i - j < window); };
    Vec merged(z(std::int64_t{N} * H * hd), 0.0);
    for (int b = 0; b < B; ++b) {
      for (int head = 0; head < H; ++head) {
        const int kv = head / group;  // repeat_kv
        for (int i = 0; i < T; ++i) {
          const std::int64_t ni = std::int64_t{b} * T + i;
          Vec logit(z(i + 1));
          double max = -1e300;
          for (int j = 0; j <= i; ++j) {  // the causal mask: keys j <= i
            if (!visible(i, j)) continue;
            const std::int64_t nj = std::int64_t{b} * T + j;
            double s = 0;
            for (int e = 0; e < hd; ++e)
              s += q[z((ni * H + head) * hd + e)] * k[z((nj * Hkv + kv) * hd + e)];
            logit[z(j)] = s * (c.attention_scale > 0 ? c.attention_scale
                                                     : 1.0 / std::sqrt(static_cast<double>(hd)));
            if (c.attn_softcap > 0)
              logit[z(j)] = c.attn_softcap * std::tanh(logit[z(j)] / c.attn_softcap);
            max = std::max(max, logit[z(j)]);
          }
          double sum = 0;
          for (int j = 0; j <= i; ++j) {
            logit[z(j)] = visible(i, j) ? std::exp(logit[z(j)] - max) : 0.0;
            sum += logit[z(j)];
          }
          double* wrow =
              out.attention.data() + ((((std::int64_t{l} * B + b) * H + head) * T + i) * T);
          for (int j = 0; j <= i; ++j) {
            const double w = logit[z(j)] / sum;
            wrow[j] = w;
            const std::int64_t nj = std::int64_t{b} * T + j;
            for (int e = 0; e < hd; ++e)
              merged[z((ni * H + head) * hd + e)] += w * v[z((nj * Hkv + kv) * hd + e)];
          }
        }
      }
    }
    ablationref::apply(merged, ablate, l, B, T, H, hd, true);
    const Vec& o_w = p.at(pre + "self_attn.o_proj.weight");  // [d, H · hd] (torch's Linear)
    ablationref::value_weighted(
        out.value_norms, out.value_weighted,
        [&](std::int64_t b, std::int64_t j, std::int64_t head, std::int64_t e) {
          return v[z(((b * T + j) * Hkv + head / group) * hd + e)];
        },
        [&](std::int64_t head, std::int64_t e, std::int64_t c) {
          return o_w[z(c * H * hd + head * hd + e)];
        },
        [&](std::int64_t b, std::int64_t head, std::int64_t i, std::int64_t j) {
          return out.attention[z((((std::int64_t{l} * B + b) * H + head) * T + i) * T + j)];
        },
        B, T, H, hd, d, ablate, l);
    for (int n = 0; n < N; ++n) {
      for (int head = 0; head < H; ++head) {
        for (int c = 0; c < d; ++c) {
          double s = 0;
          for (int e = 0; e < hd; ++e)
            s += merged[z((std::int64_t{n} * H + head) * hd + e)] *
                 o_w[z(std::int64_t{c} * H * hd + head * hd + e)];
          out.head_writes.push_back(s);
        }
      }
    }
    Vec o = impl::linear(p, pre + "self_attn.o_proj", merged, N, H * hd, d);
    if (c.gemma) {
      o = impl::rmsnorm(o, p.at(pre + "post_attention_layernorm.weight"), N, d, c.eps,
                        c.norm_plus_one);
    }
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] += o[i];
    const Vec m = impl::rmsnorm(
        h,
        p.at(pre + (c.gemma ? "pre_feedforward_layernorm" : "post_attention_layernorm") +
             ".weight"),
        N, d, c.eps, c.norm_plus_one);
    const Vec gate = impl::linear(p, pre + "mlp.gate_proj", m, N, d, c.intermediate);
    const Vec up = impl::linear(p, pre + "mlp.up_proj", m, N, d, c.intermediate);
    Vec act(gate.size());
    const double pi = 3.14159265358979323846;
    for (std::size_t i = 0; i < act.size(); ++i) {
      const double g = gate[i];
      act[i] = (c.gemma ? 0.5 * g * (1 + std::tanh(std::sqrt(2 / pi) * (g + 0.044715 * g * g * g)))
                        : g / (1.0 + std::exp(-g))) *
               up[i];
    }
    Vec down = impl::linear(p, pre + "mlp.down_proj", act, N, c.intermediate, d);
    if (c.gemma) {
      down = impl::rmsnorm(down, p.at(pre + "post_feedforward_layernorm.weight"), N, d, c.eps,
                           c.norm_plus_one);
    }
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] += down[i];
    out.mlp_writes.insert(out.mlp_writes.end(), down.begin(), down.end());
    out.hidden.insert(out.hidden.end(), h.begin(), h.end());
  }
  const Vec f = impl::rmsnorm(h, p.at("model.norm.weight"), N, d, c.eps, c.norm_plus_one);
  const Vec& head = c.tied ? embed : p.at("lm_head.weight");
  out.logits.assign(z(std::int64_t{N} * V), 0.0);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < V; ++o) {
      double s = 0;
      for (int i = 0; i < d; ++i)
        s += f[z(std::int64_t{n} * d + i)] * head[z(std::int64_t{o} * d + i)];
      out.logits[z(std::int64_t{n} * V + o)] =
          c.final_softcap > 0 ? c.final_softcap * std::tanh(s / c.final_softcap) : s;
    }
  }
  return out;
}

}  // namespace llamaref
