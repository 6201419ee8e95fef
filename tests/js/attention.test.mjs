// attention() through the package: known answers, invariants, masks, GQA, differential.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";
import {
  assertAttnLensError,
  assertClose,
  attentionTolerance,
  attentionToleranceFor,
  randomGenerator,
  randomTensor,
  referenceAttention,
  twice,
} from "./helpers.mjs";

const lens = await loadAttnLens();

test("a single head worked by hand", () => {
  const p = Math.exp(1 / Math.SQRT2) / (Math.exp(1 / Math.SQRT2) + 1);
  const r = lens.attention(
    [
      [1, 0],
      [0, 1],
    ],
    [
      [1, 0],
      [0, 1],
    ],
    [
      [1, 2],
      [3, 4],
    ],
    { returnWeights: true },
  );
  assert.deepEqual(r.output.shape, [2, 2]);
  const tol = attentionTolerance({ E: 2, S: 2, qMax: 1, kMax: 1, vMax: 4, scale: Math.SQRT1_2 });
  assertClose(r.weights.data, [p, 1 - p, 1 - p, p], tol.weights, "weights", [2, 2]);
  assertClose(r.output.data, [p + 3 * (1 - p), 2 * p + 4 * (1 - p), 1 - p + 3 * p, 2 * (1 - p) + 4 * p], tol.output, "output", [2, 2]);
  assert.ok(r.output.data instanceof Float32Array);
});

test("rows of the weights sum to 1; causal upper triangle is exactly 0", () => {
  const rand = randomGenerator(1);
  const q = randomTensor([2, 3, 6, 4], rand, -3, 3);
  const r = lens.attention(q, q, q, { causal: true, returnWeights: true });
  assert.deepEqual(r.weights.shape, [2, 3, 6, 6]);
  assert.equal(r.weights.data.length, 2 * 3 * 6 * 6);
  const sums = [];
  for (let row = 0; row < 36; row++) {
    let sum = 0;
    for (let j = 0; j < 6; j++) {
      const w = r.weights.data[row * 6 + j];
      sum += w;
      if (j > row % 6) assert.equal(w, 0);
    }
    sums.push(sum);
  }
  // Weights are e_j / sum over S <= 6 keys: the float32 sum is off by (S - 1) u relative, the
  // reciprocal and each product round once more: the weights sum to 1 within (S + 1) u.
  assertClose(sums, new Array(36).fill(1), 7 * 2 ** -24, "row sums");
  // The first causal query sees key 0 only: its output is v's first row, exactly.
  assert.deepEqual(Array.from(r.output.data.slice(0, 4)), Array.from(q.data.slice(0, 4)));
});

test("a constant added to every score changes nothing; a custom scale is applied", () => {
  const rand = randomGenerator(2);
  const q = randomTensor([5, 3], rand);
  const k = randomTensor([5, 3], rand);
  const base = lens.attention(q, k, k, { returnWeights: true });
  const shifted = lens.attention(q, k, k, { returnWeights: true, mask: { data: new Float32Array(25).fill(12.5), shape: [5, 5] } });
  // Both are within the bound of the exact answer, which the shift does not change.
  assertClose(shifted.weights.data, base.weights.data, twice(attentionToleranceFor(q, k, k, { maskMax: 12.5 })).weights, "weights", [5, 5]);
  const scaled = lens.attention(q, k, k, { scale: 2.5 });
  const tol = attentionToleranceFor(q, k, k, { scale: 2.5 });
  assertClose(scaled.output.data, referenceAttention(q, k, k, { scale: 2.5 }).output, tol.output, "scale 2.5", [5, 3]);
});

test("grouped-query attention equals repeated KV heads", () => {
  const rand = randomGenerator(3);
  const q = randomTensor([1, 4, 5, 3], rand);
  const k = randomTensor([1, 2, 5, 3], rand);
  const v = randomTensor([1, 2, 5, 3], rand);
  const repeat = (t) => {
    const out = new Float32Array(4 * 15);
    for (let h = 0; h < 4; h++) out.set(t.data.subarray(Math.floor(h / 2) * 15, Math.floor(h / 2) * 15 + 15), h * 15);
    return { data: out, shape: [1, 4, 5, 3] };
  };
  const gqa = lens.attention(q, k, v, { causal: true });
  const rep = lens.attention(q, repeat(k), repeat(v), { causal: true });
  assert.deepEqual(gqa.output.data, rep.output.data);
});

test("bottom-right causal: the last query sees every key; equal to top-left when L == S", () => {
  const rand = randomGenerator(4);
  const q = randomTensor([3, 4], rand);
  const k = randomTensor([7, 4], rand);
  const r = lens.attention(q, k, k, { causal: true, causalAlign: "bottom-right", returnWeights: true });
  for (let j = 0; j < 7; j++) assert.ok(r.weights.data[2 * 7 + j] > 0);
  assert.equal(r.weights.data[0 * 7 + 5], 0);
  const qq = randomTensor([6, 4], rand);
  const tl = lens.attention(qq, qq, qq, { causal: true });
  const br = lens.attention(qq, qq, qq, { causal: true, causalAlign: "bottom-right" });
  assert.deepEqual(tl.output.data, br.output.data);
});

test("boolean masks (Uint8Array and nested booleans) and fully masked rows", () => {
  const rand = randomGenerator(5);
  const q = randomTensor([3, 2], rand);
  const allow = [
    [true, true, false],
    [false, false, false],
    [true, false, true],
  ];
  const nested = lens.attention(q, q, q, { mask: allow, returnWeights: true });
  const typed = lens.attention(q, q, q, { mask: { data: Uint8Array.from(allow.flat(), Number), shape: [3, 3] }, returnWeights: true });
  assert.deepEqual(nested.weights.data, typed.weights.data);
  assert.deepEqual(Array.from(nested.weights.data.slice(3, 6)), [0, 0, 0]);
  assert.deepEqual(Array.from(nested.output.data.slice(2, 4)), [0, 0]);
  assert.ok(nested.output.data.every(Number.isFinite));
  // An additive mask is added to scaled scores; a boolean one lets the scale fold into exp():
  // two float32 computations of the same answer.
  const tol = twice(attentionToleranceFor(q, q, q));
  const additive = lens.attention(q, q, q, {
    mask: [
      [0, 0, -Infinity],
      [-Infinity, -Infinity, -Infinity],
      [0, -Infinity, 0],
    ],
    returnWeights: true,
  });
  assertClose(additive.weights.data, typed.weights.data, tol.weights, "additive vs boolean", [3, 3]);
});

test("logits of ±1e4 stay finite", () => {
  const r = lens.attention(
    [[100], [-100]],
    [[100], [-100]],
    [
      [1, 2],
      [3, 4],
    ],
    { scale: 1, returnWeights: true },
  );
  assert.deepEqual(Array.from(r.weights.data), [1, 0, 0, 1]);
  assert.deepEqual(Array.from(r.output.data), [1, 2, 3, 4]);
});

test("full attention is permutation-equivariant", () => {
  const rand = randomGenerator(6);
  const x = randomTensor([5, 4], rand);
  const perm = [2, 0, 4, 1, 3];
  const permute = (data) => Float32Array.from(perm.flatMap((p) => Array.from(data.slice(p * 4, p * 4 + 4))));
  const base = lens.attention(x, x, x);
  const px = { data: permute(x.data), shape: [5, 4] };
  const moved = lens.attention(px, px, px);
  // The same scores in another order; the sums over keys may round differently.
  assertClose(moved.output.data, permute(base.output.data), twice(attentionToleranceFor(x, x, x)).output, "permuted output", [5, 4]);
});

test("differential: random shapes, masks and options against a float64 reference", () => {
  const rand = randomGenerator(7);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  for (let trial = 0; trial < 40; trial++) {
    const rank = 2 + (trial % 3);
    const [B, Hkv, group, L, S, E, Ev] = [int(1, 2), int(1, 2), int(1, 3), int(1, 8), int(1, 8), int(1, 8), int(1, 5)];
    const lead = rank === 4 ? [B, Hkv * group] : rank === 3 ? [B] : [];
    const kvLead = rank === 4 ? [B, Hkv] : lead;
    const q = randomTensor([...lead, L, E], rand, -2, 2);
    const k = randomTensor([...kvLead, S, E], rand, -2, 2);
    const v = randomTensor([...kvLead, S, Ev], rand, -2, 2);
    const causal = rand() < 0.5;
    const bottomRight = rand() < 0.5;
    let mask;
    if (trial % 2) {
      const shape = [...(rank >= 3 && rand() < 0.5 ? [lead[lead.length - 1]] : []), L, S];
      const n = shape.reduce((a, b) => a * b, 1);
      mask =
        rand() < 0.5
          ? { kind: "bool", data: Uint8Array.from({ length: n }, () => (rand() < 0.75 ? 1 : 0)), shape }
          : { kind: "float", data: Float32Array.from({ length: n }, () => (rand() < 0.2 ? -Infinity : rand() - 0.5)), shape };
    }
    const r = lens.attention(q, k, v, {
      causal,
      causalAlign: bottomRight ? "bottom-right" : "top-left",
      mask: mask && { data: mask.data, shape: mask.shape },
      returnWeights: true,
    });
    const expected = referenceAttention(q, k, v, { causal, bottomRight, mask });
    const tol = attentionToleranceFor(q, k, v, { maskMax: 0.5 });
    const label = `trial ${trial}, q [${q.shape}], k [${k.shape}], mask ${mask ? `${mask.kind} [${mask.shape}]` : "none"}`;
    assertClose(r.output.data, expected.output, tol.output, `${label}: output`, r.output.shape);
    assertClose(r.weights.data, expected.weights, tol.weights, `${label}: weights`, r.weights.shape);
  }
});

test("results are JS-owned copies, not views of the wasm heap", () => {
  const r = lens.attention([[1, 2]], [[1, 2]], [[3, 4]]);
  assert.equal(r.output.data.buffer.byteLength, r.output.data.byteLength);
});

test("fast and streaming paths agree with the plain reference path", () => {
  const rand = randomGenerator(8);
  for (const [L, S, E] of [
    [1, 1, 3],
    [70, 70, 16],
    [130, 67, 9],
  ]) {
    const q = randomTensor([1, 2, L, E], rand, -2, 2);
    const k = randomTensor([1, 2, S, E], rand, -2, 2);
    for (const causal of [false, true]) {
      const reference = lens.attentionReference(q, k, k, { causal, causalAlign: "bottom-right" });
      const fast = lens.attention(q, k, k, { causal, causalAlign: "bottom-right" });
      const streaming = lens.attention(q, k, k, { causal, causalAlign: "bottom-right", streaming: true });
      const tol = twice(attentionToleranceFor(q, k, k));
      assertClose(fast.output.data, reference.output.data, tol.output, "blocked", q.shape);
      assertClose(streaming.output.data, reference.output.data, tol.output, "streaming", q.shape);
    }
  }
});

test("streaming runs a long sequence without the L x S matrix", () => {
  const rand = randomGenerator(12);
  const q = randomTensor([1, 1, 16384, 8], rand);
  const before = lens.memory().heapBytes;
  const r = lens.attention(q, q, q, { streaming: true, causal: true });
  assert.equal(r.output.shape[2], 16384);
  assert.ok(r.output.data.every(Number.isFinite));
  // 16384^2 scores would be 1 GiB; the heap grew by far less.
  assert.ok(lens.memory().heapBytes - before < 64 * 2 ** 20, `heap grew by ${lens.memory().heapBytes - before} bytes`);
});

test("into: results land in the caller's arrays, the same bits as fresh ones", () => {
  const rand = randomGenerator(41);
  const [q, k, v] = [randomTensor([2, 3, 5, 4], rand), randomTensor([2, 3, 7, 4], rand), randomTensor([2, 3, 7, 6], rand)];
  const fresh = lens.attention(q, k, v, { returnWeights: true, causal: true, causalAlign: "bottom-right" });
  const into = { output: new Float32Array(2 * 3 * 5 * 6).fill(NaN), weights: new Float32Array(2 * 3 * 5 * 7).fill(NaN) };
  const r = lens.attention(q, k, v, { returnWeights: true, causal: true, causalAlign: "bottom-right", into });
  assert.equal(r.output.data, into.output);
  assert.equal(r.weights.data, into.weights);
  assert.deepEqual(r.output.shape, [2, 3, 5, 6]);
  assert.deepEqual(r.weights.shape, [2, 3, 5, 7]);
  assert.deepEqual(Array.from(into.output), Array.from(fresh.output.data));
  assert.deepEqual(Array.from(into.weights), Array.from(fresh.weights.data));
  // Only the output given: the weights are a fresh array.
  const out = new Float32Array(2 * 3 * 5 * 6);
  const r2 = lens.attention(q, k, v, { returnWeights: true, into: { output: out } });
  assert.equal(r2.output.data, out);
  assert.equal(r2.weights.data.length, 2 * 3 * 5 * 7);
});

test("into: wrong arrays are BAD_ARGUMENT naming the array and the sizes", () => {
  const q = [[1, 2]];
  assertAttnLensError(
    () => lens.attention(q, q, q, { into: { output: new Float32Array(3) } }),
    "BAD_ARGUMENT",
    /into\.output has 3 elements/,
    /\[1, 2\] need 2/,
  );
  assertAttnLensError(
    () => lens.attention(q, q, q, { returnWeights: true, into: { weights: new Float32Array(2) } }),
    "BAD_ARGUMENT",
    /into\.weights has 2 elements/,
    /need 1/,
  );
  assertAttnLensError(
    () => lens.attention(q, q, q, { into: { output: new Float64Array(2) } }),
    "BAD_ARGUMENT",
    /into\.output must be a Float32Array; got a Float64Array/,
  );
  assertAttnLensError(() => lens.attention(q, q, q, { into: { output: [0, 0] } }), "BAD_ARGUMENT", /into\.output must be a Float32Array/);
  assertAttnLensError(
    () => lens.attention(q, q, q, { into: { weights: new Float32Array(1) } }),
    "BAD_ARGUMENT",
    /into\.weights is given but returnWeights is false/,
  );
  assertAttnLensError(() => lens.attention(q, q, q, { into: { out: new Float32Array(2) } }), "UNKNOWN_OPTION", /into/);
  assertAttnLensError(() => lens.attention(q, q, q, { into: 5 }), "BAD_ARGUMENT", /into must be an object; got number 5/);
  // A detached array holds nothing to write into: named as detached.
  const detached = new Float32Array(2);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  assertAttnLensError(
    () => lens.attention(q, q, q, { into: { output: detached } }),
    "BAD_ARGUMENT",
    /into\.output's ArrayBuffer is detached/,
  );
});
