// Tokenizer, embeddings and positional encodings.
#include "helpers.hpp"

#include <cmath>

using attnlens::ErrorCode;
using testing::require_error;

namespace {

std::vector<std::string> texts(std::string_view s) {
  std::vector<std::string> out;
  for (const auto& t : attnlens::tokenize(s))
    out.push_back(t.text);
  return out;
}

}  // namespace

TEST_CASE("punctuation becomes tokens of its own", "[text]") {
  CHECK(texts("The cat sat on the mat.") ==
        std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat", "."});
  CHECK(texts("Wait... what?!") ==
        std::vector<std::string>{"wait", ".", ".", ".", "what", "?", "!"});
  CHECK(texts("(a, b)") == std::vector<std::string>{"(", "a", ",", "b", ")"});
  CHECK(texts("«Hola» — ¿qué?") ==
        std::vector<std::string>{"«", "hola", "»", "—", "¿", "qué", "?"});
  CHECK(texts("don't stop; it's fine'") ==
        std::vector<std::string>{"don't", "stop", ";", "it's", "fine", "'"});
}

TEST_CASE("tokens keep byte offsets into the input", "[text]") {
  const std::string s = "  Hi, café!";
  const auto tokens = attnlens::tokenize(s);
  REQUIRE(tokens.size() == 4);
  CHECK(s.substr(tokens[0].begin, tokens[0].end - tokens[0].begin) == "Hi");
  CHECK(tokens[2].text == "café");
  CHECK(s.substr(tokens[2].begin, tokens[2].end - tokens[2].begin) == "café");
  CHECK(tokens[3].begin == s.size() - 1);
}

TEST_CASE("repeated words are separate tokens with the same embedding", "[text]") {
  const auto tokens = attnlens::tokenize("the dog saw the other dog");
  REQUIRE(tokens.size() == 6);
  const auto e = attnlens::token_embeddings(tokens, 16, 5);
  CHECK(e.row(0) == e.row(3));
  CHECK(e.row(1) == e.row(5));
  CHECK(e.row(0) != e.row(1));
}

TEST_CASE("non-ASCII words are kept whole, only ASCII is lowercased", "[text]") {
  CHECK(texts("Grüße aus Köln") == std::vector<std::string>{"grüße", "aus", "köln"});
  CHECK(texts("ÉCOLE naïve") == std::vector<std::string>{"École", "naïve"});
  CHECK(texts("東京は、大きい。") == std::vector<std::string>{"東京は", "、", "大きい", "。"});
  CHECK(texts("Привет мир") == std::vector<std::string>{"Привет", "мир"});
}

TEST_CASE("emoji stay whole, joiners included", "[text]") {
  CHECK(texts("I ❤️ cats 🐈") == std::vector<std::string>{"i", "❤️", "cats", "🐈"});
  CHECK(texts("👩‍💻 codes") == std::vector<std::string>{"👩‍💻", "codes"});
}

TEST_CASE("keycap emoji are one token, their # and * included", "[text]") {
  // #️⃣ is # U+FE0F U+20E3; the # once split off as punctuation, leaving "️⃣".
  CHECK(texts("#️⃣ and *️⃣, 1️⃣2️⃣") ==
        std::vector<std::string>{"#️⃣", "and", "*️⃣", ",", "1️⃣2️⃣"});
  CHECK(texts("#⃣") == std::vector<std::string>{"#⃣"});  // without U+FE0F
  const auto tokens = attnlens::tokenize("go #️⃣!");
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[1].begin == 3);
  CHECK(tokens[1].end == 3 + 1 + 3 + 3);  // #, U+FE0F and U+20E3 (3 bytes each)
  // A plain # or * is still punctuation.
  CHECK(texts("#tag *star") == std::vector<std::string>{"#", "tag", "*", "star"});
}

TEST_CASE("empty and whitespace-only text give no tokens", "[text]") {
  CHECK(attnlens::tokenize("").empty());
  CHECK(attnlens::tokenize(" \t\n\r ").empty());
  CHECK(attnlens::tokenize("\xC2\xA0\xE3\x80\x80").empty());  // no-break space, ideographic space
}

TEST_CASE("invalid UTF-8 is an error that names the offset", "[text][errors]") {
  require_error([] { attnlens::tokenize("ok \xFF"); }, ErrorCode::INVALID_UTF8, {"offset 3"});
  require_error([] { attnlens::tokenize("caf\xC3"); }, ErrorCode::INVALID_UTF8, {"cut off"});
  require_error([] { attnlens::tokenize("\xC0\xAF"); }, ErrorCode::INVALID_UTF8, {"overlong"});
  require_error([] { attnlens::tokenize("\xED\xA0\x80"); }, ErrorCode::INVALID_UTF8, {"U+D800"});
  require_error([] { attnlens::tokenize("a\xE2\x28\xA1"); }, ErrorCode::INVALID_UTF8, {"offset 2"});
  require_error([] { attnlens::tokenize("\xF4\x90\x80\x80"); }, ErrorCode::INVALID_UTF8,
                {"U+110000"});
}

TEST_CASE("word classes put related words near each other", "[text]") {
  CHECK(attnlens::word_class("cat") == "animal");
  CHECK(attnlens::word_class("the") == "determiner");
  CHECK(attnlens::word_class("zebra-unknown").empty());
  const int dim = 64;
  const auto cat = attnlens::token_embedding("cat", dim, 7);
  const auto dog = attnlens::token_embedding("dog", dim, 7);
  const auto sat = attnlens::token_embedding("sat", dim, 7);
  const auto cos = [](const Eigen::VectorXf& a, const Eigen::VectorXf& b) {
    return a.dot(b) / (a.norm() * b.norm());
  };
  CHECK(cos(cat, dog) > 0.4f);
  CHECK(std::abs(cos(cat, sat)) < cos(cat, dog));
}

TEST_CASE("hashed embeddings: any token, stable, seeded", "[text][determinism]") {
  const auto a = attnlens::token_embedding("flibbertigibbet", 32, 1);
  CHECK(a == attnlens::token_embedding("flibbertigibbet", 32, 1));
  CHECK(a != attnlens::token_embedding("flibbertigibbet", 32, 2));
  CHECK(a != attnlens::token_embedding("flibbertigibbeT", 32, 1));
  // A word keeps its vector whatever sentence it appears in.
  const auto in_one = attnlens::token_embeddings(attnlens::tokenize("one flibbertigibbet"), 32, 1);
  CHECK(in_one.row(1) == a.transpose());
  // Entries are roughly standard normal: the mean of 4096 squared N(0, 1) draws has standard
  // deviation sqrt(2 / 4096) = 0.022, so 0.1 is four and a half of them (and fails on NaN).
  const auto big = attnlens::token_embedding("variance", 4096, 3);
  CHECK(big.cast<double>().array().square().mean() == Approx(1.0).epsilon(0.1));
}

TEST_CASE("sinusoidal positions match the formula", "[text]") {
  const auto pe = attnlens::sinusoidal_positions(50, 6);
  REQUIRE(pe.rows() == 50);
  REQUIRE(pe.cols() == 6);
  for (int c = 0; c < 6; ++c)
    CHECK(pe(0, c) == (c % 2 == 0 ? 0.0f : 1.0f));
  // Computed in float64 to about 1e-15 and rounded once to float32: within u = 6e-8 of values
  // of size <= 1; 1e-6 also covers std::pow's last bits in this check.
  for (int pos : {1, 7, 49}) {
    for (int i = 0; i < 6; i += 2) {
      const double angle = pos / std::pow(10000.0, static_cast<double>(i) / 6.0);
      CHECK(pe(pos, i) == Approx(std::sin(angle)).margin(1e-6));
      CHECK(pe(pos, i + 1) == Approx(std::cos(angle)).margin(1e-6));
    }
  }
  const auto odd = attnlens::sinusoidal_positions(3, 5);
  CHECK(odd(2, 4) == Approx(std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0))).margin(1e-6));
}
