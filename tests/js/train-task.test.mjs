// The in-browser training task (web/train/task.js): the generator against an independent
// implementation, the batches' structure, and the losses and head scores on tensors small
// enough to compute by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyLosses, generator, headScores, repeatedBatch } from "../../web/train/task.js";

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

test("repeatedBatch: each row ends with a span and its repeat; the same seed gives the same batch", () => {
  const options = { batch: 32, length: 40, nMin: 3, nMax: 20, vocab: 11 };
  const batch = repeatedBatch(generator(5), options);
  assert.deepEqual(batch.shape, [32, 40]);
  assert.equal(batch.spans.length, 32);
  const lengths = new Set();
  batch.spans.forEach(({ start, n }, b) => {
    assert.ok(n >= 3 && n <= 20, `row ${b}: n = ${n}`);
    assert.equal(start + 2 * n, 40, `row ${b}: the repeat ends the row`);
    const row = batch.data.subarray(b * 40, (b + 1) * 40);
    for (let j = 0; j < n; j++) assert.equal(row[start + n + j], row[start + j], `row ${b}, span id ${j}`);
    for (const id of row) assert.ok(id >= 0 && id < 11);
    lengths.add(n);
  });
  assert.ok(lengths.size > 5, "span lengths vary from row to row");
  assert.deepEqual(repeatedBatch(generator(5), options).data, batch.data);
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
