// The WebAssembly build agrees with the native build on the same inputs: attention and explain
// within twice the worst-case float32 error bound (two computations of the same answer),
// generated data (embeddings, positions, initial weights) bit for bit.
// Fixtures: written by the native program attnlens_dump_fixtures (scripts/test.sh runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose, attentionToleranceFor, maxAbs, mhaTolerance, twice } from "./helpers.mjs";

const path = process.env.ATTNLENS_NATIVE_FIXTURES ?? new URL("../../build/native/fixtures.json", import.meta.url);
const fixtures = JSON.parse(readFileSync(path, "utf8"));
const lens = await loadAttnLens();
const tensor = (t) => ({ data: Float32Array.from(t.data), shape: t.shape });

for (const [i, c] of fixtures.attention.entries()) {
  test(`attention case ${i}: q ${JSON.stringify(c.q.shape)} ${c.causal ? "causal " + c.causalAlign : "full"}`, () => {
    const [q, k, v] = [tensor(c.q), tensor(c.k), tensor(c.v)];
    const r = lens.attention(q, k, v, { causal: c.causal, causalAlign: c.causalAlign, returnWeights: true });
    assert.deepEqual(r.output.shape, c.output.shape);
    const tol = twice(attentionToleranceFor(q, k, v));
    assertClose(r.output.data, c.output.data, tol.output, "output", c.output.shape);
    assertClose(r.weights.data, c.weights.data, tol.weights, "weights", c.weights.shape);
  });
}

test("explain: tokens, generated data bit-identical, results within 1e-6", () => {
  const e = fixtures.explain;
  const ex = lens.explain(e.sentence, e.options);
  assert.deepEqual(
    ex.tokens.map((t) => t.text),
    e.tokens,
  );
  // %.9g round-trips float32 exactly, so generated values must match to the bit.
  assert.deepEqual(ex.tokenEmbeddings.data, Float32Array.from(e.tokenEmbeddings.data));
  assert.deepEqual(ex.positions.data, Float32Array.from(e.positions.data));
  assert.deepEqual(ex.projections.wq.data, Float32Array.from(e.wq.data));
  const w = ex.projections;
  const tol = mhaTolerance({
    E: 32,
    H: 4,
    L: ex.tokens.length,
    xMax: maxAbs(ex.embeddings.data),
    wMax: Math.max(...[w.wq, w.wk, w.wv, w.wo].map((t) => maxAbs(t.data))),
    projectedMax: Math.max(...[ex.trace.q, ex.trace.k, ex.trace.v].map((t) => maxAbs(t.data))),
    concatMax: maxAbs(ex.trace.concat.data),
  });
  assertClose(ex.weights.data, e.weights.data, twice(tol).weights, "weights", e.weights.shape);
  assertClose(ex.output.data, e.output.data, twice(tol).output, "output", e.output.shape);
});
