// Private: the BERT family's entries in the model registry (lib/src/models/registry.cpp):
// BERT, DistilBERT and RoBERTa checkpoints as Hugging Face writes them.
#pragma once

#include <attnlens/model.hpp>

#include <string>
#include <string_view>

namespace attnlens::detail {

// config.json of model_type "bert", "distilbert" or "roberta" as a BertConfig (mlm_head left true;
// the loader sets it from the tensors). Throws BAD_FILE naming the file and the key: a size key
// missing or not a positive integer, position_embedding_type other than "absolute", an
// activation other than "gelu", a decoder or cross-attention config.
BertConfig parse_bert_config(std::string_view config_json,
                             std::string_view file_name = "config.json");

// config.json that Hugging Face's BertForMaskedLM / DistilBertForMaskedLM reads, keys sorted as
// its to_json_string() writes them; pad_token_id from the tokenizer's [PAD] when given.
std::string bert_config_json(const BertConfig& config, Dtype dtype, std::int32_t pad_token_id);

// Loads a BERT, DistilBERT or RoBERTa folder: model.safetensors, config.json, and a tokenizer
// from tokenizer.json or vocab.txt (with tokenizer_config.json when present); RoBERTa's from
// vocab.json and merges.txt.
LoadedModel load_bert(const ModelFiles& files);

// The tokenizer of a BERT folder: WordPiece from tokenizer.json when present, else from
// vocab.txt with tokenizer_config.json's settings (BertTokenizer's defaults without it, which
// note() says), else a byte-level BPE with encoder specials from vocab.json + merges.txt; null
// when the folder has none. BAD_FILE when its vocabulary is larger than the model's.
std::unique_ptr<Tokenizer> load_wordpiece(const ModelFiles& files, std::int32_t vocab_size);

}  // namespace attnlens::detail
