// A warm start (attnlens_train --init-from, lib/tools/warm_start.hpp): each token of the new
// vocabulary takes the row of the old token with the same bytes, or the mean of the rows of the
// old tokens its bytes are encoded into; the rows below are numbered so that every expected
// value is worked out by hand. Tagged [model], as test_model_card.cpp: the training tools are
// native only, and the WebAssembly suites run everything outside [corpus] and [model].
#include "bpe_files.hpp"
#include "compare.hpp"
#include "helpers.hpp"
#include "warm_start.hpp"

#include <attnlens/attnlens.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using attnlens::BpeTokenizer;
using attnlens::ErrorCode;
using attnlens::Tensor;
using testing::alphabet;
using testing::require_error;
using testing::small_vocab;

// Old rows: row i is (i, -2i).
Tensor numbered_rows(std::int64_t n) {
  Tensor t(attnlens::Shape{n, 2});
  for (std::int64_t i = 0; i < n; ++i) {
    t.data[static_cast<std::size_t>(2 * i)] = static_cast<float>(i);
    t.data[static_cast<std::size_t>(2 * i + 1)] = static_cast<float>(-2 * i);
  }
  return t;
}

void require_row(const Tensor& t, std::int32_t id, float a, float b) {
  INFO("row " << id);
  REQUIRE(t.data[static_cast<std::size_t>(2 * id)] == a);
  REQUIRE(t.data[static_cast<std::size_t>(2 * id + 1)] == b);
}

std::string merge(const std::string& left, const std::string& right) {
  return alphabet(left) + " " + alphabet(right) + "\n";
}

namespace fs = std::filesystem;

// An empty folder of this test case's own (its name).
fs::path fresh_folder(const char* name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

template <typename Bytes>
void write_file(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// A GPT-2 model folder as attnlens_train writes it.
void write_gpt2_folder(const fs::path& dir, const attnlens::Gpt2Model& model,
                       const BpeTokenizer& tokenizer) {
  const attnlens::CheckpointFiles files = attnlens::save_checkpoint(model, &tokenizer);
  write_file(dir, "config.json", files.config_json);
  write_file(dir, "vocab.json", files.vocab_json);
  write_file(dir, "merges.txt", files.merges_txt);
  write_file(dir, "model.safetensors", files.model_safetensors);
}

// An encoder folder as attnlens_train_encoder writes it: 1 layer of d_model 8, random weights,
// for `tokenizer` (which holds the four special tokens). Returns the model.
std::unique_ptr<attnlens::Model> write_bert_folder(const fs::path& dir,
                                                   const BpeTokenizer& tokenizer,
                                                   std::uint64_t seed) {
  attnlens::BertConfig config;
  config.layers = 1;
  config.heads = 2;
  config.d_model = 8;
  config.intermediate = 16;
  config.context = 16;
  config.vocab_size = tokenizer.vocab_size();
  auto model = attnlens::as_model(attnlens::BertModel::random(config, seed));
  const auto encoder_tokenizer = attnlens::as_encoder_tokenizer(tokenizer);
  for (const auto& [name, bytes] : attnlens::save_model(*model, encoder_tokenizer.get()))
    write_file(dir, name, bytes);
  return model;
}

}  // namespace

TEST_CASE("a warm start maps each new token to the old tokens of its bytes", "[model][warm]") {
  // Old: the 256 bytes, "ab" (256), then [CLS] (257). New: the bytes, "bc" (256), "abc" (257),
  // then [CLS] (258).
  BpeTokenizer from = BpeTokenizer::from_files(small_vocab({"ab"}), merge("a", "b"));
  from.add_special_tokens({"[CLS]"});
  BpeTokenizer to =
      BpeTokenizer::from_files(small_vocab({"bc", "abc"}), merge("b", "c") + merge("a", "bc"));
  to.add_special_tokens({"[CLS]"});

  const attnlens::train::VocabularyMap map = attnlens::train::map_vocabulary(from, to);
  REQUIRE(map.old_size == 258);
  REQUIRE(map.sources.size() == 259);
  REQUIRE(map.same == 257);  // the 256 bytes and [CLS]
  REQUIRE(map.composed == 2);
  REQUIRE(map.sources[256] == std::vector<std::int32_t>{'b', 'c'});
  REQUIRE(map.sources[257] == std::vector<std::int32_t>{256, 'c'});  // the old "ab", then "c"
  REQUIRE(map.sources[258] == std::vector<std::int32_t>{257});

  const Tensor rows = attnlens::train::remap_rows(numbered_rows(258), map, "wte.weight");
  REQUIRE(rows.shape == attnlens::Shape{259, 2});
  require_row(rows, 'a', 97, -194);
  require_row(rows, 0, 0, 0);
  require_row(rows, 255, 255, -510);
  require_row(rows, 256, 98.5f, -197);   // ("b" + "c") / 2
  require_row(rows, 257, 177.5f, -355);  // ("ab" + "c") / 2
  require_row(rows, 258, 257, -514);     // [CLS]

  // A bias (one value per token) maps the same way.
  Tensor bias(attnlens::Shape{258});
  for (int i = 0; i < 258; ++i)
    bias.data[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor mapped = attnlens::train::remap_rows(bias, map, "cls.predictions.bias");
  REQUIRE(mapped.shape == attnlens::Shape{259});
  REQUIRE(mapped.data[257] == 177.5f);
}

TEST_CASE("a warm start maps a token that ends inside a UTF-8 character", "[model][warm]") {
  // New "é" + the first byte of another "é" (C3 A9 C3): the old tokenizer cannot encode it (it is
  // not UTF-8), so the longest old tokens are taken: "é" (256), then byte C3.
  const BpeTokenizer from =
      BpeTokenizer::from_files(small_vocab({"\xC3\xA9"}), merge("\xC3", "\xA9"));
  const BpeTokenizer to = BpeTokenizer::from_files(
      small_vocab({"\xC3\xA9", "\xC3\xA9\xC3"}), merge("\xC3", "\xA9") + merge("\xC3\xA9", "\xC3"));
  const attnlens::train::VocabularyMap map = attnlens::train::map_vocabulary(from, to);
  REQUIRE(map.same == 257);
  REQUIRE(map.composed == 1);
  REQUIRE(map.sources[257] == std::vector<std::int32_t>{256, 0xC3});
  const Tensor rows = attnlens::train::remap_rows(numbered_rows(257), map, "wte.weight");
  require_row(rows, 257, 225.5f, -451);  // (256 + 195) / 2
}

TEST_CASE("a warm start's bad inputs are named", "[model][warm][errors]") {
  const BpeTokenizer from = BpeTokenizer::from_files(small_vocab({"ab"}), merge("a", "b"));
  const attnlens::train::VocabularyMap map = attnlens::train::map_vocabulary(from, from);
  REQUIRE(map.same == 257);
  REQUIRE(map.composed == 0);
  require_error([&] { attnlens::train::remap_rows(numbered_rows(5), map, "wte.weight"); },
                ErrorCode::SHAPE_MISMATCH, {"wte.weight", "[5, 2]", "257 tokens"});
  // A model may have more rows than its tokenizer has tokens: those rows belong to no token.
  REQUIRE(attnlens::train::remap_rows(numbered_rows(300), map, "wte.weight").shape ==
          attnlens::Shape{257, 2});
  attnlens::train::VocabularyMap bad = map;
  bad.sources[3] = {257};
  require_error([&] { attnlens::train::remap_rows(numbered_rows(300), bad, "wte.weight"); },
                ErrorCode::BAD_ARGUMENT, {"new token 3", "old token 257", "0 .. 256"});
  bad.sources[3].clear();
  require_error([&] { attnlens::train::remap_rows(numbered_rows(300), bad, "wte.weight"); },
                ErrorCode::BAD_ARGUMENT, {"new token 3", "no old tokens"});

  const fs::path dir = fresh_folder("attnlens_test_warm_start");
  require_error([&] { attnlens::train::read_warm_start("--init-from", dir.string()); },
                ErrorCode::BAD_ARGUMENT, {"--init-from", "no config.json"});

  // A model folder as attnlens_train writes it reads back with its weights and vocabulary.
  const attnlens::Gpt2Model model = attnlens::Gpt2Model::random({1, 2, 8, 16, 257}, 3);
  write_gpt2_folder(dir, model, from);
  fs::remove(dir / "model.safetensors");
  require_error([&] { attnlens::train::read_warm_start("--init-from", dir.string()); },
                ErrorCode::BAD_ARGUMENT, {"--init-from", "no model.safetensors"});
  write_gpt2_folder(dir, model, from);
  const attnlens::train::WarmStart warm =
      attnlens::train::read_warm_start("--init-from", dir.string());
  REQUIRE(warm.tokenizer.vocab_size() == 257);
  REQUIRE(warm.loaded.model->gpt2() != nullptr);
  REQUIRE(warm.loaded.model->gpt2()->parameters() == model.parameters());

  // A folder whose files do not load: the loader's message after the flag and the folder.
  write_file(dir, "config.json", std::string("{\"model_type\": \"gpt2\", \"n_layer\": 1}"));
  require_error([&] { attnlens::train::read_warm_start("--init-from", dir.string()); },
                ErrorCode::BAD_ARGUMENT, {"--init-from", dir.string(), "config.json"});
  fs::remove_all(dir);
}

TEST_CASE("a warm-started GPT-2 keeps every weight and maps the token embeddings",
          "[model][warm]") {
  const fs::path dir = fresh_folder("attnlens_test_warm_gpt2");
  const BpeTokenizer from = BpeTokenizer::from_files(small_vocab({"ab"}), merge("a", "b"));
  const attnlens::Gpt2Config old_config{2, 2, 8, 16, 257};
  const attnlens::Gpt2Model old = attnlens::Gpt2Model::random(old_config, 5);
  write_gpt2_folder(dir, old, from);
  const attnlens::train::WarmStart warm =
      attnlens::train::read_warm_start("--init-from", dir.string());

  // New vocabulary: the bytes, then "bc" (256) and "abc" (257).
  const BpeTokenizer to =
      BpeTokenizer::from_files(small_vocab({"bc", "abc"}), merge("b", "c") + merge("a", "bc"));
  attnlens::Gpt2Config config = old_config;
  config.vocab_size = to.vocab_size();
  attnlens::train::VocabularyMap map;
  const attnlens::Gpt2Model model = attnlens::train::warm_gpt2(config, warm, to, map);
  REQUIRE(map.same == 256);
  REQUIRE(map.composed == 2);

  const attnlens::TensorList before = old.to_tensors();
  const attnlens::TensorList after = model.to_tensors();
  REQUIRE(before.size() == after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto& [name, a] = before[i];
    const auto& b = after[i].second;
    INFO(name);
    REQUIRE(after[i].first == name);
    if (name != "wte.weight") {
      REQUIRE(b.shape == a.shape);
      REQUIRE(testing::close(b.data, a.data, 0.0));  // copied bit for bit (F32 files)
      continue;
    }
    REQUIRE(b.shape == attnlens::Shape{258, 8});
    for (int j = 0; j < 8; ++j) {
      const auto at = [&](const Tensor& t, int row) {
        return t.data[static_cast<std::size_t>(row * 8 + j)];
      };
      REQUIRE(at(b, 'q') == at(a, 'q'));
      REQUIRE(at(b, 256) == static_cast<float>((static_cast<double>(at(a, 'b')) + at(a, 'c')) / 2));
      REQUIRE(at(b, 257) == static_cast<float>((static_cast<double>(at(a, 256)) + at(a, 'c')) / 2));
    }
  }

  // Blocks of another shape, and a model of another family, are named.
  attnlens::Gpt2Config wider = config;
  wider.d_model = 16;
  require_error([&] { attnlens::train::warm_gpt2(wider, warm, to, map); }, ErrorCode::BAD_ARGUMENT,
                {"--init-from", "its blocks are 2 layers, 2 heads, d_model 8, context 16",
                 "this run's are 2 layers, 2 heads, d_model 16"});
  BpeTokenizer encoder_vocabulary = from;
  encoder_vocabulary.add_special_tokens({"[CLS]", "[SEP]", "[MASK]", "[PAD]"});
  write_bert_folder(dir, encoder_vocabulary, 1);
  const attnlens::train::WarmStart encoder =
      attnlens::train::read_warm_start("--init-from", dir.string());
  require_error([&] { attnlens::train::warm_gpt2(config, encoder, to, map); },
                ErrorCode::BAD_ARGUMENT, {"--init-from", "not a GPT-2 model"});
  fs::remove_all(dir);
}

TEST_CASE("a warm-started encoder maps its word embeddings, its MLM bias and its special tokens",
          "[model][warm]") {
  const fs::path dir = fresh_folder("attnlens_test_warm_bert");
  // Old: the bytes, "ab" (256), [CLS] [SEP] [MASK] [PAD] (257..260). New: the bytes, "bc"
  // (256), "abc" (257), then the four specials (258..261).
  BpeTokenizer from = BpeTokenizer::from_files(small_vocab({"ab"}), merge("a", "b"));
  from.add_special_tokens({"[CLS]", "[SEP]", "[MASK]", "[PAD]"});
  BpeTokenizer to =
      BpeTokenizer::from_files(small_vocab({"bc", "abc"}), merge("b", "c") + merge("a", "bc"));
  to.add_special_tokens({"[CLS]", "[SEP]", "[MASK]", "[PAD]"});
  const auto old = write_bert_folder(dir, from, 4);
  const attnlens::train::WarmStart warm =
      attnlens::train::read_warm_start("--init-from", dir.string());

  attnlens::BertConfig new_config = old->bert()->config();
  new_config.vocab_size = to.vocab_size();
  attnlens::train::VocabularyMap map;
  const attnlens::BertModel model = attnlens::train::warm_bert(new_config, warm, to, map);
  REQUIRE(map.same == 260);
  REQUIRE(map.composed == 2);
  const attnlens::TensorList before = old->bert()->to_tensors();
  const attnlens::TensorList after = model.to_tensors();
  REQUIRE(before.size() == after.size());
  int mapped = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto& [name, a] = before[i];
    const Tensor& b = after[i].second;
    INFO(name);
    REQUIRE(after[i].first == name);
    const bool rows = name == "bert.embeddings.word_embeddings.weight";
    if (!rows && name != "cls.predictions.bias") {
      REQUIRE(testing::close(b.data, a.data, 0.0));
      continue;
    }
    ++mapped;
    const std::int64_t w = rows ? 8 : 1;
    REQUIRE(b.shape[0] == 262);
    for (std::int64_t j = 0; j < w; ++j) {
      const auto at = [&](const Tensor& t, std::int64_t row) {
        return t.data[static_cast<std::size_t>(row * w + j)];
      };
      REQUIRE(at(b, 'x') == at(a, 'x'));
      REQUIRE(at(b, 258) == at(a, 257));  // [CLS]
      REQUIRE(at(b, 261) == at(a, 260));  // [PAD]
      REQUIRE(at(b, 257) == static_cast<float>((static_cast<double>(at(a, 256)) + at(a, 'c')) / 2));
    }
  }
  REQUIRE(mapped == 2);

  // Another shape, and a causal folder, are named.
  attnlens::BertConfig wider = new_config;
  wider.intermediate = 32;
  require_error([&] { attnlens::train::warm_bert(wider, warm, to, map); }, ErrorCode::BAD_ARGUMENT,
                {"--init-from", "intermediate 16", "intermediate 32"});
  const BpeTokenizer plain = BpeTokenizer::from_files(small_vocab({"ab"}), merge("a", "b"));
  write_gpt2_folder(fresh_folder("attnlens_test_warm_bert"),
                    attnlens::Gpt2Model::random({1, 2, 8, 16, 257}, 2), plain);
  const attnlens::train::WarmStart causal =
      attnlens::train::read_warm_start("--init-from", dir.string());
  require_error([&] { attnlens::train::warm_bert(new_config, causal, to, map); },
                ErrorCode::BAD_ARGUMENT, {"--init-from", "not a BERT model"});
  fs::remove_all(dir);
}
