// Heads switched off through the package (forward's and analyze()'s ablate and ablation): zero
// ablation equals the same checkpoint with those heads' slice of the attention's output
// projection set to 0 in model.safetensors (edited here, byte by byte), for GPT-2, BERT and a
// Llama-family checkpoint; a mean ablation moves the prediction and keeps a causal prefix's rows;
// a cache is left as it was; every bad option is an error naming it. Value-weighted attention
// (valueWeighted) against its identities: with one head left on, the layer's norm of the sum is
// that head's α · ‖f‖; never more than the sum of the heads' (the triangle inequality). The
// float64 references of both are in tests/cpp/test_gpt2.cpp, test_bert.cpp and test_llama.cpp.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens, valueWeightedHeads } from "attnlens";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";
import { assertAttnLensError, assertClose } from "./helpers.mjs";

const lens = await loadAttnLens();
const BYTES = { F32: 4, F16: 2, BF16: 2 };

/** The files of a folder on disk (text files as text). */
function filesOf(dir, names) {
  return Object.fromEntries(
    names.map((name) => [
      name,
      name.endsWith(".safetensors") ? new Uint8Array(readFileSync(join(dir, name))) : readFileSync(join(dir, name), "utf8"),
    ]),
  );
}

/**
 * A copy of safetensors bytes with tensor `name` ([rows, columns], row-major) zeroed where
 * `zero(row, column)` says: 0 is all-zero bytes in F32, F16 and BF16 alike.
 */
function zeroed(bytes, name, zero) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  const entry = header[name];
  assert.ok(entry, `${name} is in the file`);
  const [rows, columns] = entry.shape;
  const size = BYTES[entry.dtype];
  const out = bytes.slice();
  const start = 8 + headerLength + entry.data_offsets[0];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < columns; c++) if (zero(r, c)) out.fill(0, start + (r * columns + c) * size, start + (r * columns + c + 1) * size);
  return out;
}

/** forward(ids, { ablate }) of `files` against the plain forward of the edited `edited` files: bit for bit. */
async function checkZeroIdentity(files, edited, ids, ablate, label) {
  const model = await lens.loadModel({ files });
  const other = await lens.loadModel({ files: edited });
  const a = model.forward(ids, { ablate, attention: true, residuals: true });
  const b = other.forward(ids, { attention: true, residuals: true });
  const plain = model.forward(ids, { attention: true });
  // The same arithmetic on exact zeros (x · 0 adds nothing, in any order): equal to the bit.
  assertClose(a.logits.data, b.logits.data, 0, `${label}: logits`, a.logits.shape);
  assertClose(a.attention.data, b.attention.data, 0, `${label}: attention`, a.attention.shape);
  assertClose(a.residuals.data, b.residuals.data, 0, `${label}: residuals`, a.residuals.shape);
  const moved = a.logits.data.reduce((m, x, i) => Math.max(m, Math.abs(x - plain.logits.data[i])), 0);
  assert.ok(moved > 1e-3, `${label}: the ablation moved the logits (by ${moved})`);
  model.dispose();
  other.dispose();
}

const shippedDir = new URL("../../models/attnlens/", import.meta.url).pathname;
const shippedFiles = () => filesOf(shippedDir, ["model.safetensors", "config.json", "vocab.json", "merges.txt"]);

test("zero ablation equals zeroed output-projection weights: GPT-2 (the shipped model), heads in both layers", async () => {
  const files = shippedFiles();
  const { n_embd: d, n_head: H } = JSON.parse(files["config.json"]);
  const hd = d / H;
  // Conv1D weights are [in, out]: head h's outputs enter at rows h · hd ...
  let bytes = zeroed(files["model.safetensors"], "h.0.attn.c_proj.weight", (r) => r >= 2 * hd && r < 3 * hd);
  bytes = zeroed(bytes, "h.1.attn.c_proj.weight", (r) => r < hd);
  const ids = Int32Array.from([5, 17, 300, 5, 17, 300, 42, 8]);
  await checkZeroIdentity(
    files,
    { ...files, "model.safetensors": bytes },
    ids,
    [
      [0, 2],
      [1, 0],
    ],
    "gpt2",
  );
});

test("zero ablation equals zeroed output-projection weights: BERT (the shipped encoder)", async () => {
  const dir = new URL("../../models/attnlens-encoder/", import.meta.url).pathname;
  const files = filesOf(dir, ["model.safetensors", "config.json", "vocab.json", "merges.txt"]);
  const { hidden_size: d, num_attention_heads: H } = JSON.parse(files["config.json"]);
  const hd = d / H;
  const header = new TextDecoder().decode(files["model.safetensors"].subarray(8, 8 + 4096));
  const name = header.includes('"bert.encoder.layer.1.attention.output.dense.weight"')
    ? "bert.encoder.layer.1.attention.output.dense.weight"
    : "encoder.layer.1.attention.output.dense.weight";
  // torch's Linear is [out, in]: head h enters at columns h · hd ...
  const bytes = zeroed(files["model.safetensors"], name, (r, c) => c >= hd && c < 2 * hd);
  const model = await lens.loadModel({ files });
  const ids = model.encode("the man said good day");
  model.dispose();
  await checkZeroIdentity(files, { ...files, "model.safetensors": bytes }, ids, [[1, 1]], "bert");
});

test("zero ablation equals zeroed o_proj columns: a Llama-family checkpoint with grouped-query attention (BF16)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-ablation-"));
  try {
    const m = { ...LLAMA_PRESETS.tiny, vocab: 300, hidden: 48, heads: 6, kvHeads: 2, intermediate: 64 };
    writeLlamaCheckpoint(dir, m, { dtype: "BF16", seed: 5 });
    const files = filesOf(dir, ["model.safetensors", "config.json"]);
    const hd = m.hidden / m.heads;
    // Query head 4 shares key/value head 1 with head 3 and 5: only its own output goes.
    const bytes = zeroed(files["model.safetensors"], "model.layers.1.self_attn.o_proj.weight", (r, c) => c >= 4 * hd && c < 5 * hd);
    await checkZeroIdentity(files, { ...files, "model.safetensors": bytes }, Int32Array.from([1, 5, 9, 5, 9, 2, 77]), [[1, 4]], "llama");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("mean ablation of a causal model: a prefix's rows do not depend on the tokens after it; analyze() agrees with forward()", async () => {
  const model = await lens.loadModel({ files: shippedFiles() });
  const ids = Int32Array.from([5, 17, 300, 5, 17, 300, 42, 8]);
  const ablate = [
    [0, 1],
    [1, 3],
  ];
  const full = model.forward(ids, { ablate, ablation: "mean", attention: true });
  const prefix = model.forward(ids.subarray(0, 5), { ablate, ablation: "mean", attention: true });
  const V = full.logits.shape[1];
  // The prefix's rows are the same numbers up to the row blocking of the products (rows of 5
  // against rows of 8: float32 sums of at most 512 terms of size ~1, ~1e-5 apart at worst).
  assertClose(prefix.logits.data, full.logits.data.subarray(0, 5 * V), 1e-4, "prefix logits", prefix.logits.shape);
  const zero = model.forward(ids, { ablate });
  const differs = zero.logits.data.some((x, i) => Math.abs(x - full.logits.data[i]) > 1e-3);
  assert.ok(differs, "mean and zero ablation differ");

  const text = "the cat sat on the mat and the cat sat on the";
  const a = model.analyze(text, { k: 3, ablate, ablation: "mean" });
  const f = model.forward(model.encode(text), { ablate, ablation: "mean" });
  const last = f.logits.data.subarray((a.tokens.length - 1) * V, a.tokens.length * V);
  const best = last.indexOf(Math.max(...last));
  assert.equal(a.predictions.at(-1)[0].id, best, "analyze()'s first prediction is forward()'s argmax");
  model.dispose();
});

test("an ablated forward or analyze() with a cache computes every row and leaves the cache as it was", async () => {
  const model = await lens.loadModel({ files: shippedFiles() });
  const cache = model.createCache();
  const text = "the cat sat on the mat and the cat sat on the";
  const first = model.analyze(text, { k: 3, cache, attention: true });
  const ablate = [[1, 2]];
  const off = model.analyze(text, { k: 3, cache, attention: true, ablate });
  const plainOff = model.analyze(text, { k: 3, attention: true, ablate });
  assert.deepEqual(off.predictions, plainOff.predictions);
  assertClose(off.attention.data, plainOff.attention.data, 0, "ablated attention with and without the cache");
  const again = model.analyze(text, { k: 3, cache, attention: true });
  assert.equal(cache.reused, again.tokens.length, "every row came from the cache");
  assert.deepEqual(again.predictions, first.predictions);
  assertClose(again.attention.data, first.attention.data, 0, "the cache's attention");
  cache.dispose();
  model.dispose();
});

test("bad ablation options are errors that name them", async () => {
  const model = await lens.loadModel({ files: shippedFiles() });
  const ids = [1, 2, 3];
  const cases = [
    [{ ablate: [] }, /ablate must be a non-empty array/],
    [{ ablate: [[0, 1, 2]] }, /ablate\[0\] must be a \[layer, head\] pair/],
    [
      {
        ablate: [
          [0, 1],
          [0.5, 1],
        ],
      },
      /ablate\[1\] must be a \[layer, head\] pair/,
    ],
    [{ ablate: [[0, -1]] }, /ablate\[0\] must be a \[layer, head\] pair/],
    [{ ablate: "0,1" }, /ablate must be a non-empty array/],
    [{ ablate: [[2, 0]] }, /ablate\[0\] names layer 2; the model's layers are 0 to 1/],
    [{ ablate: [[0, 4]] }, /ablate\[0\] names head 4; the model's heads are 0 to 3/],
    [
      {
        ablate: [
          [0, 1],
          [1, 1],
          [0, 1],
        ],
      },
      /ablate\[2\] names layer 0 head 1 again \(ablate\[0\]\)/,
    ],
    [{ ablate: [[0, 1]], ablation: "half" }, /ablation must be "zero" or "mean"; got string "half"/],
    [{ ablation: "mean" }, /ablation \("mean"\) needs options\.ablate/],
  ];
  for (const [options, pattern] of cases) {
    assertAttnLensError(() => model.forward(ids, options), "BAD_ARGUMENT", pattern);
    assertAttnLensError(() => model.analyze("a b c", options), "BAD_ARGUMENT", pattern);
  }
  // Every head of a layer off still computes.
  const r = model.forward(ids, { ablate: [0, 1, 2, 3].map((h) => [1, h]), ablation: "mean" });
  assert.ok(r.logits.data.every(Number.isFinite));
  model.dispose();
});

test("value-weighted attention: one head left on gives that head's α · ‖f‖; the layer's never exceeds the heads' sum", async () => {
  const model = await lens.loadModel({ files: shippedFiles() });
  const ids = Int32Array.from([5, 17, 300, 5, 17, 300, 42, 8]);
  const L = ids.length;
  const r = model.forward(ids, { attention: true, valueWeighted: true });
  const [layers, heads] = r.attention.shape;
  assert.deepEqual(r.valueNorms.shape, [layers, heads, L]);
  assert.deepEqual(r.valueWeighted.shape, [layers, L, L]);
  const perHead = valueWeightedHeads(r.attention, r.valueNorms);
  for (let l = 0; l < layers; l++)
    for (let k = 0; k < L * L; k++) {
      let sum = 0;
      for (let h = 0; h < heads; h++) sum += perHead.data[(l * heads + h) * L * L + k];
      // ‖Σ a_h f_h‖ <= Σ a_h ‖f_h‖, up to float32 rounding of each side (2^-24 relative, twice).
      assert.ok(r.valueWeighted.data[l * L * L + k] <= sum * (1 + 1e-6) + 1e-7, `layer ${l} cell ${k}`);
    }
  // Heads 0, 1 and 3 of layer 1 off: the layer mixes by head 2 alone. (Ablation changes nothing
  // before layer 1, so layer 1's attention and values are the plain forward's.)
  const one = model.forward(ids, {
    attention: true,
    valueWeighted: true,
    ablate: [
      [1, 0],
      [1, 1],
      [1, 3],
    ],
  });
  const head2 = perHead.data.subarray((1 * heads + 2) * L * L, (1 * heads + 3) * L * L);
  // Both sides round a float64 result of the same float32 inputs once; the Gram route squares
  // and roots: 1e-6 relative to norms of a few units.
  assertClose(one.valueWeighted.data.subarray(L * L, 2 * L * L), head2, 1e-5, "layer 1 with head 2 alone");
  assert.ok([0, 1, 3].every((h) => one.valueNorms.data.subarray((heads + h) * L, (heads + h + 1) * L).every((n) => n === 0)));
  // With a cache: every row computed, the same numbers; the cache is left as it was.
  const cache = model.createCache();
  model.forward(ids, { cache });
  const cached = model.forward(ids, { cache, attention: true, valueWeighted: true });
  assertClose(cached.valueWeighted.data, r.valueWeighted.data, 0, "value-weighted with a cache");
  assert.equal(model.forward(ids, { cache }).logits.shape[0], L);
  assert.equal(cache.reused, L);
  cache.dispose();
  assertAttnLensError(
    () => valueWeightedHeads(r.attention, { data: r.valueNorms.data, shape: [1, 2, 3] }),
    "BAD_ARGUMENT",
    /valueNorms must be/,
  );
  assertAttnLensError(() => model.forward(ids, { valueWeighted: 1 }), "BAD_ARGUMENT", /valueWeighted/);
  model.dispose();
});
