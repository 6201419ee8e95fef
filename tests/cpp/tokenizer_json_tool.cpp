// Encodes texts with a tokenizer.json, for the JS suite's parity test against Hugging Face's
// @huggingface/tokenizers (tests/js/tokenizer-json-parity.test.mjs).
//   attnlens_tokenizer_json TOKENIZER.json TEXTS.json [TOKENIZER_CONFIG.json]
// TEXTS.json is a JSON array of strings. Prints a JSON array with, for each text,
// {"ids": [...], "offsets": [[begin, end], ...]} (byte offsets), or {"error": "..."} when
// encoding it failed. A file that cannot be read or loaded is exit 1 with the message.
#include <attnlens/status.hpp>

#include "io/json.hpp"
#include "text/tokenizer_json.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr,
                 "usage: attnlens_tokenizer_json TOKENIZER.json TEXTS.json "
                 "[TOKENIZER_CONFIG.json]\n");
    return 2;
  }
  try {
    attnlens::TokenizerJson tokenizer =
        attnlens::TokenizerJson::from_json(read_file(argv[1]), argv[1]);
    if (argc == 4) {
      tokenizer.apply_config(attnlens::read_tokenizer_config(read_file(argv[3]), argv[3]), argv[3]);
    }
    const attnlens::detail::JsonValue texts =
        attnlens::detail::parse_json(read_file(argv[2]), argv[2]);
    if (!texts.is_array()) throw std::runtime_error(std::string(argv[2]) + ": not an array");
    std::string out = "[";
    for (std::size_t i = 0; i < texts.items().size(); ++i) {
      if (i > 0) out += ",\n";
      const attnlens::detail::JsonValue& text = texts.items()[i];
      if (!text.is_string()) throw std::runtime_error(std::string(argv[2]) + ": not a string");
      try {
        const auto tokens = tokenizer.encode(text.as_string());
        std::string ids = "[", offsets = "[";
        for (std::size_t k = 0; k < tokens.size(); ++k) {
          if (k > 0) {
            ids += ',';
            offsets += ',';
          }
          ids += std::to_string(tokens[k].id);
          offsets +=
              '[' + std::to_string(tokens[k].begin) + ',' + std::to_string(tokens[k].end) + ']';
        }
        out += "{\"ids\":" + ids + "],\"offsets\":" + offsets + "]}";
      } catch (const attnlens::Error& e) {
        out += "{\"error\":";
        attnlens::detail::append_json_string(out, e.what());
        out += '}';
      }
    }
    out += "]\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
