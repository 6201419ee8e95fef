// The WordNet reader of the corpus tool: lines of WordNet 3.0's data files (copied from Debian's
// wordnet-base) and the paragraphs they become, written out by hand.
#include "helpers.hpp"

#include <corpus/wordnet.hpp>

#include <string>
#include <vector>

using attnlens::ErrorCode;
using attnlens::corpus::Document;
using attnlens::corpus::parse_wordnet_line;
using attnlens::corpus::Synset;
using attnlens::corpus::wordnet_documents;
using attnlens::corpus::wordnet_paragraph;
using testing::require_error;
using Strings = std::vector<std::string>;

namespace {

// data.noun, the synset of "cat" (its gloss ends with two spaces, as every line's does).
const std::string kCat =
    "02121620 05 n 02 cat 0 true_cat 0 003 @ 02120997 n 0000 ~ 02121808 n 0000 ~ 02124623 n 0000 "
    "| feline mammal usually having thick soft fur and no ability to roar: domestic cats; "
    "wildcats  ";
// data.adj: position markers after the words, an example holding a semicolon and an attribution
// after the last quote.
const std::string kDeadOn =
    "00022437 00 s 02 dead-on(a) 0 dead-on(p) 0 002 & 00021766 a 0000 ;u 07075172 n 0000 | "
    "accurate and to the point; \"a dead-on feel for characterization\"; \"She avoids big "
    "scenes; preferring to rely on small gestures and dead-on dialogue\"- Peter S.Prescott  ";

}  // namespace

TEST_CASE("wordnet: a synset's words, definitions and examples", "[corpus]") {
  const std::optional<Synset> cat = parse_wordnet_line(kCat, "data.noun:1");
  REQUIRE(cat.has_value());
  CHECK(cat->words == Strings{"cat", "true cat"});
  CHECK(cat->definitions ==
        Strings{"feline mammal usually having thick soft fur and no ability to roar: domestic cats",
                "wildcats"});
  CHECK(cat->examples.empty());
  CHECK(wordnet_paragraph(*cat) ==
        "cat, true cat: feline mammal usually having thick soft fur and no ability to roar: "
        "domestic cats; wildcats.");

  const std::optional<Synset> dead_on = parse_wordnet_line(kDeadOn, "data.adj:2");
  REQUIRE(dead_on.has_value());
  // "dead-on(a)" and "dead-on(p)" are one word once the markers go.
  CHECK(dead_on->words == Strings{"dead-on"});
  CHECK(dead_on->definitions == Strings{"accurate and to the point"});
  CHECK(
      dead_on->examples ==
      Strings{"a dead-on feel for characterization",
              "She avoids big scenes; preferring to rely on small gestures and dead-on dialogue"});
  CHECK(wordnet_paragraph(*dead_on) ==
        "dead-on: accurate and to the point. A dead-on feel for characterization. She avoids big "
        "scenes; preferring to rely on small gestures and dead-on dialogue.");
}

TEST_CASE("wordnet: examples keep their own ending, a synset without definition", "[corpus]") {
  Synset s;
  s.words = {"hello", "hi"};
  s.examples = {"how are you?", "\xE2\x80\x9Cnice\xE2\x80\x9D  to meet you!"};
  CHECK(wordnet_paragraph(s) == "hello, hi. How are you? \"nice\" to meet you!");
  s.definitions = {"an expression of greeting."};
  s.examples.clear();
  CHECK(wordnet_paragraph(s) == "hello, hi: an expression of greeting.");
}

TEST_CASE("wordnet: the licence header and empty lines are not synsets", "[corpus]") {
  CHECK_FALSE(parse_wordnet_line("  1 This software and database is being provided to you, the "
                                 "LICENSEE, by  ",
                                 "data.noun:1")
                  .has_value());
  CHECK_FALSE(parse_wordnet_line("", "data.noun:30").has_value());
  CHECK_FALSE(parse_wordnet_line("\r", "data.noun:30").has_value());
}

TEST_CASE("wordnet: a line that is not a synset is named", "[corpus]") {
  require_error([] { parse_wordnet_line("02121620 05 n 02 cat 0 true_cat 0", "data.noun:7"); },
                ErrorCode::BAD_FILE, {"data.noun:7", "no \" | \""});
  require_error([] { parse_wordnet_line("02121620 05 n | a cat", "data.noun:8"); },
                ErrorCode::BAD_FILE, {"data.noun:8", "3 fields"});
  require_error([] { parse_wordnet_line("02121620 05 n zz cat 0 | a cat", "data.noun:9"); },
                ErrorCode::BAD_FILE, {"data.noun:9", "\"zz\"", "hexadecimal"});
  require_error([] { parse_wordnet_line("02121620 05 n 00 | a cat", "data.noun:10"); },
                ErrorCode::BAD_FILE, {"data.noun:10", "\"00\""});
  // 0x11 = 17 words announced, one given.
  require_error([] { parse_wordnet_line("02121620 05 n 11 cat 0 | a cat", "data.noun:11"); },
                ErrorCode::BAD_FILE, {"data.noun:11", "17 words", "fields for 1"});
}

TEST_CASE("wordnet: a file becomes documents of 100 consecutive synsets", "[corpus]") {
  std::string file =
      "  1 This software and database is being provided to you\n"
      "  2 by Princeton University under the following license.\n";
  for (int i = 1; i <= 250; ++i) {
    file += "0000000" + std::to_string(i % 10) + " 03 n 01 word" + std::to_string(i) +
            " 0 000 | gloss number " + std::to_string(i) + "  \n";
  }
  const std::vector<Document> documents = wordnet_documents(file, "nouns", "data.noun");
  REQUIRE(documents.size() == 3);
  const char* parts[] = {"synsets 1-100", "synsets 101-200", "synsets 201-250"};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(documents[i].source == "wordnet");
    CHECK(documents[i].work == "WordNet nouns");
    CHECK(documents[i].origin == "data.noun");
    CHECK(documents[i].ordinal == static_cast<int>(i) + 1);
    CHECK(documents[i].part == parts[i]);
    const std::size_t lines = 1 + static_cast<std::size_t>(std::count(
                                      documents[i].text.begin(), documents[i].text.end(), '\n'));
    CHECK(lines == (i < 2 ? 100u : 50u));
  }
  CHECK(documents[0].text.substr(0, 42) == "word1: gloss number 1.\nword2: gloss number");
  CHECK(documents[2].text.substr(documents[2].text.size() - 26) == "word250: gloss number 250.");

  // The line number in a message counts the header lines.
  require_error([&] { wordnet_documents(file + "bad line\n", "nouns", "data.noun"); },
                ErrorCode::BAD_FILE, {"data.noun:253"});
  require_error([] { wordnet_documents("  1 header only\n", "verbs", "data.verb"); },
                ErrorCode::BAD_FILE, {"data.verb", "no synset"});
}
