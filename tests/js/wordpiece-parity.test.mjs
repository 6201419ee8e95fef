// The C++ WordPiece tokenizer (attnlens/wordpiece.hpp) against Hugging Face's tokenizers.js (the
// npm package @huggingface/tokenizers, a pure JS implementation of BertNormalizer,
// BertPreTokenizer and the WordPiece model). Both load the same tokenizer.json, over a
// vocabulary derived from tests/fixtures/corpus/heldout_sample.txt and the characters of the
// generated texts (tests/js/wordpiece-texts.mjs); the native tool attnlens_wordpiece tokenizes
// the same seeded texts. Ids must be equal, in the uncased setting (lowercase, accents
// stripped) and the cased one.
//
// tokenizers.js gives no offsets. attnlens' offsets are checked instead against the normalizer:
// the original bytes of each piece, normalized by tokenizers.js' BertNormalizer, are the piece
// (without its "##"); tokens come in order and do not overlap. (tests/js/wordpiece-rust.test.mjs
// compares offsets with Hugging Face's Rust tokenizers when that package is installed.)
//
// Where tokenizers.js differs from Hugging Face's Python and Rust tokenizers, the generator
// leaves the input out and the last test shows the difference (attnlens follows Hugging Face):
//   - CJK ideographs outside the BMP (U+20000..): tokenizers.js looks at UTF-16 code units, so it
//     never puts spaces around them; BERT and Hugging Face do.
//   - A final capital sigma: tokenizers.js lower-cases the whole text (toLowerCase's final-sigma
//     rule: ς); Hugging Face's tokenizers lower-case each character (σ), which attnlens does.
//     The Python BertTokenizer (str.lower) agrees with tokenizers.js here.
// And where attnlens follows google-research/bert rather than Hugging Face (its header says so):
//   - Private use characters (\p{Co}): google-research/bert keeps them (its controls are Cc and
//     Cf); Hugging Face's Python and Rust tokenizers and tokenizers.js drop them. Hugging Face
//     also drops unassigned code points (\p{Cn} of its own Unicode version); the generator has
//     none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BertNormalizer, Tokenizer } from "@huggingface/tokenizers";
import { generatedTexts, handPicked, nativeTokens, runTool, show, tokenizerJson, vocabTokens } from "./wordpiece-texts.mjs";

function checkParity(lowercase, texts) {
  const json = tokenizerJson(lowercase);
  const reference = new Tokenizer(json, {});
  const normalizer = new BertNormalizer(json.normalizer);
  const native = nativeTokens(json, texts);
  const problems = [];
  let count = 0;
  let unknown = 0;
  texts.forEach((text, i) => {
    const expected = reference.encode(text, { add_special_tokens: false }).ids;
    const got = native[i];
    if (got.error) {
      problems.push(`${show(text)}: ${got.error}`);
      return;
    }
    const ids = got.map((t) => t.id);
    count += ids.length;
    unknown += ids.filter((id) => vocabTokens[id] === "[UNK]").length;
    if (JSON.stringify(ids) !== JSON.stringify(expected)) {
      problems.push(
        `${show(text)}:\n    tokenizers.js ${show(expected.map((id) => vocabTokens[id]))}\n    attnlens      ${show(ids.map((id) => vocabTokens[id]))}`,
      );
      return;
    }
    // Offsets: in order, not overlapping, and each piece is its original bytes normalized. Pieces
    // cut from one character that normalizes to several (a Hangul syllable to its jamo) all
    // cover that character: such a group together is its bytes normalized.
    const bytes = Buffer.from(text, "utf8");
    const groups = [];
    for (const t of got) {
      const token = vocabTokens[t.id];
      const piece = token.startsWith("##") ? token.slice(2) : token;
      const last = groups[groups.length - 1];
      if (last && last.begin === t.begin && last.end === t.end) {
        last.text += piece;
        last.unknown ||= token === "[UNK]";
      } else {
        groups.push({ begin: t.begin, end: t.end, text: piece, unknown: token === "[UNK]", token });
      }
    }
    let end = 0;
    for (const g of groups) {
      const original = bytes.subarray(g.begin, g.end).toString("utf8");
      if (g.begin < end || g.end <= g.begin || g.end > bytes.length) {
        problems.push(`${show(text)}: token ${show(g.token)} has offsets ${g.begin}:${g.end} after one ending at ${end}`);
        return;
      }
      if (!g.unknown && normalizer.normalize(original).trim() !== g.text) {
        problems.push(`${show(text)}: ${show(g.text)} (from ${show(g.token)}) covers ${show(original)} (bytes ${g.begin}:${g.end})`);
        return;
      }
      end = g.end;
    }
  });
  assert.equal(
    problems.length,
    0,
    `${problems.length} of ${texts.length} texts differ; the first:\n  ${problems.slice(0, 3).join("\n  ")}`,
  );
  return `${texts.length} texts, ${count} tokens, ${unknown} of them [UNK]`;
}

test("the vocabulary has a few thousand tokens", (t) => {
  t.diagnostic(`${vocabTokens.length} tokens`);
  assert.ok(vocabTokens.length > 1500 && vocabTokens.length < 10000, `${vocabTokens.length} tokens`);
});

test("uncased (lower case, accents stripped): hand-picked texts match tokenizers.js", (t) => {
  t.diagnostic(checkParity(true, handPicked));
});

test("uncased: 400 generated texts match tokenizers.js, ids and offsets", (t) => {
  t.diagnostic(checkParity(true, generatedTexts(400, 20261126)));
});

test("cased (no lower case, accents kept): hand-picked and 400 generated texts match tokenizers.js", (t) => {
  t.diagnostic(checkParity(false, [...handPicked, ...generatedTexts(400, 7)]));
});

test("pairs: ids and token types of [CLS] A [SEP] B [SEP] match tokenizers.js", () => {
  for (const lowercase of [true, false]) {
    const json = tokenizerJson(lowercase);
    const reference = new Tokenizer(json, {});
    const texts = generatedTexts(80, lowercase ? 11 : 12);
    const lines = runTool("pairs", json, texts);
    assert.equal(lines.length, texts.length / 2, "one line per pair");
    lines.forEach((line, i) => {
      const [a, b] = [texts[2 * i], texts[2 * i + 1]];
      const expected = reference.encode(a, { text_pair: b, return_token_type_ids: true });
      const want = expected.ids.map((id, k) => `${id}/${expected.token_type_ids[k]}`).join(" ");
      assert.equal(line, want, `pair ${show(a)} / ${show(b)} (lowercase ${lowercase})`);
    });
  }
});

test("where tokenizers.js differs from Hugging Face, attnlens gives Hugging Face's tokens", (t) => {
  const json = tokenizerJson(true);
  const reference = new Tokenizer(json, {});
  const known = [
    // An astral CJK ideograph between letters: a word of its own (BERT's _is_chinese_char).
    { text: "a\u{20000}b", attnlens: ["a", "[UNK]", "b"], why: "CJK outside the BMP" },
    // ΟΔΟΣ: per-character lower case gives σ, which the vocabulary has; ς is not in it.
    { text: "\u039F\u03A3", attnlens: ["ο", "##σ"], why: "final sigma" },
  ];
  const native = nativeTokens(
    json,
    known.map((k) => k.text),
  );
  known.forEach((k, i) => {
    assert.deepEqual(
      native[i].map((tok) => vocabTokens[tok.id]),
      k.attnlens,
      `${show(k.text)} (${k.why})`,
    );
    const js = reference.encode(k.text, { add_special_tokens: false }).ids.map((id) => vocabTokens[id]);
    t.diagnostic(`${k.why}: ${show(k.text)} -> attnlens ${show(k.attnlens)}, tokenizers.js ${show(js)}`);
  });
});
