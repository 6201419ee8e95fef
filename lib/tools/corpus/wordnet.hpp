// WordNet 3.0's synsets as Debian's wordnet-base installs them (/usr/share/wordnet/data.noun,
// data.verb, data.adj, data.adv) turned into paragraphs of everyday English: the words of each
// synset, its definition and its example sentences ("cat, true cat: feline mammal usually having
// thick soft fur and no ability to roar. Domestic cats; wildcats." becomes one paragraph).
//
// Why: the novels and the addresses rarely say "cat", "milk" or "street"; WordNet's 117 659
// definitions and their examples use the words of everyday English, so that a tokenizer learned
// on the corpus keeps them whole and the model sees them in sentences.
//
// The data file format (WordNet's wndb(5)): lines starting with two spaces are the licence
// header; every other line is one synset,
//   offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...] p_cnt [pointer ...] ... | gloss
// with w_cnt two hexadecimal digits, a word's spaces written as underscores and an adjective's
// position marker appended ("fine(a)"), and the gloss definitions and quoted examples separated
// by semicolons.
#pragma once

#include "document.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

struct Synset {
  std::vector<std::string> words;        // "true cat" (underscores to spaces, markers dropped)
  std::vector<std::string> definitions;  // the gloss's unquoted parts
  std::vector<std::string> examples;     // the gloss's quoted parts, without the quotes
};

// Parses one line of a data file.
//   line:  without its newline.
//   where: names the line in messages ("data.noun:31").
// Returns nothing for a licence header line (two leading spaces) or an empty line. Throws
// Error(BAD_FILE) naming `where` when the line is not a synset: a field is missing, w_cnt is not
// a hexadecimal count from 1, the words run past the line, or there is no " | " before the gloss.
std::optional<Synset> parse_wordnet_line(std::string_view line, std::string_view where);

// One paragraph: the words joined by ", ", ": ", the definitions joined by "; " and a full stop,
// then each example as a sentence (first letter capitalised, a full stop added unless it ends
// with ., ? or !). Exact duplicate words are listed once. Typography normalised
// (normalize_typography(), collapse_spaces()).
std::string wordnet_paragraph(const Synset& synset);

// Synsets per document: consecutive synsets of a file (WordNet orders them by topic: the
// lexicographer files noun.animal, noun.food, ...), so that every kHeldOutEvery-th document
// holds out a spread of topics.
inline constexpr std::size_t kWordNetSynsetsPerDocument = 100;

// The documents of one data file.
//   text:  the file's contents.
//   label: the part of speech as the documents name it ("nouns").
//   file:  the file's name, for messages and Document::origin ("data.noun").
// Document::work = "WordNet <label>", part = "synsets 1-100", ordinal 1..n in file order.
// Throws as parse_wordnet_line() does, and Error(BAD_FILE) naming `file` when it holds no synset.
std::vector<Document> wordnet_documents(std::string_view text, std::string_view label,
                                        std::string_view file);

// The four data files in the order read, with their labels.
struct WordNetFile {
  std::string_view file;   // "data.noun"
  std::string_view label;  // "nouns"
};
inline constexpr WordNetFile kWordNetFiles[] = {
    {"data.noun", "nouns"},
    {"data.verb", "verbs"},
    {"data.adj", "adjectives"},
    {"data.adv", "adverbs"},
};

}  // namespace attnlens::corpus
