#include "models/bert/layout.hpp"

#include <string>

namespace attnlens::detail {

const BertFlavorNames& bert_names(BertFlavor flavor) {
  static const BertFlavorNames bert{"bert.", "bert", "BERT"};
  static const BertFlavorNames distilbert{"distilbert.", "distilbert", "DistilBERT"};
  static const BertFlavorNames roberta{"roberta.", "roberta", "RoBERTa"};
  return flavor == BertFlavor::DistilBert ? distilbert
         : flavor == BertFlavor::Roberta  ? roberta
                                          : bert;
}

const char* bert_prefix(BertFlavor flavor) {
  return bert_names(flavor).prefix;
}

BertLayout bert_layout(const BertConfig& c) {
  BertLayout l;
  const std::int64_t d = c.d_model, I = c.intermediate, V = c.vocab_size;
  // RoBERTa's encoder has BERT's names (modeling_roberta.py copies BertLayer); only its prefix
  // and its head's names differ.
  const bool bert = c.flavor != BertFlavor::DistilBert;
  const auto block = [&](BertRole role, std::int64_t count) {
    l.params.push_back(BertParam{role, l.total, count});
    l.total += count;
    return l.params.back().offset;
  };
  // A tensor copied as it is.
  const auto plain = [&](std::string name, Shape shape, std::int64_t offset, bool encoder = true) {
    l.files.push_back(BertFileTensor{std::move(name), encoder, std::move(shape), offset});
  };
  // A linear weight [out, in] held transposed in columns [column, column + out) of a matrix
  // whose rows are `width` wide.
  const auto linear = [&](std::string name, std::int64_t out, std::int64_t in, std::int64_t offset,
                          std::int64_t width, std::int64_t column, bool encoder = true) {
    l.files.push_back(
        BertFileTensor{std::move(name), encoder, Shape{out, in}, offset, true, width, column});
  };
  const std::string norm_w = ".weight", norm_b = ".bias";

  l.word = block(BertRole::Matrix, V * d);
  l.position = block(BertRole::Matrix, std::int64_t{c.context} * d);
  if (c.type_vocab_size > 0) l.token_type = block(BertRole::Matrix, c.type_vocab_size * d);
  l.emb_ln_w = block(BertRole::NormWeight, d);
  l.emb_ln_b = block(BertRole::Bias, d);
  plain("embeddings.word_embeddings.weight", {V, d}, l.word);
  plain("embeddings.position_embeddings.weight", {c.context, d}, l.position);
  if (l.token_type >= 0)
    plain("embeddings.token_type_embeddings.weight", {c.type_vocab_size, d}, l.token_type);
  plain("embeddings.LayerNorm.weight", {d}, l.emb_ln_w);
  plain("embeddings.LayerNorm.bias", {d}, l.emb_ln_b);

  for (int i = 0; i < c.layers; ++i) {
    BertLayerOffsets o{};
    o.qkv_w = block(BertRole::Matrix, d * 3 * d);
    o.qkv_b = block(BertRole::Bias, 3 * d);
    o.ao_w = block(BertRole::Matrix, d * d);
    o.ao_b = block(BertRole::Bias, d);
    o.ln1_w = block(BertRole::NormWeight, d);
    o.ln1_b = block(BertRole::Bias, d);
    o.fc1_w = block(BertRole::Matrix, d * I);
    o.fc1_b = block(BertRole::Bias, I);
    o.fc2_w = block(BertRole::Matrix, I * d);
    o.fc2_b = block(BertRole::Bias, d);
    o.ln2_w = block(BertRole::NormWeight, d);
    o.ln2_b = block(BertRole::Bias, d);
    l.layers.push_back(o);

    const std::string at = (bert ? "encoder.layer." : "transformer.layer.") + std::to_string(i);
    const char* q = bert ? ".attention.self.query" : ".attention.q_lin";
    const char* k = bert ? ".attention.self.key" : ".attention.k_lin";
    const char* v = bert ? ".attention.self.value" : ".attention.v_lin";
    const char* ao = bert ? ".attention.output.dense" : ".attention.out_lin";
    const char* ln1 = bert ? ".attention.output.LayerNorm" : ".sa_layer_norm";
    const char* fc1 = bert ? ".intermediate.dense" : ".ffn.lin1";
    const char* fc2 = bert ? ".output.dense" : ".ffn.lin2";
    const char* ln2 = bert ? ".output.LayerNorm" : ".output_layer_norm";
    linear(at + q + ".weight", d, d, o.qkv_w, 3 * d, 0);
    plain(at + q + ".bias", {d}, o.qkv_b);
    linear(at + k + ".weight", d, d, o.qkv_w, 3 * d, d);
    plain(at + k + ".bias", {d}, o.qkv_b + d);
    linear(at + v + ".weight", d, d, o.qkv_w, 3 * d, 2 * d);
    plain(at + v + ".bias", {d}, o.qkv_b + 2 * d);
    linear(at + ao + ".weight", d, d, o.ao_w, d, 0);
    plain(at + ao + ".bias", {d}, o.ao_b);
    plain(at + ln1 + norm_w, {d}, o.ln1_w);
    plain(at + ln1 + norm_b, {d}, o.ln1_b);
    linear(at + fc1 + ".weight", I, d, o.fc1_w, I, 0);
    plain(at + fc1 + ".bias", {I}, o.fc1_b);
    linear(at + fc2 + ".weight", d, I, o.fc2_w, d, 0);
    plain(at + fc2 + ".bias", {d}, o.fc2_b);
    plain(at + ln2 + norm_w, {d}, o.ln2_w);
    plain(at + ln2 + norm_b, {d}, o.ln2_b);
  }

  if (c.mlm_head) {
    l.head_w = block(BertRole::Matrix, d * d);
    l.head_b = block(BertRole::Bias, d);
    l.head_ln_w = block(BertRole::NormWeight, d);
    l.head_ln_b = block(BertRole::Bias, d);
    l.decoder_b = block(BertRole::Bias, V);
    if (c.flavor == BertFlavor::Roberta) {
      linear("lm_head.dense.weight", d, d, l.head_w, d, 0, false);
      plain("lm_head.dense.bias", {d}, l.head_b, false);
      plain("lm_head.layer_norm.weight", {d}, l.head_ln_w, false);
      plain("lm_head.layer_norm.bias", {d}, l.head_ln_b, false);
      plain("lm_head.bias", {V}, l.decoder_b, false);
    } else if (bert) {
      linear("cls.predictions.transform.dense.weight", d, d, l.head_w, d, 0, false);
      plain("cls.predictions.transform.dense.bias", {d}, l.head_b, false);
      plain("cls.predictions.transform.LayerNorm.weight", {d}, l.head_ln_w, false);
      plain("cls.predictions.transform.LayerNorm.bias", {d}, l.head_ln_b, false);
      plain("cls.predictions.bias", {V}, l.decoder_b, false);
    } else {
      linear("vocab_transform.weight", d, d, l.head_w, d, 0, false);
      plain("vocab_transform.bias", {d}, l.head_b, false);
      plain("vocab_layer_norm.weight", {d}, l.head_ln_w, false);
      plain("vocab_layer_norm.bias", {d}, l.head_ln_b, false);
      plain("vocab_projector.bias", {V}, l.decoder_b, false);
    }
  }
  return l;
}

}  // namespace attnlens::detail
