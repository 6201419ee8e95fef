// Private: where each BERT-family parameter sits in the flat array (and the gradient array,
// which has the same layout), and how each checkpoint tensor maps onto it.
#pragma once

#include <attnlens/bert.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::detail {

// What a block of parameters is: decides its initialisation and weight decay.
enum class BertRole {
  Matrix,      // embeddings and linear weights: N(0, 0.02²), decays
  NormWeight,  // LayerNorm weights: 1, no decay
  Bias,        // biases and LayerNorm biases: 0, no decay
};

// A block of the flat array.
struct BertParam {
  BertRole role = BertRole::Bias;
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

// One tensor of a checkpoint and where its values live. A linear weight is stored [out, in] in
// the file and held [in, width] in the array: its column block [column, column + out) of the
// matrix at `offset` whose rows are `width` wide (the query, key and value weights of a layer
// share one [d, 3d] matrix). Everything else is copied as it is.
struct BertFileTensor {
  std::string name;     // Hugging Face's name without the "bert." / "distilbert." prefix
  bool encoder = true;  // under the prefix (false: the masked-LM head's cls.* / vocab_*)
  Shape shape;          // as stored in the file
  std::int64_t offset = 0;
  bool transposed = false;
  std::int64_t width = 0;   // transposed: row width of the held matrix
  std::int64_t column = 0;  // transposed: first column of this tensor's block
};

struct BertLayerOffsets {
  std::int64_t qkv_w, qkv_b;  // [d, 3d] (q, k, v column blocks), [3d]
  std::int64_t ao_w, ao_b;    // attention output projection [d, d], [d]
  std::int64_t ln1_w, ln1_b;  // LayerNorm after attention [d]
  std::int64_t fc1_w, fc1_b;  // intermediate [d, I], [I]
  std::int64_t fc2_w, fc2_b;  // output [I, d], [d]
  std::int64_t ln2_w, ln2_b;  // LayerNorm after the feed-forward [d]
};

struct BertLayout {
  std::vector<BertParam> params;      // offsets increase, no gaps
  std::vector<BertFileTensor> files;  // the checkpoint's tensors, in Hugging Face's order
  std::int64_t word = 0;              // [V, d]
  std::int64_t position = 0;          // [C, d]
  std::int64_t token_type = -1;       // [types, d]; -1 without token types
  std::int64_t emb_ln_w = 0, emb_ln_b = 0;
  std::vector<BertLayerOffsets> layers;
  // The masked-LM head, all -1 without one: transform [d, d] + bias, its LayerNorm, and the
  // decoder's bias [V] (the decoder's weight is `word`, tied).
  std::int64_t head_w = -1, head_b = -1, head_ln_w = -1, head_ln_b = -1, decoder_b = -1;
  std::int64_t total = 0;
};

// The layout of a validated config.
BertLayout bert_layout(const BertConfig& config);

// How a flavor is named: its tensors' prefix ("roberta."), its family in the registry and
// ModelInfo ("roberta"), and in messages ("RoBERTa").
struct BertFlavorNames {
  const char* prefix;
  const char* family;
  const char* name;
};
const BertFlavorNames& bert_names(BertFlavor flavor);

// bert_names(flavor).prefix: "bert.", "distilbert." or "roberta.".
const char* bert_prefix(BertFlavor flavor);

}  // namespace attnlens::detail
