// The model API on models made in the test: forward's invariants, batches, predict, training,
// determinism, save/load round trips, memory, and bad arguments.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertAttnLensError, assertClose, randomGenerator } from "./helpers.mjs";
import { safetensorsHeaderLength } from "../../web/files/safetensors.js";

const lens = await loadAttnLens();
const config = { layers: 2, heads: 4, dModel: 32, context: 16, vocabSize: 64 };
// What every GPT-2 says of itself besides its sizes (the family's registry entry).
// GPT-2's own: one K/V head per query head, learned positions, LayerNorm (with `config`'s sizes).
const GPT2_INFO = {
  family: "gpt2",
  causal: true,
  prediction: "next-token",
  hasHead: true,
  typeVocabSize: 0,
  kvHeads: config.heads,
  headDim: config.dModel / config.heads,
  positions: "learned",
  norm: "layernorm",
  windows: [],
  scoreSoftcap: 0,
  logitSoftcap: 0,
};

/** The JSON header of a model.safetensors file (the page's own reader finds its length). */
const safetensorsHeader = (bytes) => JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + safetensorsHeaderLength(bytes))));

function randomIds(n, vocab, seed) {
  const rand = randomGenerator(seed);
  return Int32Array.from({ length: n }, () => Math.floor(rand() * vocab));
}

test("forward: logits [L, V], attention [layers, heads, L, L] with rows summing to 1 and zero upper triangles", async () => {
  const model = await lens.createModel({ config, seed: 1 });
  assert.deepEqual({ ...model.config }, { ...GPT2_INFO, ...config, attentionNorm: true });
  const L = 11;
  const r = model.forward(randomIds(L, 64, 2), { attention: true, residuals: true });
  assert.deepEqual(r.logits.shape, [L, 64]);
  assert.deepEqual(r.attention.shape, [2, 4, L, L]);
  assert.deepEqual(r.residuals.shape, [3, L, 32]);
  assert.ok(r.logits.data.every(Number.isFinite));
  const a = r.attention.data;
  for (let row = 0; row < 2 * 4 * L; row++) {
    const i = row % L;
    let sum = 0;
    for (let j = 0; j < L; j++) {
      const w = a[row * L + j];
      if (j > i) assert.equal(w, 0, `row ${row} (query ${i}) key ${j} is above the diagonal`);
      assert.ok(w >= 0 && w <= 1);
      sum += w;
    }
    // A softmax row of at most L = 11 float32 terms: its sum is 1 within about L · u ≈ 7e-7.
    assert.ok(Math.abs(sum - 1) <= 1e-6, `row ${row} sums to ${sum}`);
  }
  model.dispose();
});

test("a batch [B, T] gives each sequence's results", async () => {
  const model = await lens.createModel({ config, seed: 3 });
  const rows = [randomIds(9, 64, 4), randomIds(9, 64, 5), randomIds(9, 64, 6)];
  const batched = model.forward(
    rows.map((r) => [...r]),
    { attention: true },
  );
  assert.deepEqual(batched.logits.shape, [3, 9, 64]);
  assert.deepEqual(batched.attention.shape, [2, 3, 4, 9, 9]);
  rows.forEach((ids, b) => {
    const one = model.forward(ids);
    // The same float32 operations, but the matrix products see 9 rows instead of 27 and may
    // block (and so round) differently: the bound of tests/js/model-native.test.mjs, 1e-4.
    assertClose(one.logits.data, batched.logits.data.subarray(b * 9 * 64, (b + 1) * 9 * 64), 1e-4, `sequence ${b}`, [9, 64]);
  });
  model.dispose();
});

test("createModel is deterministic; trainStep lowers the loss on a fixed batch, the same bits twice", async () => {
  const batch = Array.from({ length: 4 }, (_, b) => [...randomIds(config.context + 1, 64, 10 + b)]);
  const run = async () => {
    const model = await lens.createModel({ config, seed: 42 });
    const losses = Array.from({ length: 30 }, () => model.trainStep(batch, { lr: 3e-3 }));
    model.dispose();
    return losses;
  };
  const first = await run();
  const second = await run();
  assert.deepEqual(second, first, "same seed, same batch: the same losses bit for bit");
  // Uniform over 64 tokens is ln 64 ≈ 4.16 nats; 30 steps on one batch of 64 targets memorise much of it.
  assert.ok(Math.abs(first[0] - Math.log(64)) < 0.1, `initial loss ${first[0]} is near ln 64`);
  assert.ok(first[29] < 0.5 * first[0], `loss fell from ${first[0]} to ${first[29]}`);
});

test("setOptimizer: a schedule supplies the rate; settings are validated by the library", async () => {
  const model = await lens.createModel({ config, seed: 8 });
  assert.deepEqual(model.optimizer.adamw, (await lens.createModel({ config })).optimizer.adamw);
  const batch = [[...randomIds(config.context + 1, 64, 9)]];
  assertAttnLensError(() => model.trainStep(batch), "BAD_ARGUMENT", /lr/);
  const o = model.setOptimizer({ weightDecay: 0, schedule: { maxLr: 1e-2, minLr: 1e-3, warmupSteps: 2, totalSteps: 10 } });
  assert.equal(o.adamw.weightDecay, 0);
  const steps = [0, 1, 2].map(() => model.trainStepDetails(batch));
  assert.deepEqual(
    steps.map((s) => s.step),
    [1, 2, 3],
  );
  // nanoGPT's warm-up: step 0 uses max_lr / warmup_steps, step 1 max_lr · 2 / 2.
  assert.equal(steps[0].lr, Math.fround(1e-2 / 2));
  assert.equal(steps[1].lr, Math.fround(1e-2));
  assertAttnLensError(() => model.setOptimizer({ beta1: 1.5 }), "BAD_ARGUMENT", /beta1/);
  assertAttnLensError(() => model.setOptimizer({ schedule: { warmupSteps: 20, totalSteps: 10 } }), "BAD_ARGUMENT");
  assertAttnLensError(() => model.setOptimizer({ momentum: 0.9 }), "UNKNOWN_OPTION", /momentum/);
  model.dispose();
});

test("save() loads again: the same config and the same logits, bit for bit (F32), close in F16", async () => {
  const model = await lens.createModel({ config, seed: 12 });
  model.trainStep([[...randomIds(17, 64, 13)]], { lr: 1e-2 });
  const ids = randomIds(10, 64, 14);
  const before = model.forward(ids).logits;
  const saved = model.save();
  assert.deepEqual(Object.keys(saved).sort(), ["config.json", "model.safetensors"]);
  const again = await lens.loadModel({ files: saved });
  assert.deepEqual({ ...again.config }, { ...GPT2_INFO, ...config, attentionNorm: true });
  assert.deepEqual(again.forward(ids).logits, before);
  const half = await lens.loadModel({ files: model.save({ dtype: "F16" }) });
  // F16 keeps 11 significant bits: each weight moves by at most 2^-11 relative (~5e-4). The
  // logits of this small model (|logit| < 1) then move by well under 1e-2.
  assertClose(half.forward(ids).logits.data, before.data, 1e-2, "F16 logits", before.shape);
  for (const m of [model, again, half]) m.dispose();
});

test("attentionNorm false: no ln_1 tensors, saved and loaded as such, trains", async () => {
  const bare = { ...config, attentionNorm: false };
  const model = await lens.createModel({ config: bare, seed: 12 });
  const full = await lens.createModel({ config, seed: 12 });
  assert.deepEqual({ ...model.config }, { ...GPT2_INFO, ...bare });
  // 2 d_model parameters fewer per layer: ln_1's weight and bias.
  assert.equal(model.parameters, full.parameters - 2 * 2 * 32);
  const batch = [[...randomIds(17, 64, 13)]];
  const losses = Array.from({ length: 5 }, () => model.trainStep(batch, { lr: 1e-2 }));
  assert.ok(losses[4] < losses[0], `loss ${losses[0]} -> ${losses[4]}`);
  const saved = model.save();
  const configJson = saved["config.json"];
  assert.match(configJson, /"attnlens_attention_norm": false/);
  const names = Object.keys(safetensorsHeader(saved["model.safetensors"])).join(" ");
  assert.doesNotMatch(names, /ln_1/);
  assert.match(names, /h\.0\.ln_2\.weight/);
  const again = await lens.loadModel({ files: saved });
  assert.deepEqual({ ...again.config }, { ...GPT2_INFO, ...bare });
  const ids = randomIds(10, 64, 14);
  const logits = model.forward(ids).logits;
  // deepEqual counts NaN as equal to NaN: the logits must be numbers first.
  assert.ok(logits.data.every(Number.isFinite), "logits are finite");
  assert.deepEqual(again.forward(ids).logits, logits);
  await assert.rejects(
    lens.createModel({ config: { ...config, attentionNorm: 0 } }),
    (e) => e.code === "BAD_ARGUMENT" && /attentionNorm must be true or false/.test(e.message),
  );
  for (const m of [model, full, again]) m.dispose();
});

test("createCache: typing, deleting and editing give a full forward's results; the cache says what it kept", async () => {
  const model = await lens.createModel({ config, seed: 21 });
  const cache = model.createCache();
  assert.deepEqual([cache.tokens, cache.reused], [0, 0]);
  let ids = [...randomIds(10, 64, 22)];
  const step = (what, reused) => {
    const cached = model.forward(ids, { attention: true, residuals: true, cache });
    const full = model.forward(ids, { attention: true, residuals: true });
    // As a batch's rows (above): the same arithmetic blocked differently, within 1e-4.
    assertClose(cached.logits.data, full.logits.data, 1e-4, `${what}: logits`, full.logits.shape);
    assertClose(cached.attention.data, full.attention.data, 1e-6, `${what}: attention`, full.attention.shape);
    assertClose(cached.residuals.data, full.residuals.data, 1e-4, `${what}: residuals`, full.residuals.shape);
    assert.deepEqual([cache.tokens, cache.reused], [ids.length, reused], what);
  };
  step("first", 0);
  ids.push(5);
  step("one token typed", 10);
  ids = ids.slice(0, 7);
  step("four deleted", 7);
  ids[3] = (ids[3] + 1) % 64;
  step("a middle token changed", 3);
  // A cache serves the model that made it, one sequence at a time, until it is disposed.
  const other = await lens.createModel({ config, seed: 23 });
  assert.throws(
    () => other.forward(ids, { cache }),
    (e) => e.code === "BAD_ARGUMENT" && /options\.cache belongs to another model/.test(e.message),
  );
  assert.throws(
    () => model.forward([ids, ids], { cache }),
    (e) => e.code === "BAD_ARGUMENT" && /one sequence/.test(e.message),
  );
  assert.throws(
    () => model.forward(ids, { cache: {} }),
    (e) => e.code === "BAD_ARGUMENT" && /options\.cache must be a cache made by model\.createCache\(\)/.test(e.message),
  );
  cache.dispose();
  assert.throws(
    () => model.forward(ids, { cache }),
    (e) => e.code === "BAD_ARGUMENT" && /was disposed/.test(e.message),
  );
  other.dispose();
  model.dispose();
});

/** The shipped causal model (models/attnlens/) with its tokenizer. */
function loadShippedModel() {
  const read = (name) =>
    readFileSync(new URL(`../../models/attnlens/${name}`, import.meta.url), name.endsWith(".safetensors") ? undefined : "utf8");
  return lens.loadModel({
    files: Object.fromEntries(["model.safetensors", "config.json", "vocab.json", "merges.txt"].map((n) => [n, read(n)])),
  });
}

test("analyze with a cache on the shipped model: each keystroke's figure equals the uncached one", async () => {
  const model = await loadShippedModel();
  const cache = model.createCache();
  const text = "It is a truth universally acknowledged, that a single man";
  let reusedSome = 0;
  for (const end of [8, 9, 10, 20, 21, 35, 34, 58, 40]) {
    const typed = text.slice(0, end);
    const cached = model.analyze(typed, { attention: true, cache });
    const plain = model.analyze(typed, { attention: true });
    assert.deepEqual(
      cached.tokens.map((t) => t.id),
      plain.tokens.map((t) => t.id),
    );
    // The new rows come through products of other row counts than the full forward's (the
    // few-rows kernel), so q and k differ in the last bits: relative width · 2^-24 (128 · 6e-8 ≈
    // 8e-6) of scores that this model's sharp heads put at up to ~10 (1/√32-scaled), so a score
    // moves by ≤ 1e-4 and its weight w by ≤ w(1 − w) · 1e-4 ≤ 2.5e-5.
    assertClose(cached.attention.data, plain.attention.data, 2.5e-5, `"${typed}": attention`, plain.attention.shape);
    // The k-th likeliest probability, rank by rank: sorted values move no more than the values
    // (logits within 1e-4, as above, move a probability by under 2e-4), even where two are tied.
    cached.predictions.forEach((top, i) =>
      assertClose(
        top.map((p) => p.p),
        plain.predictions[i].map((p) => p.p),
        2e-4,
        `"${typed}": the five likeliest after token ${i}`,
      ),
    );
    if (cache.reused > 0) reusedSome++;
  }
  assert.ok(reusedSome >= 6, `the cache kept a prefix on ${reusedSome} of 9 edits`);
  cache.dispose();
  model.dispose();
});

test("analyze with a cache reuses its kept rows' predictions only while they describe the sentence", async () => {
  const model = await loadShippedModel();
  const cache = model.createCache();
  // Each cached figure against the uncached one: the same tokens ranked with the same
  // probabilities (within 2e-4, as above). Predictions left from another sentence, another k or
  // the weights before a training step would differ wholesale.
  const check = (text, k, what) => {
    const cached = model.analyze(text, { attention: true, cache, k });
    const plain = model.analyze(text, { attention: true, k });
    assert.equal(cached.predictions.length, plain.predictions.length, what);
    cached.predictions.forEach((top, i) => {
      assert.equal(top.length, k, `${what}: k after token ${i}`);
      assertClose(
        top.map((p) => p.p),
        plain.predictions[i].map((p) => p.p),
        2e-4,
        `${what}: the likeliest after token ${i}`,
      );
    });
    return cached;
  };
  const text = "It is a truth universally acknowledged, that a single man in possession of a good fortune";
  check(text.slice(0, 30), 5, "first");
  const appended = check(text.slice(0, 34), 5, "appended");
  assert.ok(cache.reused > 0, "the append kept a prefix");
  // The caller's objects are its own: changing them changes nothing kept.
  appended.predictions[0][0].p = -1;
  appended.predictions[0][0].text = "changed";
  const again = check(text.slice(0, 36), 5, "after the caller changed its copy");
  assert.notEqual(again.predictions[0][0].text, "changed");
  // An edit in the middle (rows from the changed word on are new), a deletion at the end (every
  // row kept), and a run without attention before one with it.
  check("It is a lie universally acknowledged, that a single man in", 5, "an edit in the middle");
  check("It is a lie universally acknowledged, that a single", 5, "a deletion at the end");
  model.analyze("It is a lie universally acknowledged, that a single man", { cache, k: 5 });
  check("It is a lie universally acknowledged, that a single man in", 5, "with attention after a run without");
  // forward() with the cache on another sentence: the kept predictions are not reused for it.
  model.forward(model.encode("Mr. Darcy said nothing at all"), { cache });
  check("Mr. Darcy said nothing at all, and Elizabeth", 5, "after forward() on another sentence");
  check("Mr. Darcy said nothing at all, and Elizabeth smiled", 3, "another k");
  check("Mr. Darcy said nothing at all, and Elizabeth smiled at", 3, "the same k again");
  // A training step changes every row: nothing kept before it is reused.
  model.trainStep([[...model.encode("The weather was fine and the roads were dry.")]], { lr: 3e-2 });
  check("Mr. Darcy said nothing at all, and Elizabeth smiled at him", 3, "after a training step");
  cache.dispose();
  model.dispose();
});

test("analyze with predictionRows ranks those tokens only; the rest come later from the cache", async () => {
  const model = await loadShippedModel();
  const text = "It is a truth universally acknowledged, that a single man in possession of a good fortune";
  const plain = model.analyze(text, { attention: true });
  const n = plain.tokens.length;
  // The same rows of the same forward (the unembedding of fewer rows: products of other row
  // counts, within the 2e-4 of the tests above).
  const same = (got, i, what) =>
    assertClose(
      got.map((p) => p.p),
      plain.predictions[i].map((p) => p.p),
      2e-4,
      `${what}: the likeliest after token ${i}`,
    );
  // Without a cache: the rows asked, in any order, with a repeat; null elsewhere.
  const some = model.analyze(text, { attention: true, predictionRows: [n - 1, 2, 2] });
  assert.equal(some.predictions.length, n);
  some.predictions.forEach((top, i) => (i === 2 || i === n - 1 ? same(top, i, "without a cache") : assert.equal(top, null, `token ${i}`)));
  assertClose(some.attention.data, plain.attention.data, 0, "attention (predictionRows changes no other result)", plain.attention.shape);

  // With a cache: the last token first (as the page does), then the rest, then an append.
  const cache = model.createCache();
  const first = model.analyze(text, { attention: true, cache, predictionRows: [n - 1] });
  assert.deepEqual(
    first.predictions.map((p, i) => (p === null ? null : i)).filter((i) => i !== null),
    [n - 1],
  );
  same(first.predictions[n - 1], n - 1, "the last token first");
  const rest = Array.from({ length: n - 1 }, (_, i) => i);
  const filled = model.analyze(text, { cache, predictionRows: rest });
  assert.equal(cache.reused, n, "asking for other rows of the same text runs no block again");
  rest.forEach((i) => same(filled.predictions[i], i, "the rest, from the cache"));
  assert.equal(filled.predictions[n - 1], null, "a row not asked is null");
  // Everything the two calls ranked is reused by the next keystroke's figure.
  const longer = `${text} must be`;
  const next = model.analyze(longer, { attention: true, cache });
  const plainNext = model.analyze(longer, { attention: true });
  next.predictions.forEach((top, i) =>
    assertClose(
      top.map((p) => p.p),
      plainNext.predictions[i].map((p) => p.p),
      2e-4,
      `after the append: token ${i}`,
    ),
  );

  // Bad rows are named.
  for (const [rows, needle] of [
    [[0, n], `predictionRows[1] must be a token position, an integer from 0 to ${n - 1}`],
    [[-1], "predictionRows[0]"],
    [[1.5], "predictionRows[0]"],
    ["0", "predictionRows must be an array of token positions"],
  ])
    assertAttnLensError(
      () => model.analyze(text, { cache, predictionRows: rows }),
      "BAD_ARGUMENT",
      new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
    );
  assertAttnLensError(
    () => model.analyze("", { cache, predictionRows: [0] }),
    "BAD_ARGUMENT",
    /the text has no tokens, so predictionRows must be empty; predictionRows\[0\] is number 0/,
  );
  assert.deepEqual(model.analyze("", { cache, predictionRows: [] }).predictions, []);
  // The cache still serves after the errors.
  same(model.analyze(text, { cache, predictionRows: [3] }).predictions[3], 3, "after the errors");
  cache.dispose();
  model.dispose();
});

test("attentionFrom: the attention's query rows from it on, the rows of the whole attention; with a cache, those after an edit", async () => {
  const model = await lens.createModel({ config, seed: 5 });
  const ids = randomIds(12, config.vocabSize, 6);
  const whole = model.forward(ids, { attention: true }).attention;
  /** Rows [from, T) of an attention [layers, heads, T, T], as [layers, heads, T - from, T]. */
  const rowsFrom = ({ data, shape: [layers, heads, T] }, from) => {
    const out = [];
    for (let g = 0; g < layers * heads; g++) out.push(...data.subarray((g * T + from) * T, (g + 1) * T * T));
    return out;
  };
  for (const from of [0, 1, 11, 12]) {
    const cut = model.forward(ids, { attention: true, attentionFrom: from }).attention;
    assert.deepEqual(cut.shape, [config.layers, config.heads, 12 - from, 12]);
    assertClose(cut.data, rowsFrom(whole, from), 0, `attentionFrom ${from}`, cut.shape);
  }
  // With a cache: an append asks for its row, an edit for the rows from it, a deletion for none.
  const cache = model.createCache();
  model.forward(ids, { attention: true, cache });
  for (const [next, from] of [
    [Int32Array.from([...ids, 3]), 12],
    [Int32Array.from([...ids.subarray(0, 5), 7, ...ids.subarray(6)]), 5],
    [ids.subarray(0, 9), 9],
  ]) {
    const cut = model.forward(next, { attention: true, cache, attentionFrom: from }).attention;
    const full = model.forward(next, { attention: true }).attention;
    assert.deepEqual(cut.shape, [config.layers, config.heads, next.length - from, next.length]);
    // Kept keys and values against a fresh forward: the cache test's bound above.
    assertClose(cut.data, rowsFrom(full, from), 1e-6, `cached, attentionFrom ${from}`, cut.shape);
  }
  // analyze() takes it too, up to the text's tokens.
  const shipped = await loadShippedModel();
  const text = "The cat sat on the mat.";
  const n = shipped.tokens(text).length;
  const analysis = shipped.analyze(text, { attention: true, attentionFrom: n - 1 });
  assertClose(
    analysis.attention.data,
    rowsFrom(shipped.analyze(text, { attention: true }).attention, n - 1),
    0,
    "analyze",
    analysis.attention.shape,
  );
  for (const [from, message] of [
    [-1, /attentionFrom must be an integer from 0 to the 12 tokens \(the first query row of the attention returned\); got number -1/],
    [1.5, /attentionFrom must be an integer from 0 to the 12 tokens.*got number 1\.5/],
    [13, /attentionFrom must be an integer from 0 to the 12 tokens.*got number 13/],
    ["2", /attentionFrom must be a number; got string "2"/],
  ])
    assertAttnLensError(() => model.forward(ids, { attention: true, attentionFrom: from }), "BAD_ARGUMENT", message);
  assertAttnLensError(
    () => shipped.analyze(text, { attention: true, attentionFrom: n + 1 }),
    "BAD_ARGUMENT",
    new RegExp(`from 0 to the ${n} tokens`),
  );
  cache.dispose();
  model.dispose();
  shipped.dispose();
});

test("100 forward calls (and errors) leave the model module's heap where it was", async () => {
  const model = await lens.createModel({ config, seed: 15 });
  const ids = randomIds(16, 64, 16);
  const once = () => {
    model.forward(ids, { attention: true, residuals: true });
    try {
      model.forward([1, 2, 999]);
    } catch {}
  };
  once();
  const before = await lens.modelMemory();
  for (let i = 0; i < 100; i++) once();
  const after = await lens.modelMemory();
  assert.equal(after.usedBytes, before.usedBytes, "bytes held by malloc");
  assert.equal(after.heapBytes, before.heapBytes, "heap size");
  model.dispose();
  const disposed = await lens.modelMemory();
  assert.ok(disposed.usedBytes < before.usedBytes, "dispose() frees the model");
});

test("gradients: named as the checkpoint's tensors, shaped like them", async () => {
  const model = await lens.createModel({ config, seed: 17 });
  const ids = [[...randomIds(8, 64, 18)]];
  const targets = [[...randomIds(8, 64, 19)]];
  const { loss, grads } = model.gradients(ids, targets);
  assert.ok(Number.isFinite(loss));
  const saved = model.save();
  const header = safetensorsHeader(saved["model.safetensors"]);
  const names = Object.keys(header).filter((n) => n !== "__metadata__");
  assert.deepEqual(Object.keys(grads).sort(), names.sort());
  for (const n of names) assert.deepEqual(grads[n].shape, header[n].shape, n);
  assertAttnLensError(() => model.gradients(ids, [[1, 2]]), "SHAPE_MISMATCH", /targets/);
  model.dispose();
});

test("bad arguments: typed errors naming the argument; a disposed model says so", async () => {
  const model = await lens.createModel({ config, seed: 20 });
  assertAttnLensError(() => model.forward([1, 64]), "BAD_ARGUMENT", /\[0, 1\] is 64, outside the vocabulary \[0, 64\)/);
  assertAttnLensError(() => model.forward([1, 1.5]), "BAD_ARGUMENT", /ids\[1\] must be an integer/);
  assertAttnLensError(() => model.forward("the cat"), "BAD_ARGUMENT", /ids must be/);
  assertAttnLensError(() => model.forward([]), "EMPTY_INPUT");
  assertAttnLensError(() => model.forward(new Int32Array(17)), "TOO_LARGE", /context of 16/);
  assertAttnLensError(() => model.forward([[1, 2], [3]]), "SHAPE_MISMATCH", /ids\[1\] has 1 entries/);
  assertAttnLensError(() => model.forward([1], { attentions: true }), "UNKNOWN_OPTION", /attentions/);
  assertAttnLensError(() => model.forward([1], { attention: 1 }), "BAD_ARGUMENT", /attention must be true or false/);
  assertAttnLensError(() => model.encode("a"), "BAD_ARGUMENT", /needs a tokenizer/);
  assertAttnLensError(() => model.trainStep([[1]], { lr: 1e-3 }), "BAD_ARGUMENT");
  assertAttnLensError(() => model.save({ dtype: "BF16" }), "BAD_ARGUMENT", /dtype/);
  await assert.rejects(lens.createModel({ config: { ...config, heads: 5 } }), (e) => e.code === "BAD_ARGUMENT" && /heads/.test(e.message));
  await assert.rejects(lens.createModel({ config, seed: -1 }), (e) => e.code === "BAD_ARGUMENT" && /seed/.test(e.message));
  await assert.rejects(lens.createModel({ config: { ...config, layer: 2 } }), (e) => e.code === "UNKNOWN_OPTION");
  model.dispose();
  model.dispose();
  assertAttnLensError(() => model.forward([1]), "BAD_ARGUMENT", /disposed/);
  assertAttnLensError(() => model.save(), "BAD_ARGUMENT", /disposed/);
});
