// The C++ WordPiece tokenizer against Hugging Face's own Rust `tokenizers` (what
// BertTokenizerFast runs), through its Node bindings, the npm package `tokenizers`: ids and
// offsets, on the texts and tokenizer.json of tests/js/wordpiece-parity.test.mjs.
//
// Optional: the package (64 MB, prebuilt binaries for every platform) is not a devDependency.
// Without it the tests are skipped. To run them:
//   npm install --no-save tokenizers@0.23.2 && node --test tests/js/wordpiece-rust.test.mjs
//
// Its offsets count code points; attnlens' (bytes) are converted. The classes of input where
// the two differ by design are not generated (wordpiece-parity.test.mjs lists them); the last
// test shows them:
//   - private use (\p{Co}) and unassigned (\p{Cn}) code points: dropped by Hugging Face, kept by
//     attnlens (google-research/bert's controls are Cc and Cf only);
//   - U+2B820..U+2B91F: a CJK range in BERT's list that the Rust BertNormalizer misspells as
//     starting at U+2B920; attnlens follows BERT's list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { generatedTexts, handPicked, nativeTokens, show, tokenizerJson, vocabTokens } from "./wordpiece-texts.mjs";

let rust = null;
try {
  rust = createRequire(import.meta.url)("tokenizers");
} catch {
  // not installed: the tests below are skipped
}
const skip = rust === null ? "npm's `tokenizers` (Hugging Face's Rust bindings) is not installed" : false;

// Code point offsets of attnlens' byte offsets.
function codePointOffsets(text, tokens) {
  const bytes = Buffer.from(text, "utf8");
  const at = (b) => [...bytes.subarray(0, b).toString("utf8")].length;
  return tokens.map((t) => [at(t.begin), at(t.end)]);
}

async function compare(lowercase, texts) {
  const json = tokenizerJson(lowercase);
  const reference = rust.Tokenizer.fromString(JSON.stringify(json));
  const native = nativeTokens(json, texts);
  const problems = [];
  let count = 0;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i];
    const encoding = await reference.encode(text, null, { addSpecialTokens: false });
    const got = native[i];
    if (got.error) {
      problems.push(`${show(text)}: ${got.error}`);
      continue;
    }
    count += got.length;
    const ids = got.map((t) => t.id);
    const names = (list) => show(list.map((id) => vocabTokens[id]));
    if (JSON.stringify(ids) !== JSON.stringify(encoding.getIds())) {
      problems.push(`${show(text)}:\n    tokenizers (Rust) ${names(encoding.getIds())}\n    attnlens          ${names(ids)}`);
    } else if (JSON.stringify(codePointOffsets(text, got)) !== JSON.stringify(encoding.getOffsets())) {
      problems.push(
        `${show(text)}: ${names(ids)}\n    tokenizers (Rust) offsets ${JSON.stringify(encoding.getOffsets())}\n    attnlens          offsets ${JSON.stringify(codePointOffsets(text, got))}`,
      );
    }
  }
  assert.equal(
    problems.length,
    0,
    `${problems.length} of ${texts.length} texts differ; the first:\n  ${problems.slice(0, 3).join("\n  ")}`,
  );
  return `${texts.length} texts, ${count} tokens`;
}

test("uncased: hand-picked and 400 generated texts, ids and offsets equal Hugging Face's Rust tokenizers", { skip }, async (t) => {
  t.diagnostic(await compare(true, [...handPicked, ...generatedTexts(400, 20261126)]));
});

test("cased: hand-picked and 400 generated texts, ids and offsets equal Hugging Face's Rust tokenizers", { skip }, async (t) => {
  t.diagnostic(await compare(false, [...handPicked, ...generatedTexts(400, 7)]));
});

test("where attnlens follows BERT rather than Hugging Face", { skip }, async (t) => {
  const json = tokenizerJson(true);
  const reference = rust.Tokenizer.fromString(JSON.stringify(json));
  const known = [
    // U+E000 stays in the word, which then has no piece for it; Hugging Face reads "ab".
    { text: "a\uE000b", attnlens: ["[UNK]"], why: "private use" },
    // U+2B820 is a word of its own (not in the vocabulary); Hugging Face keeps "a𫠠b" together.
    { text: "a\u{2B820}b", attnlens: ["a", "[UNK]", "b"], why: "U+2B820, in BERT's CJK list" },
  ];
  const native = nativeTokens(
    json,
    known.map((k) => k.text),
  );
  for (const [i, k] of known.entries()) {
    assert.deepEqual(
      native[i].map((tok) => vocabTokens[tok.id]),
      k.attnlens,
      `${show(k.text)} (${k.why})`,
    );
    const encoding = await reference.encode(k.text, null, { addSpecialTokens: false });
    t.diagnostic(`${k.why}: ${show(k.text)} -> attnlens ${show(k.attnlens)}, tokenizers (Rust) ${show(encoding.getTokens())}`);
  }
});
