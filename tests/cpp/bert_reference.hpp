// A float64 BERT / DistilBERT / RoBERTa written from the architecture's definition (Devlin et al.
// 2019; Hugging Face's BertModel, and modeling_roberta.py's position ids and lm_head), plain loops
// over Hugging Face's named tensors, for the tests: no attnlens code except the tensor container.
// Slow and obviously correct.
#pragma once

#include "ablation_reference.hpp"

#include <attnlens/bert.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace bertref {

using Params = std::map<std::string, std::vector<double>>;  // by canonical name (no prefix)

struct Result {
  std::vector<double> hidden;          // [layers + 1, B, T, d]
  std::vector<double> attention;       // [layers, B, H, T, T]
  std::vector<double> logits;          // [B, T, V] (empty without a head)
  std::vector<double> value_norms;     // [layers, B, H, T]: ablation_reference.hpp
  std::vector<double> value_weighted;  // [layers, B, T, T]
  // Each head's slice of the heads' outputs through its columns of the attention's output
  // projection, [layers, B · T, H, d]: what it writes into the sum the layer normalises.
  std::vector<double> head_writes;
};

// Tensors of a model (attnlens' to_tensors()) by canonical name, in float64.
inline Params params_of(const attnlens::TensorList& tensors, attnlens::BertFlavor flavor) {
  const std::string prefix = flavor == attnlens::BertFlavor::Bert      ? "bert."
                             : flavor == attnlens::BertFlavor::Roberta ? "roberta."
                                                                       : "distilbert.";
  Params p;
  for (const auto& [name, t] : tensors) {
    const std::string key = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
    p[key] = std::vector<double>(t.data.begin(), t.data.end());
  }
  return p;
}

namespace detail {

// y[n, o] = Σ_i x[n, i] W[o, i] + b[o]: W stored [out, in] as nn.Linear.
inline std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w,
                                  const std::vector<double>& b, std::int64_t N, std::int64_t in,
                                  std::int64_t out) {
  std::vector<double> y(static_cast<std::size_t>(N * out));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < out; ++o) {
      double s = b[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < in; ++i)
        s += x[static_cast<std::size_t>(n * in + i)] * w[static_cast<std::size_t>(o * in + i)];
      y[static_cast<std::size_t>(n * out + o)] = s;
    }
  }
  return y;
}

inline void layernorm(std::vector<double>& x, const std::vector<double>& w,
                      const std::vector<double>& b, std::int64_t N, std::int64_t d, double eps) {
  for (std::int64_t n = 0; n < N; ++n) {
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < d; ++i)
      mean += x[static_cast<std::size_t>(n * d + i)];
    mean /= static_cast<double>(d);
    for (std::int64_t i = 0; i < d; ++i) {
      const double c = x[static_cast<std::size_t>(n * d + i)] - mean;
      var += c * c;
    }
    var /= static_cast<double>(d);
    for (std::int64_t i = 0; i < d; ++i) {
      double& v = x[static_cast<std::size_t>(n * d + i)];
      v = (v - mean) / std::sqrt(var + eps) * w[static_cast<std::size_t>(i)] +
          b[static_cast<std::size_t>(i)];
    }
  }
}

inline double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

}  // namespace detail

// The forward pass of ids [B, T] with token types (or null) and an attention mask (or null).
// The masked-LM head (BertOnlyMLMHead, DistilBERT's vocab_transform / vocab_layer_norm /
// vocab_projector) on rows x [N, d]: logits [N, V]. Also the logit lens of any layer's output.
inline std::vector<double> mlm_head(const attnlens::BertConfig& c, const Params& p,
                                    const std::vector<double>& x, std::int64_t N) {
  using namespace detail;
  const bool bert = c.flavor == attnlens::BertFlavor::Bert;
  const bool roberta = c.flavor == attnlens::BertFlavor::Roberta;
  const std::int64_t d = c.d_model;
  const auto at = [&](const std::string& name) -> const std::vector<double>& { return p.at(name); };
  // RobertaLMHead: dense, gelu, layer_norm, decoder (tied) + bias.
  const std::string t = bert      ? "cls.predictions.transform.dense"
                        : roberta ? "lm_head.dense"
                                  : "vocab_transform";
  const std::string tn = bert      ? "cls.predictions.transform.LayerNorm"
                         : roberta ? "lm_head.layer_norm"
                                   : "vocab_layer_norm";
  const std::string bias = bert      ? "cls.predictions.bias"
                           : roberta ? "lm_head.bias"
                                     : "vocab_projector.bias";
  auto h = linear(x, at(t + ".weight"), at(t + ".bias"), N, d, d);
  for (double& e : h)
    e = gelu(e);
  layernorm(h, at(tn + ".weight"), at(tn + ".bias"), N, d, c.layer_norm_eps);
  return linear(h, at("embeddings.word_embeddings.weight"), at(bias), N, d, c.vocab_size);
}

inline Result forward(const attnlens::BertConfig& c, const Params& p,
                      const std::vector<std::int32_t>& ids, const std::int32_t* types,
                      const std::int32_t* mask, std::int64_t B, std::int64_t T,
                      const ablationref::Spec* ablate = nullptr) {
  using namespace detail;
  // RoBERTa's encoder is BERT's (RobertaLayer copies BertLayer).
  const bool bert = c.flavor != attnlens::BertFlavor::DistilBert;
  const std::int64_t d = c.d_model, H = c.heads, hd = d / H, I = c.intermediate, N = B * T;
  const auto at = [&](const std::string& name) -> const std::vector<double>& { return p.at(name); };
  Result r;
  // Position ids: t, or RoBERTa's create_position_ids_from_input_ids: with padding_idx = the
  // config's pad_token_id (position_offset - 1), mask = (ids != padding_idx),
  // cumsum(mask) * mask + padding_idx.
  std::vector<std::int64_t> position(static_cast<std::size_t>(N));
  for (std::int64_t b = 0; b < B; ++b) {
    std::int64_t cumsum = 0;
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t n = b * T + t;
      if (c.flavor != attnlens::BertFlavor::Roberta) {
        position[static_cast<std::size_t>(n)] = t;
        continue;
      }
      const std::int64_t padding_idx = c.position_offset - 1;
      const std::int64_t m = ids[n] != padding_idx ? 1 : 0;
      cumsum += m;
      position[static_cast<std::size_t>(n)] = cumsum * m + padding_idx;
    }
  }
  std::vector<double> x(static_cast<std::size_t>(N * d));
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t i = 0; i < d; ++i) {
      double v = at("embeddings.word_embeddings.weight")[static_cast<std::size_t>(ids[n] * d + i)] +
                 at("embeddings.position_embeddings.weight")[static_cast<std::size_t>(
                     position[static_cast<std::size_t>(n)] * d + i)];
      if (bert) {
        const std::int64_t type = types != nullptr ? types[n] : 0;
        v += at("embeddings.token_type_embeddings.weight")[static_cast<std::size_t>(type * d + i)];
      }
      x[static_cast<std::size_t>(n * d + i)] = v;
    }
  }
  layernorm(x, at("embeddings.LayerNorm.weight"), at("embeddings.LayerNorm.bias"), N, d,
            c.layer_norm_eps);
  r.hidden = x;
  for (int l = 0; l < c.layers; ++l) {
    const std::string L = (bert ? "encoder.layer." : "transformer.layer.") + std::to_string(l);
    const std::string q = bert ? ".attention.self.query" : ".attention.q_lin";
    const std::string k = bert ? ".attention.self.key" : ".attention.k_lin";
    const std::string v = bert ? ".attention.self.value" : ".attention.v_lin";
    const std::string o = bert ? ".attention.output.dense" : ".attention.out_lin";
    const std::string n1 = bert ? ".attention.output.LayerNorm" : ".sa_layer_norm";
    const std::string f1 = bert ? ".intermediate.dense" : ".ffn.lin1";
    const std::string f2 = bert ? ".output.dense" : ".ffn.lin2";
    const std::string n2 = bert ? ".output.LayerNorm" : ".output_layer_norm";
    const auto Q = linear(x, at(L + q + ".weight"), at(L + q + ".bias"), N, d, d);
    const auto K = linear(x, at(L + k + ".weight"), at(L + k + ".bias"), N, d, d);
    const auto V = linear(x, at(L + v + ".weight"), at(L + v + ".bias"), N, d, d);
    std::vector<double> heads(static_cast<std::size_t>(N * d), 0.0);
    for (std::int64_t b = 0; b < B; ++b) {
      for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t i = 0; i < T; ++i) {
          std::vector<double> s(static_cast<std::size_t>(T));
          double max = -INFINITY;
          for (std::int64_t j = 0; j < T; ++j) {
            double dot = 0.0;
            for (std::int64_t e = 0; e < hd; ++e)
              dot += Q[static_cast<std::size_t>((b * T + i) * d + h * hd + e)] *
                     K[static_cast<std::size_t>((b * T + j) * d + h * hd + e)];
            const bool visible = mask == nullptr || mask[b * T + j] == 1;
            s[static_cast<std::size_t>(j)] =
                visible ? dot / std::sqrt(static_cast<double>(hd)) : -INFINITY;
            max = std::max(max, s[static_cast<std::size_t>(j)]);
          }
          double sum = 0.0;
          for (double& e : s) {
            e = std::exp(e - max);
            sum += e;
          }
          for (std::int64_t j = 0; j < T; ++j) {
            const double w = s[static_cast<std::size_t>(j)] / sum;
            r.attention.push_back(w);
            for (std::int64_t e = 0; e < hd; ++e)
              heads[static_cast<std::size_t>((b * T + i) * d + h * hd + e)] +=
                  w * V[static_cast<std::size_t>((b * T + j) * d + h * hd + e)];
          }
        }
      }
    }
    // r.attention was filled in [b][h][i][j] order for this layer.
    ablationref::apply(heads, ablate, l, B, T, H, hd, false, mask);
    const std::vector<double>& o_w = at(L + o + ".weight");  // [out, in] (torch's Linear)
    const std::size_t layer_start = r.attention.size() - static_cast<std::size_t>(B * H * T * T);
    ablationref::value_weighted(
        r.value_norms, r.value_weighted,
        [&](std::int64_t b, std::int64_t j, std::int64_t h, std::int64_t e) {
          return V[static_cast<std::size_t>((b * T + j) * d + h * hd + e)];
        },
        [&](std::int64_t h, std::int64_t e, std::int64_t c) {
          return o_w[static_cast<std::size_t>(c * d + h * hd + e)];
        },
        [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
          return r.attention[layer_start + static_cast<std::size_t>(((b * H + h) * T + i) * T + j)];
        },
        B, T, H, hd, d, ablate, l);
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t col = 0; col < d; ++col) {
          double s = 0;
          for (std::int64_t e = 0; e < hd; ++e)
            s += heads[static_cast<std::size_t>(n * d + h * hd + e)] *
                 o_w[static_cast<std::size_t>(col * d + h * hd + e)];
          r.head_writes.push_back(s);
        }
      }
    }
    auto a = linear(heads, at(L + o + ".weight"), at(L + o + ".bias"), N, d, d);
    for (std::size_t i = 0; i < a.size(); ++i)
      a[i] += x[i];
    layernorm(a, at(L + n1 + ".weight"), at(L + n1 + ".bias"), N, d, c.layer_norm_eps);
    auto f = linear(a, at(L + f1 + ".weight"), at(L + f1 + ".bias"), N, d, I);
    for (double& e : f)
      e = gelu(e);
    auto y = linear(f, at(L + f2 + ".weight"), at(L + f2 + ".bias"), N, I, d);
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += a[i];
    layernorm(y, at(L + n2 + ".weight"), at(L + n2 + ".bias"), N, d, c.layer_norm_eps);
    x = y;
    r.hidden.insert(r.hidden.end(), x.begin(), x.end());
  }
  if (c.mlm_head) r.logits = mlm_head(c, p, x, N);
  return r;
}

// Mean cross-entropy of the labels (-1 ignored) under forward()'s logits.
inline double loss(const attnlens::BertConfig& c, const Params& p,
                   const std::vector<std::int32_t>& ids, const std::int32_t* types,
                   const std::int32_t* mask, const std::vector<std::int32_t>& labels,
                   std::int64_t B, std::int64_t T) {
  const Result r = forward(c, p, ids, types, mask, B, T);
  const std::int64_t V = c.vocab_size;
  double total = 0.0;
  int counted = 0;
  for (std::int64_t n = 0; n < B * T; ++n) {
    if (labels[static_cast<std::size_t>(n)] < 0) continue;
    double max = -INFINITY;
    for (std::int64_t v = 0; v < V; ++v)
      max = std::max(max, r.logits[static_cast<std::size_t>(n * V + v)]);
    double sum = 0.0;
    for (std::int64_t v = 0; v < V; ++v)
      sum += std::exp(r.logits[static_cast<std::size_t>(n * V + v)] - max);
    total += std::log(sum) + max -
             r.logits[static_cast<std::size_t>(n * V + labels[static_cast<std::size_t>(n)])];
    ++counted;
  }
  return total / counted;
}

}  // namespace bertref
