// The attention file parsers (web/files/) in Node, no wasm: each format against files whose
// values are known (hand-computed rows, and the committed examples written by
// tests/fixtures/attention/make.mjs the way np.save and safetensors lay them out), every kind
// of bad file, and the limits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  BadFileError,
  MAX_FILE_BYTES,
  fetchBytes,
  fromObject,
  parseAttentionFile,
  parseTokens,
  readFileBytes,
  rowTolerance,
} from "../../web/files/index.js";
import { TOKENS, encode, examples, npyBytes, safetensorsBytes } from "../fixtures/attention/make.mjs";

const dir = new URL("../fixtures/attention/", import.meta.url);
const text = (json) => new TextEncoder().encode(JSON.stringify(json));

/**
 * Fails unless `actual` and `expected` have the same length and every |difference| <= tolerance
 * (NaN fails); the message names the worst index and values.
 */
function assertClose(actual, expected, tolerance, what) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  let worst = -1;
  let worstDiff = 0;
  for (let k = 0; k < actual.length; k++) {
    const diff = Math.abs(actual[k] - expected[k]);
    if (!(diff <= tolerance)) {
      worst = k;
      worstDiff = diff;
      break;
    }
    if (diff > worstDiff) [worst, worstDiff] = [k, diff];
  }
  assert.ok(
    worstDiff <= tolerance && !Number.isNaN(worstDiff),
    `${what}: worst difference ${worstDiff} at ${worst} (${actual[worst]} vs ${expected[worst]})`,
  );
}

/** Asserts that `run` throws a BadFileError whose message matches `pattern`. */
function assertBad(run, pattern) {
  assert.throws(run, (error) => {
    assert.ok(error instanceof BadFileError, `a BadFileError, got ${error?.constructor?.name}: ${error?.message}`);
    assert.equal(error.code, "BAD_FILE");
    assert.match(error.message, pattern);
    return true;
  });
}

// A hand-computed causal example, exactly representable in f16, bf16, f32 and f64:
// query 1 sees only itself; query 2 puts 1/4 on token 1; query 3 splits 1/2, 1/4, 1/4.
const HAND = [1, 0, 0, 0.25, 0.75, 0, 0.5, 0.25, 0.25];
const HAND_TOKENS = ["the", "cat", "sat"];

test("the committed examples are what make.mjs writes (same seed, same bytes)", () => {
  for (const [name, { bytes }] of Object.entries(examples()))
    assert.deepEqual(new Uint8Array(readFileSync(new URL(name, dir))), bytes, name);
});

test("each committed example parses to the weights, shape and tokens it was written with", () => {
  for (const [name, expected] of Object.entries(examples())) {
    const data = parseAttentionFile(new Uint8Array(readFileSync(new URL(name, dir))), { name });
    // Every format stores float32 values exactly (JSON prints the shortest round trip of the
    // float32 widened to float64; u8 and f16 are compared with the values they hold): exact.
    assertClose(data.weights.data, expected.weights, 0, name);
    const [layers, heads, L] = expected.shape.length === 4 ? expected.shape : [1, ...expected.shape];
    assert.deepEqual(data.weights.shape, [layers, heads, L, L], name);
    const tokens = expected.tokens ?? TOKENS.map((_, i) => `#${i + 1}`);
    assert.deepEqual(
      data.tokens.map((t) => t.text),
      tokens,
      name,
    );
    assert.equal(data.causal, name !== "bertviz.json", `${name}: causal detected from the exact zeros above the diagonal`);
    // Generated rows sum to 1 within the storage's tolerance: no warning but the placeholder note.
    assert.deepEqual(data.warnings.length, expected.tokens ? 0 : 1, `${name}: ${data.warnings.join(" ")}`);
  }
});

test("the example's rows, per format, sum to 1 within the documented tolerance", () => {
  for (const [name, expected] of Object.entries(examples())) {
    const storage = parseAttentionFile(expected.bytes, { name }).source.storage;
    const L = TOKENS.length;
    const tolerance = rowTolerance(storage, L);
    for (let r = 0; r < expected.weights.length / L; r++) {
      let sum = 0;
      for (let j = 0; j < L; j++) sum += expected.weights[r * L + j];
      assert.ok(Math.abs(sum - 1) <= tolerance, `${name} row ${r}: ${sum} (±${tolerance})`);
    }
  }
});

test("tokens from a side file: JSON list or one per line, overriding the placeholders", () => {
  const fromJsonFile = parseTokens(readFileSync(new URL("attention.tokens.json", dir)), "attention.tokens.json");
  const fromText = parseTokens(readFileSync(new URL("attention.tokens.txt", dir)), "attention.tokens.txt");
  assert.deepEqual(fromJsonFile, TOKENS);
  assert.deepEqual(fromText, TOKENS);
  assert.deepEqual(parseTokens(new TextEncoder().encode("a\r\nb\r\n"), "t.txt"), ["a", "b"]);
  const data = parseAttentionFile(new Uint8Array(readFileSync(new URL("attention.npy", dir))), { name: "attention.npy", tokens: fromText });
  assert.deepEqual(
    data.tokens.map((t) => t.text),
    TOKENS,
  );
  assert.deepEqual(data.warnings, []);
  assertBad(() => parseTokens(text({ a: 1 }), "t.json"), /list of strings/);
  // A BERT export's tokens, one per line, start with "[CLS]": lines, not a JSON list (it
  // once failed as bad JSON). A name without .txt reads it the same way; a JSON list
  // given any other name is still a list.
  const bert = new TextEncoder().encode("[CLS]\nthe\n[MASK]\n[SEP]\n");
  assert.deepEqual(parseTokens(bert, "tokens.txt"), ["[CLS]", "the", "[MASK]", "[SEP]"]);
  assert.deepEqual(parseTokens(bert, "tokens"), ["[CLS]", "the", "[MASK]", "[SEP]"]);
  assert.deepEqual(parseTokens(new TextEncoder().encode('["[CLS]", "a"]'), "tokens"), ["[CLS]", "a"]);
});

test("our JSON: nested numbers, base64 f32 / f16 / u8, names, title, causal flag", () => {
  const shape = [1, 1, 3, 3];
  const nested = [[[HAND.slice(0, 3), HAND.slice(3, 6), HAND.slice(6, 9)]]];
  const base = { attnlens: 1, tokens: HAND_TOKENS, shape, title: "Hand", headNames: ["only"], layerNames: ["L0"] };
  const plain = parseAttentionFile(text({ ...base, weights: nested }), { name: "hand.json" });
  assert.deepEqual(Array.from(plain.weights.data), HAND);
  assert.equal(plain.causal, true);
  assert.equal(plain.title, "Hand");
  assert.deepEqual(plain.headNames, ["only"]);
  for (const dtype of ["f32", "f16"]) {
    const b64 = Buffer.from(encode(Float32Array.from(HAND), dtype)).toString("base64");
    const d = parseAttentionFile(text({ ...base, weights: { dtype, base64: b64 } }), { name: `hand-${dtype}.json` });
    assert.deepEqual(Array.from(d.weights.data), HAND, dtype);
  }
  // u8: weight = byte / 255; 0.25 · 255 = 63.75 is stored as 64 and read as 64 / 255.
  const u8 = parseAttentionFile(
    text({ ...base, weights: { dtype: "u8", base64: Buffer.from(encode(Float32Array.from(HAND), "u8")).toString("base64") } }),
    {
      name: "hand-u8.json",
    },
  );
  assertClose(
    u8.weights.data,
    HAND.map((w) => Math.fround(Math.round(w * 255) / 255)),
    0,
    "u8",
  );
  // Row 3 is 128 + 64 + 64 = 256 bytes: 1/255 over, within L · 0.5/255 = 1.5/255: no warning.
  assert.deepEqual(u8.warnings, []);
  const full = parseAttentionFile(text({ ...base, causal: false, weights: nested }), { name: "flag.json" });
  assert.equal(full.causal, false, "a given causal flag wins over detection");
});

test("BertViz JSON: head_view parameters, the older {all: …} shape, tokens + attention", () => {
  const attn = [[[HAND.slice(0, 3), HAND.slice(3, 6), HAND.slice(6, 9)]]];
  const forms = [
    { attention: [{ name: null, attn, left_text: HAND_TOKENS, right_text: HAND_TOKENS }], default_filter: "0", root_div_id: "x" },
    { all: { attn, left_text: HAND_TOKENS, right_text: HAND_TOKENS } },
    { tokens: HAND_TOKENS, attention: attn },
  ];
  for (const form of forms) {
    const d = parseAttentionFile(text(form), { name: "bertviz.json" });
    assert.deepEqual(Array.from(d.weights.data), HAND);
    assert.deepEqual(d.weights.shape, [1, 1, 3, 3]);
    assert.deepEqual(
      d.tokens.map((t) => t.text),
      HAND_TOKENS,
    );
  }
  assertBad(
    () =>
      parseAttentionFile(text({ attention: [{ attn: [[[[1, 0]]]], left_text: ["a"], right_text: ["a", "b"] }] }), { name: "cross.json" }),
    /cross-attention \(1 × 2 tokens\)/,
  );
});

test("CircuitsVis JSON: [heads][dest][src], [dest][src], [dest][src][heads], head names", () => {
  const H0 = HAND;
  const H1 = [1, 0, 0, 1, 0, 0, 1, 0, 0];
  const rows = (m) => [m.slice(0, 3), m.slice(3, 6), m.slice(6, 9)];
  const d = parseAttentionFile(text({ tokens: HAND_TOKENS, attention: [rows(H0), rows(H1)], attention_head_names: ["L0H0", "L0H1"] }), {
    name: "cv.json",
  });
  assert.deepEqual(Array.from(d.weights.data), [...H0, ...H1]);
  assert.deepEqual(d.headNames, ["L0H0", "L0H1"]);
  const one = parseAttentionFile(text({ tokens: HAND_TOKENS, attention: rows(H0) }), { name: "cv1.json" });
  assert.deepEqual(one.weights.shape, [1, 1, 3, 3]);
  const last = [0, 1, 2].map((i) => [0, 1, 2].map((j) => [H0[i * 3 + j], H1[i * 3 + j]]));
  const t = parseAttentionFile(text({ tokens: HAND_TOKENS, attention: last }), { name: "cv-last.json" });
  assert.deepEqual(Array.from(t.weights.data), [...H0, ...H1]);
  assert.match(t.warnings.join(" "), /heads first/);
});

test(".npy: versions 1, 2 and 3, <f4 / <f2 / <f8, [L, L] to [1, 1, L, L], Fortran order transposed", () => {
  for (const version of [1, 2, 3]) {
    for (const descr of ["<f4", "<f2", "<f8"]) {
      const d = parseAttentionFile(npyBytes(Float32Array.from(HAND), [3, 3], { descr, version }), { name: "a.npy" });
      assert.deepEqual(Array.from(d.weights.data), HAND, `v${version} ${descr}`);
      assert.deepEqual(d.weights.shape, [1, 1, 3, 3]);
    }
  }
  // Fortran order stores column by column: the transpose of HAND's rows, read back as HAND.
  const columns = Float32Array.from([0, 1, 2].flatMap((j) => [0, 1, 2].map((i) => HAND[i * 3 + j])));
  const f = parseAttentionFile(npyBytes(columns, [3, 3], { fortran: true }), { name: "f.npy" });
  assert.deepEqual(Array.from(f.weights.data), HAND);
  // A leading batch of 1 over [layers, heads, L, L] is dropped.
  const five = parseAttentionFile(npyBytes(Float32Array.from([...HAND, ...HAND]), [1, 2, 1, 3, 3]), { name: "b.npy" });
  assert.deepEqual(five.weights.shape, [2, 1, 3, 3]);
  assert.deepEqual(
    five.warnings.filter((w) => /batch/.test(w)),
    [],
  );
  // torch.stack(outputs.attentions) saved as is: [layers, 1, heads, L, L] (it
  // was refused). Read as [layers, heads, L, L], with a note naming the axis dropped.
  const stacked = parseAttentionFile(npyBytes(Float32Array.from([...HAND, ...HAND, ...HAND, ...HAND]), [2, 1, 2, 3, 3]), {
    name: "s.npy",
  });
  assert.deepEqual(stacked.weights.shape, [2, 2, 3, 3]);
  assert.deepEqual(Array.from(stacked.weights.data), [...HAND, ...HAND, ...HAND, ...HAND]);
  assert.ok(
    stacked.warnings.some(
      (w) => w === "s.npy: shape [2, 1, 2, 3, 3] read as [layers, batch, heads, L, L]; its batch of 1 (the second axis) was dropped.",
    ),
    stacked.warnings.join(" | "),
  );
  // A batch of more than one is still refused, naming what is read.
  assertBad(
    () => parseAttentionFile(npyBytes(new Float32Array(2 * 2 * 2 * 9), [2, 2, 2, 3, 3]), { name: "b2.npy" }),
    /shape \[2, 2, 2, 3, 3\]; expected .*a batch of 1, first or second, is dropped/,
  );
  assertBad(() => parseAttentionFile(npyBytes(new Uint8Array(36), [3, 3], { descr: ">f4" }), { name: "big.npy" }), /'>f4'.*little-endian/);
  assertBad(
    () => parseAttentionFile(npyBytes(Float32Array.from(HAND), [3, 3]).subarray(0, 130), { name: "cut.npy" }),
    /needs 36 bytes of data; the file has/,
  );
});

test(".safetensors: F32 / F16 / BF16 / F64, tokens and names from __metadata__", () => {
  for (const [dtype, enc] of [
    ["F32", "f32"],
    ["F16", "f16"],
    ["F64", "f64"],
  ]) {
    const bytes = safetensorsBytes(
      { attn: { dtype, shape: [1, 3, 3], bytes: encode(Float32Array.from(HAND), enc) } },
      { tokens: JSON.stringify(HAND_TOKENS) },
    );
    const d = parseAttentionFile(bytes, { name: "a.safetensors" });
    assert.deepEqual(Array.from(d.weights.data), HAND, dtype);
    assert.deepEqual(
      d.tokens.map((t) => t.text),
      HAND_TOKENS,
    );
  }
  // bfloat16: the upper 16 bits of each float32 (every HAND value is exact in 8 bits).
  const f32 = new Uint8Array(Float32Array.from(HAND).buffer);
  const bf16 = new Uint8Array(HAND.length * 2);
  for (let k = 0; k < HAND.length; k++) bf16.set(f32.subarray(4 * k + 2, 4 * k + 4), 2 * k);
  const b = parseAttentionFile(
    safetensorsBytes({ attn: { dtype: "BF16", shape: [3, 3], bytes: bf16 } }, { causal: "true", headNames: '["h"]' }),
    {
      name: "bf.safetensors",
    },
  );
  assert.deepEqual(Array.from(b.weights.data), HAND);
  assert.deepEqual(b.headNames, ["h"]);
  assert.match(b.warnings[0], /no tokens: they are numbered #1 to #3/);
  const two = safetensorsBytes({
    a: { dtype: "F32", shape: [3, 3], bytes: encode(Float32Array.from(HAND), "f32") },
    b: { dtype: "F32", shape: [3, 3], bytes: encode(Float32Array.from(HAND), "f32") },
  });
  assertBad(() => parseAttentionFile(two, { name: "two.safetensors" }), /2 tensors \(a, b\); an attention file holds exactly one/);
  const i32 = safetensorsBytes({ a: { dtype: "I32", shape: [3, 3], bytes: new Uint8Array(36) } });
  assertBad(() => parseAttentionFile(i32, { name: "i.safetensors" }), /"I32"; F32, F16, BF16 or F64/);
  const short = safetensorsBytes({ a: { dtype: "F32", shape: [3, 3], bytes: encode(Float32Array.from(HAND), "f32") } });
  assertBad(() => parseAttentionFile(short.subarray(0, short.length - 4), { name: "cut.safetensors" }), /ends at byte \d+; the file has/);
});

test("bad weights: NaN, Infinity, negative, not square, token count, Python's NaN in JSON", () => {
  const withValue = (k, v) => {
    const w = Float32Array.from(HAND);
    w[k] = v;
    return npyBytes(w, [3, 3]);
  };
  assertBad(
    () => parseAttentionFile(withValue(4, NaN), { name: "nan.npy" }),
    /nan\.npy: weight \[layer 1, head 1, query 2, key 2\] is NaN/,
  );
  assertBad(() => parseAttentionFile(withValue(0, Infinity), { name: "inf.npy" }), /is Infinity; weights must be finite/);
  assertBad(
    () => parseAttentionFile(withValue(3, -0.25), { name: "neg.npy" }),
    /query 2, key 1\] is -0.25; attention weights are never negative/,
  );
  // A "shape" holding a string joins like sizes (["1,1", 3, 3] reads "1,1,3,3"): refused before
  // any weight is read, so the -5 below is never accepted silently.
  const nested = [
    [
      [
        [1, 0, 0],
        [0.5, 0.5, 0],
        [0, 1, -5],
      ],
    ],
  ];
  for (const shape of [["1,1", 3, 3], [1, 1, "3", 3], [1, 1.5, 3, 3], [1, -1, 3, 3], "1,1,3,3"])
    assertBad(
      () => parseAttentionFile(text({ attnlens: 1, tokens: ["a", "b", "c"], shape, weights: nested }), { name: "shape.json" }),
      /shape\.json: "shape" \(like \[layers, heads, L, L\]\) .* is not a list of sizes/,
    );
  assertBad(
    () => parseAttentionFile(text({ attnlens: 1, tokens: ["a", "b", "c"], shape: [1, 1, 3, 3], weights: nested }), { name: "shape.json" }),
    /is -5; attention weights are never negative/,
  );
  // A float32 weight in its own precision, not float64's 17 digits (-0.30000001192092896).
  assertBad(() => parseAttentionFile(withValue(3, -0.3), { name: "neg.npy" }), /query 2, key 1\] is -0\.3; attention/);
  // Rows that do not sum to 1: a note, and the figure's legend no longer says that they do.
  const half = parseAttentionFile(
    npyBytes(
      Float32Array.from(HAND, (w) => w / 2),
      [3, 3],
    ),
    { name: "half.npy" },
  );
  assert.equal(half.rowsSumToOne, false);
  assert.match(half.warnings.join(" "), /half\.npy: rows should sum to 1; the row of query 1 in layer 1, head 1 sums to 0\.5/);
  assert.equal(parseAttentionFile(npyBytes(Float32Array.from(HAND), [3, 3]), { name: "a.npy" }).rowsSumToOne, true);
  assertBad(() => parseAttentionFile(npyBytes(new Float32Array(6), [2, 3]), { name: "rect.npy" }), /2 queries, 3 keys/);
  assertBad(
    () => parseAttentionFile(npyBytes(new Float32Array(6), [6]), { name: "flat.npy" }),
    /attention of shape \[6\]; expected \[L, L\]/,
  );
  assertBad(
    () => parseAttentionFile(npyBytes(Float32Array.from(HAND), [3, 3]), { name: "t.npy", tokens: ["a", "b"] }),
    /t\.npy: 2 tokens for attention over 3 positions/,
  );
  assertBad(
    () =>
      parseAttentionFile(text({ attnlens: 1, tokens: ["a"], shape: [1, 1, 1, 1], weights: [[[[1]]]], headNames: ["x", "y"] }), {
        name: "n.json",
      }),
    /headNames must be 1 strings/,
  );
  const python = new TextEncoder().encode('{"tokens": ["a"], "attention": [[NaN]]}');
  assertBad(() => parseAttentionFile(python, { name: "py.json" }), /py\.json holds NaN or Infinity/);
  assertBad(
    () => parseAttentionFile(text({ tokens: ["a", "b"], attention: [[1, 0], [0.5]] }), { name: "ragged.json" }),
    /attention\[1\] should be a list of 2/,
  );
  assertBad(
    () => parseAttentionFile(text({ tokens: ["a"], attention: [["x"]] }), { name: "s.json" }),
    /attention\[0\]\[0\] is "x", not a number/,
  );
  assertBad(
    () => parseAttentionFile(text({ attnlens: 2, tokens: [], shape: [], weights: [] }), { name: "v2.json" }),
    /version 2; this reader knows version 1/,
  );
  assertBad(
    () =>
      parseAttentionFile(text({ attnlens: 1, tokens: ["a"], shape: [1, 1, 1, 1], weights: { dtype: "u8", base64: "AAAA" } }), {
        name: "b.json",
      }),
    /hold 3 bytes; shape \[1, 1, 1, 1\] of u8 needs 1/,
  );
  assertBad(
    () => parseAttentionFile(text({ attnlens: 1, tokens: ["a"], shape: [1, 1, 1, 1], weights: [[[1]]] }), { name: "s.json" }),
    /"shape" says \[1, 1, 1, 1\] but the weights are nested \[1, 1, 1\]/,
  );
});

test("rows that do not sum to 1 are drawn with a warning naming the worst row and the tolerance", () => {
  const w = Float32Array.from(HAND);
  w[6] = 0.4; // row 3 sums to 0.9
  const d = parseAttentionFile(npyBytes(w, [3, 3]), { name: "off.npy", tokens: HAND_TOKENS });
  assert.equal(d.warnings.length, 1);
  assert.match(d.warnings[0], /the row of query 3 in layer 1, head 1 sums to 0\.900000 \(allowed ±2\.4e-7 for f32 weights\)/);
  // u8: a row may be off by L · 0.5/255 = 1.5/255 for L = 3 (each byte rounds by at most half a step).
  assert.ok(Math.abs(rowTolerance("u8", 3) - (1.5 / 255 + 4 * 2 ** -24)) < 1e-15);
  assert.ok(Math.abs(rowTolerance("json", 3, 2) - (3 * 0.005 + 4 * 2 ** -24)) < 1e-15);
  // Numbers written with 2 decimals: 0.33 + 0.33 + 0.33 = 0.99 is within 3 · 0.005.
  const rounded = parseAttentionFile(
    text({
      tokens: ["a", "b", "c"],
      attention: [
        [1, 0, 0],
        [0.5, 0.5, 0],
        [0.33, 0.33, 0.33],
      ],
    }),
    { name: "r.json" },
  );
  assert.deepEqual(rounded.warnings, []);
});

test("a file that is not what it claims, an empty file, an HTML error page", () => {
  assertBad(
    () => parseAttentionFile(new TextEncoder().encode("hello world"), { name: "attention.npy" }),
    /attention\.npy is not a \.npy file: it starts with “hello wo”/,
  );
  assertBad(
    () => parseAttentionFile(new TextEncoder().encode("<!doctype html><p>404</p>"), { name: "attention.json" }),
    /attention\.json is not a JSON file/,
  );
  assertBad(
    () => parseAttentionFile(new Uint8Array([1, 2, 3]), { name: "x.bin" }),
    /not an attention file \(JSON, \.npy or \.safetensors\)/,
  );
  assertBad(() => parseAttentionFile(new Uint8Array(0), { name: "e.json" }), /e\.json is empty/);
  assertBad(() => parseAttentionFile(new TextEncoder().encode('{"a": '), { name: "cut.json" }), /cut\.json is not JSON/);
  assertBad(
    () => parseAttentionFile(text({ foo: 1 }), { name: "other.json" }),
    /not an attention file: expected "attnlens".*found keys foo/,
  );
  // The content decides, not the name: JSON called .npy is read as JSON.
  const d = parseAttentionFile(text({ tokens: ["a"], attention: [[1]] }), { name: "misnamed.npy" });
  assert.deepEqual(Array.from(d.weights.data), [1]);
});

test("size limits are checked from headers and sizes before anything is decoded", async () => {
  // A .npy header claiming 12 x 12 x 1024 x 1024 weights: refused from the header alone.
  const huge = npyBytes(new Uint8Array(0), [12, 12, 1024, 1024]);
  assertBad(() => parseAttentionFile(huge, { name: "huge.npy" }), /holds 150,994,944 weights; at most 33,554,432/);
  const st = safetensorsBytes({ a: { dtype: "F32", shape: [4096, 4096], bytes: new Uint8Array(0) } });
  assertBad(() => parseAttentionFile(st, { name: "huge.safetensors" }), /huge\.safetensors: 4096 tokens; at most 1024/);
  assertBad(
    () => parseAttentionFile(npyBytes(new Float32Array(2048 * 2048), [2048, 2048]), { name: "long.npy" }),
    /2048 tokens; at most 1024/,
  );
  // A 200 MB file: refused from its size (the picker's File) or Content-Length (fetch) without reading it.
  const started = performance.now();
  const file = { name: "big.npy", size: 200 * 2 ** 20, arrayBuffer: () => assert.fail("a too large file is not read") };
  await assert.rejects(readFileBytes(file), (e) => e.code === "BAD_FILE" && /big\.npy is 200 MB; at most 128 MB/.test(e.message));
  let cancelled = false;
  const fakeFetch = async () => ({
    ok: true,
    headers: new Headers({ "content-length": String(200 * 2 ** 20) }),
    body: { cancel: () => (cancelled = true), getReader: () => assert.fail("the body is not read") },
  });
  await assert.rejects(fetchBytes("https://example.org/files/big.safetensors?x=1", { fetchImpl: fakeFetch }), /big\.safetensors is 200 MB/);
  assert.ok(cancelled, "the response body is cancelled");
  // Without Content-Length, the stream is cut as soon as it passes the limit.
  const chunk = new Uint8Array(16 * 2 ** 20);
  let reads = 0;
  const streaming = async () => ({
    ok: true,
    headers: new Headers(),
    body: { getReader: () => ({ read: async () => (reads++, { done: false, value: chunk }), cancel: () => {} }) },
  });
  await assert.rejects(fetchBytes("stream.json", { fetchImpl: streaming }), /stream\.json is 144 MB; at most 128 MB/);
  assert.equal(reads, MAX_FILE_BYTES / chunk.length + 1);
  console.log(`# size checks took ${(performance.now() - started).toFixed(1)} ms`);
  const notFound = async () => ({ ok: false, status: 404, statusText: "Not Found", headers: new Headers() });
  await assert.rejects(fetchBytes("a/missing.json", { fetchImpl: notFound }), /missing\.json could not be fetched: HTTP 404 Not Found/);
});

test("data objects: FigureData-like objects and parsed JSON of any format", () => {
  const d = fromObject({ tokens: HAND_TOKENS.map((text) => ({ text })), weights: { data: HAND, shape: [3, 3] }, title: "Given" });
  assert.deepEqual(Array.from(d.weights.data), HAND);
  assert.equal(d.title, "Given");
  const cv = fromObject({ tokens: HAND_TOKENS, attention: [HAND.slice(0, 3), HAND.slice(3, 6), HAND.slice(6)] });
  assert.deepEqual(Array.from(cv.weights.data), HAND);
  assertBad(() => fromObject({ tokens: ["a"], weights: { data: [1, 0], shape: [1, 1] } }), /holds 2 numbers; shape \[1, 1\] needs 1/);
  assertBad(() => fromObject(null), /expected a JSON object/);
});
