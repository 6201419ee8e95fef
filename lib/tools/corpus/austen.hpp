// Jane Austen's novels as r-cran-janeaustenr stores them (one character vector of Project
// Gutenberg lines per novel) turned into chapters.
#pragma once

#include "document.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

// The janeaustenr object names of the six novels, in the package's (alphabetical) order, and
// their titles.
struct AustenNovel {
  std::string_view object;  // "emma"
  std::string_view title;   // "Emma"
};
inline constexpr AustenNovel kAustenNovels[] = {
    {"emma", "Emma"},
    {"mansfieldpark", "Mansfield Park"},
    {"northangerabbey", "Northanger Abbey"},
    {"persuasion", "Persuasion"},
    {"prideprejudice", "Pride and Prejudice"},
    {"sensesensibility", "Sense and Sensibility"},
};

// Splits a novel's lines into documents: the front matter before the first chapter heading
// (title, author, Northanger Abbey's "Advertisement by the Authoress"; ordinal 0) and one
// document per chapter (ordinals 1..n across volumes).
//   title:  the novel's title, for Document::work.
//   origin: where the lines came from, for Document::origin.
//   lines:  the text, one line per element, UTF-8.
// What happens to the text:
//   - "CHAPTER I", "Chapter 12" (alone on a line) start a chapter and are dropped; "VOLUME II"
//     lines are dropped and name the chapters after them ("Volume II, Chapter 3").
//   - The novel ends at a line "THE END", "FINIS" or "A NOTE ON THE TEXT" (the last is an
//     editor's note in Northanger Abbey, not Austen's text); nothing after it is kept.
//   - Lines between empty lines join into one paragraph, separated by a space (none after a
//     line ending in "--"); leading and trailing spaces go (poems and letters are indented),
//     and runs of spaces inside a line become one (Persuasion puts two after a sentence).
//   - Underscores, Project Gutenberg's italics (_her_), are removed.
//   - Paragraphs wholly in square brackets are editors' notes ("[At this point in the first and
//     second editions, Volume 1 ends.]") and are dropped, as are rows of asterisks.
// Throws Error(BAD_FILE) naming `origin` when the text has no chapter heading.
std::vector<Document> austen_documents(std::string_view title, std::string_view origin,
                                       const std::vector<std::string>& lines);

}  // namespace attnlens::corpus
