// The WebAssembly build agrees with the native build on the same inputs: attention to 1e-6,
// generated data (embeddings, positions, initial weights) bit for bit.
// Fixtures: written by the native program attnlens_dump_fixtures (scripts/test.sh runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose } from "./helpers.mjs";

const path = process.env.ATTNLENS_NATIVE_FIXTURES ?? new URL("../../build/native/fixtures.json", import.meta.url);
const fixtures = JSON.parse(readFileSync(path, "utf8"));
const lens = await loadAttnLens();
const tensor = (t) => ({ data: Float32Array.from(t.data), shape: t.shape });

for (const [i, c] of fixtures.attention.entries()) {
  test(`attention case ${i}: q ${JSON.stringify(c.q.shape)} ${c.causal ? "causal " + c.causalAlign : "full"}`, () => {
    const r = lens.attention(tensor(c.q), tensor(c.k), tensor(c.v), { causal: c.causal, causalAlign: c.causalAlign, returnWeights: true });
    assert.deepEqual(r.output.shape, c.output.shape);
    assertClose(r.output.data, c.output.data, 1e-6, "output");
    assertClose(r.weights.data, c.weights.data, 1e-6, "weights");
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
  assertClose(ex.weights.data, e.weights.data, 1e-6, "weights");
  assertClose(ex.output.data, e.output.data, 1e-6, "output");
});
