// The lines view's pair finder (web/views/line-pairs.js) against a plain loop that tests each
// weight with an if: the same pairs, in the same order, at the same levels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { linePairs } from "../../web/views/line-pairs.js";

/** The reference: one branch per weight, levels as the view defines them. */
function reference(w, L, causal, minWeight, levels) {
  const byLevel = Array.from({ length: levels + 1 }, () => []);
  for (let i = 0; i < L; i++)
    for (let j = 0; j < (causal ? i + 1 : L); j++) {
      const v = w[i * L + j];
      if (!(v >= minWeight)) continue; // NaN and anything below the threshold: no line
      byLevel[Math.min(levels, Math.ceil(v * levels))].push(i * L + j);
    }
  return byLevel;
}

function same(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} levels, expected ${expected.length}`);
  actual.forEach((got, level) => {
    assert.ok(got instanceof Int32Array, `${what}: level ${level} is not an Int32Array`);
    const want = expected[level];
    assert.equal(got.length, want.length, `${what}: level ${level} has ${got.length} pairs, expected ${want.length}`);
    const at = got.findIndex((k, m) => k !== want[m]);
    assert.equal(at, -1, `${what}: level ${level}, pair ${at}: ${got[at]}, expected ${want[at]}`);
  });
}

/** Deterministic pseudo-random numbers in [0, 1) (a 32-bit LCG). */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

test("linePairs: random rows (softmax-like) of many lengths, causal and full, equal the plain loop", () => {
  const next = random(7);
  for (const L of [1, 2, 3, 17, 64, 100, 257]) {
    const w = new Float32Array(L * L);
    for (let i = 0; i < L; i++) {
      // Rows of positive numbers that sum to 1, from flat to peaked: many near the threshold.
      let sum = 0;
      for (let j = 0; j < L; j++) sum += w[i * L + j] = Math.exp(4 * next() * next() * 3);
      for (let j = 0; j < L; j++) w[i * L + j] /= sum;
    }
    for (const causal of [true, false])
      for (const [minWeight, levels] of [
        [0.01, 32],
        [1 / L, 32],
        [0.5, 4],
        [1e-30, 1],
      ])
        same(
          linePairs(w, L, causal, minWeight, levels),
          reference(w, L, causal, minWeight, levels),
          `L ${L}, ${causal ? "causal" : "full"}, min ${minWeight}, ${levels} levels`,
        );
  }
});

test("linePairs: edge values: the threshold itself, 1, above 1, infinity, zeros, negatives and NaN", () => {
  const min = Math.fround(0.01);
  const values = [
    min,
    Math.fround(min * 0.999),
    1,
    1.5,
    Infinity,
    0,
    -0,
    -0.5,
    -Infinity,
    NaN,
    0.03125,
    Math.fround(0.03125 + 1e-7),
    0.96875,
    0.2,
  ];
  const L = 4;
  for (let shift = 0; shift < values.length; shift++) {
    const w = Float32Array.from({ length: L * L }, (_, k) => values[(k + shift) % values.length]);
    for (const causal of [true, false])
      same(linePairs(w, L, causal, min, 32), reference(w, L, causal, min, 32), `shift ${shift}, ${causal ? "causal" : "full"}`);
  }
  // Spelled out for one case: exactly the threshold is drawn at level 1, exactly 1 at the top, 1/32 at level 1.
  const w = Float32Array.from([min, 1, 1 / 32, NaN]);
  const byLevel = linePairs(w, 2, false, min, 32);
  assert.deepEqual([...byLevel[1]], [0, 2]);
  assert.deepEqual([...byLevel[32]], [1]);
  assert.equal(
    byLevel.reduce((n, a) => n + a.length, 0),
    3,
    "NaN gets no line",
  );
});

test("linePairs: every weight drawn (the buffer grows past its first size) and none drawn", () => {
  // 241 rows of 241: the 17th row ends exactly one past the first buffer's 4 096 entries
  // (16 · 241 + 241 = 4 097), where a buffer one short would lose a pair.
  for (const L of [241, 300]) {
    const all = new Float32Array(L * L).fill(0.5);
    const byLevel = linePairs(all, L, false, 0.01, 32);
    assert.equal(byLevel[16].length, L * L);
    const at = byLevel[16].findIndex((k, m) => k !== m);
    assert.equal(at, -1, `L ${L}: every index, in order; pair ${at} is ${byLevel[16][at]}`);
    const causal = linePairs(all, L, true, 0.01, 32)[16];
    const lower = [];
    for (let i = 0; i < L; i++) for (let j = 0; j <= i; j++) lower.push(i * L + j);
    assert.deepEqual([...causal], lower, `L ${L}, causal: the lower triangle with its diagonal`);
    const none = linePairs(new Float32Array(L * L), L, false, 0.01, 32);
    assert.ok(
      none.every((a) => a.length === 0),
      "zeros draw nothing",
    );
  }
});

test("linePairs: bad arguments are named", () => {
  assert.throws(() => linePairs(new Float32Array(4), 2, false, 0, 32), /minWeight must be > 0; got 0/);
  assert.throws(() => linePairs(new Float32Array(4), 2, false, NaN, 32), /minWeight must be > 0; got NaN/);
  assert.throws(() => linePairs(new Float32Array(4), 2, false, 0.1, 0), /levels must be a whole number from 1 to 255; got 0/);
  assert.throws(() => linePairs(new Float32Array(4), 2, false, 0.1, 256), /levels must be a whole number from 1 to 255; got 256/);
  assert.throws(() => linePairs(new Float32Array(3), 2, false, 0.1, 32), /weights hold 3 numbers, fewer than L × L = 4/);
});
