// The logit lens (unembed, logitLens), direct logit attribution (attribute) and each head's write
// (forward's headOutputRows) through the package, against identities outside the code that
// computes them: the lens of the last layer is the forward's own prediction head; the attribution's
// parts add up to its logit, which is the forward's logit of that token (with heads switched off:
// the ablated forward's); a switched-off head writes exactly 0 and the layers before it are
// untouched. The float64 references of each quantity (written from the models' published code)
// are in tests/cpp/test_gpt2.cpp, test_llama.cpp and test_bert.cpp.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens } from "attnlens";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";
import { assertAttnLensError, assertClose } from "./helpers.mjs";

const lens = await loadAttnLens();

function filesOf(dir, names) {
  return Object.fromEntries(
    names.map((name) => [
      name,
      name.endsWith(".safetensors") ? new Uint8Array(readFileSync(join(dir, name))) : readFileSync(join(dir, name), "utf8"),
    ]),
  );
}
const shippedDir = new URL("../../models/attnlens/", import.meta.url).pathname;
const encoderDir = new URL("../../models/attnlens-encoder/", import.meta.url).pathname;
const TEXT_FILES = ["model.safetensors", "config.json", "vocab.json", "merges.txt"];

/** A tiny Llama-family checkpoint with grouped-query attention, loaded; `run` gets the model. */
async function withLlama(run) {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-lens-"));
  try {
    const m = { ...LLAMA_PRESETS.tiny, vocab: 300, hidden: 48, heads: 6, kvHeads: 2, intermediate: 64 };
    writeLlamaCheckpoint(dir, m, { dtype: "BF16", seed: 7 });
    const model = await lens.loadModel({ files: filesOf(dir, ["model.safetensors", "config.json"]) });
    try {
      await run(model);
    } finally {
      model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Softmax of one row, in float64. */
function softmax(row) {
  const max = Math.max(...row);
  const e = Array.from(row, (x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

// Both sides are the same float32 arithmetic up to the row blocking of the products (a norm and
// a d-term dot product per logit): ~d · 2^-24 of logits of a few units, under 1e-4 here.
const SAME_HEAD = 1e-4;

async function checkDecoder(model, ids, label) {
  const { layers, heads, dModel: d, vocabSize: V } = model.config;
  const L = ids.length;
  const f = model.forward(ids, { residuals: true });

  // unembed() of the last residual rows is the forward's head.
  const last = f.residuals.data.subarray(layers * L * d, (layers + 1) * L * d);
  const logits = model.unembed({ data: last, shape: [L, d] });
  assert.deepEqual(logits.shape, [L, V]);
  assertClose(logits.data, f.logits.data, SAME_HEAD, `${label}: unembed of the last layer`, logits.shape);

  // logitLens(): per layer and position, the k likeliest tokens; the last layer's are the forward's.
  const positions = [1, L - 1];
  const k = 4;
  const r = model.logitLens(ids, { positions, k });
  assert.deepEqual(r.shape, [layers + 1, positions.length, k]);
  assert.deepEqual(r.positions, positions);
  assert.equal(r.ids.length, (layers + 1) * positions.length * k);
  assert.equal(r.texts.length, r.ids.length);
  for (let i = 0; i < r.p.length; i++) if (i % k > 0) assert.ok(r.p[i] <= r.p[i - 1], `${label}: probabilities descend`);
  positions.forEach((t, i) => {
    const p = softmax(f.logits.data.subarray(t * V, (t + 1) * V));
    for (let j = 0; j < k; j++) {
      const at = (layers * positions.length + i) * k + j;
      assert.ok(Math.abs(r.p[at] - p[r.ids[at]]) <= 1e-5, `${label}: lens p of ${r.ids[at]} at ${t}: ${r.p[at]} vs ${p[r.ids[at]]}`);
    }
    assert.ok(r.p[(layers * positions.length + i) * k] >= Math.max(...p) - 1e-5, `${label}: the lens's first is the forward's`);
  });
  // An earlier layer's lens is the head on that layer's stream: unembed() of those rows.
  const mid = model.unembed({ data: f.residuals.data.subarray(1 * L * d + (L - 1) * d, 1 * L * d + L * d), shape: [1, d] });
  const pMid = softmax(mid.data);
  const first = (1 * positions.length + 1) * k;
  assert.ok(Math.abs(r.p[first] - pMid[r.ids[first]]) <= 1e-5, `${label}: layer 0's lens`);

  // attribute(): the parts add up to the logit, which is the forward's logit of that token.
  const t = L - 2;
  const a = model.attribute(ids, { position: t });
  const row = f.logits.data.subarray(t * V, (t + 1) * V);
  assert.ok(row[a.token] >= Math.max(...row) - SAME_HEAD, `${label}: the token is the model's first at ${t}`);
  assert.ok(Math.abs(a.logit - row[a.token]) <= SAME_HEAD, `${label}: logit ${a.logit} vs the forward's ${row[a.token]}`);
  assert.deepEqual(a.heads.shape, [layers, heads]);
  assert.deepEqual(a.mlps.shape, [layers]);
  assert.deepEqual(a.attentionBias.shape, [layers]);
  const parts = [a.embeddings, a.constant, ...a.heads.data, ...a.mlps.data, ...a.attentionBias.data];
  const sum = parts.reduce((s, x) => s + x, 0);
  const size = parts.reduce((s, x) => s + Math.abs(x), 0);
  // Exact in real arithmetic; float32 rounding of the logit and of each part (test_gpt2.cpp).
  assert.ok(Math.abs(sum - a.logit) <= 2e-6 * (1 + size), `${label}: parts sum to ${sum}, the logit is ${a.logit}`);
  assert.ok(Math.abs(a.total - sum) <= 1e-9 * (1 + size), `${label}: total is the parts' sum`);
  assert.equal(a.position, t);
  assert.equal(typeof a.text, "string");

  // A token the reader names, with a head switched off: the ablated forward's logit, that head 0.
  const ablate = [[layers - 1, 1]];
  const named = model.attribute(ids, { position: t, token: 7, ablate });
  assert.equal(named.token, 7);
  assert.equal(named.heads.data[(layers - 1) * heads + 1], 0);
  const ablated = model.forward(ids, { ablate });
  assert.ok(Math.abs(named.logit - ablated.logits.data[t * V + 7]) <= SAME_HEAD, `${label}: the ablated forward's logit`);

  // headOutputRows: [layers, rows, heads, d]; an ablated head writes 0; the layers before it and
  // the other heads of its layer read the same inputs, so they write the same bits.
  const plain = model.forward(ids, { headOutputRows: [t, 0], logits: false });
  const off = model.forward(ids, { headOutputRows: [t, 0], logits: false, ablate });
  assert.deepEqual(plain.headOutputs.shape, [layers, 2, heads, d]);
  const per = 2 * heads * d;
  for (let i = 0; i < layers * per; i++) {
    const l = Math.floor(i / per);
    const h = Math.floor((i % (heads * d)) / d);
    if (l === layers - 1 && h === 1) assert.equal(off.headOutputs.data[i], 0);
    else if (l < layers - 1 || h !== 1) assert.equal(off.headOutputs.data[i], plain.headOutputs.data[i], `${label}: write ${i}`);
  }
}

test("GPT-2 (the shipped model): lens, attribution and heads' writes against the forward", async () => {
  const model = await lens.loadModel({ files: filesOf(shippedDir, TEXT_FILES) });
  await checkDecoder(model, model.encode("the cat sat on the mat and the cat sat"), "gpt2");
  model.dispose();
});

test("a Llama-family checkpoint (grouped-query attention, BF16): lens, attribution and heads' writes against the forward", async () => {
  await withLlama((model) => checkDecoder(model, Int32Array.from([1, 5, 9, 5, 9, 2, 77, 31]), "llama"));
});

test("BERT (the shipped encoder): the lens of its last layer is fillMask's head; attribution is refused", async () => {
  const model = await lens.loadModel({ files: filesOf(encoderDir, TEXT_FILES) });
  const ids = model.encode("the man [MASK] good day");
  const { layers, vocabSize: V } = model.config;
  const f = model.forward(ids, { residuals: true });
  const r = model.logitLens(ids, { positions: [3], k: 3 });
  assert.deepEqual(r.shape, [layers + 1, 1, 3]);
  const p = softmax(f.logits.data.subarray(3 * V, 4 * V));
  for (let j = 0; j < 3; j++) {
    const at = layers * 3 + j;
    assert.ok(Math.abs(r.p[at] - p[r.ids[at]]) <= 1e-5, `bert: lens p ${r.p[at]} vs ${p[r.ids[at]]}`);
  }
  assertAttnLensError(() => model.attribute(ids, { position: 3 }), "BAD_ARGUMENT", /normalises after every layer/, /logit lens/);
  model.dispose();
});

test("lens, attribution and heads' writes: every bad argument is an error naming it", async () => {
  const model = await lens.loadModel({ files: filesOf(shippedDir, TEXT_FILES) });
  const ids = Int32Array.from([5, 17, 300, 5]);
  const d = model.config.dModel;
  assertAttnLensError(() => model.unembed([1, 2]), "BAD_ARGUMENT", /rows must be a Float32Array/);
  assertAttnLensError(() => model.unembed(new Float32Array(d + 1)), "SHAPE_MISMATCH", /not a positive multiple/);
  assertAttnLensError(() => model.unembed(new Float32Array(0)), "SHAPE_MISMATCH", /0 values/);
  assertAttnLensError(() => model.unembed({ data: new Float32Array(2 * d), shape: [1, d] }), "SHAPE_MISMATCH", /rows.shape must be \[2, /);
  assertAttnLensError(() => model.unembed(new Float32Array(d).fill(NaN)), "NON_FINITE", /row 0/);
  assertAttnLensError(() => model.logitLens(ids, { positions: [4] }), "BAD_ARGUMENT", /positions\[0\] must be an integer from 0 to 3/);
  assertAttnLensError(() => model.logitLens(ids, { positions: [] }), "BAD_ARGUMENT", /at least one/);
  assertAttnLensError(() => model.logitLens(ids, { k: 0 }), "BAD_ARGUMENT", /k must be/);
  assertAttnLensError(() => model.logitLens([[1, 2]], {}), "BAD_ARGUMENT", /one sequence/);
  assertAttnLensError(() => model.logitLens(ids, { position: 1 }), "UNKNOWN_OPTION", /"position"/, /positions/);
  assertAttnLensError(() => model.attribute(ids, { position: 4 }), "BAD_ARGUMENT", /position must be .* 0 to 3; got number 4/);
  assertAttnLensError(() => model.attribute(ids, { token: 1.5 }), "BAD_ARGUMENT", /token must be a token id/);
  assertAttnLensError(
    () => model.attribute(ids, { token: model.config.vocabSize }),
    "BAD_ARGUMENT",
    /token must be a token id, an integer from 0 to \d+/,
  );
  // (A number past 32 bits must not wrap to -1, the model's own first choice.)
  assertAttnLensError(() => model.attribute(ids, { token: 2 ** 32 - 1 }), "BAD_ARGUMENT", /token must be a token id/);
  assertAttnLensError(() => model.unembed({ data: new Float32Array(d), shape: ["1", d] }), "SHAPE_MISMATCH", /rows.shape must be/);
  assertAttnLensError(() => model.attribute(ids, { ablate: [[0, 99]] }), "BAD_ARGUMENT", /ablate\[0\]/, /head 99/);
  assertAttnLensError(() => model.attribute(ids, { ablation: "mean" }), "BAD_ARGUMENT", /needs options.ablate/);
  assertAttnLensError(
    () => model.forward(ids, { headOutputRows: [4] }),
    "BAD_ARGUMENT",
    /headOutputRows\[0\] must be an integer from 0 to 3/,
  );
  assertAttnLensError(() => model.forward(ids, { headOutputRows: 2 }), "BAD_ARGUMENT", /headOutputRows must be an array/);
  assert.equal(model.forward(ids, { headOutputRows: null }).headOutputs, undefined, "null: no heads' writes");
  model.dispose();
  assertAttnLensError(() => model.attribute(ids), "BAD_ARGUMENT", /disposed/);
});
