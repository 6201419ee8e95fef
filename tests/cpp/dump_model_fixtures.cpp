// Writes a generated GPT-2 checkpoint and the native model's results on it, for the JS suite's
// native-vs-wasm checks of the model module (tests/js/model-native.test.mjs).
//   attnlens_dump_model_fixtures OUT_DIR
// OUT_DIR receives the checkpoint's files (model.safetensors, config.json, vocab.json,
// merges.txt, written by save_checkpoint) and results.json:
//   { ids, targets: [B, T] ints, logits: [B, T, V], loss, grads: { name: tensor },
//     trainBatch: [B, T + 1] ints, lr, trainLosses: [3 losses of train_step] }
#include <attnlens/attnlens.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

void write_floats(std::FILE* out, const float* data, std::size_t n) {
  std::fputc('[', out);
  for (std::size_t i = 0; i < n; ++i)
    std::fprintf(out, "%s%.9g", i ? "," : "", static_cast<double>(data[i]));
  std::fputc(']', out);
}

void write_ints(std::FILE* out, const std::vector<std::int32_t>& v) {
  std::fputc('[', out);
  for (std::size_t i = 0; i < v.size(); ++i)
    std::fprintf(out, "%s%d", i ? "," : "", v[i]);
  std::fputc(']', out);
}

void write_tensor(std::FILE* out, const attnlens::Tensor& t) {
  std::fprintf(out, "{\"shape\":[");
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    std::fprintf(out, "%s%lld", i ? "," : "", static_cast<long long>(t.shape[i]));
  std::fprintf(out, "],\"data\":");
  write_floats(out, t.data.data(), t.data.size());
  std::fputc('}', out);
}

bool write_file(const std::string& path, const void* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    return false;
  }
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attnlens_dump_model_fixtures OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];

  // A small vocabulary learned from a fixed text: 256 bytes + merges + <|endoftext|>.
  const std::string corpus =
      "the cat sat on the mat because it was tired. the dog sat on the log because it was "
      "warm. they sat there, and then they sat there again, and the cat and the dog slept.";
  const attnlens::BpeTokenizer tokenizer = attnlens::train_bpe({corpus}, 300);

  attnlens::Gpt2Config config;
  config.layers = 2;
  config.heads = 4;
  config.d_model = 64;
  config.context = 32;
  config.vocab_size = 300;
  attnlens::Gpt2Model model = attnlens::Gpt2Model::random(config, 7);

  const attnlens::CheckpointFiles files = attnlens::save_checkpoint(model, &tokenizer);
  if (!write_file(dir + "/model.safetensors", files.model_safetensors.data(),
                  files.model_safetensors.size()) ||
      !write_file(dir + "/config.json", files.config_json.data(), files.config_json.size()) ||
      !write_file(dir + "/vocab.json", files.vocab_json.data(), files.vocab_json.size()) ||
      !write_file(dir + "/merges.txt", files.merges_txt.data(), files.merges_txt.size())) {
    return 1;
  }

  // ids and targets [B, T] = [2, 12] from the library's generator; a [2, 13] training batch.
  constexpr int B = 2;
  constexpr int T = 12;
  attnlens::Rng rng(2026);
  std::vector<std::int32_t> batch(B * (T + 1));
  for (std::int32_t& id : batch)
    id = static_cast<std::int32_t>(rng.next_u64() % config.vocab_size);
  std::vector<std::int32_t> ids(B * T);
  std::vector<std::int32_t> targets(B * T);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      ids[b * T + t] = batch[b * (T + 1) + t];
      targets[b * T + t] = batch[b * (T + 1) + t + 1];
    }
  }

  const attnlens::Gpt2Output forward = model.forward({ids.data(), B, T});
  const float loss = model.loss_and_gradients({ids.data(), B, T}, {targets.data(), B, T});
  const attnlens::TensorList grads = model.gradients();
  constexpr float kLr = 1e-3f;
  std::vector<float> train_losses;
  for (int step = 0; step < 3; ++step)
    train_losses.push_back(model.train_step({batch.data(), B, T + 1}, kLr));

  const std::string path = dir + "/results.json";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) {
    std::perror(path.c_str());
    return 1;
  }
  std::fprintf(out, "{\"B\":%d,\"T\":%d,\"ids\":", B, T);
  write_ints(out, ids);
  std::fprintf(out, ",\"targets\":");
  write_ints(out, targets);
  std::fprintf(out, ",\"logits\":");
  write_tensor(out, forward.logits);
  std::fprintf(out, ",\"loss\":%.9g,\"grads\":{", static_cast<double>(loss));
  for (std::size_t i = 0; i < grads.size(); ++i) {
    std::fprintf(out, "%s\"%s\":", i ? "," : "", grads[i].first.c_str());
    write_tensor(out, grads[i].second);
  }
  std::fprintf(out, "},\"trainBatch\":");
  write_ints(out, batch);
  std::fprintf(out, ",\"lr\":%.9g,\"trainLosses\":", static_cast<double>(kLr));
  write_floats(out, train_losses.data(), train_losses.size());
  std::fprintf(out, "}\n");
  return std::fclose(out) == 0 ? 0 : 1;
}
