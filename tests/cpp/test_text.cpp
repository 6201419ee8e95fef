// Tokenizer, embeddings and positional encodings.
#include "helpers.hpp"

#include "text/unicode_tables.hpp"

#include <cmath>
#include <string>
#include <thread>

using attnlens::ErrorCode;
using testing::require_error;

namespace {

std::vector<std::string> texts(std::string_view s) {
  std::vector<std::string> out;
  for (const auto& t : attnlens::tokenize(s))
    out.push_back(t.text);
  return out;
}

std::vector<std::string> keys(std::string_view s) {
  std::vector<std::string> out;
  for (const auto& t : attnlens::tokenize(s))
    out.push_back(t.key);
  return out;
}

// What the tokenizer hashed before it folded case: the token with ASCII letters lowercased.
std::string ascii_lowercase(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

TEST_CASE("punctuation becomes tokens of its own", "[text]") {
  CHECK(texts("The cat sat on the mat.") ==
        std::vector<std::string>{"The", "cat", "sat", "on", "the", "mat", "."});
  CHECK(keys("The cat sat on the mat.") ==
        std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat", "."});
  CHECK(texts("Wait... what?!") ==
        std::vector<std::string>{"Wait", ".", ".", ".", "what", "?", "!"});
  CHECK(texts("(a, b)") == std::vector<std::string>{"(", "a", ",", "b", ")"});
  CHECK(texts("«Hola» — ¿qué?") ==
        std::vector<std::string>{"«", "Hola", "»", "—", "¿", "qué", "?"});
  // Symbols are tokens of their own too, ASCII ones as before and now non-ASCII ones.
  CHECK(texts("$5+x=y €20 25°C") ==
        std::vector<std::string>{"$", "5", "+", "x", "=", "y", "€", "20", "25", "°", "C"});
  CHECK(texts("don't stop; it's fine'") ==
        std::vector<std::string>{"don't", "stop", ";", "it's", "fine", "'"});
}

TEST_CASE("tokens keep byte offsets into the input", "[text]") {
  const std::string s = "  Hi, café!";
  const auto tokens = attnlens::tokenize(s);
  REQUIRE(tokens.size() == 4);
  CHECK(s.substr(tokens[0].begin, tokens[0].end - tokens[0].begin) == "Hi");
  CHECK(tokens[0].text == "Hi");
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

TEST_CASE("words of alphabetic scripts are kept whole, marks with their letters", "[text]") {
  CHECK(texts("Grüße aus Köln") == std::vector<std::string>{"Grüße", "aus", "Köln"});
  CHECK(texts("Привет мир") == std::vector<std::string>{"Привет", "мир"});
  CHECK(texts("नमस्ते दुनिया") == std::vector<std::string>{"नमस्ते", "दुनिया"});
  CHECK(texts("안녕하세요 세계") == std::vector<std::string>{"안녕하세요", "세계"});
  CHECK(texts("مرحبا بالعالم") == std::vector<std::string>{"مرحبا", "بالعالم"});
  // Decomposed é (e + U+0301) is one word; a mark after a space is a token of its own.
  CHECK(texts("e\u0301cole") == std::vector<std::string>{"e\u0301cole"});
  CHECK(texts("a \u0301 b") == std::vector<std::string>{"a", "\u0301", "b"});
  // Letters and digits together are one word (UAX #29 ALetter and Numeric), "3.14" is not.
  CHECK(texts("H2O 3rd 3.14") == std::vector<std::string>{"H2O", "3rd", "3", ".", "14"});
}

TEST_CASE("Japanese: one token per Han ideograph, Hiragana and Katakana runs", "[text]") {
  // Issue 15's reproducer: the whole sentence used to be one token.
  CHECK(texts("猫がマットの上に座った") ==
        std::vector<std::string>{"猫", "が", "マット", "の", "上", "に", "座", "った"});
  CHECK(texts("東京は、大きい。") ==
        std::vector<std::string>{"東", "京", "は", "、", "大", "きい", "。"});
  // ー lengthens Katakana and Hiragana alike; it does not join a Han ideograph.
  CHECK(texts("コーヒー、すごーい") == std::vector<std::string>{"コーヒー", "、", "すごーい"});
  CHECK(texts("ー漢ー") == std::vector<std::string>{"ー", "漢", "ー"});
  // Chinese: each ideograph (a run would make a whole clause one token).
  CHECK(texts("我爱你。") == std::vector<std::string>{"我", "爱", "你", "。"});
  // Digits and Latin letters do not join Han or kana.
  CHECK(texts("3月にiPhoneを") == std::vector<std::string>{"3", "月", "に", "iPhone", "を"});
}

TEST_CASE("Thai, Lao, Khmer, Myanmar: a run between spaces is one token", "[text]") {
  // No dictionary: the run (often a phrase) stays whole, marks included, and is split from
  // other scripts and punctuation.
  CHECK(texts("สวัสดีครับ ทุกคน!") == std::vector<std::string>{"สวัสดีครับ", "ทุกคน", "!"});
  CHECK(texts("ខ្ញុំabc") == std::vector<std::string>{"ខ្ញុំ", "abc"});
  CHECK(texts("မင်္ဂလာပါ") == std::vector<std::string>{"မင်္ဂလာပါ"});
}

TEST_CASE("case folding: the shown text stays, the key is folded", "[text]") {
  // Issue 15's reproducer: "ÉCOLE" became "École" (ASCII-only lowercasing).
  const auto upper = attnlens::tokenize("ÉCOLE");
  const auto lower = attnlens::tokenize("école");
  REQUIRE(upper.size() == 1);
  REQUIRE(lower.size() == 1);
  CHECK(upper[0].text == "ÉCOLE");
  CHECK(lower[0].text == "école");
  CHECK(upper[0].key == "école");
  CHECK(lower[0].key == "école");
  CHECK(attnlens::token_embeddings(upper, 16, 3) == attnlens::token_embeddings(lower, 16, 3));
  CHECK(attnlens::token_embeddings(upper, 16, 3) !=
        attnlens::token_embeddings(attnlens::tokenize("ecole"), 16, 3));
  // Simple case folding, not lowercasing: final sigma, long s and the micro sign fold to
  // σ, s and μ; ß has no one-character folding and stays (STRASSE and straße differ).
  CHECK(keys("ΣΊΣΥΦΟΣ σίσυφος") == std::vector<std::string>{"σίσυφοσ", "σίσυφοσ"});
  CHECK(keys("ſtop µs STRASSE straße") ==
        std::vector<std::string>{"stop", "μs", "strasse", "straße"});
  // Turkish dotted and dotless i have no simple folding to i.
  CHECK(keys("İ ı I") == std::vector<std::string>{"İ", "ı", "i"});
  CHECK(keys("ПРИВЕТ ǅ Ꭰ ꭰ") == std::vector<std::string>{"привет", "ǆ", "ꭰ", "ꭰ"});
}

TEST_CASE("ASCII tokens hash exactly as before case folding", "[text][determinism]") {
  // Before, the hashed text was the token with ASCII letters lowercased; the key must be the
  // same bytes for every token of ASCII text, so every embedding of ASCII text is unchanged.
  std::string all;
  for (int c = 1; c < 128; ++c) {
    all += static_cast<char>(c);
    if (c % 3 == 0) all += "Ab";
  }
  const std::string sentence = all + " The QUICK brown Fox's don'T #️⃣ x1Y2";
  const auto tokens = attnlens::tokenize(sentence);
  REQUIRE(tokens.size() > 40);
  for (const auto& t : tokens) {
    INFO("token " << t.text);
    CHECK(t.key == ascii_lowercase(t.text));
  }
  const auto e = attnlens::token_embeddings(attnlens::tokenize("The CAT"), 8, 7);
  CHECK(e.row(0) == attnlens::token_embedding("the", 8, 7).transpose());
  CHECK(e.row(1) == attnlens::token_embedding("cat", 8, 7).transpose());
}

TEST_CASE("control characters separate tokens like spaces", "[text]") {
  // They used to be word characters ("a\x01b" was one token); now they are dropped as
  // separators, like U+200B ZERO WIDTH SPACE.
  CHECK(texts(std::string("a\x01"
                          "b\x7F"
                          "c\0d",
                          7)) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(texts("one\u200Btwo") == std::vector<std::string>{"one", "two"});
}

TEST_CASE("each emoji is a token, a whole grapheme, never merged", "[text]") {
  CHECK(texts("I ❤️ cats 🐈") == std::vector<std::string>{"I", "❤️", "cats", "🐈"});
  CHECK(texts("👩‍💻 codes") == std::vector<std::string>{"👩‍💻", "codes"});
  // Issue 15's reproducers: adjacent emoji merged into one token.
  CHECK(texts("😀😀") == std::vector<std::string>{"😀", "😀"});
  CHECK(texts("👨‍👩‍👧") == std::vector<std::string>{"👨‍👩‍👧"});
  CHECK(texts("🇫🇷🇩🇪") == std::vector<std::string>{"🇫🇷", "🇩🇪"});
  // Skin tones, a third regional indicator, a tag sequence (Scotland's flag), no space.
  CHECK(texts("👍🏽👍🏿") == std::vector<std::string>{"👍🏽", "👍🏿"});
  CHECK(texts("🇫🇷🇩") == std::vector<std::string>{"🇫🇷", "🇩"});
  const std::string scotland = "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F";
  CHECK(texts(scotland + "!") == std::vector<std::string>{scotland, "!"});
  CHECK(texts("cats🐈and🐕‍🦺dogs") ==
        std::vector<std::string>{"cats", "🐈", "and", "🐕‍🦺", "dogs"});
  // A ZWJ before a non-emoji stays with the emoji and does not join the word.
  CHECK(texts("😀\u200Dabc") == std::vector<std::string>{"😀\u200D", "abc"});
}

TEST_CASE("keycap emoji are one token each, their # and * included", "[text]") {
  // #️⃣ is # U+FE0F U+20E3; the # once split off as punctuation, leaving "️⃣".
  CHECK(texts("#️⃣ and *️⃣, 1️⃣2️⃣") ==
        std::vector<std::string>{"#️⃣", "and", "*️⃣", ",", "1️⃣", "2️⃣"});
  CHECK(texts("#⃣") == std::vector<std::string>{"#⃣"});  // without U+FE0F
  CHECK(texts("a1️⃣b") == std::vector<std::string>{"a", "1️⃣", "b"});
  const auto tokens = attnlens::tokenize("go #️⃣!");
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[1].begin == 3);
  CHECK(tokens[1].end == 3 + 1 + 3 + 3);  // #, U+FE0F and U+20E3 (3 bytes each)
  // A plain # or * is still punctuation.
  CHECK(texts("#tag *star") == std::vector<std::string>{"#", "tag", "*", "star"});
}

TEST_CASE("tokens cover the text: only separators lie between them", "[text]") {
  const std::string s =
      "  Hi, café!\t猫がマットの上に座った 😀😀 👨‍👩‍👧🇫🇷🇩🇪 "
      "ÉCOLE\u200Bสวัสดี\n\x01 "
      "1️⃣";
  const std::string separators = " \t\n\x01\u200B";
  const auto tokens = attnlens::tokenize(s);
  REQUIRE(tokens.size() == 20);
  std::size_t at = 0;
  for (const auto& t : tokens) {
    INFO("token " << t.text << " at byte " << t.begin);
    REQUIRE(t.begin >= at);
    REQUIRE(t.end > t.begin);
    CHECK(s.substr(t.begin, t.end - t.begin) == t.text);
    for (const char c : s.substr(at, t.begin - at))
      CHECK(separators.find(c) != std::string::npos);
    at = t.end;
  }
  CHECK(at == s.size());
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

TEST_CASE("kept tables: a later call with another length, dim or seed gives its own values",
          "[text][determinism]") {
  // Both functions keep what they made for later calls (per thread, text.cpp); the answers must
  // be those of a first call, whatever came before: the same bits as a call on a new thread,
  // whose tables start empty.
  // (WebAssembly builds have no threads: there the kept tables are checked against the formula
  // and token_embedding only.)
  const auto first_call = [](auto f) {
    decltype(f()) out;
#if defined(__EMSCRIPTEN__)
    out = f();
#else
    std::thread([&] { out = f(); }).join();
#endif
    return out;
  };
  const auto formula = [](int pos, int i, int dim) {
    const double angle = pos / std::pow(10000.0, static_cast<double>(i - i % 2) / dim);
    return i % 2 == 0 ? std::sin(angle) : std::cos(angle);
  };
  for (const auto& [length, dim] : {std::pair{40, 8}, {10, 8}, {60, 8}, {20, 6}, {5, 8}, {0, 8}}) {
    CAPTURE(length, dim);
    const auto pe = attnlens::sinusoidal_positions(length, dim);
    CHECK(pe == first_call([length = length, dim = dim] {
            return attnlens::sinusoidal_positions(length, dim);
          }));
    REQUIRE(pe.rows() == length);
    for (int pos : {0, length / 2, length - 1}) {
      for (int i = 0; pos >= 0 && pos < length && i < dim; ++i)
        CHECK(pe(pos, i) == Approx(formula(pos, i, dim)).margin(1e-6));  // see the test above
    }
  }
  const auto tokens = attnlens::tokenize("the cat and the hat");
  for (const auto& [dim, seed] : {std::pair{16, 1ULL}, {16, 2ULL}, {8, 2ULL}, {16, 1ULL}}) {
    CAPTURE(dim, seed);
    const auto rows = attnlens::token_embeddings(tokens, dim, seed);
    CHECK(rows == first_call([&tokens, dim = dim, seed = seed] {
            return attnlens::token_embeddings(tokens, dim, seed);
          }));
    for (std::size_t i = 0; i < tokens.size(); ++i)
      CHECK(rows.row(static_cast<Eigen::Index>(i)) ==
            attnlens::token_embedding(tokens[i].key, dim, seed).transpose());
  }
  // More distinct words than the embeddings' table keeps at dim 1024 (2^20 / 1056 = 992): it is
  // emptied and refilled along the way, and every row is still the word's own.
  std::string many;
  for (int k = 0; k < 1200; ++k)
    many += "w" + std::to_string(k) + " ";
  const auto words = attnlens::tokenize(many);
  const auto big = attnlens::token_embeddings(words, 1024, 3);
  for (const std::size_t i :
       {std::size_t{0}, std::size_t{991}, std::size_t{992}, std::size_t{1199}})
    CHECK(big.row(static_cast<Eigen::Index>(i)) ==
          attnlens::token_embedding(words[i].key, 1024, 3).transpose());
  CHECK(attnlens::token_embeddings(words, 1024, 3) == big);
}

TEST_CASE("generated tables: word categories and case folding", "[text][unicode]") {
  using attnlens::detail::simple_case_fold;
  using attnlens::detail::word_category;
  using Cat = attnlens::detail::WordCategory;
  CHECK(word_category(U'a') == Cat::Alpha);
  CHECK(word_category(U'7') == Cat::Alpha);
  CHECK(word_category(U' ') == Cat::Space);
  CHECK(word_category(U'.') == Cat::Other);
  CHECK(word_category(0x0301) == Cat::Extend);
  CHECK(word_category(0x200D) == Cat::Extend);
  CHECK(word_category(0xFE0F) == Cat::Extend);
  CHECK(word_category(0x1F3FD) == Cat::Extend);  // skin tone
  CHECK(word_category(0x093F) == Cat::Alpha);    // Devanagari vowel sign: a mark of one script
  CHECK(word_category(0x0E48) == Cat::SouthEastAsian);  // Thai tone mark
  CHECK(word_category(0x0378) == Cat::Alpha);  // unassigned, after Greek ͷ: the run before
  CHECK(word_category(U'猫') == Cat::Han);
  CHECK(word_category(U'が') == Cat::Hiragana);
  CHECK(word_category(U'マ') == Cat::Katakana);
  CHECK(word_category(0xFF8F) == Cat::Katakana);  // halfwidth ﾏ
  CHECK(word_category(0x30FC) == Cat::ProlongedSound);
  CHECK(word_category(U'ส') == Cat::SouthEastAsian);
  CHECK(word_category(0x1F600) == Cat::Emoji);
  CHECK(word_category(0x1F1EB) == Cat::RegionalIndicator);
  CHECK(word_category(0x10FFFF) == Cat::Other);
  CHECK(word_category(0x110000) == Cat::Other);
  // Folding: ASCII is ASCII lowercase; every folded value folds to itself; known C and S
  // mappings of CaseFolding.txt.
  for (char32_t c = 0; c < 0x80; ++c)
    CHECK(simple_case_fold(c) == (c >= U'A' && c <= U'Z' ? c + 32 : c));
  std::size_t folded = 0;
  std::size_t not_fixed = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    const char32_t f = simple_case_fold(c);
    if (f == c) continue;
    ++folded;
    if (simple_case_fold(f) != f) ++not_fixed;
  }
  CHECK(not_fixed == 0);
  // As many mappings as CaseFolding.txt 17.0 has C and S lines (1,509): Cherokee's 86 are
  // there too, folded from upper to lower case instead of the other way.
  CHECK(folded == 1509);
  CHECK(simple_case_fold(0x1E9E) == 0xDF);      // ẞ -> ß (S)
  CHECK(simple_case_fold(0x212A) == U'k');      // Kelvin sign
  CHECK(simple_case_fold(0x1F88) == 0x1F80);    // ᾈ -> ᾀ (S)
  CHECK(simple_case_fold(0x0345) == 0x03B9);    // combining ypogegrammeni -> ι
  CHECK(simple_case_fold(0x10400) == 0x10428);  // Deseret
  CHECK(simple_case_fold(0x1E900) == 0x1E922);  // Adlam
  CHECK(simple_case_fold(0x0130) == 0x0130);    // İ: only full and Turkic foldings
  CHECK(simple_case_fold(0xDF) == 0xDF);        // ß: only a full folding (ss)
  CHECK(simple_case_fold(0x110000) == 0x110000);
}
