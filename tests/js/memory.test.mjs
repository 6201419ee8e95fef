// Results are JS-owned: 100 000 calls (and errors) leave the wasm heap where it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";
import { randomGenerator, randomTensor } from "./helpers.mjs";

const lens = await loadAttnLens();

test("100 000 attention calls leave the heap where it was", () => {
  const rand = randomGenerator(11);
  const q = randomTensor([1, 2, 8, 4], rand);
  lens.attention(q, q, q, { returnWeights: true, causal: true });
  const before = lens.memory();
  for (let i = 0; i < 100_000; i++) lens.attention(q, q, q, { returnWeights: true, causal: true });
  const after = lens.memory();
  assert.equal(after.usedBytes, before.usedBytes, "bytes held by malloc");
  assert.equal(after.heapBytes, before.heapBytes, "heap size");
});

test("errors, explain and forward passes leak nothing", () => {
  const layer = lens.selfAttention({ modelDim: 8, numHeads: 2 });
  const x = randomTensor([5, 8], randomGenerator(12));
  const once = () => {
    lens.explain("the cat sat on the mat", { modelDim: 16, numHeads: 2 });
    layer.forward(x, { trace: true });
    try {
      lens.attention([[1, NaN]], [[1, 2]], [[1]]);
    } catch {}
    try {
      lens.explain(Uint8Array.of(0xff));
    } catch {}
  };
  once();
  const before = lens.memory();
  for (let i = 0; i < 5_000; i++) once();
  assert.equal(lens.memory().usedBytes, before.usedBytes);
});

test("a large call gives its inputs, results and large scratch back once they are copied out", () => {
  const small = randomTensor([1, 1, 4, 4], randomGenerator(13));
  lens.attention(small, small, small);
  const before = lens.memory().usedBytes;
  // 3 x 2 MiB of inputs, 8 MiB of weights and 1 MiB of packed keys and of values: all above what
  // is kept warm for the next call (1 MiB of staging, 512 KiB per scratch buffer).
  const big = randomTensor([1, 2, 1024, 256], randomGenerator(14));
  const r = lens.attention(big, big, big, { returnWeights: true });
  assert.equal(r.weights.data.length, 2 * 1024 * 1024);
  assert.ok(r.output.data.every(Number.isFinite));
  const copy = r.output.data.slice(0, 16);
  lens.attention(small, small, small);
  // What stays is the block of scores (66 x 1024 floats) and small buffers: well under 1 MiB.
  const kept = lens.memory().usedBytes - before;
  assert.ok(kept < 2 ** 19, `${kept} bytes still held by malloc after the large call`);
  // The results are JS-owned: later calls that reuse the heap leave them as they were.
  assert.deepEqual(r.output.data.slice(0, 16), copy);
});
