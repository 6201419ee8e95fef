// The train / held-out split of the corpus, the files the trainer reads, and the record of it.
//
// Held out: every kHeldOutEvery-th unit of each work, by Document::ordinal (chapters 10, 20, ...
// of each novel, addresses 10, 20, ... in date order). Nothing random: the same input always
// gives the same split. Front matter (ordinal 0) always trains.
//
// File format (train.txt, heldout.txt): UTF-8; each document's paragraphs one per line, and
// each document followed by one empty line, so "\n\n" separates documents and never occurs
// inside one.
#pragma once

#include "document.hpp"
#include "sotu.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

inline constexpr int kHeldOutEvery = 10;

bool is_held_out(const Document& document);

struct TextCounts {
  std::size_t documents = 0;
  std::size_t paragraphs = 0;
  std::size_t words = 0;       // runs of characters between spaces, tabs and newlines
  std::size_t characters = 0;  // Unicode code points
  std::size_t bytes = 0;       // UTF-8 bytes of the text (separators not counted)
  void add(std::string_view text);
};

struct CorpusSplit {
  std::string train;                                 // the contents of train.txt
  std::string heldout;                               // the contents of heldout.txt
  std::map<std::string, TextCounts> train_counts;    // by Document::source
  std::map<std::string, TextCounts> heldout_counts;  // by Document::source
};

// Splits `documents`, keeping their order in each file. Empty documents are skipped.
CorpusSplit split_corpus(const std::vector<Document>& documents);

// What split.json says about each source besides the counts.
struct SourceInfo {
  std::string name;     // Document::source, e.g. "austen"
  std::string origin;   // e.g. "Debian package r-cran-janeaustenr 1.0.0-1, data/Rdata.rdb"
  std::string licence;  // e.g. "public domain text; package MIT"
};

// split.json: the format, the rule, the normalisation steps (`normalisation`, one sentence
// each), per source its origin, licence and train/held-out counts, the stage markers removed
// and unwrapped (`markers`), and every document with its split, words and characters.
std::string split_record(const std::vector<Document>& documents, const CorpusSplit& split,
                         const std::vector<SourceInfo>& sources,
                         const std::vector<std::string>& normalisation, const MarkerTally& markers);

// A small sample of held-out text for tests: from each source (in order of first appearance),
// the first held-out document's opening paragraphs, at most `bytes_per_source` bytes, the last
// paragraph cut after a sentence (". ", "? ", "! ", possibly followed by a closing quote) when it
// does not fit whole. Same file format as heldout.txt. Also returns which documents it took.
struct HeldOutSample {
  std::string text;
  std::vector<std::string> taken_from;  // "austen: Emma, Volume I, Chapter X (1843 bytes)"
};
HeldOutSample heldout_sample(const std::vector<Document>& documents, std::size_t bytes_per_source);

}  // namespace attnlens::corpus
