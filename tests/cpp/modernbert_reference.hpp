// An independent float64 ModernBERT encoder for the tests: plain loops over explicit indices,
// written from transformers' modeling_modernbert.py (ModernBertForMaskedLM), sharing nothing with
// the library. Parameters come in by checkpoint name with torch's layouts (Linear weights
// [out, in]); a bias is used when its tensor is given, and layer l has a norm before its attention
// when "model.layers.l.attn_norm.weight" is given (layer 0's is nn.Identity).
//
//   h = norm_emb(tok_embeddings[ids])     every norm: (x - mean) / sqrt(var + eps) · w (+ b)
//   per layer:  a = attn_norm(h)           (identity in layer 0)
//               q, k, v = Wqkv(a) viewed as [3, heads, head_dim]
//               q, k = q cos + rotate_half(q) sin, ...   (global_rope_theta, or
//                                                         local_rope_theta in a local layer)
//               w = softmax(q kᵀ / sqrt(head_dim) + mask)  mask: -inf where |i - j| >
//                                                          local_attention / 2 (local layers)
//               h = h + Wo(w v)
//               input, gate = Wi(mlp_norm(h)).chunk(2)
//               h = h + Wo_mlp(gelu(input) · gate)     gelu: 0.5 x (1 + erf(x / √2))
//   logits = decoder(head_norm(gelu(head_dense(final_norm(h)))))
//            (decoder: tok_embeddings when tied, plus decoder.bias)
// Layer l is global when l % global_attn_every_n_layers == 0 (ModernBertConfig's layer_types).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace modernbertref {

struct Config {
  int layers = 0, hidden = 0, heads = 0, intermediate = 0, vocab = 0;
  double eps = 1e-5;
  double global_theta = 160000.0, local_theta = 10000.0;
  int local_attention = 128;
  std::vector<bool> local;  // per layer
  bool tied = true;
};

using Vec = std::vector<double>;
using Params = std::map<std::string, Vec>;

struct Output {
  Vec logits;     // [B, T, V]
  Vec attention;  // [layers, B, H, T, T]
  Vec hidden;     // [layers + 1, B, T, hidden]: the stream before the final norm
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

// nn.LayerNorm(d, eps, bias=norm_bias) on rows of width d.
inline Vec layernorm(const Params& p, const std::string& name, const Vec& x, int N, int d,
                     double eps) {
  const Vec& w = p.at(name + ".weight");
  const auto bias = p.find(name + ".bias");
  Vec y(x.size());
  for (int n = 0; n < N; ++n) {
    double mean = 0, var = 0;
    for (int i = 0; i < d; ++i)
      mean += x[z(std::int64_t{n} * d + i)];
    mean /= d;
    for (int i = 0; i < d; ++i) {
      const double c = x[z(std::int64_t{n} * d + i)] - mean;
      var += c * c;
    }
    var /= d;
    for (int i = 0; i < d; ++i) {
      y[z(std::int64_t{n} * d + i)] =
          (x[z(std::int64_t{n} * d + i)] - mean) / std::sqrt(var + eps) * w[z(i)] +
          (bias == p.end() ? 0.0 : bias->second[z(i)]);
    }
  }
  return y;
}

inline double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

}  // namespace impl

inline Output forward(const Config& c, const Params& p, const std::vector<std::int32_t>& ids, int B,
                      int T) {
  using impl::z;
  const int d = c.hidden, H = c.heads, hd = d / H, V = c.vocab, N = B * T, half = hd / 2;
  Output out;
  out.attention.assign(z(std::int64_t{c.layers} * B * H * T * T), 0.0);
  const Vec& embed = p.at("model.embeddings.tok_embeddings.weight");
  Vec h(z(std::int64_t{N} * d));
  for (int n = 0; n < N; ++n) {
    for (int i = 0; i < d; ++i)
      h[z(std::int64_t{n} * d + i)] = embed[z(std::int64_t{ids[z(n)]} * d + i)];
  }
  h = impl::layernorm(p, "model.embeddings.norm", h, N, d, c.eps);
  out.hidden = h;

  for (int l = 0; l < c.layers; ++l) {
    const std::string pre = "model.layers." + std::to_string(l) + ".";
    const bool local = c.local[z(l)];
    const double theta = local ? c.local_theta : c.global_theta;
    const Vec a = p.count(pre + "attn_norm.weight") != 0
                      ? impl::layernorm(p, pre + "attn_norm", h, N, d, c.eps)
                      : h;
    Vec qkv = impl::linear(p, pre + "attn.Wqkv", a, N, d, 3 * d);
    // qkv.view(B, T, 3, H, hd): element (n, s, head, e) at n · 3d + s · d + head · hd + e.
    const auto at = [&](int n, int s, int head, int e) -> double& {
      return qkv[z(std::int64_t{n} * 3 * d + s * d + head * hd + e)];
    };
    // Rotate q (s = 0) and k (s = 1) by position t = n % T: inv_freq[i] = theta^(-2i / hd).
    for (int n = 0; n < N; ++n) {
      const int t = n % T;
      for (int s = 0; s < 2; ++s) {
        for (int head = 0; head < H; ++head) {
          Vec rotated(z(hd));
          for (int i = 0; i < hd; ++i) {
            const double angle = t / std::pow(theta, 2.0 * (i % half) / hd);
            const double rot_half = i < half ? -at(n, s, head, i + half) : at(n, s, head, i - half);
            rotated[z(i)] = at(n, s, head, i) * std::cos(angle) + rot_half * std::sin(angle);
          }
          for (int i = 0; i < hd; ++i)
            at(n, s, head, i) = rotated[z(i)];
        }
      }
    }
    const auto visible = [&](int i, int j) {
      return !local || std::abs(i - j) <= c.local_attention / 2;
    };
    Vec merged(z(std::int64_t{N} * d), 0.0);
    for (int b = 0; b < B; ++b) {
      for (int head = 0; head < H; ++head) {
        for (int i = 0; i < T; ++i) {
          Vec score(z(T), 0.0);
          double max = -1e300;
          for (int j = 0; j < T; ++j) {
            if (!visible(i, j)) continue;
            double s = 0;
            for (int e = 0; e < hd; ++e)
              s += at(b * T + i, 0, head, e) * at(b * T + j, 1, head, e);
            score[z(j)] = s / std::sqrt(static_cast<double>(hd));
            max = std::max(max, score[z(j)]);
          }
          double sum = 0;
          for (int j = 0; j < T; ++j) {
            score[z(j)] = visible(i, j) ? std::exp(score[z(j)] - max) : 0.0;
            sum += score[z(j)];
          }
          double* wrow =
              out.attention.data() + ((((std::int64_t{l} * B + b) * H + head) * T + i) * T);
          for (int j = 0; j < T; ++j) {
            wrow[j] = score[z(j)] / sum;
            for (int e = 0; e < hd; ++e)
              merged[z((std::int64_t{b} * T + i) * d + head * hd + e)] +=
                  wrow[j] * at(b * T + j, 2, head, e);
          }
        }
      }
    }
    const Vec o = impl::linear(p, pre + "attn.Wo", merged, N, d, d);
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] += o[i];
    const Vec m = impl::layernorm(p, pre + "mlp_norm", h, N, d, c.eps);
    const Vec wi = impl::linear(p, pre + "mlp.Wi", m, N, d, 2 * c.intermediate);
    Vec act(z(std::int64_t{N} * c.intermediate));
    for (int n = 0; n < N; ++n) {
      for (int i = 0; i < c.intermediate; ++i) {
        const double input = wi[z(std::int64_t{n} * 2 * c.intermediate + i)];
        const double gate = wi[z(std::int64_t{n} * 2 * c.intermediate + c.intermediate + i)];
        act[z(std::int64_t{n} * c.intermediate + i)] = impl::gelu(input) * gate;
      }
    }
    const Vec down = impl::linear(p, pre + "mlp.Wo", act, N, c.intermediate, d);
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] += down[i];
    out.hidden.insert(out.hidden.end(), h.begin(), h.end());
  }
  const Vec f = impl::layernorm(p, "model.final_norm", h, N, d, c.eps);
  Vec dense = impl::linear(p, "head.dense", f, N, d, d);
  for (double& x : dense)
    x = impl::gelu(x);
  const Vec g = impl::layernorm(p, "head.norm", dense, N, d, c.eps);
  const Vec& decoder = c.tied ? embed : p.at("decoder.weight");
  const auto bias = p.find("decoder.bias");
  out.logits.assign(z(std::int64_t{N} * V), 0.0);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < V; ++o) {
      double s = bias == p.end() ? 0.0 : bias->second[z(o)];
      for (int i = 0; i < d; ++i)
        s += g[z(std::int64_t{n} * d + i)] * decoder[z(std::int64_t{o} * d + i)];
      out.logits[z(std::int64_t{n} * V + o)] = s;
    }
  }
  return out;
}

}  // namespace modernbertref
