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
