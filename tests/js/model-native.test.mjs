// The model module agrees with the native library on a generated checkpoint: logits,
// gradients, training losses, and save() writes the native writer's bytes.
// Fixtures: written by the native program attnlens_dump_model_fixtures (scripts/test.sh runs
// it): the checkpoint's files and results.json (see tests/cpp/dump_model_fixtures.cpp).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose, maxAbs } from "./helpers.mjs";

const dir = process.env.ATTNLENS_MODEL_FIXTURES ?? new URL("../../build/native/model-fixtures/", import.meta.url).pathname;
const read = (name, encoding) => readFileSync(`${dir}/${name}`, encoding);
const files = {
  "model.safetensors": read("model.safetensors"),
  "config.json": read("config.json", "utf8"),
  "vocab.json": read("vocab.json", "utf8"),
  "merges.txt": read("merges.txt", "utf8"),
};
const native = JSON.parse(read("results.json", "utf8"));
const { B, T } = native;
const ids = { data: Int32Array.from(native.ids), shape: [B, T] };
const targets = { data: Int32Array.from(native.targets), shape: [B, T] };

const lens = await loadAttnLens();

test("logits equal the native ones within 1e-4", async () => {
  const model = await lens.loadModel({ files });
  const { logits } = model.forward(ids);
  assert.deepEqual(logits.shape, native.logits.shape);
  // Both sides run the same float32 operations in different orders (Eigen's native kernels vs
  // wasm SIMD128/relaxed FMA). Each logit ends a chain of float32 dot products of length at most
  // 4d = 256 through 2 blocks and the unembedding; the rounding of such a sum is below n·u
  // (u = 2^-24 ≈ 6e-8) times the sum of its terms' magnitudes, about 256 · 6e-8 ≈ 1.5e-5 of
  // those magnitudes (O(1) here: LayerNorm'd activations, weights ~ N(0, 0.02²)), compounded over
  // ~6 such products: ~1e-4. The issue asks for 1e-4; the measured difference is ~2e-7.
  assertClose(logits.data, native.logits.data, 1e-4, "logits", logits.shape);
  model.dispose();
});

test("gradients of every tensor equal the native ones within 2e-5 of the tensor's largest", async () => {
  const model = await lens.loadModel({ files });
  const { loss, grads } = model.gradients(ids, targets);
  // The loss is a mean of B·T = 24 log-softmaxes over V = 300 logits: float32 rounding of the
  // sums stays below ~(V + B·T) · u ≈ 2e-5 relative.
  assert.ok(Math.abs(loss - native.loss) <= 2e-5 * Math.abs(native.loss), `loss ${loss} vs native ${native.loss}`);
  assert.deepEqual(Object.keys(grads), Object.keys(native.grads), "the checkpoint's tensor names, in order");
  for (const [name, expected] of Object.entries(native.grads)) {
    assert.deepEqual(grads[name].shape, expected.shape, name);
    // Each gradient entry is a float32 sum over the B·T = 24 positions of products back-
    // propagated through at most 2 blocks, each step a sum of at most 4d = 256 terms: a relative
    // rounding bound of about (24 + 2·256) · u ≈ 3e-5 of the magnitudes involved, which the
    // tensor's largest gradient bounds. Measured: under 1e-6 of it.
    const tolerance = 2e-5 * maxAbs(expected.data);
    assertClose(grads[name].data, expected.data, tolerance, `grad ${name}`, expected.shape);
  }
  model.dispose();
});

test("three AdamW steps give the native losses", async () => {
  const model = await lens.loadModel({ files });
  const batch = { data: Int32Array.from(native.trainBatch), shape: [B, T + 1] };
  const losses = [0, 1, 2].map(() => model.trainStep(batch, { lr: native.lr }));
  // Each step's loss as above (2e-5 relative); the updates in between move each weight by at
  // most lr = 1e-3 (Adam's normalised step), and differences in the last bits of the gradients
  // change those steps by as little: the losses stay within the same bound.
  for (let i = 0; i < 3; i++) {
    assert.ok(
      Math.abs(losses[i] - native.trainLosses[i]) <= 2e-5 * native.trainLosses[i],
      `step ${i}: ${losses[i]} vs native ${native.trainLosses[i]}`,
    );
  }
  model.dispose();
});

test("save() of a loaded checkpoint gives the native writer's files, byte for byte", async () => {
  const model = await lens.loadModel({ files });
  const saved = model.save();
  assert.deepEqual(Object.keys(saved).sort(), Object.keys(files).sort());
  assert.ok(saved["model.safetensors"] instanceof Uint8Array);
  assert.ok(Buffer.from(saved["model.safetensors"]).equals(files["model.safetensors"]), "model.safetensors differs from the native file");
  for (const name of ["config.json", "vocab.json", "merges.txt"]) assert.equal(saved[name], files[name], name);
  model.dispose();
});

test("predict: per position the k likeliest next tokens, their softmax probabilities, likeliest first", async () => {
  const model = await lens.loadModel({ files });
  const text = "the cat sat on the mat";
  const ids = model.encode(text);
  const predictions = model.predict(text, { k: 4 });
  assert.equal(predictions.length, ids.length);
  const { data, shape } = model.forward(ids).logits;
  const V = shape[1];
  predictions.forEach((top, t) => {
    const row = Array.from(data.subarray(t * V, (t + 1) * V));
    const max = Math.max(...row);
    const sum = row.reduce((s, x) => s + Math.exp(x - max), 0);
    const order = row.map((x, v) => [x, v]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    assert.deepEqual(
      top.map((p) => p.id),
      order.slice(0, 4).map(([, v]) => v),
      `position ${t}`,
    );
    for (const p of top) {
      // Both sides compute exp(x - max) / sum in float64 from the same float32 logits.
      assert.ok(Math.abs(p.p - Math.exp(row[p.id] - max) / sum) <= 1e-12, `position ${t} id ${p.id}`);
      assert.equal(p.text, model.decode([p.id]));
    }
  });
  assert.deepEqual(model.predict("", { k: 2 }), []);
  // The fixture's tokenizer has fewer tokens than the model's 300 rows: ids beyond it are ranked
  // too and have no text. k is at most 256: the 256 likeliest and the other 44 (from the logits)
  // hold all the probability.
  const tokenizerSize = Object.keys(JSON.parse(files["vocab.json"])).length;
  assert.ok(tokenizerSize < V, `the tokenizer has ${tokenizerSize} tokens`);
  const top = model.predict("the", { k: 256 })[0];
  assert.equal(top.length, 256);
  for (const p of top) if (p.id >= tokenizerSize) assert.equal(p.text, "");
  const theLogits = model.forward(model.encode("the")).logits.data.subarray(0, V);
  const theMax = Math.max(...theLogits);
  const theSum = theLogits.reduce((s, x) => s + Math.exp(x - theMax), 0);
  const shown = new Set(top.map((p) => p.id));
  const rest = theLogits.reduce((s, x, id) => s + (shown.has(id) ? 0 : Math.exp(x - theMax) / theSum), 0);
  // A sum of 300 float64 terms of at most 1: its rounding is below 300 · 2^-53.
  assert.ok(Math.abs(top.reduce((s, p) => s + p.p, 0) + rest - 1) <= 1e-12);
  assert.ok(
    top.every((p) => Math.exp(theLogits[p.id] - theMax) / theSum >= rest / 44 || rest === 0),
    "the shown ones are the likeliest",
  );
  assert.throws(
    () => model.predict(text, { k: 0 }),
    (e) => e.code === "BAD_ARGUMENT" && /k must be/.test(e.message),
  );
  model.dispose();
});

test("analyze: one forward gives predict's predictions, forward's attention and the text's tokens", async () => {
  const model = await lens.loadModel({ files });
  const text = "the cat sat on the mat, the cat sat";
  const tokens = model.tokens(text);
  const r = model.analyze(text, { k: 3, attention: true });
  assert.deepEqual(r.tokens, tokens);
  assert.equal(r.totalTokens, tokens.length);
  // The same ids through the same forward: bit-identical results.
  assert.deepEqual(r.predictions, model.predict(text, { k: 3 }));
  const { attention } = model.forward(model.encode(text), { attention: true });
  assert.deepEqual(r.attention.shape, attention.shape);
  assert.ok(Buffer.from(r.attention.data.buffer).equals(Buffer.from(attention.data.buffer)), "attention differs from forward's");
  assert.equal(model.analyze(text).attention, null, "attention only when asked");

  // maxTokens keeps the first tokens; the count of all is reported.
  const first = model.analyze(text, { maxTokens: 4, attention: true });
  assert.deepEqual(first.tokens, tokens.slice(0, 4));
  assert.equal(first.totalTokens, tokens.length);
  assert.deepEqual(first.attention.shape.slice(2), [4, 4]);
  assert.deepEqual(
    first.predictions,
    model.predict(
      tokens
        .slice(0, 4)
        .map((t) => t.text)
        .join(""),
      { k: 5 },
    ),
  );
  // A text longer than the context is cut to the context by default.
  const long = "the cat ".repeat(model.config.context);
  const cut = model.analyze(long);
  assert.equal(cut.tokens.length, model.config.context);
  assert.ok(cut.totalTokens > model.config.context);
  assert.deepEqual(model.analyze(""), { tokens: [], totalTokens: 0, predictions: [], attention: null });

  for (const maxTokens of [0, 1.5, model.config.context + 1, "4"]) {
    assert.throws(
      () => model.analyze(text, { maxTokens }),
      (e) => e.code === "BAD_ARGUMENT" && /maxTokens/.test(e.message),
      `maxTokens ${maxTokens}`,
    );
  }
  assert.throws(
    () => model.analyze(text, { k: -1 }),
    (e) => e.code === "BAD_ARGUMENT" && /k must be/.test(e.message),
  );
  model.dispose();
});
