// Starting a training run from a trained model with another vocabulary (--init-from): every
// weight is copied, and the rows indexed by token (the embedding, an MLM bias) are mapped from
// the old vocabulary to the new one by the tokens' bytes.
#pragma once

#include <attnlens/attnlens.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::train {

// For each token of the new vocabulary, the old tokens whose rows make its row: the one with the
// same bytes when there is one (a special token such as "<|endoftext|>" or "[CLS]" matches by
// its text), otherwise the tokens the old tokenizer encodes its bytes into, whose rows are
// averaged.
struct VocabularyMap {
  std::vector<std::vector<std::int32_t>> sources;  // new id -> old ids (never empty)
  std::int32_t old_size = 0;
  std::int64_t same = 0;      // new tokens found in the old vocabulary
  std::int64_t composed = 0;  // new tokens made from old pieces (of which:)
  std::int64_t cut = 0;       // ... tokens that end inside a UTF-8 character, which the old
                              // tokenizer cannot encode: the longest old tokens, left to right
};

// Throws Error(BAD_ARGUMENT) for an empty token in `to`.
VocabularyMap map_vocabulary(const BpeTokenizer& from, const BpeTokenizer& to);

// `rows` ([rows, ...] or [rows], rows >= the old vocabulary's size: a model may have more rows
// than its tokenizer has tokens) remapped: row i of the result is the mean of the rows
// map.sources[i]. Throws Error(SHAPE_MISMATCH) naming `name` when the first dimension is smaller
// than the old vocabulary, Error(BAD_ARGUMENT) for a source id outside it.
Tensor remap_rows(const Tensor& rows, const VocabularyMap& map, const std::string& name);

// A trained checkpoint folder read for a warm start: its files as load_model() reads them, and
// its byte-level BPE vocabulary (vocab.json and merges.txt, specials included).
struct WarmStart {
  std::string dir;
  LoadedModel loaded;
  BpeTokenizer tokenizer;
  std::uint64_t hash = 0;  // of model.safetensors, vocab.json and merges.txt (the state's key)
  std::string step;        // model.safetensors' "step" metadata, or empty
};

// Throws Error(BAD_ARGUMENT) naming `flag` and the folder for a folder that cannot be read
// (with the reader's or the loader's message), or one without vocab.json and merges.txt.
WarmStart read_warm_start(const std::string& flag, const std::string& dir);

// The first weights of a causal run that starts from `warm`: its GPT-2 weights as stored (F16 in
// a shipped folder), the token embeddings (wte.weight, tied to the unembedding) mapped to
// `tokenizer`'s vocabulary; `map` receives the mapping. Throws Error(BAD_ARGUMENT) naming
// --init-from and the folder when `warm` is not a GPT-2 model or its blocks (layers, heads,
// d_model, context, the LayerNorm before attention) are not `config`'s.
Gpt2Model warm_gpt2(const Gpt2Config& config, const WarmStart& warm, const BpeTokenizer& tokenizer,
                    VocabularyMap& map);

// The same for an encoder run: `warm`'s BERT weights, the word embeddings and the masked-LM
// bias (cls.predictions.bias; the decoder is tied to the word embeddings) mapped to
// `tokenizer`'s vocabulary, its special tokens ([CLS], [SEP], [MASK], [PAD]) matched by their
// text. Throws Error(BAD_ARGUMENT) naming --init-from and the folder when `warm` is not a BERT
// model or its blocks (layers, heads, d_model, intermediate, context, token types, the MLM head)
// are not `config`'s.
BertModel warm_bert(const BertConfig& config, const WarmStart& warm, const BpeTokenizer& tokenizer,
                    VocabularyMap& map);

// What a model card and eval.json say of a warm start; an empty `dir` is a run from random
// weights.
struct WarmStartRecord {
  std::string dir;   // --init-from, as given
  std::string step;  // the folder's "step" metadata, or empty
  std::uint64_t hash = 0;
  std::int32_t old_size = 0;
  std::int64_t same = 0, composed = 0, cut = 0;  // VocabularyMap's counts
};

WarmStartRecord warm_start_record(const WarmStart& warm, const VocabularyMap& map);

// eval.json's member for the record, `indent` "\"init_from\": {...},\n"; empty for a run from
// random weights.
std::string warm_start_json(const WarmStartRecord& record, std::string_view indent);

}  // namespace attnlens::train
