// The tokenizer.json pipeline (text/tokenizer_json.hpp) component by component on small
// hand-written files, its NFC, and its errors. The comparison with Hugging Face's
// @huggingface/tokenizers on the real files of Llama 3, Qwen 3 and Llama 2 is
// tests/js/tokenizer-json-parity.test.mjs.
#include "helpers.hpp"

#include "io/json.hpp"
#include "text/tokenizer_json.hpp"
#include "text/unicode_nfc.hpp"

#include <string>
#include <vector>

using attnlens::ErrorCode;
using attnlens::TokenizerJson;
using attnlens::TokenizerJsonToken;
using testing::require_error;

namespace {

using Ids = std::vector<std::int32_t>;
using Strings = std::vector<std::string>;

// {"token": id, ...} with ids in the order given.
std::string vocab(const Strings& tokens) {
  std::string out = "{";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ", ";
    attnlens::detail::append_json_string(out, tokens[i]);
    out += ": " + std::to_string(i);
  }
  return out + "}";
}

// A tokenizer.json with a BPE model; `model_extra` goes into the model, `rest` at the top.
std::string file(const Strings& tokens, const std::string& merges, const std::string& rest = "",
                 const std::string& model_extra = "") {
  return R"({"model": {"type": "BPE", "vocab": )" + vocab(tokens) + R"(, "merges": )" + merges +
         model_extra + "}" + rest + "}";
}

Ids ids(const TokenizerJson& t, const std::string& text, bool add_special_tokens = true) {
  Ids out;
  for (const TokenizerJsonToken& token : t.encode(text, add_special_tokens))
    out.push_back(token.id);
  return out;
}

using Spans = std::vector<std::pair<std::size_t, std::size_t>>;
Spans spans(const TokenizerJson& t, const std::string& text) {
  Spans out;
  for (const TokenizerJsonToken& token : t.encode(text))
    out.emplace_back(token.begin, token.end);
  return out;
}

// A tokenizer whose vocabulary is exactly `pieces` and that never merges: with ignore_merges,
// each pre-token is one token when it is in the vocabulary, so ids show the pre-tokens.
TokenizerJson pieces_tokenizer(const Strings& pieces, const std::string& rest) {
  return TokenizerJson::from_json(file(pieces, "[]", rest, R"(, "ignore_merges": true)"));
}

}  // namespace

TEST_CASE("tokenizer.json BPE: merges by rank, leftmost first, in both forms", "[tokenizer_json]") {
  const Strings v{"a", "b", "c", "ab", "bc", "abc", "aa"};
  const auto strings = TokenizerJson::from_json(file(v, R"(["a b", "ab c", "a a"])"));
  CHECK(ids(strings, "abc") == Ids{5});
  CHECK(ids(strings, "aaa") == Ids{6, 0});
  CHECK(ids(strings, "cab") == Ids{2, 3});
  // The pair form, and another order: "b c" first leaves "a" "bc", which nothing merges.
  const auto pairs = TokenizerJson::from_json(file(v, R"([["b", "c"], ["a", "b"], ["ab", "c"]])"));
  CHECK(ids(pairs, "abc") == Ids{0, 4});
  CHECK(spans(pairs, "abc") == Spans{{0, 1}, {1, 3}});
  CHECK(ids(pairs, "") == Ids{});
  CHECK(pairs.vocab_size() == 7);
  CHECK(pairs.token_to_id("bc") == 4);
  CHECK(pairs.token_to_id("zz") == -1);
}

TEST_CASE("tokenizer.json BPE: unk_token, fuse_unk, byte_fallback, ignore_merges",
          "[tokenizer_json]") {
  const Strings v{"<unk>", "a", "b", "ab", "<0xC3>", "<0xA9>"};
  const auto plain =
      TokenizerJson::from_json(file(v, R"(["a b"])", "", R"(, "unk_token": "<unk>")"));
  CHECK(ids(plain, "axyb") == Ids{1, 0, 0, 2});
  const auto fused = TokenizerJson::from_json(
      file(v, R"(["a b"])", "", R"(, "unk_token": "<unk>", "fuse_unk": true)"));
  CHECK(ids(fused, "axyb") == Ids{1, 0, 2});
  CHECK(spans(fused, "axyb") == Spans{{0, 1}, {1, 3}, {3, 4}});
  // Without an unk_token an unknown character is dropped.
  const auto no_unk = TokenizerJson::from_json(file(v, R"(["a b"])"));
  CHECK(ids(no_unk, "xab") == Ids{3});
  // byte_fallback: "é" is C3 A9; "ü" (C3 BC) lacks a byte token, so it is <unk>.
  const auto bytes = TokenizerJson::from_json(
      file(v, R"(["a b"])", "", R"(, "unk_token": "<unk>", "byte_fallback": true)"));
  CHECK(ids(bytes,
            "\xC3\xA9"
            "ab\xC3\xBC") == Ids{4, 5, 3, 0});
  CHECK(spans(bytes, "\xC3\xA9") == Spans{{0, 2}, {0, 2}});
  // ignore_merges: a pre-token in the vocabulary is one token, whatever the merges say.
  const Strings w{"a", "b", "c", "abc", "bc"};
  CHECK(ids(TokenizerJson::from_json(file(w, R"(["b c"])")), "abc") == Ids{0, 4});
  CHECK(ids(TokenizerJson::from_json(file(w, R"(["b c"])", "", R"(, "ignore_merges": true)")),
            "abc") == Ids{3});
}

TEST_CASE("tokenizer.json normalizers: Prepend, Replace, Lowercase, Sequence", "[tokenizer_json]") {
  // Llama 2's: "▁" before the text and for each space.
  const std::string llama2 =
      R"(, "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
         {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})";
  const auto t = pieces_tokenizer({"▁", "a", "b", "▁a▁b"}, llama2);
  CHECK(ids(t, "a b") == Ids{3});
  CHECK(spans(t, "a b") == Spans{{0, 3}});
  CHECK(ids(t, "") == Ids{});
  const auto lower = pieces_tokenizer({"straße", "x"}, R"(, "normalizer": {"type": "Lowercase"})");
  CHECK(ids(lower, "STRAßE") == Ids{0});
}

TEST_CASE("tokenizer.json NFC: decomposition, ordering, composition, Hangul", "[tokenizer_json]") {
  using attnlens::detail::NfcChar;
  const auto run = [](std::vector<char32_t> in) {
    std::vector<NfcChar> chars;
    for (std::size_t i = 0; i < in.size(); ++i)
      chars.push_back({in[i], static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + 1)});
    attnlens::detail::nfc(chars);
    std::vector<char32_t> out;
    for (const NfcChar& c : chars)
      out.push_back(c.cp);
    return std::make_pair(out, chars);
  };
  CHECK(run({U'e', 0x301}).first == std::vector<char32_t>{0xE9});
  // Dot below (class 220) goes before the circumflex (230), then both compose: ậ.
  const auto [composed, chars] = run({U'a', 0x302, 0x323, U'x'});
  CHECK(composed == std::vector<char32_t>{0x1EAD, U'x'});
  CHECK(chars[0].begin == 0);
  CHECK(chars[0].end == 3);
  CHECK(run({0x1100, 0x1161, 0x11A8}).first == std::vector<char32_t>{0xAC01});  // 각
  CHECK(run({0xAC01}).first == std::vector<char32_t>{0xAC01});
  // A singleton (Ω OHM SIGN -> Ω) and a composition exclusion (U+0958 stays decomposed).
  CHECK(run({0x2126}).first == std::vector<char32_t>{0x3A9});
  CHECK(run({0x958}).first == std::vector<char32_t>{0x915, 0x93C});
  // A mark with no starter before it; a mark blocked by one of its class (U+0346, 230) and
  // one that is not blocked by a lower class (U+0316, 220).
  CHECK(run({0x301, U'a'}).first == std::vector<char32_t>{0x301, U'a'});
  CHECK(run({U'a', 0x346, 0x301}).first == std::vector<char32_t>{U'a', 0x346, 0x301});
  CHECK(run({U'a', 0x316, 0x301}).first == std::vector<char32_t>{0xE1, 0x316});

  const auto t = pieces_tokenizer({"\xC3\xA9", "e"}, R"(, "normalizer": {"type": "NFC"})");
  CHECK(ids(t, "e\xCC\x81") == Ids{0});
  CHECK(spans(t, "e\xCC\x81") == Spans{{0, 3}});
}

TEST_CASE("tokenizer.json pre-tokenizers: Llama 3's and Qwen 2's Split regexes",
          "[tokenizer_json]") {
  const auto split = [](const std::string& regex) {
    std::string pattern;
    attnlens::detail::append_json_string(pattern, regex);
    return R"(, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": )" + pattern +
           R"(}, "behavior": "Isolated", "invert": false})";
  };
  const Strings patterns = attnlens::known_split_patterns();
  REQUIRE(patterns.size() == 3);
  const Strings pieces{"I", "'M", " ", " fine", "\n\n", "123", "456", "\tabc", "!?\n", "  ", "x",
                       "1", "2",  "3", "4",     "5",    "6",   "'s",  " ?",    "'",    "S",  "'S"};
  const auto llama3 = pieces_tokenizer(pieces, split(patterns[1]));
  CHECK(ids(llama3, "I'M  fine\n\n 123456") == Ids{0, 1, 2, 3, 4, 2, 5, 6});
  CHECK(ids(llama3, "\tabc!?\n   x") == Ids{7, 8, 9, 2, 10});
  const auto qwen2 = pieces_tokenizer(pieces, split(patterns[2]));
  CHECK(ids(qwen2, "123456") == Ids{11, 12, 13, 14, 15, 16});
  // GPT-2's: contractions are case-sensitive, a space leads a run of punctuation.
  const auto gpt2 = pieces_tokenizer(pieces, split(patterns[0]));
  CHECK(ids(gpt2, "'s ?") == Ids{17, 18});
  CHECK(ids(gpt2, "'S") == Ids{19, 20});
  CHECK(ids(llama3, "'S") == Ids{21});
}

TEST_CASE("tokenizer.json pre-tokenizers: ByteLevel, Metaspace, string Split, Sequence",
          "[tokenizer_json]") {
  const auto byte_level = pieces_tokenizer(
      {"\xC4\xA0hi", "\xC4\xA0there"},
      R"(, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true, "use_regex": true})");
  CHECK(ids(byte_level, "hi there") == Ids{0, 1});  // "Ġhi", "Ġthere"
  CHECK(spans(byte_level, "hi there") == Spans{{0, 2}, {2, 8}});
  const std::string metaspace =
      R"(, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
         "split": true}, "added_tokens": [{"id": 3, "content": "<s>", "special": true}])";
  const auto meta = pieces_tokenizer({"▁hi", "▁there", "hi", "<s>"}, metaspace);
  CHECK(ids(meta, "hi there") == Ids{0, 1});
  CHECK(ids(meta, "<s>hi there") == Ids{3, 2, 1});  // "first": only the first section
  const std::string removed =
      R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern":
         {"String": "-"}, "behavior": "Removed"}, {"type": "Split", "pattern": {"String": "+"},
         "behavior": "MergedWithNext"}]})";
  const auto seq = pieces_tokenizer({"ab", "+cd", "ef+", "+"}, removed);
  CHECK(ids(seq, "ab-+cd--") == Ids{0, 1});
  const auto previous = pieces_tokenizer(
      {"ab", "+cd", "ef+", "+"},
      R"(, "pre_tokenizer": {"type": "Split", "pattern": {"String": "+"}, "behavior": "MergedWithPrevious"})");
  CHECK(ids(previous, "ef+") == Ids{2});
  // Digits (SmolLM2's, before its ByteLevel): every number apart from the text around it, each
  // digit alone or each run; any \p{N} counts (an Arabic-Indic digit, a superscript).
  const std::string digits = R"(, "pre_tokenizer": {"type": "Digits", "individual_digits": )";
  const Strings pieces = {"ab", "1", "2", "12", "\xD9\xA3", "\xC2\xB2", "cd"};
  const auto each = pieces_tokenizer(pieces, digits + "true}");
  CHECK(ids(each, "ab12cd") == Ids{0, 1, 2, 6});
  CHECK(spans(each, "ab12cd") == Spans{{0, 2}, {2, 3}, {3, 4}, {4, 6}});
  CHECK(ids(each, "\xD9\xA3\xC2\xB2") == Ids{4, 5});
  const auto runs = pieces_tokenizer(pieces, digits + "false}");
  CHECK(ids(runs, "ab12cd") == Ids{0, 3, 6});
}

TEST_CASE("tokenizer.json added tokens: longest first, strip, single_word, normalized",
          "[tokenizer_json]") {
  const std::string added = R"(, "normalizer": {"type": "Lowercase"}, "added_tokens": [
      {"id": 0, "content": "<a>", "special": true},
      {"id": 1, "content": "<a><b>", "special": true},
      {"id": 2, "content": "<m>", "special": true, "lstrip": true, "rstrip": true},
      {"id": 3, "content": "w", "special": false, "single_word": true, "normalized": false},
      {"id": 4, "content": "HELLO", "special": false, "normalized": true}])";
  const auto t =
      pieces_tokenizer({"<a>", "<a><b>", "<m>", "w", "hello", "x", " ", "xw", " x"}, added);
  CHECK(ids(t, "x<a><b>x<a>") == Ids{5, 1, 5, 0});
  CHECK(spans(t, "x<a><b>x<a>") == Spans{{0, 1}, {1, 7}, {7, 8}, {8, 11}});
  CHECK(ids(t, "x  <m>  x") == Ids{5, 2, 5});
  // The stripped white space is the token's: its offsets cover it.
  CHECK(spans(t, "x  <m>  x") == Spans{{0, 1}, {1, 8}, {8, 9}});
  CHECK(ids(t, "xw") == Ids{7});         // inside a word: not the added token
  CHECK(ids(t, "x w") == Ids{5, 6, 3});  // between non-word characters: it is
  CHECK(ids(t, "HeLLo") == Ids{4});      // matched after the normalizer
  const auto long_text = std::string(1 << 20, '<') + "<a>";
  CHECK(ids(t, long_text).back() == 0);
}

TEST_CASE("tokenizer.json post-processors and tokenizer_config.json", "[tokenizer_json]") {
  const std::string templ = R"(, "post_processor": {"type": "Sequence", "processors": [
      {"type": "ByteLevel", "trim_offsets": false},
      {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
       "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                          "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}}]},
      "added_tokens": [{"id": 0, "content": "<s>", "special": true},
                       {"id": 1, "content": "</s>", "special": true}])";
  auto t = pieces_tokenizer({"<s>", "</s>", "a"}, templ);
  const auto tokens = t.encode("a");
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[0].id == 0);
  CHECK(tokens[0].special);
  CHECK(tokens[1].id == 2);
  CHECK(tokens[2].begin == 1);
  CHECK(tokens[2].end == 1);
  CHECK(ids(t, "a", false) == Ids{2});

  const auto config = attnlens::read_tokenizer_config(
      R"({"add_bos_token": false, "add_eos_token": true, "bos_token": "<s>",
          "eos_token": {"content": "</s>", "special": true}, "other": [1]})",
      "tokenizer_config.json");
  const TokenizerJson before = t;
  t.apply_config(config, "tokenizer_config.json");
  CHECK(ids(t, "a") == Ids{2, 1});
  // A copy made before keeps its own template: copies share the file's tables only.
  CHECK(ids(before, "a") == Ids{0, 2, 1});
  require_error(
      [&] {
        t.apply_config({true, {}, "", ""}, "tokenizer_config.json");
      },
      ErrorCode::BAD_FILE, {"tokenizer_config.json", "bos_token"});
  require_error(
      [&] { attnlens::read_tokenizer_config(R"({"add_bos_token": 1})", "tokenizer_config.json"); },
      ErrorCode::BAD_FILE, {"tokenizer_config.json", "add_bos_token"});
}

TEST_CASE("tokenizer.json decoders", "[tokenizer_json]") {
  const auto byte_level = TokenizerJson::from_json(
      file({"\xC4\xA0hi", "\xC3\x83", "\xC2\xA9", "\xC3\x83\xC2\xA9"}, "[]",
           R"(, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true},
         "decoder": {"type": "ByteLevel"})",
           R"(, "ignore_merges": true)"));
  CHECK(byte_level.decode({0, 1, 2}) == " hi\xC3\xA9");
  CHECK(byte_level.decode({1}) == "\xEF\xBF\xBD");  // a lone lead byte
  require_error([&] { byte_level.decode({4}); }, ErrorCode::BAD_ARGUMENT, {"ids[0]", "4"});

  // Llama 2's decoders.
  const auto llama2 = TokenizerJson::from_json(
      file({"<unk>", "<s>", "\xE2\x96\x81hi", "<0xC3>", "<0xA9>", "\xE2\x96\x81"}, "[]",
           R"(, "decoder": {"type": "Sequence", "decoders": [
           {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
           {"type": "ByteFallback"}, {"type": "Fuse"},
           {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
         "added_tokens": [{"id": 1, "content": "<s>", "special": true}])"));
  CHECK(llama2.decode({1, 2, 5, 3, 4}) == "<s> hi \xC3\xA9");
  CHECK(llama2.decode({1, 2, 5, 3, 4}, true) == "hi \xC3\xA9");
  CHECK(llama2.decode({3}) == "\xEF\xBF\xBD");

  const auto meta = TokenizerJson::from_json(file(
      {"\xE2\x96\x81hi", "\xE2\x96\x81there"}, "[]",
      R"(, "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"})"));
  CHECK(meta.decode({0, 1}) == "hi there");
  const auto none = TokenizerJson::from_json(file({"a", "b"}, "[]"));
  CHECK(none.decode({0, 1}) == "a b");
}

TEST_CASE("tokenizer.json errors name the file and the field", "[tokenizer_json]") {
  const Strings v{"a", "b", "ab"};
  const auto load = [&](const std::string& text) {
    return TokenizerJson::from_json(text, "my/tokenizer.json");
  };
  require_error([&] { load(R"({"model": {"type": "BPE", "vocab": {"a": 0)"); }, ErrorCode::BAD_FILE,
                {"my/tokenizer.json"});
  require_error([&] { load("[]"); }, ErrorCode::BAD_FILE, {"my/tokenizer.json", "an object"});
  require_error([&] { load(R"({"model": {"type": "Unigram", "vocab": []}})"); },
                ErrorCode::BAD_FILE, {"my/tokenizer.json", "model", "\"Unigram\""});
  require_error([&] { load(file(v, R"(["a c"])")); }, ErrorCode::BAD_FILE,
                {"my/tokenizer.json", "merges", "merge 0", "\"c\"", "not in the vocab"});
  require_error([&] { load(file(v, R"(["b a"])")); }, ErrorCode::BAD_FILE,
                {"merge 0", "\"ba\"", "not in the vocab"});
  require_error([&] { load(file(v, R"(["a  b"])")); }, ErrorCode::BAD_FILE,
                {"merge 0", "one space"});
  require_error([&] { load(file(v, R"([["a"]])")); }, ErrorCode::BAD_FILE, {"merge 0"});
  require_error([&] { load(file(v, "[]", "", R"(, "unk_token": "<unk>")")); }, ErrorCode::BAD_FILE,
                {"unk_token", "<unk>"});
  require_error(
      [&] { load(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})"); },
      ErrorCode::BAD_FILE, {"id 0", "two tokens"});
  require_error([&] { load(file(v, "[]", R"(, "normalizer": {"type": "NFKC"})")); },
                ErrorCode::BAD_FILE,
                {"my/tokenizer.json", "normalizer", "unsupported normalizer \"NFKC\""});
  require_error(
      [&] {
        load(file(v, "[]",
                  R"(, "normalizer": {"type": "Sequence", "normalizers": [{"type": "Replace",
                     "pattern": {"Regex": "\\s+"}, "content": " "}]})"));
      },
      ErrorCode::BAD_FILE, {"normalizers[0]", "Regex"});
  require_error([&] { load(file(v, "[]", R"(, "pre_tokenizer": {"type": "Whitespace"})")); },
                ErrorCode::BAD_FILE, {"pre_tokenizer", "unsupported pre-tokenizer \"Whitespace\""});
  require_error(
      [&] {
        load(file(v, "[]",
                  R"(, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split",
                     "pattern": {"Regex": "\\w+|[^\\w\\s]+"}, "behavior": "Isolated"}]})"));
      },
      ErrorCode::BAD_FILE, {"pretokenizers[0]", "Split pattern \"\\w+|[^\\w\\s]+\"", "not one"});
  require_error([&] { load(file(v, "[]", R"(, "post_processor": {"type": "BertProcessing"})")); },
                ErrorCode::BAD_FILE, {"post_processor", "\"BertProcessing\""});
  require_error(
      [&] {
        load(file(v, "[]",
                  R"(, "post_processor": {"type": "TemplateProcessing", "single": [
                     {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A"}}],
                     "special_tokens": {}})"));
      },
      ErrorCode::BAD_FILE, {"single[0]", "\"<s>\"", "special_tokens"});
  require_error([&] { load(file(v, "[]", R"(, "decoder": {"type": "CTC"})")); },
                ErrorCode::BAD_FILE, {"decoder", "unsupported decoder \"CTC\""});
  require_error([&] { load(file(v, "[]", R"(, "added_tokens": [{"id": 9, "content": "<x>"}])")); },
                ErrorCode::BAD_FILE, {"added_tokens[0]", "\"id\""});
  require_error([&] { load(file(v, "[]", "", R"(, "dropout": 0.1)")); }, ErrorCode::BAD_FILE,
                {"dropout"});

  const auto t = load(file(v, R"(["a b"])"));
  require_error([&] { t.encode("a\xC3"); }, ErrorCode::INVALID_UTF8, {"offset 1"});
}

TEST_CASE("tokenizer.json added tokens that reuse a vocabulary id, and their length",
          "[tokenizer_json]") {
  // A fine-tuned model gives a reserved id another text. The vocabulary keeps its own text for
  // the model (merges still reach "ab", longer than a short-string buffer or not), the added
  // token matches its new text, and decode() writes the new one.
  const std::string longer = "abcdefghijklmnopqrstuvwxyz";
  const auto t = TokenizerJson::from_json(file(
      {"a", "b", "ab", longer}, R"(["a b"])",
      R"(, "added_tokens": [{"id": 2, "content": "<|reused, and longer than the old text|>", "special": true},
                          {"id": 3, "content": "<|also reused|>", "special": true}])"));
  CHECK(ids(t, "ab") == Ids{2});
  CHECK(ids(t, "<|reused, and longer than the old text|>") == Ids{2});
  CHECK(t.decode({3}) == "<|also reused|>");
  // Reused ids add no token: the size is the largest id + 1 (Gemma 3's file names 6 415 added
  // tokens, all but one in its vocabulary of 262 144: its size is 262 145, the embedding rows a
  // model needs), and a new id past the vocabulary counts once.
  CHECK(t.vocab_size() == 4);
  const auto grown = TokenizerJson::from_json(
      file({"a", "b"}, "[]",
           R"(, "added_tokens": [{"id": 1, "content": "<b>"}, {"id": 2, "content": "<new>"}])"));
  CHECK(grown.vocab_size() == 3);
  CHECK(grown.decode({2}) == "<new>");
  CHECK(grown.embedded_size() == 3);  // a token a text may become: its model needs its row
  // A special token past the vocabulary that only a text naming it produces needs no row (Gemma
  // 3's <image_soft_token>); one the template adds to every text does.
  const auto image = TokenizerJson::from_json(file(
      {"a", "b"}, "[]", R"(, "added_tokens": [{"id": 2, "content": "<img>", "special": true}])"));
  CHECK(image.vocab_size() == 3);
  CHECK(image.embedded_size() == 2);
  CHECK(ids(image, "a<img>") == Ids{0, 2});
  const auto bos = TokenizerJson::from_json(
      file({"a", "b"}, "[]",
           R"(, "added_tokens": [{"id": 2, "content": "<s>", "special": true}],
          "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [2], "tokens": ["<s>"]}}})"));
  CHECK(bos.embedded_size() == 3);
  const auto merges = TokenizerJson::from_json(
      file({"a", "b", longer}, "[]",
           R"(, "added_tokens": [{"id": 2, "content": "<x>", "special": true}])",
           R"(, "ignore_merges": true)"));
  CHECK(ids(merges, longer) == Ids{2});
  // An added token longer than 256 bytes is refused, naming it: matching stays linear.
  require_error(
      [&] {
        TokenizerJson::from_json(file(
            {"a"}, "[]",
            R"(, "added_tokens": [{"id": 0, "content": ")" + std::string(257, 'a') + R"("}])"));
      },
      ErrorCode::BAD_FILE, {"added_tokens[0]", "257 bytes", "at most 256"});
}
