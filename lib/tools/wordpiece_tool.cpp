// The WordPiece tokenizer from the command line.
//
//   attnlens_wordpiece tokens TOKENIZER_JSON
//       Reads texts from standard input, each as "<byte count>\n<bytes>", and prints one line
//       per text: its tokens (no [CLS]/[SEP]) as "<id>@<begin>:<end>", space separated, with
//       byte offsets into the text; or "error <CODE> <message>". The WordPiece parity test
//       (tests/js/wordpiece-parity.test.mjs) drives it.
//   attnlens_wordpiece pairs TOKENIZER_JSON
//       Reads pairs of texts (two records as above each) and prints one line per pair:
//       encode_pair's ids with their token types as "<id>/<type>", space separated; or
//       "error <CODE> <message>".
//   attnlens_wordpiece speed TOKENIZER_JSON FILE...
//       Prints the load time and the tokenizing speed over the files' text.
#include <attnlens/status.hpp>
#include <attnlens/wordpiece.hpp>

#include <algorithm>
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

attnlens::WordPieceTokenizer load(const std::string& path) {
  return attnlens::WordPieceTokenizer::from_tokenizer_json(read_file(path), path);
}

// Reads one "<byte count>\n<bytes>" record; false at the end of the input.
bool read_text(std::string& text) {
  std::size_t length = 0;
  if (!(std::cin >> length)) return false;
  std::cin.get();  // the newline after the count
  text.resize(length);
  if (!std::cin.read(text.data(), static_cast<std::streamsize>(length))) {
    throw std::runtime_error("input ends inside a text");
  }
  return true;
}

void print_error(const attnlens::Error& e) {
  std::cout << "error " << attnlens::error_code_name(e.code()) << ' ' << e.what() << '\n';
}

int tokens(const attnlens::WordPieceTokenizer& tokenizer) {
  std::string text;
  while (read_text(text)) {
    try {
      std::string line;
      for (const attnlens::WordPieceToken& t : tokenizer.tokens(text)) {
        if (!line.empty()) line += ' ';
        line += std::to_string(t.id) + "@" + std::to_string(t.begin) + ":" + std::to_string(t.end);
      }
      std::cout << line << '\n';
    } catch (const attnlens::Error& e) {
      print_error(e);
    }
  }
  return 0;
}

int pairs(const attnlens::WordPieceTokenizer& tokenizer) {
  std::string a, b;
  while (read_text(a)) {
    if (!read_text(b)) throw std::runtime_error("input ends inside a pair");
    try {
      const attnlens::WordPieceEncoding e = tokenizer.encode_pair(a, b);
      std::string line;
      for (std::size_t i = 0; i < e.ids.size(); ++i) {
        if (i > 0) line += ' ';
        line += std::to_string(e.ids[i]) + "/" + std::to_string(e.token_types[i]);
      }
      std::cout << line << '\n';
    } catch (const attnlens::Error& e) {
      print_error(e);
    }
  }
  return 0;
}

int speed(const attnlens::WordPieceTokenizer& tokenizer, const std::vector<std::string>& files) {
  std::string text;
  for (const std::string& f : files)
    text += read_file(f);
  // Best of three: the machine is shared.
  double best = 1e30;
  std::size_t count = 0;
  for (int round = 0; round < 3; ++round) {
    const Clock::time_point start = Clock::now();
    count = tokenizer.tokens(text).size();
    best = std::min(best, seconds_since(start));
  }
  std::printf("tokens: %zu bytes -> %zu tokens in %.3f s (%.1f MB/s, best of 3)\n", text.size(),
              count, best, static_cast<double>(text.size()) / best / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 2 && args[0] == "tokens") return tokens(load(args[1]));
    if (args.size() == 2 && args[0] == "pairs") return pairs(load(args[1]));
    if (args.size() >= 3 && args[0] == "speed") {
      const Clock::time_point start = Clock::now();
      const attnlens::WordPieceTokenizer tokenizer = load(args[1]);
      std::printf("load: %d tokens in %.3f s\n", tokenizer.vocab_size(), seconds_since(start));
      return speed(tokenizer, std::vector<std::string>(args.begin() + 2, args.end()));
    }
  } catch (const std::exception& e) {
    std::cerr << "attnlens_wordpiece: " << e.what() << '\n';
    return 1;
  }
  std::cerr << "usage: attnlens_wordpiece tokens TOKENIZER_JSON < texts\n"
               "       attnlens_wordpiece pairs TOKENIZER_JSON < pairs of texts\n"
               "       attnlens_wordpiece speed TOKENIZER_JSON FILE...\n";
  return 2;
}
