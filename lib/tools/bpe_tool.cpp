// The BPE tokenizer from the command line.
//
//   attnlens_bpe encode VOCAB_JSON MERGES_TXT
//       Reads texts from standard input, each as "<byte count>\n<bytes>", and prints one line
//       per text: "1" if decode(encode(text)) == text (else "0"), then the ids, space
//       separated; or "error <CODE> <message>". The tokenizer parity test (tests/js) drives it.
//   attnlens_bpe speed VOCAB_JSON MERGES_TXT FILE...
//       Prints the load time and the encoding speed over the files' text.
//   attnlens_bpe train VOCAB_SIZE OUT_DIR FILE...
//       Learns a vocabulary from the files (UTF-8 text), writes OUT_DIR/vocab.json and
//       OUT_DIR/merges.txt, and prints the time it took.
#include <attnlens/bpe.hpp>
#include <attnlens/status.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

attnlens::BpeTokenizer load(const std::string& vocab, const std::string& merges) {
  return attnlens::BpeTokenizer::from_files(read_file(vocab), read_file(merges), vocab, merges);
}

int encode(const attnlens::BpeTokenizer& tokenizer) {
  std::string text;
  std::size_t length = 0;
  while (std::cin >> length) {
    std::cin.get();  // the newline after the count
    text.resize(length);
    if (!std::cin.read(text.data(), static_cast<std::streamsize>(length))) {
      std::cerr << "attnlens_bpe: input ends inside a text\n";
      return 1;
    }
    try {
      const std::vector<std::int32_t> ids = tokenizer.encode(text);
      std::string line = tokenizer.decode(ids) == text ? "1" : "0";
      for (const std::int32_t id : ids)
        line += " " + std::to_string(id);
      std::cout << line << '\n';
    } catch (const attnlens::Error& e) {
      std::cout << "error " << attnlens::error_code_name(e.code()) << ' ' << e.what() << '\n';
    }
  }
  return 0;
}

int speed(const attnlens::BpeTokenizer& tokenizer, const std::vector<std::string>& files) {
  std::string text;
  for (const std::string& f : files)
    text += read_file(f);
  // Best of three: the machine is shared.
  double best = 1e30;
  std::size_t count = 0;
  for (int round = 0; round < 3; ++round) {
    const Clock::time_point start = Clock::now();
    count = tokenizer.encode(text).size();
    best = std::min(best, seconds_since(start));
  }
  std::printf("encode: %zu bytes -> %zu tokens in %.3f s (%.1f MB/s, best of 3)\n", text.size(),
              count, best, static_cast<double>(text.size()) / best / 1e6);
  return 0;
}

int train(int vocab_size, const std::string& out_dir, const std::vector<std::string>& files) {
  std::vector<std::string> texts;
  std::size_t bytes = 0;
  for (const std::string& f : files) {
    texts.push_back(read_file(f));
    bytes += texts.back().size();
  }
  const std::vector<std::string_view> corpus(texts.begin(), texts.end());
  const Clock::time_point start = Clock::now();
  const attnlens::BpeTokenizer tokenizer = attnlens::train_bpe(corpus, vocab_size);
  const double took = seconds_since(start);
  write_file(out_dir + "/vocab.json", tokenizer.to_vocab_json());
  write_file(out_dir + "/merges.txt", tokenizer.to_merges_txt());
  std::printf(
      "train: %zu bytes, %zu merges, %d tokens in %.2f s; wrote %s/vocab.json, merges.txt\n", bytes,
      tokenizer.merge_count(), tokenizer.vocab_size(), took, out_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 3 && args[0] == "encode") {
      return encode(load(args[1], args[2]));
    }
    if (args.size() >= 4 && args[0] == "speed") {
      const Clock::time_point start = Clock::now();
      const attnlens::BpeTokenizer tokenizer = load(args[1], args[2]);
      std::printf("load: %d tokens, %zu merges in %.3f s\n", tokenizer.vocab_size(),
                  tokenizer.merge_count(), seconds_since(start));
      return speed(tokenizer, std::vector<std::string>(args.begin() + 3, args.end()));
    }
    if (args.size() >= 4 && args[0] == "train") {
      return train(std::stoi(args[1]), args[2],
                   std::vector<std::string>(args.begin() + 3, args.end()));
    }
  } catch (const std::exception& e) {
    std::cerr << "attnlens_bpe: " << e.what() << '\n';
    return 1;
  }
  std::cerr << "usage: attnlens_bpe encode VOCAB_JSON MERGES_TXT < texts\n"
               "       attnlens_bpe speed VOCAB_JSON MERGES_TXT FILE...\n"
               "       attnlens_bpe train VOCAB_SIZE OUT_DIR FILE...\n";
  return 2;
}
