// What attention(), selfAttention() and forward() accept from JS: every bad entry is a typed
// error naming the argument and the index; typed arrays are read through their real length;
// detached buffers are refused; the layer never aliases the caller's arrays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";
import { assertAttnLensError } from "./helpers.mjs";

const lens = await loadAttnLens();
const row = [[1, 2]];
const one = [[1]];

test("holes in nested arrays are BAD_ARGUMENT naming the entry, never stale heap values", () => {
  // Once: [0] for the first call, [7, 5] (a 5 from an earlier call) for the second, and a raw
  // RuntimeError (memory access out of bounds) for the third.
  assertAttnLensError(
    () => lens.attention([[1, , 3]], [[1, 2, 3]], [[5]]),
    "BAD_ARGUMENT",
    /^q\[0\]\[1\] must be a number; got an empty slot/,
  );
  lens.attention([[1, 2]], [[1, 2]], [[5, 5]]);
  assertAttnLensError(() => lens.attention([[1, 2]], [[1, 2]], [[, 7]]), "BAD_ARGUMENT", /^v\[0\]\[0\] must be a number/);
  assertAttnLensError(
    () => lens.attention([new Array(2 ** 24)], [[1]], [[1]]),
    "BAD_ARGUMENT",
    /^q\[0\]\[0\] must be a number; got an empty slot/,
  );
  assertAttnLensError(
    () => lens.attention({ data: [1, , 3, 4], shape: [2, 2] }, row, one),
    "BAD_ARGUMENT",
    /^q\.data\[1\] must be a number/,
  );
});

test("null, undefined, strings, booleans and BigInts are BAD_ARGUMENT naming the index", () => {
  for (const [bad, text] of [
    [null, /got null/],
    [undefined, /got undefined$/],
    ["2", /got string "2"/],
    [true, /got boolean true/],
    [2n, /got bigint 2n/],
    [{}, /got an object/],
  ]) {
    assertAttnLensError(
      () => lens.attention({ data: [1, bad], shape: [1, 2] }, row, one),
      "BAD_ARGUMENT",
      /^q\.data\[1\] must be a number/,
      text,
    );
    assertAttnLensError(
      () =>
        lens.attention(
          row,
          [
            [1, 2],
            [3, bad],
          ],
          [[1], [2]],
        ),
      "BAD_ARGUMENT",
      /^k\[1\]\[1\] must be a number/,
      text,
    );
  }
  assertAttnLensError(
    () => lens.attention({ data: BigInt64Array.of(1n, 2n), shape: [1, 2] }, row, one),
    "BAD_ARGUMENT",
    /q\.data must be a Float32Array/,
    /BigInt64Array/,
  );
});

test("masks: holes and non-booleans in nested masks, plain arrays as data are BAD_ARGUMENT", () => {
  const q = [
    [1, 0],
    [0, 1],
  ];
  assertAttnLensError(
    () =>
      lens.attention(q, q, q, {
        mask: [
          [true, ,],
          [true, true],
        ],
      }),
    "BAD_ARGUMENT",
    /^mask\[0\]\[1\] must be a boolean or a number; got an empty slot/,
  );
  assertAttnLensError(
    () =>
      lens.attention(q, q, q, {
        mask: [
          [true, null],
          [true, true],
        ],
      }),
    "BAD_ARGUMENT",
    /^mask\[0\]\[1\] must be a boolean or a number; got null/,
  );
  assertAttnLensError(
    () => lens.attention(q, q, q, { mask: { data: [1, 1, 1, 1], shape: [2, 2] } }),
    "BAD_ARGUMENT",
    /mask\.data must be a Uint8Array/,
  );
  assertAttnLensError(
    () => lens.attention(q, q, q, { mask: { data: new Uint8Array(3), shape: [2, 2] } }),
    "SHAPE_MISMATCH",
    /mask has 3 values but its shape \[2, 2\] needs 4/,
  );
});

test("forward's x: holes and non-numbers are BAD_ARGUMENT naming the entry", () => {
  const layer = lens.selfAttention({ modelDim: 2, numHeads: 1 });
  assertAttnLensError(() => layer.forward([[1, ,]]), "BAD_ARGUMENT", /^x\[0\]\[1\] must be a number; got an empty slot/);
  assertAttnLensError(
    () => layer.forward({ data: [1, "x"], shape: [1, 2] }),
    "BAD_ARGUMENT",
    /^x\.data\[1\] must be a number; got string "x"/,
  );
});

test("numbers finite in JS but beyond float32 are NON_FINITE saying so", () => {
  assertAttnLensError(
    () => lens.attention([[1, 1e39]], row, one),
    "NON_FINITE",
    /^q\[0\]\[1\] is 1e\+39: finite in JS, but beyond float32's range/,
  );
  assertAttnLensError(
    () => lens.attention({ data: Float64Array.of(1, -1e39), shape: [1, 2] }, row, one),
    "NON_FINITE",
    /^q\.data\[1\] is -1e\+39: finite in JS, but beyond float32's range/,
  );
  // Once "scale is inf".
  assertAttnLensError(
    () => lens.attention(one, one, one, { scale: 1e39 }),
    "NON_FINITE",
    /^scale is 1e\+39: finite in JS, but beyond float32's range/,
  );
  // NaN and infinities themselves are the library's NON_FINITE, with the flat index.
  assertAttnLensError(
    () => lens.attention({ data: Float64Array.of(1, Infinity), shape: [1, 2] }, row, one),
    "NON_FINITE",
    /q holds inf at flat index 1/,
  );
});

test("every array kind the .d.ts names works as declared", () => {
  const expected = lens.attention({ data: Float32Array.of(1, -2, 3, 4), shape: [2, 2] }, row, [[7]]).output.data;
  for (const data of [
    Float64Array.of(1, -2, 3, 4),
    Int8Array.of(1, -2, 3, 4),
    Int16Array.of(1, -2, 3, 4),
    Int32Array.of(1, -2, 3, 4),
    [1, -2, 3, 4],
  ]) {
    assert.deepEqual(lens.attention({ data, shape: [2, 2] }, row, [[7]]).output.data, expected, data.constructor.name);
  }
  const unsigned = lens.attention({ data: Float32Array.of(1, 2, 3, 4), shape: [2, 2] }, row, [[7]]).output.data;
  for (const data of [
    Uint8Array.of(1, 2, 3, 4),
    Uint8ClampedArray.of(1, 2, 3, 4),
    Uint16Array.of(1, 2, 3, 4),
    Uint32Array.of(1, 2, 3, 4),
  ]) {
    assert.deepEqual(lens.attention({ data, shape: [2, 2] }, row, [[7]]).output.data, unsigned, data.constructor.name);
  }
});

test("typed arrays whose length lies are read through their real length; Proxies are refused", () => {
  class Longer extends Float32Array {
    get length() {
      return 100;
    }
  }
  class Shorter extends Float32Array {
    get length() {
      return 1;
    }
  }
  const expected = lens.attention({ data: Float32Array.of(1, 2, 3, 4), shape: [2, 2] }, row, one).output.data;
  assert.deepEqual(lens.attention({ data: Longer.of(1, 2, 3, 4), shape: [2, 2] }, row, one).output.data, expected);
  assert.deepEqual(lens.attention({ data: Shorter.of(1, 2, 3, 4), shape: [2, 2] }, row, one).output.data, expected);
  assertAttnLensError(
    () => lens.attention({ data: Longer.of(1, 2, 3), shape: [2, 2] }, row, one),
    "SHAPE_MISMATCH",
    /q has 3 values but its shape \[2, 2\] needs 4/,
  );
  const proxy = new Proxy(Float32Array.of(1, 2, 3, 4), {});
  assertAttnLensError(() => lens.attention({ data: proxy, shape: [2, 2] }, row, one), "BAD_ARGUMENT", /q\.data must be a Float32Array/);
});

test("detached buffers are BAD_ARGUMENT, also when detached while the arguments are read", () => {
  const q = Float32Array.of(1, 2, 3, 4);
  structuredClone(q.buffer, { transfer: [q.buffer] });
  assertAttnLensError(() => lens.attention({ data: q, shape: [2, 2] }, row, one), "BAD_ARGUMENT", /q\.data's ArrayBuffer is detached/);
  // k's getter detaches q's buffer after q was read.
  const q2 = Float32Array.of(1, 2, 3, 4);
  const k = {
    get data() {
      structuredClone(q2.buffer, { transfer: [q2.buffer] });
      return Float32Array.of(1, 2);
    },
    shape: [1, 2],
  };
  assertAttnLensError(() => lens.attention({ data: q2, shape: [2, 2] }, k, one), "BAD_ARGUMENT", /q\.data's ArrayBuffer is detached/);
  const mask = Uint8Array.of(1);
  structuredClone(mask.buffer, { transfer: [mask.buffer] });
  assertAttnLensError(
    () => lens.attention(one, one, one, { mask: { data: mask, shape: [1, 1] } }),
    "BAD_ARGUMENT",
    /mask\.data's ArrayBuffer is detached/,
  );
});

test("selfAttention copies the caller's weights, and weights hands out copies", () => {
  const E = 2;
  const wq = Float32Array.of(1, 0, 0, 1);
  const given = {
    wq: { data: wq, shape: [E, E] },
    wk: [
      [1, 0],
      [0, 1],
    ],
    wv: [
      [1, 2],
      [3, 4],
    ],
    wo: [
      [1, 0],
      [0, 1],
    ],
  };
  const layer = lens.selfAttention({ modelDim: E, numHeads: 1, weights: given });
  const x = [
    [1, 0],
    [0, 1],
  ];
  const before = layer.forward(x).output.data;
  wq.fill(9);
  given.wv[0][0] = 100;
  assert.deepEqual(layer.forward(x).output.data, before, "changing the arrays passed in changes nothing");
  const handed = layer.weights;
  handed.wq.data.fill(7);
  handed.wv.data.fill(7);
  assert.deepEqual(layer.forward(x).output.data, before, "changing layer.weights changes nothing");
  assert.deepEqual(Array.from(layer.weights.wq.data), [1, 0, 0, 1]);
  assert.notEqual(layer.weights.wq.data, layer.weights.wq.data, "each read is a new copy");
});

test("shapes and options: checked in C++ and reported with the shapes", () => {
  // The rank rule is the library's: one message, from C++.
  const five = { data: new Float32Array(1), shape: [1, 1, 1, 1, 1] };
  assertAttnLensError(
    () => lens.attention(five, five, five),
    "SHAPE_MISMATCH",
    /q must have rank 2 \[L, E\], 3 \[B, L, E\] or 4 \[B, H, L, E\]; got shape \[1, 1, 1, 1, 1\]/,
  );
  assertAttnLensError(
    () => lens.attention({ data: new Float32Array(1), shape: new Array(9).fill(1) }, one, one),
    "SHAPE_MISMATCH",
    /more than the 8 dimensions/,
  );
  assertAttnLensError(
    () => lens.attention({ data: new Float32Array(1), shape: [1, -1] }, one, one),
    "BAD_ARGUMENT",
    /q\.shape\[1\] must be a non-negative integer/,
  );
  assertAttnLensError(
    () => lens.selfAttention({ modelDim: 2.5 }),
    "BAD_ARGUMENT",
    /modelDim must be an integer that fits 32 bits; got 2\.5/,
  );
  assertAttnLensError(() => lens.selfAttention({ modelDim: 4096 }), "BAD_ARGUMENT", /modelDim must be between 1 and 1024; got 4096/);
  assertAttnLensError(
    () => lens.selfAttention({ init: "kaiming" }),
    "BAD_ARGUMENT",
    /init must be "normal", "xavier" or "identity"; got "kaiming"/,
  );
  assertAttnLensError(() => lens.selfAttention({ seed: -1 }), "BAD_ARGUMENT", /seed must be an integer from 0 to 2\^53 - 1/);
  assertAttnLensError(
    () =>
      lens.selfAttention({
        modelDim: 2,
        numHeads: 1,
        weights: {
          wq: [[1, 2]],
          wk: [
            [1, 0],
            [0, 1],
          ],
          wv: [
            [1, 0],
            [0, 1],
          ],
          wo: [
            [1, 0],
            [0, 1],
          ],
        },
      }),
    "SHAPE_MISMATCH",
    /wq has shape \[1, 2\] but must be \[modelDim, modelDim\] = \[2, 2\]/,
  );
  assertAttnLensError(
    () => lens.attention(one, one, one, { causalAlign: "center" }),
    "BAD_ARGUMENT",
    /causalAlign must be "top-left" or "bottom-right"; got string "center"/,
  );
});

test("limits, defaults and choices come from the C++ library", () => {
  assert.equal(lens.limits.maxWork, 2 ** 36);
  assert.deepEqual(lens.choices.init, ["normal", "xavier", "identity"]);
  assert.equal(lens.defaults.explain.seed, 7);
  assert.equal(lens.defaults.selfAttention.init, "xavier");
  // explain() reports the options it used, defaults filled in by the library.
  assert.deepEqual(lens.explain("hi").options, lens.defaults.explain);
  assert.ok(Object.isFrozen(lens.defaults.explain));
});
