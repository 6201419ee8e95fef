// The weights a figure draws from (web/figure-data.js): a causal attention kept row by row
// (CausalRows, web/element/causal-rows.js) against the plain [layers, heads, L, L] array it stands
// for, and the cells a thumbnail samples (its cells()) against the matrix matrixOf() makes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { matrixOf } from "../../web/figure-data.js";
import { CausalRows } from "../../web/element/causal-rows.js";
import { assertClose, randomGenerator } from "./helpers.mjs";

/** A random causal attention [layers, heads, L, L]: each row's weights up to its diagonal sum to 1. */
function causalAttention(layers, heads, L, seed) {
  const rand = randomGenerator(seed);
  const data = new Float32Array(layers * heads * L * L);
  for (let g = 0; g < layers * heads; g++)
    for (let i = 0; i < L; i++) {
      const row = data.subarray((g * L + i) * L, (g * L + i) * L + i + 1);
      for (let j = 0; j <= i; j++) row[j] = rand() ** 4 + 1e-3;
      const sum = row.reduce((a, b) => a + b, 0);
      for (let j = 0; j <= i; j++) row[j] /= sum;
    }
  return { data, shape: [layers, heads, L, L] };
}

/** Rows [from, L) of a [layers, heads, L, L] attention, as analyze()'s attentionFrom returns them. */
function rowsFrom({ data, shape: [layers, heads, L] }, from) {
  const out = new Float32Array(layers * heads * (L - from) * L);
  for (let g = 0; g < layers * heads; g++) out.set(data.subarray((g * L + from) * L, (g + 1) * L * L), g * (L - from) * L);
  return { data: out, shape: [layers, heads, L - from, L] };
}

test("CausalRows: an edit's weights from the rows before it and the new rows equal the whole array, bit for bit", () => {
  const [layers, heads] = [2, 3];
  const before = causalAttention(layers, heads, 9, 1);
  const held = new CausalRows(before);
  assert.deepEqual(held.data, before.data, "made from a whole array: that array");
  // After an edit at token 6 of a 12-token text: rows 0-5 are the held ones, rows 6-11 new.
  const after = causalAttention(layers, heads, 12, 2);
  for (let g = 0; g < layers * heads; g++)
    for (let i = 0; i < 6; i++) after.data.set(before.data.subarray((g * 9 + i) * 9, (g * 9 + i) * 9 + i + 1), (g * 12 + i) * 12);
  for (const from of [6, 0]) {
    const edited = held.withRows(from, rowsFrom(after, from));
    assert.deepEqual(edited.shape, [layers, heads, 12, 12]);
    // One head at a time (what a view draws), then the whole array.
    for (let g = 0; g < layers * heads; g++)
      assertClose(edited.head(g), after.data.subarray(g * 144, (g + 1) * 144), 0, `head ${g}, from ${from}`, [12, 12]);
    assertClose(edited.data, after.data, 0, `the whole array, from ${from}`, after.shape);
    assert.equal(edited.row(4, 7).length, 8, "row 7: its 8 weights up to the diagonal");
  }
  // A deletion at the end keeps rows and makes none.
  const shorter = held.withRows(5, rowsFrom(causalAttention(layers, heads, 5, 3), 5));
  assertClose(
    shorter.data,
    Float32Array.from({ length: layers * heads * 25 }, (_, k) => {
      const [g, i, j] = [Math.floor(k / 25), Math.floor(k / 5) % 5, k % 5];
      return before.data[(g * 9 + i) * 9 + j];
    }),
    0,
    "the first five tokens' rows",
    [layers, heads, 5, 5],
  );
});

test("CausalRows.cells: a thumbnail's cells, as matrixOf()'s matrix has them, for a head and a layer's mean", () => {
  const plain = causalAttention(3, 4, 40, 4);
  const cells = Int32Array.from({ length: 16 }, (_, r) => Math.floor(((r + 0.5) * 40) / 16));
  for (const weights of [new CausalRows(plain), new CausalRows(causalAttention(3, 4, 30, 5)).withRows(0, plain)]) {
    for (const layer of [0, 2])
      for (const head of [0, 3, "mean"]) {
        const m = matrixOf({ weights: plain, tokens: new Array(40), causal: true }, layer, head);
        const expected = Float32Array.from({ length: 16 * 16 }, (_, k) => m[cells[Math.floor(k / 16)] * 40 + cells[k % 16]]);
        // The mean in matrixOf()'s order and float32 steps: the same bits.
        assertClose(weights.cells(layer, head, cells, cells), expected, 0, `layer ${layer}, head ${head}`, [16, 16]);
        // And matrixOf() of the rows (a mean made row by row) is the plain array's, bit for bit.
        const fromRows = matrixOf({ weights, tokens: new Array(40), causal: true }, layer, head);
        assertClose(fromRows, m, 0, `matrixOf of the rows, layer ${layer}, head ${head}`, [40, 40]);
      }
  }
});
