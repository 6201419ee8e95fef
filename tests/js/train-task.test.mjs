// The in-browser training task (web/train/task.js): the generator against an independent
// implementation, the batches' structure, and the losses and head scores on tensors small
// enough to compute by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";
import { chainPermutation, copyLosses, generator, headScores, repeatedBatch } from "../../web/train/task.js";
import { createTrainer, learningRate, switchOffMlps } from "../../web/train/trainer.js";

test("generator: mulberry32's outputs (from an independent Python implementation), and below(n) in range", () => {
  const take = (seed) => {
    const g = generator(seed);
    return [g.next(), g.next(), g.next(), g.next()];
  };
  assert.deepEqual(take(1), [2693262067, 11749833, 2265367787, 4213581821]);
  assert.deepEqual(take(12345), [4207900869, 1317490944, 2079646450, 3513001552]);
  const g = generator(7);
  for (let i = 0; i < 1000; i++) {
    const x = g.below(13);
    assert.ok(Number.isInteger(x) && x >= 0 && x < 13, `below(13) gave ${x}`);
  }
});

test("repeatedBatch: each row holds a span and its repeat at a random place; the same seed gives the same batch", () => {
  const options = { batch: 32, length: 40, nMin: 3, nMax: 20, vocab: 11 };
  const batch = repeatedBatch(generator(5), options);
  assert.deepEqual(batch.shape, [32, 40]);
  assert.equal(batch.spans.length, 32);
  const lengths = new Set();
  const starts = new Set();
  batch.spans.forEach(({ start, n }, b) => {
    assert.ok(n >= 3 && n <= 20, `row ${b}: n = ${n}`);
    assert.ok(Number.isInteger(start) && start >= 0 && start + 2 * n <= 40, `row ${b}: span at ${start}, n = ${n}, fits the row`);
    starts.add(start + 2 * n);
    const row = batch.data.subarray(b * 40, (b + 1) * 40);
    for (let j = 0; j < n; j++) assert.equal(row[start + n + j], row[start + j], `row ${b}, span id ${j}`);
    for (const id of row) assert.ok(id >= 0 && id < 11);
    lengths.add(n);
  });
  assert.ok(lengths.size > 5, "span lengths vary from row to row");
  // Where the repeat ends varies too: no fixed position tells where the second copy is.
  assert.ok(starts.size > 5, "the repeat ends at different places");
  assert.deepEqual(repeatedBatch(generator(5), options).data, batch.data);
  // periodic: the same spans, repeating on to the end of each row; before them, the same ids.
  const periodic = repeatedBatch(generator(5), { ...options, periodic: true });
  assert.deepEqual(periodic.spans, batch.spans);
  periodic.spans.forEach(({ start, n }, b) => {
    const row = periodic.data.subarray(b * 40, (b + 1) * 40);
    const plain = batch.data.subarray(b * 40, (b + 1) * 40);
    for (let j = 0; j < start + 2 * n; j++) assert.equal(row[j], plain[j], `row ${b}, id ${j}`);
    for (let j = start + n; j < 40; j++) assert.equal(row[j], row[j - n], `row ${b}, id ${j} repeats id ${j - n}`);
  });
  assert.notDeepEqual(repeatedBatch(generator(6), options).data, batch.data);
});

test("copyLosses: by hand on a row of 6 ids with a span of 2", () => {
  // One row [9, 9, 0, 1, 0, 1]: start = 2, n = 2. Inputs are the first 5 ids, V = 2. Position t
  // predicts id t + 1: the first copy's only scored target is id 3 (predicted at t = 2), the
  // second copy's is id 5 (t = 4); id 4 (t = 3), where the repeat starts, is in neither.
  const batch = { data: Int32Array.from([9, 9, 0, 1, 0, 1]), shape: [1, 6], spans: [{ start: 2, n: 2 }] };
  const logits = { data: new Float32Array(5 * 2), shape: [1, 5, 2] };
  // t = 2: logits [0, 0] -> p(1) = 1/2, loss ln 2. t = 4: logits [0, ln 3] -> p(1) = 3/4, loss ln(4/3).
  logits.data[4 * 2 + 1] = Math.log(3);
  // t = 3 would cost ln(1 + e^5) if it were counted.
  logits.data[3 * 2 + 1] = 5;
  const { first, second } = copyLosses(logits, batch);
  // float32 logits: ln 3 is stored to within 2^-24 relative, so the loss is off by at most ~1e-7.
  assert.ok(Math.abs(first - Math.log(2)) < 1e-12, `first ${first}`);
  assert.ok(Math.abs(second - Math.log(4 / 3)) < 2e-7, `second ${second}`);
});

test("headScores: induction and previous-token scores by hand", () => {
  // One layer, one row, two heads, T = 4 inputs; span start = 0, n = 2 (row [a, b, a, b, ...]).
  // Induction pairs: query 2 -> key 1, query 3 -> key 2. Previous-token pairs: (1,0), (2,1), (3,2).
  const T = 4;
  const attention = { data: new Float32Array(2 * T * T), shape: [1, 1, 2, T, T] };
  const set = (h, i, j, w) => (attention.data[(h * T + i) * T + j] = w);
  // Head 0: attends to the previous token everywhere (row 0 to itself).
  set(0, 0, 0, 1);
  for (let i = 1; i < T; i++) set(0, i, i - 1, 1);
  // Head 1: query 2 puts 0.5 on key 1, query 3 puts 0.25 on key 2; the rest on key 0.
  set(1, 0, 0, 1);
  set(1, 1, 0, 1);
  set(1, 2, 1, 0.5);
  set(1, 2, 0, 0.5);
  set(1, 3, 2, 0.25);
  set(1, 3, 0, 0.75);
  const { induction, previous } = headScores(attention, { spans: [{ start: 0, n: 2 }] });
  // Head 0: induction (w[2][1] + w[3][2]) / 2 = 1; previous (1 + 1 + 1) / 3 = 1.
  // Head 1: induction (0.5 + 0.25) / 2 = 0.375; previous (w[1][0] + w[2][1] + w[3][2]) / 3 = 1.75 / 3.
  assert.deepEqual(induction, [[1, 0.375]]);
  assert.equal(previous[0][0], 1);
  assert.ok(Math.abs(previous[0][1] - 1.75 / 3) < 1e-15);
});

test("learningRate: the library's schedule (warm-up, then a cosine to lr/10), to float32 rounding", async () => {
  const lens = await loadAttnLens();
  const model = await lens.createModel({ config: { layers: 1, heads: 1, dModel: 8, context: 8, vocabSize: 8 }, seed: 1 });
  const o = { lr: 3e-3, warmup: 5, steps: 30 };
  model.setOptimizer({ schedule: { maxLr: o.lr, minLr: o.lr / 10, warmupSteps: o.warmup, totalSteps: o.steps } });
  const batch = { data: Int32Array.from({ length: 9 }, (_, i) => i % 8), shape: [1, 9] };
  let worst = 0;
  for (let step = 0; step < 34; step++) {
    const { lr } = model.trainStepDetails(batch);
    // The library holds lr and lr/10 as float32 (one rounding, 2^-24 relative) and rounds its
    // double-precision result to float32 (another): within 2^-23 of the exact rate.
    worst = Math.max(worst, Math.abs(lr - learningRate(o, step)) / lr);
  }
  model.dispose();
  assert.ok(worst <= 2 ** -23, `worst relative difference ${worst}`);
});

test("a snapshot resumes the run: same weights, step, curve and batches (AdamW's moments start afresh)", async () => {
  const lens = await loadAttnLens();
  const options = { steps: 200, warmup: 20, probeEvery: 25, seed: 4 };
  const a = await createTrainer(lens, options);
  a.step(50);
  const files = a.snapshot();
  assert.deepEqual(Object.keys(files).sort(), ["config.json", "model.safetensors", "state.json"]);
  const b = await createTrainer(lens, {}, { snapshot: files });
  assert.equal(b.steps, 50);
  assert.deepEqual(b.options, a.options);
  assert.deepEqual(
    b.history.map((r) => r.step),
    a.history.map((r) => r.step),
  );
  // F32 weights are saved exactly: the probe's losses are the same numbers.
  const [ra, rb] = [a.measure(), b.measure()];
  assert.equal(rb.first, ra.first);
  assert.equal(rb.second, ra.second);
  // The next step's loss is computed before the update, on the next batch: equal when the batch
  // stream resumed where it stopped.
  assert.equal(b.step(1).loss, a.step(1).loss);
  a.dispose();
  b.dispose();
  await assert.rejects(
    createTrainer(lens, {}, { snapshot: { ...files, "state.json": JSON.stringify({ format: "other" }) } }),
    /state\.json is not a training snapshot/,
  );
});

test("switchOffMlps: an attention-only model that is still a GPT-2 checkpoint (every MLP gradient exactly 0)", async () => {
  const lens = await loadAttnLens();
  const created = await lens.createModel({ config: { layers: 2, heads: 2, dModel: 16, context: 12, vocabSize: 20 }, seed: 2 });
  const model = await switchOffMlps(lens, created);
  const ids = { data: Int32Array.from({ length: 2 * 11 }, (_, i) => (i * 7) % 20), shape: [2, 11] };
  const { grads } = model.gradients(ids, ids);
  const mlp = Object.keys(grads).filter((name) => /^h\.\d+\.(mlp\.c_fc\.|mlp\.c_proj\.weight$|ln_2\.)/.test(name));
  assert.equal(mlp.length, 2 * 5, mlp.join(", "));
  for (const name of mlp)
    assert.ok(
      grads[name].data.every((g) => g === 0),
      `${name} has a non-zero gradient`,
    );
  // Attention still learns.
  assert.ok(grads["h.0.attn.c_attn.weight"].data.some((g) => g !== 0));
  model.dispose();
});

test("repeatedBatch chainRows: the first rows follow the skip-bigram chain, the rest are unchanged", () => {
  const options = { batch: 12, length: 40, nMin: 3, nMax: 10, vocab: 17, periodic: true };
  const plain = repeatedBatch(generator(8), options);
  const mixed = repeatedBatch(generator(8), { ...options, chainRows: 4, chainP: 0.9 });
  const perm = chainPermutation(17);
  assert.deepEqual(
    [...perm].sort((a, b) => a - b),
    Array.from({ length: 17 }, (_, i) => i),
    "a permutation",
  );
  assert.deepEqual(mixed.spans.slice(0, 4), [null, null, null, null]);
  assert.deepEqual(mixed.spans.slice(4), plain.spans.slice(4));
  // The other rows are the same ids as without chain rows (the chain draws come after them).
  assert.deepEqual(mixed.data.subarray(4 * 40), plain.data.subarray(4 * 40));
  let follows = 0;
  for (let b = 0; b < 4; b++) for (let j = 2; j < 40; j++) if (mixed.data[b * 40 + j] === perm[mixed.data[b * 40 + j - 2]]) follows++;
  // 4 rows x 38 ids, each following the rule with probability 0.9 (or by chance, 0.1/17):
  // 137 expected, standard deviation 3.7; below 115 or at 152 would be 6 sigma off.
  assert.ok(follows > 115 && follows < 152, `${follows} of 152 ids follow the chain`);
});

test("headScores: tokens after the second copy are not counted as induction pairs", () => {
  // T = 6 inputs, span start 0, n = 2: the second copy is queries 2 and 3; queries 4 and 5 are
  // the random rest of the row. The head puts all of query 2's and 3's weight on their targets
  // (1 and 2), and query 4's and 5's on keys 3 and 4, where an uncapped loop would look.
  const T = 6;
  const attention = { data: new Float32Array(T * T), shape: [1, 1, 1, T, T] };
  attention.data[0] = 1;
  attention.data[1 * T + 0] = 1;
  attention.data[2 * T + 1] = 1;
  attention.data[3 * T + 2] = 1;
  attention.data[4 * T + 3] = 1;
  attention.data[5 * T + 4] = 1;
  const { induction } = headScores(attention, { spans: [{ start: 0, n: 2 }] });
  assert.deepEqual(induction, [[1]]);
  // Half the weight off target on query 3: (1 + 0.5) / 2, whatever queries 4 and 5 do.
  attention.data[3 * T + 2] = 0.5;
  attention.data[3 * T + 0] = 0.5;
  assert.deepEqual(headScores(attention, { spans: [{ start: 0, n: 2 }] }).induction, [[0.75]]);
});
