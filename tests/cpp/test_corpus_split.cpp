// The corpus split, its record (split.json), the held-out sample, and the State of the Union
// reader, on small made-up documents.
#include "helpers.hpp"

#include "io/json.hpp"

#include <corpus/sotu.hpp>
#include <corpus/split.hpp>

#include <filesystem>
#include <fstream>

using attnlens::ErrorCode;
using attnlens::corpus::Document;
using attnlens::corpus::MarkerTally;
using attnlens::corpus::TextCounts;
using testing::require_error;

namespace {

Document doc(std::string source, std::string work, int ordinal, std::string text) {
  Document d;
  d.source = std::move(source);
  d.work = std::move(work);
  d.part = ordinal == 0 ? "front matter" : "Chapter " + std::to_string(ordinal);
  d.origin = "test";
  d.ordinal = ordinal;
  d.text = std::move(text);
  return d;
}

// A novel "N" with front matter and chapters 1..21 whose text is "c<i>", and addresses 1..10.
std::vector<Document> corpus() {
  std::vector<Document> docs{doc("austen", "N", 0, "Title")};
  for (int i = 1; i <= 21; ++i)
    docs.push_back(doc("austen", "N", i, "c" + std::to_string(i)));
  for (int i = 1; i <= 10; ++i)
    docs.push_back(doc("sotu", std::to_string(1789 + i) + " P", i, "a" + std::to_string(i)));
  return docs;
}

}  // namespace

TEST_CASE("split: every 10th unit of each work is held out, in order", "[corpus]") {
  const auto split = attnlens::corpus::split_corpus(corpus());
  CHECK(split.heldout == "c10\n\nc20\n\na10\n\n");
  std::string train = "Title\n\n";
  for (int i = 1; i <= 21; ++i) {
    if (i % 10 != 0) train += "c" + std::to_string(i) + "\n\n";
  }
  for (int i = 1; i <= 9; ++i)
    train += "a" + std::to_string(i) + "\n\n";
  CHECK(split.train == train);
  CHECK(split.train_counts.at("austen").documents == 20);  // front matter + 19 chapters
  CHECK(split.heldout_counts.at("austen").documents == 2);
  CHECK(split.train_counts.at("sotu").documents == 9);
  CHECK(split.heldout_counts.at("sotu").documents == 1);
  // Front matter is never held out, whatever its position.
  CHECK_FALSE(attnlens::corpus::is_held_out(doc("austen", "N", 0, "x")));
}

TEST_CASE("split: words, paragraphs, characters and bytes", "[corpus]") {
  TextCounts c;
  c.add("Caf\xC3\xA9 au lait.\nTwo  words");
  CHECK(c.documents == 1);
  CHECK(c.paragraphs == 2);
  CHECK(c.words == 5);
  CHECK(c.characters == 24);  // 25 bytes, the two of U+00E9 one character
  CHECK(c.bytes == 25);
  c.add("one");
  CHECK(c.documents == 2);
  CHECK(c.paragraphs == 3);
  CHECK(c.words == 6);
}

TEST_CASE("split: the record is JSON listing sources, markers and every document", "[corpus]") {
  const auto docs = corpus();
  const auto split = attnlens::corpus::split_corpus(docs);
  MarkerTally tally;
  tally.removed["[Laughter]"] = 3;
  tally.unwrapped["[the \"States\"]"] = 1;
  const std::string record = attnlens::corpus::split_record(
      docs, split, {{"austen", "pkg A", "public domain"}, {"sotu", "pkg S", "public domain"}},
      {"one step", "another step"}, tally);
  const auto json = attnlens::detail::parse_json(record, "split.json");
  REQUIRE(json.is_object());
  const auto* austen = json.find("sources")->find("austen");
  REQUIRE(austen != nullptr);
  CHECK(austen->find("origin")->as_string() == "pkg A");
  CHECK(austen->find("train")->find("documents")->as_integer() == 20);
  CHECK(austen->find("heldout")->find("words")->as_integer() == 2);
  CHECK(json.find("normalisation")->items().size() == 2);
  CHECK(json.find("stage_markers")->find("removed")->find("[Laughter]")->as_integer() == 3);
  CHECK(json.find("stage_markers")->find("unwrapped")->find("[the \"States\"]") != nullptr);
  const auto& documents = json.find("documents")->items();
  REQUIRE(documents.size() == docs.size());
  int held_out = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    INFO("document " << i);
    CHECK(documents[i].find("work")->as_string() == docs[i].work);
    const bool is_held_out = documents[i].find("split")->as_string() == "heldout";
    CHECK(is_held_out == attnlens::corpus::is_held_out(docs[i]));
    held_out += is_held_out ? 1 : 0;
  }
  CHECK(held_out == 3);
}

TEST_CASE("split: the held-out sample takes whole paragraphs, then whole sentences", "[corpus]") {
  std::vector<Document> docs = {
      doc("austen", "N", 9, "not held out"),
      doc("austen", "N", 10, "First para.\nSecond one here. More \"words.\" Tail words"),
      doc("austen", "N", 20, "a later held-out chapter"),
      doc("sotu", "1799 P", 10, "An address. It goes on and on."),
  };
  // Budget 40 bytes: "First para." (11) and '\n' leave 28 for the second paragraph (41
  // bytes); its second sentence ends after byte 30 (with the closing quote), so the cut comes
  // after the first sentence (16 bytes).
  const auto sample = attnlens::corpus::heldout_sample(docs, 40);
  CHECK(sample.text == "First para.\nSecond one here.\n\nAn address. It goes on and on.\n\n");
  REQUIRE(sample.taken_from.size() == 2);
  CHECK(sample.taken_from[0] == "austen: N, Chapter 10 (test), first 28 bytes");
  CHECK(sample.taken_from[1] == "sotu: 1799 P, Chapter 10 (test), first 30 bytes");
  // With room for the quote-closed sentence, the cut comes after the closing quote.
  CHECK(attnlens::corpus::heldout_sample({docs[1]}, 43).text ==
        "First para.\nSecond one here. More \"words.\"\n\n");
}

TEST_CASE("sotu: an address file and its errors", "[corpus]") {
  const auto a = attnlens::corpus::parse_sotu_address(
      R"({"year":2021,"name":"Joseph R. Biden","party":"democratic",)"
      R"("text":"Thank you. (Applause.) It\u2019s good\u2014(applause)\u2014to be back."})",
      "2021_joseph_r_biden_d.json");
  CHECK(a.year == 2021);
  CHECK(a.president == "Joseph R. Biden");
  CHECK(a.party == "democratic");
  CHECK(a.file == "2021_joseph_r_biden_d.json");
  MarkerTally tally;
  const Document d = attnlens::corpus::sotu_document(a, 7, tally);
  CHECK(d.source == "sotu");
  CHECK(d.work == "2021 Joseph R. Biden");
  CHECK(d.origin == "2021_joseph_r_biden_d.json");
  CHECK(d.ordinal == 7);
  CHECK(d.text == "Thank you. It's good--to be back.");
  CHECK(tally.removed == std::map<std::string, std::size_t>{{"(Applause.)", 1}, {"(applause)", 1}});

  using attnlens::corpus::parse_sotu_address;
  require_error([] { parse_sotu_address(R"({"year":1790,"name":"W","party":"n"})", "x.json"); },
                ErrorCode::BAD_FILE, {"x.json: \"text\" is missing; a string was expected"});
  require_error(
      [] { parse_sotu_address(R"({"year":"1790","name":"W","party":"n","text":""})", "x.json"); },
      ErrorCode::BAD_FILE, {"x.json: \"year\" is a string; a whole number from 1700 to 2200"});
  require_error(
      [] { parse_sotu_address(R"({"year":17900,"name":"W","party":"n","text":""})", "x.json"); },
      ErrorCode::BAD_FILE, {"\"year\" is a number"});
  require_error([] { parse_sotu_address("[1]", "x.json"); }, ErrorCode::BAD_FILE,
                {"x.json: the file holds an array"});
  require_error([] { parse_sotu_address("{\"year\":", "x.json"); }, ErrorCode::BAD_FILE,
                {"x.json"});
}

TEST_CASE("sotu: the data folder lists its .json files in name order", "[corpus]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "attnlens_test_sotu_files";
  fs::remove_all(dir);
  fs::create_directories(dir / "sub.json");
  for (const char* name : {"1791_b.json", "1790_a.json", "1790_a.txt"})
    std::ofstream(dir / name) << "{}";
  CHECK(attnlens::corpus::sotu_files(dir.string()) ==
        std::vector<std::string>{"1790_a.json", "1791_b.json"});
  fs::remove_all(dir);
  fs::create_directories(dir);
  require_error([&] { attnlens::corpus::sotu_files(dir.string()); }, ErrorCode::BAD_FILE,
                {"the folder holds no .json file"});
  fs::remove_all(dir);
  require_error([&] { attnlens::corpus::sotu_files(dir.string()); }, ErrorCode::BAD_FILE,
                {"cannot list the folder"});
}
