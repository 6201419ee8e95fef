// Every error code reachable from JS as an AttnLensError with a useful message; the module keeps
// working after each one; the .d.ts names exactly the C++ list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { AttnLensError, loadAttnLens } from "attnlens";
import { assertAttnLensError } from "./helpers.mjs";

const lens = await loadAttnLens();
const I = [
  [1, 0],
  [0, 1],
];

test("SHAPE_MISMATCH names the argument and the shapes", () => {
  assertAttnLensError(
    () => lens.attention([[1, 2, 3, 4]], [[1, 2, 3, 4, 5]], [[1]]),
    "SHAPE_MISMATCH",
    /k has last dimension 5 but q has 4/,
    /\[1, 5\]/,
  );
  assertAttnLensError(
    () => lens.attention({ data: new Float32Array(6), shape: [2, 2] }, I, I),
    "SHAPE_MISMATCH",
    /q has 6 values but its shape \[2, 2\] needs 4/,
  );
  assertAttnLensError(() => lens.attention([[1, 2], [3]], I, I), "SHAPE_MISMATCH", /q is a ragged nested array: q\[1\] has 1 entries/);
  assertAttnLensError(() => lens.attention(I, I, I, { mask: [[true, false, true]] }), "SHAPE_MISMATCH", /mask has shape \[1, 3\]/);
  const layer = lens.selfAttention({ modelDim: 8, numHeads: 2 });
  assertAttnLensError(() => layer.forward([[1, 2, 3]]), "SHAPE_MISMATCH", /x has last dimension 3 but the model dimension is 8/);
});

test("NON_FINITE names the tensor and where", () => {
  assertAttnLensError(() => lens.attention([[1, NaN]], I, I), "NON_FINITE", /q holds nan at flat index 1/);
  assertAttnLensError(
    () =>
      lens.attention(I, I, [
        [1, Infinity],
        [0, 0],
      ]),
    "NON_FINITE",
    /v holds inf/,
  );
  assertAttnLensError(() => lens.attention(I, I, I, { scale: Infinity }), "NON_FINITE", /scale/);
  assertAttnLensError(
    () =>
      lens.attention(I, I, I, {
        mask: [
          [0, NaN],
          [0, 0],
        ],
      }),
    "NON_FINITE",
    /mask holds nan/,
  );
});

test("TOO_LARGE: score slices over the limit, long sentences, work over maxWork", () => {
  const long = { data: new Float32Array(16384), shape: [16384, 1] };
  assertAttnLensError(() => lens.attention(long, long, long), "TOO_LARGE", /score matrix/, /268435456/);
  assertAttnLensError(() => lens.explain("one two three four five", { maxTokens: 4 }), "TOO_LARGE", /5 tokens, over the limit of 4/);
  // Streaming once had no bound: L = S = 65536 with E = 1 ran for 9 s. Now it is refused by the
  // checks, before any computing.
  const huge = { data: new Float32Array(65536), shape: [65536, 1] };
  assertAttnLensError(
    () => lens.attention(huge, huge, huge, { streaming: true }),
    "TOO_LARGE",
    /146028888064 multiply-adds/,
    /maxWork = 68719476736/,
  );
  assertAttnLensError(
    () => lens.attention([[1]], [[1]], [[1]], { maxWork: 0.5 }),
    "BAD_ARGUMENT",
    /maxWork must be an integer of at least 1; got 0.5/,
  );
});

test("BAD_ARGUMENT: wrong types and values", () => {
  assertAttnLensError(() => lens.attention("q", I, I), "BAD_ARGUMENT", /q must be \{ data: Float32Array, shape: number\[\] \}/);
  assertAttnLensError(() => lens.attention(I, I, I, { causal: "yes" }), "BAD_ARGUMENT", /causal must be true or false/);
  assertAttnLensError(
    () => lens.attention(I, I, I, { causalAlign: "middle" }),
    "BAD_ARGUMENT",
    /causalAlign must be "top-left" or "bottom-right"/,
  );
  assertAttnLensError(
    () => lens.selfAttention({ modelDim: 10, numHeads: 4 }),
    "BAD_ARGUMENT",
    /modelDim 10 is not divisible by numHeads 4/,
  );
  assertAttnLensError(() => lens.explain(42), "BAD_ARGUMENT", /sentence must be a string/);
  assertAttnLensError(() => lens.explain("hi", { seed: -1 }), "BAD_ARGUMENT", /seed must be an integer/);
});

test("INVALID_UTF8: raw bytes and lone surrogates", () => {
  assertAttnLensError(() => lens.explain(Uint8Array.of(0x63, 0x61, 0x74, 0x20, 0xff)), "INVALID_UTF8", /offset 4/);
  assertAttnLensError(() => lens.explain("cat \ud800 dog"), "INVALID_UTF8", /lone UTF-16 surrogate at index 4/);
});

test("EMPTY_INPUT: nothing to attend", () => {
  assertAttnLensError(() => lens.explain("   \n\t "), "EMPTY_INPUT", /sentence has no tokens/);
  assertAttnLensError(() => lens.attention({ data: new Float32Array(0), shape: [0, 2] }, I, I), "EMPTY_INPUT", /q has shape \[0, 2\]/);
});

test("UNKNOWN_OPTION names the option and the known ones", () => {
  assertAttnLensError(() => lens.attention(I, I, I, { casual: true }), "UNKNOWN_OPTION", /"casual"/, /causal/);
  assertAttnLensError(() => lens.explain("hi", { heads: 2 }), "UNKNOWN_OPTION", /"heads"/, /numHeads/);
});

test("OUT_OF_MEMORY: a raised limit and weights that cannot fit", () => {
  const q = { data: new Float32Array(1 << 16), shape: [1 << 16, 1] };
  assertAttnLensError(
    () => lens.attention(q, q, q, { returnWeights: true, maxElements: 2 ** 40, maxWork: 2 ** 53 }),
    "OUT_OF_MEMORY",
    /weights \[65536, 65536\]/,
  );
});

test("errors are AttnLensError instances, and the module keeps working after each", () => {
  try {
    lens.attention([[1]], [[1, 2]], [[1]]);
    assert.fail("no error");
  } catch (error) {
    assert.ok(error instanceof AttnLensError);
    assert.ok(error instanceof Error);
  }
  const r = lens.attention(I, I, I);
  assert.equal(r.output.data.length, 4);
  assert.equal(lens.explain("still works").tokens.length, 2);
});

test("the codes the module exports match the .d.ts union and every code is reachable", () => {
  const names = lens.errorCodes.map((c) => c.name);
  const dts = readFileSync(new URL("../../dist/attnlens.d.ts", import.meta.url), "utf8");
  const union = dts
    .match(/export type AttnLensErrorCode =([^;]+);/)[1]
    .match(/"([A-Z_0-9]+)"/g)
    .map((s) => s.slice(1, -1));
  assert.deepEqual(union, names);
  for (const c of lens.errorCodes) assert.ok(c.description.length > 10);
  // INTERNAL is for bugs: nothing a caller does should reach it, so no test triggers it.
  const tested = [
    "SHAPE_MISMATCH",
    "NON_FINITE",
    "TOO_LARGE",
    "BAD_ARGUMENT",
    "INVALID_UTF8",
    "EMPTY_INPUT",
    "UNKNOWN_OPTION",
    "OUT_OF_MEMORY",
    "INTERNAL",
    "BAD_FILE",
  ];
  assert.deepEqual([...names].sort(), [...tested].sort());
});
