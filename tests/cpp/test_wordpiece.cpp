// BERT's WordPiece tokenizer: google-research/bert's tokenization_test.py cases, offsets into the
// original text, [CLS]/[SEP] encodings, bad files, the generated Unicode tables. The comparison
// with Hugging Face's tokenizers.js over generated texts is tests/js/wordpiece-parity.test.mjs.
#include "helpers.hpp"

#include <attnlens/wordpiece.hpp>

#include "../../lib/src/text/unicode_wordpiece_tables.hpp"

#include <chrono>
#include <string>
#include <vector>

using attnlens::ErrorCode;
using attnlens::WordPieceEncoding;
using attnlens::WordPieceOptions;
using attnlens::WordPieceToken;
using attnlens::WordPieceTokenizer;
using testing::require_error;

namespace {

using Strings = std::vector<std::string>;

std::string vocab_txt(const Strings& tokens) {
  std::string out;
  for (const std::string& t : tokens)
    out += t + "\n";
  return out;
}

// google-research/bert's toy vocabulary (tokenization_test.py) and two more words.
const Strings kToyVocab = {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed",  "wa",
                           "un",    "runn",  "##ing", ",",    "low",    "lowest"};

WordPieceTokenizer toy(const WordPieceOptions& options = {}) {
  return WordPieceTokenizer::from_vocab_txt(vocab_txt(kToyVocab), options);
}

// A tokenizer whose vocabulary holds `words` whole: its pieces show the words BERT's basic
// tokenizer (normalization and pre-tokenization) made.
WordPieceTokenizer words(const Strings& extra, const WordPieceOptions& options = {}) {
  Strings vocab = {"[UNK]", "[CLS]", "[SEP]"};
  vocab.insert(vocab.end(), extra.begin(), extra.end());
  return WordPieceTokenizer::from_vocab_txt(vocab_txt(vocab), options);
}

Strings token_strings(const WordPieceTokenizer& t, std::string_view text) {
  Strings out;
  for (const WordPieceToken& tok : t.tokens(text))
    out.push_back(t.id_to_token(tok.id));
  return out;
}

// Each token as "<token>=<the original bytes it covers>", e.g. "##ed=éd".
Strings token_spans(const WordPieceTokenizer& t, std::string_view text) {
  Strings out;
  for (const WordPieceToken& tok : t.tokens(text)) {
    REQUIRE(tok.begin <= tok.end);
    REQUIRE(tok.end <= text.size());
    out.push_back(t.id_to_token(tok.id) + "=" +
                  std::string(text.substr(tok.begin, tok.end - tok.begin)));
  }
  return out;
}

// Tokens come in text order, cover at least one byte each and do not overlap.
void check_ordered(const WordPieceTokenizer& t, std::string_view text) {
  INFO("text: " << text);
  std::size_t end = 0;
  for (const WordPieceToken& tok : t.tokens(text)) {
    CHECK(tok.begin >= end);
    CHECK(tok.end > tok.begin);
    end = tok.end;
  }
  CHECK(end <= text.size());
}

std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

WordPieceOptions cased() {
  WordPieceOptions o;
  o.lower_case = false;
  return o;
}

}  // namespace

TEST_CASE("WordPiece: google-research/bert's tokenization_test.py cases", "[wordpiece]") {
  // test_full_tokenizer: lower case, accents stripped, punctuation split, pieces.
  const WordPieceTokenizer t = toy();
  CHECK(token_strings(t,
                      "UNwant\xC3\xA9"
                      "d,running") == Strings{"un", "##want", "##ed", ",", "runn", "##ing"});
  std::vector<std::int32_t> ids;
  for (const WordPieceToken& tok : t.tokens("UNwant\xC3\xA9"
                                            "d,running"))
    ids.push_back(tok.id);
  CHECK(ids == std::vector<std::int32_t>{7, 4, 5, 10, 8, 9});

  // test_chinese: each CJK ideograph is a word.
  const WordPieceTokenizer chinese = words({"ah", "\xE5\x8D\x9A", "\xE6\x8E\xA8", "zz"});
  CHECK(token_strings(chinese, "ah\xE5\x8D\x9A\xE6\x8E\xA8zz") ==
        Strings{"ah", "\xE5\x8D\x9A", "\xE6\x8E\xA8", "zz"});

  // test_basic_tokenizer_lower and _no_lower.
  const Strings basic = {"hello", "!", "how", "are", "you", "?", "HeLLo", "Are", "yoU"};
  CHECK(token_strings(words(basic), " \tHeLLo!how  \n Are yoU?  ") ==
        Strings{"hello", "!", "how", "are", "you", "?"});
  CHECK(token_strings(words(basic), "H\xC3\xA9llo") == Strings{"hello"});
  CHECK(token_strings(words(basic, cased()), " \tHeLLo!how  \n Are yoU?  ") ==
        Strings{"HeLLo", "!", "how", "Are", "yoU", "?"});

  // Accents: kept when strip_accents is false (lower case or not), stripped when true.
  WordPieceOptions keep = {};
  keep.strip_accents = false;
  const Strings accents = {"h\xC3\xA4llo", "hallo", "H\xC3\xA4llo"};
  CHECK(token_strings(words(accents, keep), "h\xC3\xA4llo") == Strings{"h\xC3\xA4llo"});
  CHECK(token_strings(words(accents, keep), "H\xC3\x84LLO") == Strings{"h\xC3\xA4llo"});
  CHECK(token_strings(words(accents), "H\xC3\x84LLO") == Strings{"hallo"});
  CHECK(token_strings(words(accents, cased()), "H\xC3\xA4llo") == Strings{"H\xC3\xA4llo"});
  WordPieceOptions cased_stripped = cased();
  cased_stripped.strip_accents = true;
  CHECK(token_strings(words({"Hallo"}, cased_stripped), "H\xC3\xA4llo") == Strings{"Hallo"});

  // test_wordpiece_tokenizer.
  CHECK(token_strings(t, "").empty());
  CHECK(token_strings(t, "   ").empty());
  CHECK(token_strings(t, "unwanted running") == Strings{"un", "##want", "##ed", "runn", "##ing"});
  CHECK(token_strings(t, "unwantedX running") == Strings{"[UNK]", "runn", "##ing"});
  // Longest match first: "lowest" whole, not "low" "##est"; "unaffable" as its docstring says.
  const WordPieceTokenizer longest =
      words({"low", "lowest", "##est", "un", "##aff", "##able", "##a", "##ff"});
  CHECK(token_strings(longest, "lowest") == Strings{"lowest"});
  CHECK(token_strings(longest, "unaffable") == Strings{"un", "##aff", "##able"});
  CHECK(token_strings(longest, "lowaff") == Strings{"low", "##aff"});
  CHECK(token_strings(longest, "unaffablex") == Strings{"[UNK]"});

  // A word of more than max_input_chars_per_word (100) code points is one [UNK].
  const WordPieceTokenizer as = words({"a", "##a", "\xC3\xA9", "##\xC3\xA9"});
  CHECK(token_strings(as, std::string(100, 'a')).size() == 100);
  CHECK(token_strings(as, std::string(101, 'a')) == Strings{"[UNK]"});
  std::string accented;  // 100 code points of 2 bytes: the limit counts code points
  for (int i = 0; i < 100; ++i)
    accented += "\xC3\xA9";
  CHECK(token_strings(words({"\xC3\xA9", "##\xC3\xA9"}, keep), accented).size() == 100);
  WordPieceOptions short_words;
  short_words.max_input_chars_per_word = 3;
  CHECK(token_strings(words({"a", "##a"}, short_words), "aaa aaaa") ==
        Strings{"a", "##a", "##a", "[UNK]"});
  // With 0 every word is over the limit, a punctuation character too (Hugging Face's
  // WordPiece compares each pre-tokenized word's length, "." included).
  WordPieceOptions none;
  none.max_input_chars_per_word = 0;
  CHECK(token_strings(words({"a", "."}, none), "a. a") == Strings{"[UNK]", "[UNK]", "[UNK]"});
  // With 1 a punctuation character fits, a two-letter word does not.
  WordPieceOptions one;
  one.max_input_chars_per_word = 1;
  CHECK(token_strings(words({"a", ".", "##a"}, one), "a. aa") == Strings{"a", ".", "[UNK]"});
}

TEST_CASE("WordPiece: white space, controls and punctuation", "[wordpiece]") {
  // _is_whitespace: space, \t, \r, \n, U+00A0 separate words; "A" and "-" do not.
  const WordPieceTokenizer t = words({"a", "b", "-", "$", "`", ".", "ab",
                                      "a\x05"
                                      "b"});
  CHECK(token_strings(t,
                      "a b\ta\rb\na\xC2\xA0"
                      "b") == Strings{"a", "b", "a", "b", "a", "b"});
  // U+2028 (line separator), U+3000 (ideographic space) are white space too.
  CHECK(token_strings(t,
                      "a\xE2\x80\xA8"
                      "b\xE3\x80\x80"
                      "a") == Strings{"a", "b", "a"});
  // _is_control: U+0005 is dropped (the word closes up), as are U+0000, U+FFFD, U+200B (Cf),
  // the BOM and soft hyphen (Cf).
  CHECK(token_strings(t,
                      "a\x05"
                      "b") == Strings{"ab"});
  CHECK(token_strings(t, std::string("a\0b", 3)) == Strings{"ab"});
  CHECK(token_strings(t,
                      "a\xEF\xBF\xBD"
                      "b a\xE2\x80\x8B"
                      "b \xEF\xBB\xBF"
                      "ab a\xC2\xAD"
                      "b") == Strings{"ab", "ab", "ab", "ab"});
  // Controls that are white space (U+000B, U+000C, U+0085) are dropped: the word closes up.
  CHECK(token_strings(t,
                      "a\x0B"
                      "b a\x0C"
                      "b a\xC2\x85"
                      "b") == Strings{"ab", "ab", "ab"});
  // _is_punctuation: "-", "$", "`", "." each a word (ASCII symbols count as punctuation).
  CHECK(token_strings(t, "a-b$a`b.a") == Strings{"a", "-", "b", "$", "a", "`", "b", ".", "a"});
  // Unicode punctuation of several blocks: « » (Pi, Pf), ¿ (Po), – (Pd), 「 」 (Ps, Pe), ‿ (Pc).
  const WordPieceTokenizer punct = words({"a", "\xC2\xAB", "\xC2\xBB", "\xC2\xBF", "\xE2\x80\x93",
                                          "\xE3\x80\x8C", "\xE3\x80\x8D", "\xE2\x80\xBF"});
  CHECK(token_strings(punct,
                      "\xC2\xAB"
                      "a\xC2\xBB\xC2\xBF"
                      "a\xE2\x80\x93"
                      "a\xE3\x80\x8C"
                      "a\xE3\x80\x8D\xE2\x80\xBF"
                      "a") == Strings{"\xC2\xAB", "a", "\xC2\xBB", "\xC2\xBF", "a", "\xE2\x80\x93",
                                      "a", "\xE3\x80\x8C", "a", "\xE3\x80\x8D", "\xE2\x80\xBF",
                                      "a"});
  // Symbols outside ASCII are not punctuation: € (Sc) and an emoji stay in the word.
  CHECK(token_strings(words({"a\xE2\x82\xAC\xF0\x9F\x98\x80"}), "a\xE2\x82\xAC\xF0\x9F\x98\x80") ==
        Strings{"a\xE2\x82\xAC\xF0\x9F\x98\x80"});

  // clean_text = false: controls stay in words; white space (U+000B too) still separates.
  WordPieceOptions raw;
  raw.clean_text = false;
  const WordPieceTokenizer r = words({"a", "b",
                                      "a\x05"
                                      "b"},
                                     raw);
  CHECK(token_strings(r,
                      "a\x05"
                      "b a\x0B"
                      "b") == Strings{"a\x05"
                                      "b",
                                      "a", "b"});
  // tokenize_chinese_chars = false: ideographs stay in their word.
  WordPieceOptions no_cjk;
  no_cjk.tokenize_chinese_chars = false;
  CHECK(token_strings(words({"ah\xE5\x8D\x9A"}, no_cjk), "ah\xE5\x8D\x9A") ==
        Strings{"ah\xE5\x8D\x9A"});
  // Every CJK range BERT lists, first and last code point; not Hiragana or Hangul.
  for (char32_t cp : {0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0x20000, 0x2A6DF, 0x2A700, 0x2B73F, 0x2B740,
                      0x2B81F, 0x2B820, 0x2CEAF, 0xF900, 0xFAFF, 0x2F800, 0x2FA1F}) {
    INFO("U+" << std::hex << static_cast<std::uint32_t>(cp));
    WordPieceOptions plain;
    plain.strip_accents = false;  // F900.. and 2F800.. decompose under NFD
    const std::string c = utf8(cp);
    CHECK(token_strings(words({"a", c}, plain), "a" + c + "a") == Strings{"a", c, "a"});
  }
  CHECK(token_strings(words({"a\xE3\x81\x82"
                             "a"}),
                      "a\xE3\x81\x82"
                      "a") == Strings{"a\xE3\x81\x82"
                                      "a"});  // あ
}

TEST_CASE("WordPiece: lower case and accent stripping of one code point", "[wordpiece]") {
  // İ lower-cases to "i" + U+0307; stripping drops the dot. Without stripping both remain.
  CHECK(token_strings(words({"istanbul"}), "\xC4\xB0STANBUL") == Strings{"istanbul"});
  WordPieceOptions keep;
  keep.strip_accents = false;
  CHECK(token_strings(words({"i\xCC\x87stanbul"}, keep), "\xC4\xB0stanbul") ==
        Strings{"i\xCC\x87stanbul"});
  // Final sigma: per code point, as Hugging Face's tokenizers (σ, not ς).
  CHECK(token_strings(words({"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83"}),
                      "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3") ==
        Strings{"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83"});
  // NFD: Hangul syllables become jamo; a compatibility ideograph its unified one; Greek varia
  // (U+1FEF) a grave accent, which is then punctuation; ﬁ (compatibility only) stays.
  CHECK(token_strings(words({"\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"}), "\xED\x95\x9C") ==
        Strings{"\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"});
  CHECK(token_strings(words({"\xE8\xB1\x88"}), "\xEF\xA4\x80") == Strings{"\xE8\xB1\x88"});
  CHECK(token_strings(words({"a", "`"}),
                      "a\xE1\xBF\xAF"
                      "a") == Strings{"a", "`", "a"});
  CHECK(token_strings(words({"\xEF\xAC\x81"}), "\xEF\xAC\x81") == Strings{"\xEF\xAC\x81"});
  // A word of only marks vanishes.
  CHECK(token_strings(words({"a"}), "a \xCC\x81\xCC\x80 a") == Strings{"a", "a"});
  // Canonical ordering survives the marks' removal: musical symbol combining flag (class 226)
  // before combining stem (216) is reordered, unless a starter (here U+0941, a nonspacing mark
  // of class 0, dropped) stands between them.
  const std::string stem = "\xF0\x9D\x85\xA5", flag = "\xF0\x9D\x85\xAD";
  const WordPieceTokenizer music = words({"x", "##" + stem + flag, "##" + flag + stem});
  CHECK(token_spans(music, "x" + flag + stem) ==
        Strings{"x=x", "##" + stem + flag + "=" + flag + stem});
  CHECK(token_strings(music, "x" + flag + "\xE0\xA5\x81" + stem) ==
        Strings{"x", "##" + flag + stem});
  CHECK(token_strings(music, "x" + flag + "\xCC\x81" + stem) == Strings{"x", "##" + stem + flag});

  using attnlens::detail::BertClass;
  const attnlens::detail::WordPieceTables& tables = attnlens::detail::wordpiece_tables();
  CHECK(tables.bert_class(0x05) == BertClass::Control);
  CHECK(tables.bert_class(0x200D) == BertClass::Control);  // ZWJ is Cf
  CHECK(tables.bert_class(0x0B) == BertClass::ControlSpace);
  CHECK(tables.bert_class('\t') == BertClass::Space);
  CHECK(tables.bert_class(0xA0) == BertClass::Space);
  CHECK(tables.bert_class(0x3000) == BertClass::Space);
  CHECK(tables.bert_class('A') == BertClass::Other);
  CHECK(tables.bert_class('-') == BertClass::Punctuation);
  CHECK(tables.bert_class('$') == BertClass::Punctuation);
  CHECK(tables.bert_class('`') == BertClass::Punctuation);
  CHECK(tables.bert_class(0x3002) == BertClass::Punctuation);  // 。
  CHECK(tables.bert_class(0x20AC) == BertClass::Other);        // €
  CHECK(tables.bert_class(0x301) == BertClass::Mark);
  CHECK(tables.bert_class(0x941) == BertClass::MarkStarter);
  CHECK(tables.bert_class(0xE000) == BertClass::Other);  // private use: kept (BERT's Cc/Cf)
  CHECK(tables.bert_class(0x110000) == BertClass::Other);
  char32_t lower[2] = {0, 0};
  CHECK((tables.lower(0xC9, lower) == 1 && lower[0] == 0xE9));        // É
  CHECK((tables.lower(0x3A3, lower) == 1 && lower[0] == 0x3C3));      // Σ
  CHECK((tables.lower(0x1E9E, lower) == 1 && lower[0] == 0xDF));      // ẞ
  CHECK((tables.lower(0x10400, lower) == 1 && lower[0] == 0x10428));  // Deseret
  CHECK((tables.lower(0x130, lower) == 2 && lower[0] == 'i' && lower[1] == 0x307));
  CHECK((tables.lower(0x3B1, lower) == 1 && lower[0] == 0x3B1));
  const attnlens::detail::StrippedChar e = tables.strip(0xE9);
  CHECK((e.count == 1 && e.cps[0] == 'e' && e.starter));
  const attnlens::detail::StrippedChar mark = tables.strip(0x301);
  CHECK((mark.count == 0 && !mark.starter));
  const attnlens::detail::StrippedChar quarter = tables.strip(0x1D15F);  // note head + stem
  CHECK((quarter.count == 2 && quarter.cps[0] == 0x1D158 && quarter.cps[1] == 0x1D165));
  CHECK(tables.reorder_rank(0x1D165) > tables.reorder_rank(0x1715));
  CHECK(tables.reorder_rank('a') == 0);
  CHECK(std::string(attnlens::wordpiece_unicode_version()).find('.') != std::string::npos);
}

TEST_CASE("WordPiece: offsets are bytes of the original text", "[wordpiece]") {
  const WordPieceTokenizer t = toy();
  CHECK(token_spans(t,
                    "UNwant\xC3\xA9"
                    "d,running") == Strings{"un=UN", "##want=want",
                                            "##ed=\xC3\xA9"
                                            "d",
                                            ",=,", "runn=runn", "##ing=ing"});
  CHECK(token_spans(t, "  unwantedX  Lowest") == Strings{"[UNK]=unwantedX", "lowest=Lowest"});
  // İ (2 bytes) lower-cases to "i̇" (3 bytes) and strips to "i": the piece covers İ.
  CHECK(token_spans(words({"i", "##stanbul"}), "\xC4\xB0stanbul") ==
        Strings{"i=\xC4\xB0", "##stanbul=stanbul"});
  // Without stripping, "i̇" is two code points of one original character: pieces cut between
  // them both cover it (the one overlap the header documents).
  WordPieceOptions keep;
  keep.strip_accents = false;
  CHECK(token_spans(words({"i", "##\xCC\x87"}, keep), "\xC4\xB0") ==
        Strings{"i=\xC4\xB0", "##\xCC\x87=\xC4\xB0"});
  // A Hangul syllable stripped to jamo: pieces cut inside it each cover the whole syllable.
  CHECK(token_spans(words({"\xE1\x84\x92", "##\xE1\x85\xA1", "##\xE1\x86\xAB\xE1\x84\x80"}),
                    "\xED\x95\x9C\xEA\xB0\x80") ==
        Strings{"\xE1\x84\x92=\xED\x95\x9C", "##\xE1\x85\xA1=\xED\x95\x9C",
                "##\xE1\x86\xAB\xE1\x84\x80=\xED\x95\x9C\xEA\xB0\x80",
                "##\xE1\x85\xA1=\xEA\xB0\x80"});
  // Accents: é (precomposed) and e + U+0301 (decomposed) both give "e"; a dropped mark of its
  // own belongs to no piece (as in Hugging Face's alignments).
  CHECK(token_spans(words({"cafe", "e"}), "Caf\xC3\xA9 e\xCC\x81") ==
        Strings{"cafe=Caf\xC3\xA9", "e=e"});
  // CJK, emoji with a skin tone, punctuation.
  CHECK(token_spans(words({"ah", "\xE5\x8D\x9A", "\xE6\x8E\xA8", "zz"}),
                    "ah\xE5\x8D\x9A\xE6\x8E\xA8zz") ==
        Strings{"ah=ah", "\xE5\x8D\x9A=\xE5\x8D\x9A", "\xE6\x8E\xA8=\xE6\x8E\xA8", "zz=zz"});
  const WordPieceTokenizer emoji = words(
      {"hi", "\xF0\x9F\x91\x8D", "##\xF0\x9F\x8F\xBD", "!", "\xC2\xAB", "\xC2\xBB", "quoted"});
  CHECK(token_spans(emoji, "Hi \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!") ==
        Strings{"hi=Hi", "\xF0\x9F\x91\x8D=\xF0\x9F\x91\x8D", "##\xF0\x9F\x8F\xBD=\xF0\x9F\x8F\xBD",
                "!=!"});
  CHECK(token_spans(emoji,
                    "\xC2\xAB"
                    "Quoted\xC2\xBB") ==
        Strings{"\xC2\xAB=\xC2\xAB", "quoted=Quoted", "\xC2\xBB=\xC2\xBB"});
  // A dropped control inside a word: the pieces around it skip its byte.
  CHECK(token_spans(words({"ab", "##cd"}),
                    "ab\x05"
                    "cd") == Strings{"ab=ab", "##cd=cd"});
  // Uppercase that lower-cases to more bytes: Ⱥ (2 bytes) -> ⱥ (3 bytes).
  CHECK(token_spans(words({"\xE2\xB1\xA5", "##x"}), "\xC8\xBAX") ==
        Strings{"\xE2\xB1\xA5=\xC8\xBA", "##x=X"});

  for (const char* text : {"UNwant\xC3\xA9"
                           "d,running",
                           " \tHeLLo!how  \n Are yoU?  ", "\xC4\xB0stanbul \xC3\x89T\xC3\x89",
                           "ah\xE5\x8D\x9A\xE6\x8E\xA8zz \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!?",
                           "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 a\xCC\x81\xCC\x80"}) {
    check_ordered(t, text);
    check_ordered(words({"a", "##a", "hello", "!", "i", "##stanbul"}), text);
  }
}

TEST_CASE("WordPiece: encode, encode_pair and decode", "[wordpiece]") {
  const WordPieceTokenizer t = toy();
  CHECK(t.vocab_size() == 13);
  CHECK((t.unk_id() == 0 && t.cls_id() == 1 && t.sep_id() == 2));
  CHECK((t.pad_id() == -1 && t.mask_id() == -1));
  CHECK(t.token_to_id("##ing") == 9);
  CHECK(t.token_to_id("##in") == -1);
  CHECK(t.token_to_id("") == -1);
  CHECK(t.id_to_token(8) == "runn");

  const WordPieceEncoding one = t.encode("unwanted running");
  CHECK(one.ids == std::vector<std::int32_t>{1, 7, 4, 5, 8, 9, 2});
  CHECK(one.token_types == std::vector<std::int32_t>(7, 0));
  CHECK(one.segments == std::vector<std::int32_t>(7, 0));
  REQUIRE(one.tokens.size() == 7);
  CHECK((one.tokens[0].begin == 0 && one.tokens[0].end == 0));
  CHECK((one.tokens[1].begin == 0 && one.tokens[1].end == 2));
  CHECK((one.tokens[6].begin == 16 && one.tokens[6].end == 16));

  const WordPieceEncoding pair = t.encode_pair("unwanted", "Running,");
  CHECK(pair.ids == std::vector<std::int32_t>{1, 7, 4, 5, 2, 8, 9, 10, 2});
  CHECK(pair.token_types == std::vector<std::int32_t>{0, 0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(pair.segments == std::vector<std::int32_t>{0, 0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(pair.tokens.size() == 9);
  CHECK((pair.tokens[4].begin == 8 && pair.tokens[4].end == 8));  // first [SEP]: end of a
  CHECK((pair.tokens[5].begin == 0 && pair.tokens[5].end == 4));  // "runn" in b
  CHECK((pair.tokens[7].begin == 7 && pair.tokens[7].end == 8));  // "," in b
  CHECK((pair.tokens[8].begin == 8 && pair.tokens[8].end == 8));
  const WordPieceEncoding empty = t.encode_pair("", "");
  CHECK(empty.ids == std::vector<std::int32_t>{1, 2, 2});
  CHECK(empty.token_types == std::vector<std::int32_t>{0, 0, 1});

  CHECK(t.decode(one.ids) == "[CLS] unwanted running [SEP]");
  CHECK(t.decode(pair.ids) == "[CLS] unwanted [SEP] running , [SEP]");
  CHECK(t.decode({}).empty());
  CHECK(t.decode({4, 7}) == "##want un");  // a first piece keeps its prefix
  const WordPieceTokenizer w = words({"the", "cat", "sat", "on", "mat", "."});
  for (const char* text : {"the cat sat on the mat", "the cat", "cat"}) {
    CHECK(w.decode(w.encode(text).ids) == std::string("[CLS] ") + text + " [SEP]");
  }
}

TEST_CASE("WordPiece: tokenizer.json and tokenizer_config.json", "[wordpiece]") {
  const std::string vocab =
      R"({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "@@lo": 6,)"
      R"( "Hel": 7, "H\u00e9llo": 8})";
  const auto json = [&](const std::string& normalizer, const std::string& post) {
    return R"({"version": "1.0", "added_tokens": [], "normalizer": )" + normalizer +
           R"(, "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": )" + post +
           R"(, "decoder": {"type": "WordPiece", "prefix": "@@", "cleanup": true},)"
           R"( "model": {"type": "WordPiece", "unk_token": "[UNK]",)"
           R"( "continuing_subword_prefix": "@@", "max_input_chars_per_word": 100, "vocab": )" +
           vocab + "}}";
  };
  const std::string bert_post =
      R"({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]})";
  const WordPieceTokenizer uncased = WordPieceTokenizer::from_tokenizer_json(
      json(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,)"
           R"( "strip_accents": null, "lowercase": true})",
           bert_post));
  CHECK(uncased.options().lower_case);
  CHECK(!uncased.options().strip_accents.has_value());
  CHECK(uncased.options().strips_accents());
  CHECK(uncased.options().continuing_prefix == "@@");
  CHECK((uncased.unk_id() == 1 && uncased.cls_id() == 2 && uncased.sep_id() == 3 &&
         uncased.pad_id() == 0 && uncased.mask_id() == 4));
  CHECK(uncased.encode("H\xC3\xA9LLO").ids == std::vector<std::int32_t>{2, 5, 3});
  CHECK(uncased.decode({7, 6}) == "Hello");  // "Hel" "@@lo"

  const std::string template_post =
      R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},)"
      R"( {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],)"
      R"( "pair": [], "special_tokens": {}})";
  const WordPieceTokenizer tcased = WordPieceTokenizer::from_tokenizer_json(
      json(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,)"
           R"( "strip_accents": false, "lowercase": false})",
           template_post));
  CHECK(!tcased.options().lower_case);
  CHECK(!tcased.options().strips_accents());
  CHECK(token_strings(tcased, "H\xC3\xA9llo Hello") == Strings{"H\xC3\xA9llo", "Hel", "@@lo"});
  // No normalizer: no cleaning, no lower case, no accent stripping.
  const WordPieceTokenizer none = WordPieceTokenizer::from_tokenizer_json(json("null", "null"));
  CHECK((!none.options().clean_text && !none.options().lower_case &&
         !none.options().strips_accents() && !none.options().tokenize_chinese_chars));

  bool said = true;
  const WordPieceOptions from_config = WordPieceTokenizer::options_from_tokenizer_config(
      R"({"do_lower_case": false, "strip_accents": null, "tokenize_chinese_chars": false,)"
      R"( "cls_token": {"__type": "AddedToken", "content": "<cls>"}, "sep_token": "<sep>",)"
      R"( "model_max_length": 512})",
      &said);
  CHECK(said);
  CHECK(!from_config.lower_case);
  CHECK(!from_config.strip_accents.has_value());
  CHECK(!from_config.tokenize_chinese_chars);
  CHECK((from_config.cls == "<cls>" && from_config.sep == "<sep>" && from_config.unk == "[UNK]"));
  const WordPieceOptions silent =
      WordPieceTokenizer::options_from_tokenizer_config(R"({"strip_accents": true})", &said);
  CHECK(!said);
  CHECK(silent.lower_case);  // BertTokenizer's default
  CHECK(silent.strip_accents == std::optional<bool>(true));
}

TEST_CASE("WordPiece: bad vocab.txt, tokenizer.json, tokenizer_config.json and text",
          "[wordpiece][errors]") {
  const auto load = [](const std::string& text) {
    return WordPieceTokenizer::from_vocab_txt(text);
  };
  // Line ends: "\n" or "\r\n", one final line end or none.
  CHECK(load("[UNK]\r\n[CLS]\r\n[SEP]\r\na").vocab_size() == 4);
  CHECK(load("[UNK]\n[CLS]\n[SEP]\n").vocab_size() == 3);
  require_error([&] { load("[UNK]\n[CLS]\n[SEP]\na\nb\na\n"); }, ErrorCode::BAD_FILE,
                {"vocab.txt: ", "line 6", "\"a\"", "line 4"});
  require_error([&] { load("[UNK]\n\n[CLS]\n[SEP]\n"); }, ErrorCode::BAD_FILE,
                {"vocab.txt: ", "line 2 is empty"});
  require_error([&] { load("[UNK]\n[CLS]\n[SEP]\n\n"); }, ErrorCode::BAD_FILE,
                {"vocab.txt: ", "line 4 is empty"});
  require_error([&] { load("[CLS]\n[SEP]\n"); }, ErrorCode::BAD_FILE, {"vocab.txt: ", "\"[UNK]\""});
  require_error([&] { load("[UNK]\n[SEP]\n"); }, ErrorCode::BAD_FILE, {"vocab.txt: ", "\"[CLS]\""});
  require_error([&] { load("[UNK]\n[CLS]\n"); }, ErrorCode::BAD_FILE, {"vocab.txt: ", "\"[SEP]\""});
  require_error([&] { load("[UNK]\n[CLS]\n[SEP]\nab\xFF\n"); }, ErrorCode::BAD_FILE,
                {"vocab.txt: ", "line 4", "UTF-8"});
  require_error([&] { WordPieceTokenizer::from_vocab_txt("a\na\n", {}, "bert/vocab.txt"); },
                ErrorCode::BAD_FILE, {"bert/vocab.txt: line 2"});
  WordPieceOptions bad;
  bad.max_input_chars_per_word = -1;
  require_error([&] { WordPieceTokenizer::from_vocab_txt(vocab_txt(kToyVocab), bad); },
                ErrorCode::BAD_ARGUMENT, {"max_input_chars_per_word is -1"});
  // Tokens longer than kMaxWordPieceTokenBytes: named, before anything is built.
  WordPieceOptions long_mask;
  long_mask.mask = std::string(attnlens::kMaxWordPieceTokenBytes + 1, 'M');
  require_error([&] { WordPieceTokenizer::from_vocab_txt(vocab_txt(kToyVocab), long_mask); },
                ErrorCode::BAD_ARGUMENT, {"the mask token is 257 bytes long", "up to 256"});
  require_error(
      [&] {
        WordPieceTokenizer::from_vocab_txt("[UNK]\n[CLS]\n[SEP]\n" + std::string(300, 'a') + "\n",
                                           {}, "v.txt");
      },
      ErrorCode::BAD_FILE, {"v.txt: ", "token 3 is 300 bytes long"});
  WordPieceOptions other_unk;
  other_unk.unk = "<unk>";
  require_error([&] { WordPieceTokenizer::from_vocab_txt(vocab_txt(kToyVocab), other_unk); },
                ErrorCode::BAD_FILE, {"\"<unk>\""});

  const auto json = [](const std::string& text) {
    return WordPieceTokenizer::from_tokenizer_json(text, "tok.json");
  };
  const std::string model =
      R"("model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}})";
  const std::string pre = R"("pre_tokenizer": {"type": "BertPreTokenizer"})";
  CHECK(json("{" + model + ", " + pre + "}").vocab_size() == 3);
  require_error([&] { json("{\"model\": "); }, ErrorCode::BAD_FILE, {"tok.json: "});
  require_error([&] { json("[]"); }, ErrorCode::BAD_FILE, {"tok.json: ", "an array"});
  require_error([&] { json("{" + pre + "}"); }, ErrorCode::BAD_FILE, {"tok.json: ", "\"model\""});
  require_error(
      [&] { json(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, )" + pre + "}"); },
      ErrorCode::BAD_FILE, {"tok.json: ", "\"model\"", "\"BPE\""});
  require_error([&] { json("{" + model + R"(, "normalizer": {"type": "NFKC"}, )" + pre + "}"); },
                ErrorCode::BAD_FILE, {"tok.json: ", "\"normalizer\"", "\"NFKC\""});
  require_error(
      [&] {
        json("{" + model + R"(, "normalizer": {"type": "BertNormalizer", "lowercase": "yes"}, )" +
             pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "normalizer: \"lowercase\"", "a string"});
  require_error([&] { json("{" + model + R"(, "pre_tokenizer": {"type": "Whitespace"}})"); },
                ErrorCode::BAD_FILE, {"tok.json: ", "\"pre_tokenizer\"", "\"Whitespace\""});
  require_error([&] { json("{" + model + "}"); }, ErrorCode::BAD_FILE,
                {"tok.json: ", "\"pre_tokenizer\""});
  require_error(
      [&] {
        json("{" + model + ", " + pre + R"(, "post_processor": {"type": "RobertaProcessing"}})");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "\"post_processor\"", "\"RobertaProcessing\""});
  require_error(
      [&] {
        json(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 5}}, )" +
             pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "\"[SEP]\" has id 5", "0 .. 2"});
  require_error(
      [&] {
        json(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 1}}, )" +
             pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "id 1 is given to two tokens"});
  require_error(
      [&] {
        json(R"({"model": {"type": "WordPiece", "unk_token": ")" + std::string(400, 'u') +
             R"(", "vocab": {"[CLS]": 0, "[SEP]": 1}}, )" + pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "the unknown token is 400 bytes long"});
  require_error(
      [&] {
        json(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1}}, )" + pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "\"[SEP]\""});
  require_error(
      [&] {
        json(R"({"model": {"type": "WordPiece", "max_input_chars_per_word": -3, "vocab": {}}, )" +
             pre + "}");
      },
      ErrorCode::BAD_FILE, {"tok.json: ", "max_input_chars_per_word"});

  const auto config = [](const std::string& text) {
    return WordPieceTokenizer::options_from_tokenizer_config(text, nullptr, "cfg.json");
  };
  require_error([&] { config("{\"do_lower_case\": \"yes\"}"); }, ErrorCode::BAD_FILE,
                {"cfg.json: ", "\"do_lower_case\""});
  require_error([&] { config("{\"cls_token\": 5}"); }, ErrorCode::BAD_FILE,
                {"cfg.json: ", "\"cls_token\""});
  require_error([&] { config("{\"strip_accents\": 1}"); }, ErrorCode::BAD_FILE,
                {"cfg.json: ", "\"strip_accents\""});
  require_error([&] { config("nope"); }, ErrorCode::BAD_FILE, {"cfg.json: "});

  const WordPieceTokenizer t = toy();
  require_error([&] { t.tokens("ok \xFF"); }, ErrorCode::INVALID_UTF8,
                {"a byte that cannot start a character at offset 3"});
  require_error([&] { t.encode("caf\xC3"); }, ErrorCode::INVALID_UTF8, {"cut off", "offset 3"});
  require_error([&] { t.encode("a\xE2\x28\xA1"); }, ErrorCode::INVALID_UTF8, {"offset 2"});
  require_error([&] { t.encode("\xED\xA0\x80"); }, ErrorCode::INVALID_UTF8, {"surrogate"});
  require_error([&] { t.encode_pair("fine", "x\xC0\xAF"); }, ErrorCode::INVALID_UTF8,
                {"text b", "overlong", "offset 1"});
  require_error([&] { t.tokens(std::string(attnlens::kMaxBpeTextBytes + 1, 'a')); },
                ErrorCode::TOO_LARGE, {"over the limit"});
  require_error([&] { t.decode({1, 99}); }, ErrorCode::BAD_ARGUMENT, {"ids[1] is 99", "0 .. 12"});
  require_error([&] { t.id_to_token(-1); }, ErrorCode::BAD_ARGUMENT, {"id is -1"});
}

TEST_CASE("WordPiece: time is linear in the text", "[wordpiece]") {
  // 1 MB of ordinary words, and 1 MB of one long word (an [UNK] once over 100 characters): each
  // well under a second even in sanitizer builds.
  const WordPieceTokenizer t = toy();
  std::string text;
  while (text.size() < (1u << 20))
    text +=
        "UNwant\xC3\xA9"
        "d, running lowest \xE5\x8D\x9A ";
  const auto start = std::chrono::steady_clock::now();
  CHECK(t.tokens(text).size() > 100000);
  CHECK(t.tokens(std::string(1u << 20, 'a')).size() == 1);
  WordPieceOptions unlimited;
  unlimited.max_input_chars_per_word = 1 << 30;
  CHECK(words({"a", "##a"}, unlimited).tokens(std::string(1u << 20, 'a')).size() == (1u << 20));
  // 1 MB of alternating musical marks in one word (flag, class 226, then stem, 216): in
  // canonical order every stem before every flag (a mark inserted at its place one at a time
  // was quadratic in the run, 23 s for 1.3 MB).
  const std::string stem = "\xF0\x9D\x85\xA5", flag = "\xF0\x9D\x85\xAD";
  std::string marks = "x";
  const std::size_t pairs = (1u << 20) / 8;
  for (std::size_t k = 0; k < pairs; ++k)
    marks += flag + stem;
  const WordPieceTokenizer music = words({"x", "##" + stem, "##" + flag}, unlimited);
  const auto sorted = music.tokens(marks);
  REQUIRE(sorted.size() == 1 + 2 * pairs);
  CHECK(sorted[1].id == music.token_to_id("##" + stem));
  CHECK(sorted[pairs].id == music.token_to_id("##" + stem));
  CHECK(sorted[pairs + 1].id == music.token_to_id("##" + flag));
  CHECK(sorted.back().id == music.token_to_id("##" + flag));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10.0);
}
