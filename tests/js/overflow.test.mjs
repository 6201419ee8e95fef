// The overflow rule in WebAssembly (tests/cpp/test_overflow.cpp has the native side): finite
// inputs give the right answer on every path even where float32 intermediates would overflow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";

const lens = await loadAttnLens();

// attention, streaming attention and attentionReference, with the same options.
function allPaths(q, k, v, options) {
  return [
    lens.attention(q, k, v, { ...options, returnWeights: true }),
    lens.attention(q, k, v, { ...options, streaming: true }),
    lens.attentionReference(q, k, v, { ...options, returnWeights: true }),
  ];
}

test("a single key with score -1e40 gets all the weight (once: output [0])", () => {
  for (const r of allPaths([[1e20]], [[-1e20]], [[7, -2]], { scale: 1 })) {
    assert.deepEqual(Array.from(r.output.data), [7, -2]);
    if (r.weights) assert.deepEqual(Array.from(r.weights.data), [1]);
  }
});

test("scores of +-1e40 pick the larger key on every path (once: NON_FINITE or NaN)", () => {
  for (const r of allPaths(
    [[1e20], [-1e20]],
    [[1e20], [-1e20]],
    [
      [1, 2],
      [3, 4],
    ],
    { scale: 1 },
  )) {
    assert.deepEqual(Array.from(r.output.data), [1, 2, 3, 4]);
  }
});

test("weights times values that overflow float32 still sum to the answer (once: Infinity)", () => {
  const v = [[3e38], [3e38], [-3e38], [-3e38]];
  for (const r of allPaths([[0]], [[0], [0], [0], [0]], v, {})) assert.deepEqual(Array.from(r.output.data), [0]);
});

test("scale 3e38 gives the same one-hot answer on every path (once: they disagreed)", () => {
  const k = [[1], [0.5], [0.25], [0.125]];
  const v = [[10], [20], [30], [40]];
  for (const r of allPaths([[1]], k, v, { scale: 3e38 })) assert.deepEqual(Array.from(r.output.data), [10]);
  for (const r of allPaths([[1]], k, v, { scale: -3e38 })) assert.deepEqual(Array.from(r.output.data), [40]);
});

test("forward: scores beyond float32 computed right; its trace says they do not fit", () => {
  const layer = lens.selfAttention({ modelDim: 2, numHeads: 1, init: "identity" });
  const x = [
    [1e20, 0],
    [1e20, 1e19],
  ];
  const r = layer.forward(x, { causal: true });
  assert.deepEqual(Array.from(r.weights.data), [1, 0, 0, 1]);
  assert.deepEqual(r.output.data, Float32Array.from(x.flat()));
  assert.throws(() => layer.forward(x, { causal: true, trace: true }), {
    code: "NON_FINITE",
    message: /the trace's scores is 1e\+40 at row 0, column 0/,
  });
});
