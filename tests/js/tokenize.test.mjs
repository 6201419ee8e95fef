// The word tokenizer through the wasm module: reproducers of bugs it had, UTF-8 and UTF-16 offsets,
// case folding checked against JavaScript's own (the `iu` regex flags compare code points by
// simple case folding, ECMA-262 Canonicalize), and invalid input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";

const lens = await loadAttnLens();
const small = { modelDim: 8, numHeads: 1, maxTokens: 1024 };
const texts = (sentence) => lens.explain(sentence, small).tokens.map((t) => t.text);

/** Row i of the [L, E] token embeddings. */
const row = (ex, i) => {
  const [, E] = ex.tokenEmbeddings.shape;
  return ex.tokenEmbeddings.data.slice(i * E, (i + 1) * E);
};

test("Japanese splits into ideographs and kana runs", () => {
  assert.deepEqual(texts("猫がマットの上に座った"), ["猫", "が", "マット", "の", "上", "に", "座", "った"]);
});

test("each emoji is one token and adjacent emoji never merge", () => {
  assert.deepEqual(texts("😀😀"), ["😀", "😀"]);
  assert.deepEqual(texts("👨‍👩‍👧"), ["👨‍👩‍👧"]);
  assert.deepEqual(texts("🇫🇷🇩🇪"), ["🇫🇷", "🇩🇪"]);
  assert.deepEqual(texts("👍🏽👍🏿 1️⃣2️⃣"), ["👍🏽", "👍🏿", "1️⃣", "2️⃣"]);
});

test("ÉCOLE and école share an embedding and each shows as typed", () => {
  const ex = lens.explain("ÉCOLE école ecole The the", small);
  assert.deepEqual(
    ex.tokens.map((t) => t.text),
    ["ÉCOLE", "école", "ecole", "The", "the"],
  );
  assert.deepEqual(row(ex, 0), row(ex, 1));
  assert.notDeepEqual(row(ex, 0), row(ex, 2));
  assert.deepEqual(row(ex, 3), row(ex, 4));
});

test("UTF-8 byte offsets and UTF-16 offsets point at each token", () => {
  const sentence = "  Hi, café!\t猫がマットの上に座った 😀😀 👨‍👩‍👧🇫🇷🇩🇪 ÉCOLE\u200bสวัสดี\n𝒳 1️⃣";
  const bytes = new TextEncoder().encode(sentence);
  const decode = (a, b) => new TextDecoder().decode(bytes.subarray(a, b));
  const tokens = lens.explain(sentence, small).tokens;
  assert.equal(tokens.length, 21);
  let at = 0;
  for (const t of tokens) {
    assert.equal(sentence.slice(t.start, t.end), t.text, `UTF-16 [${t.start}, ${t.end})`);
    assert.equal(decode(t.byteStart, t.byteEnd), t.text, `UTF-8 [${t.byteStart}, ${t.byteEnd})`);
    assert.ok(t.start >= at, `${t.text} starts after the token before`);
    assert.match(sentence.slice(at, t.start), /^[\s\u200b]*$/u, `only separators before ${t.text}`);
    at = t.end;
  }
  assert.equal(at, sentence.length);
  // The same bytes given as a Uint8Array give the same tokens and byte offsets, no UTF-16 ones.
  const fromBytes = lens.explain(bytes, small).tokens;
  assert.deepEqual(
    fromBytes.map((t) => [t.text, t.byteStart, t.byteEnd, t.start]),
    tokens.map((t) => [t.text, t.byteStart, t.byteEnd, undefined]),
  );
});

test("invalid UTF-8 and lone surrogates are still refused", () => {
  assert.throws(() => lens.explain(Uint8Array.of(0xe7, 0x8c, 0xab, 0xe3, 0x81)), { code: "INVALID_UTF8", message: /offset 3/ });
  assert.throws(() => lens.explain("猫 \udc00 が"), { code: "INVALID_UTF8", message: /lone UTF-16 surrogate at index 2/ });
});

test("case folding agrees with JavaScript's simple case folding for every cased code point", () => {
  // Pairs (c, t) where t is c's one-code-point lowercase or uppercase and /^c$/iu matches t:
  // by ECMA-262 they have the same simple case folding, so they must share an embedding. Pairs
  // where the regex says they differ (ı and I, İ and i, ß and ẞ's uppercase...) must not.
  const same = [];
  const different = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    const re = new RegExp(`^\\u{${cp.toString(16)}}$`, "iu");
    for (const t of new Set([c.toLowerCase(), c.toUpperCase()])) {
      if (t === c || [...t].length !== 1) continue;
      (re.test(t) ? same : different).push([c, t]);
    }
  }
  assert.ok(same.length > 2500, `${same.length} pairs`);
  assert.ok(different.length > 0 && different.length < 50, `${different.length} pairs`);
  const check = (pairs, equal) => {
    for (let k = 0; k < pairs.length; k += 500) {
      const chunk = pairs.slice(k, k + 500);
      const ex = lens.explain(chunk.flat().join(" "), small);
      assert.equal(ex.tokens.length, 2 * chunk.length);
      const wrong = chunk.filter(([c, t], i) => {
        assert.deepEqual([ex.tokens[2 * i].text, ex.tokens[2 * i + 1].text], [c, t]);
        const a = row(ex, 2 * i);
        const b = row(ex, 2 * i + 1);
        return a.every((x, e) => x === b[e]) !== equal;
      });
      const hex = (s) => `U+${s.codePointAt(0).toString(16).toUpperCase()}`;
      assert.deepEqual(
        wrong.map(([c, t]) => `${hex(c)} ${hex(t)}`),
        [],
        `pairs whose embeddings should ${equal ? "" : "not "}be equal`,
      );
    }
  };
  check(same, true);
  check(different, false);
});
