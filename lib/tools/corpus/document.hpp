// One document of the training corpus: a chapter of a novel or one address.
#pragma once

#include <string>

namespace attnlens::corpus {

struct Document {
  std::string source;  // "austen" or "sotu"
  std::string work;    // "Emma", "1790 George Washington"
  std::string part;    // "Volume I, Chapter III", "front matter"; empty for an address
  std::string origin;  // where the text came from: "Rdata.rdb object 'emma'", a file name
  // Position among the work's units that may be held out (chapters 1..n of a novel, addresses
  // 1..n in date order); 0 for text that always trains (a novel's front matter).
  int ordinal = 0;
  // UTF-8, one paragraph per line, lines separated by '\n', no empty lines, no final newline.
  std::string text;
};

}  // namespace attnlens::corpus
