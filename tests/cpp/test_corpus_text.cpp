// Corpus text handling: the stage-marker stripper, the typographic normalisation and the
// Austen chapter splitter, on small texts whose results are written out by hand.
#include "helpers.hpp"

#include <corpus/austen.hpp>
#include <corpus/markers.hpp>
#include <corpus/normalize.hpp>

using attnlens::ErrorCode;
using attnlens::corpus::austen_documents;
using attnlens::corpus::collapse_spaces;
using attnlens::corpus::Document;
using attnlens::corpus::normalize_typography;
using attnlens::corpus::strip_stage_markers;
using attnlens::corpus::StrippedText;
using testing::require_error;

using Tally = std::map<std::string, std::size_t>;

TEST_CASE("markers: audience reactions go, with the space they leave", "[corpus]") {
  const StrippedText s = strip_stage_markers(
      "[Applause] Thank you. (Applause.) Thank you. That's a joke. [Laughter] (laughs) Good. "
      "[applause] [laughter] (applause) (Laughter.)");
  CHECK(s.text == "Thank you. Thank you. That's a joke. Good.");
  CHECK(s.removed == Tally{{"(Applause.)", 1},
                           {"(Laughter.)", 1},
                           {"(applause)", 1},
                           {"(laughs)", 1},
                           {"[Applause]", 1},
                           {"[Laughter]", 1},
                           {"[applause]", 1},
                           {"[laughter]", 1}});
  CHECK(s.unwrapped.empty());
}

TEST_CASE("markers: a marker between two dashes leaves one dash", "[corpus]") {
  CHECK(strip_stage_markers("Madam Vice President\xE2\x80\x94(applause)\xE2\x80\x94no President")
            .text == "Madam Vice President\xE2\x80\x94no President");
  CHECK(strip_stage_markers("sending things--(laughs)--let's raise").text ==
        "sending things--let's raise");
  // One dash only: nothing to merge.
  CHECK(strip_stage_markers("so--(laughs) we").text == "so-- we");
}

TEST_CASE("markers: editorial notes go, editorial insertions keep their words", "[corpus]") {
  const StrippedText s = strip_stage_markers(
      "by Executive Order,[1] established [p.2] the [missing text]. He [sic] said each of them "
      "[the States] shall [$]1.1 billion. [At this point, audience members responded.] "
      "[Footnote 1: Executive Order 9808 (3 CFR, 1943-1948 Comp., p. 590.)] End.");
  CHECK(s.text ==
        "by Executive Order, established the . He said each of them the States shall $1.1 "
        "billion. End.");
  CHECK(s.removed == Tally{{"[1]", 1},
                           {"[At this point, audience members responded.]", 1},
                           {"[Footnote 1: Executive Order 9808 (3 CFR, 194...", 1},
                           {"[missing text]", 1},
                           {"[p.2]", 1},
                           {"[sic]", 1}});
  CHECK(s.unwrapped == Tally{{"[$]", 1}, {"[the States]", 1}});
}

TEST_CASE("markers: lone brackets are dropped and counted", "[corpus]") {
  // The 1960 address opens each interpolated paragraph with '[' and closes only the last.
  const StrippedText s =
      strip_stage_markers("enacted. [I repeat, it balances. [In any event, it saves.] This ] ok");
  CHECK(s.text == "enacted. I repeat, it balances. In any event, it saves. This ok");
  CHECK(s.unwrapped ==
        Tally{{"[ (unclosed)", 1}, {"[In any event, it saves.]", 1}, {"] (unopened)", 1}});
  CHECK(strip_stage_markers("a [b").text == "a b");
  // Parentheses hold prose unless they are an audience reaction.
  CHECK(strip_stage_markers("the report (see Annex) (applause").text ==
        "the report (see Annex) (applause");
}

TEST_CASE("normalize: typographic characters to ASCII, spaces collapsed", "[corpus]") {
  CHECK(normalize_typography("It\xE2\x80\x99s \xE2\x80\x9C"
                             "fine\xE2\x80\x9D\xE2\x80\x94really \xE2\x80\x98so\xE2\x80\x99 "
                             "1990\xE2\x80\x93"
                             "91 non\xE2\x80\x91stop\xC2\xA0x 40\xC2\xB0 caf\xC3\xA9") ==
        "It's \"fine\"--really 'so' 1990-91 non-stop x 40\xC2\xB0 caf\xC3\xA9");
  CHECK(collapse_spaces("  a  \t b \n  c   d  \n\ne ") == "a b\nc d\n\ne");
  CHECK(collapse_spaces("") == "");
}

TEST_CASE("austen: chapters, volumes, front matter and the end", "[corpus]") {
  const std::vector<std::string> lines = {"TITLE",
                                          "",
                                          "By  Someone",
                                          "",
                                          "",
                                          "VOLUME I",
                                          "",
                                          "CHAPTER I",
                                          "",
                                          "",
                                          "It was _very_ fine,  and",
                                          "  the day--",
                                          "went on.",
                                          "",
                                          "             [An editor's note.]",
                                          "",
                                          "  * * * * *",
                                          "",
                                          "Second paragraph.",
                                          "",
                                          "CHAPTER II.",
                                          "Text two.",
                                          "VOLUME II",
                                          "CHAPTER I",
                                          "Text three.",
                                          "Chapter the Last",
                                          "",
                                          "FINIS",
                                          "",
                                          "After the end."};
  const std::vector<Document> docs = austen_documents("Title", "test object", lines);
  REQUIRE(docs.size() == 4);
  CHECK(docs[0].part == "front matter");
  CHECK(docs[0].ordinal == 0);
  CHECK(docs[0].text == "TITLE\nBy Someone");
  CHECK(docs[1].part == "Volume I, Chapter I");
  CHECK(docs[1].ordinal == 1);
  CHECK(docs[1].text == "It was very fine, and the day--went on.\nSecond paragraph.");
  CHECK(docs[2].part == "Volume I, Chapter II");
  CHECK(docs[2].text == "Text two.");
  CHECK(docs[3].part == "Volume II, Chapter I");
  CHECK(docs[3].ordinal == 3);
  // "Chapter the Last" is not a heading: it is text of the chapter.
  CHECK(docs[3].text == "Text three. Chapter the Last");
  for (const Document& d : docs) {
    CHECK(d.source == "austen");
    CHECK(d.work == "Title");
    CHECK(d.origin == "test object");
  }
}

TEST_CASE("austen: numbered chapters without volumes or front matter", "[corpus]") {
  const std::vector<Document> docs =
      austen_documents("P", "o", {"Chapter 1", "One.", "", "Chapter 2", "Two.", "THE END", "x"});
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].part == "Chapter 1");
  CHECK(docs[0].text == "One.");
  CHECK(docs[1].part == "Chapter 2");
  CHECK(docs[1].text == "Two.");
  require_error(
      [] {
        austen_documents("Emma", "Rdata.rdb object 'emma'", {"no", "headings"});
      },
      ErrorCode::BAD_FILE, {"Rdata.rdb object 'emma': Emma has no chapter heading"});
}
