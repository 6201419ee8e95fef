// sinkRates() and rollout() (wasm/flow.js) against float64 references written here from their
// definitions: the sink rate as a plain mean of weights, rollout as the plain product of the
// per-layer matrices (Abnar & Zuidema 2020: Ã = ½ A + ½ I, rows renormalised, R = Ã_L ⋯ Ã_1), on
// a real model's attention (the shipped causal model and encoder) and on hand-made weights with
// known answers; every bad input named.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens, rollout, sinkRates } from "attnlens";
import { assertAttnLensError, assertClose } from "./helpers.mjs";

const lens = await loadAttnLens();

async function load(name) {
  const dir = new URL(`../../models/${name}/`, import.meta.url);
  const files = { "model.safetensors": new Uint8Array(readFileSync(new URL("model.safetensors", dir))) };
  for (const f of ["config.json", "vocab.json", "merges.txt"]) files[f] = readFileSync(new URL(f, dir), "utf8");
  return lens.loadModel({ files });
}

/** [layers][heads][L][L] nested float64 arrays of a weights tensor. */
function nested({ data, shape: [layers, heads, L] }) {
  return Array.from({ length: layers }, (_, l) =>
    Array.from({ length: heads }, (_, h) =>
      Array.from({ length: L }, (_, i) => Array.from(data.subarray(((l * heads + h) * L + i) * L, ((l * heads + h) * L + i + 1) * L))),
    ),
  );
}

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));

function referenceRollout(attention, residual = 0.5) {
  const layers = nested(attention);
  const L = attention.shape[2];
  let R = Array.from({ length: L }, (_, i) => Array.from({ length: L }, (_, j) => (i === j ? 1 : 0)));
  const out = [];
  for (const heads of layers) {
    const mean = heads[0].map((row, i) => row.map((_, j) => heads.reduce((s, h) => s + h[i][j], 0) / heads.length));
    const mixed = mean.map((row, i) => row.map((w, j) => (1 - residual) * w + (i === j ? residual : 0)));
    const normal = mixed.map((row) => row.map((w) => w / row.reduce((s, x) => s + x, 0)));
    R = matmul(normal, R);
    out.push(...R.flat());
  }
  return out;
}

function referenceSinks(attention, causal, special) {
  const layers = nested(attention);
  const start = causal && attention.shape[2] > 1 ? 1 : 0;
  const first = [];
  const onSpecial = [];
  for (const heads of layers)
    for (const rows of heads) {
      const used = rows.slice(start);
      first.push(used.reduce((s, r) => s + r[0], 0) / used.length);
      onSpecial.push(used.reduce((s, r) => s + special.reduce((t, j) => t + r[j], 0), 0) / used.length);
    }
  return { first, special: onSpecial };
}

// Float32 results of float64 sums: each output is rounded once (2^-24 relative) after sums of
// at most L · heads products of weights in [0, 1] whose float32 inputs are exact in float64:
// the reference computes from the same float32 weights, so the only difference is the final
// rounding and the order of float64 additions (~1e-15): 1e-6 covers both with room.
const TOL = 1e-6;

test("rollout and sink rates of the shipped causal model's attention equal their float64 references", async () => {
  const model = await load("attnlens");
  const text = "When Mary and John went to the store, John gave a drink to Mary";
  const { attention } = model.analyze(text, { attention: true });
  const R = rollout(attention);
  assert.deepEqual(R.shape, [attention.shape[0], attention.shape[2], attention.shape[2]]);
  assertClose(R.data, referenceRollout(attention), TOL, "rollout", R.shape);
  const L = attention.shape[2];
  // A causal model's rollout keeps the triangle, and its rows sum to 1.
  for (let l = 0; l < R.shape[0]; l++)
    for (let i = 0; i < L; i++) {
      const row = R.data.subarray((l * L + i) * L, (l * L + i + 1) * L);
      assert.ok(
        row.subarray(i + 1).every((w) => w === 0),
        `layer ${l} row ${i} keeps the triangle`,
      );
      assert.ok(Math.abs(row.reduce((s, w) => s + w, 0) - 1) < 1e-5, `layer ${l} row ${i} sums to 1`);
    }
  assertClose(rollout(attention, { residual: 0.2 }).data, referenceRollout(attention, 0.2), TOL, "rollout, residual 0.2");
  const sinks = sinkRates(attention, { causal: true, special: [0, 3] });
  const ref = referenceSinks(attention, true, [0, 3]);
  assert.deepEqual(sinks.shape, attention.shape.slice(0, 2));
  assertClose(sinks.first, ref.first, TOL, "sink rate on the first token", sinks.shape);
  assertClose(sinks.special, ref.special, TOL, "share on positions 0 and 3", sinks.shape);
  assert.equal(sinkRates(attention).special, null);
  model.dispose();
});

test("sink rates of the shipped encoder on [CLS] and [SEP]", async () => {
  const model = await load("attnlens-encoder");
  const { tokens, attention } = model.analyze("the man said good day to the woman", { attention: true });
  const special = tokens.flatMap((t, i) => (t.special ? [i] : []));
  assert.ok(special.length === 2, "[CLS] and [SEP]");
  const sinks = sinkRates(attention, { special });
  const ref = referenceSinks(attention, false, special);
  assertClose(sinks.first, ref.first, TOL, "share on [CLS]", sinks.shape);
  assertClose(sinks.special, ref.special, TOL, "share on [CLS] and [SEP]", sinks.shape);
  model.dispose();
});

test("known answers: a head that always looks at the first token, the identity, one layer's rollout by hand", () => {
  // Layer 0: head 0 puts everything on token 0; head 1 is uniform over the keys it may see.
  const L = 3;
  const data = new Float32Array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3]);
  const attention = { data, shape: [1, 2, L, L] };
  const sinks = sinkRates(attention, { causal: true });
  // Rows 1 and 2 (row 0 has no choice): head 0 all on token 0; head 1 (1/2 + 1/3) / 2.
  assertClose(sinks.first, [1, (0.5 + 1 / 3) / 2], TOL, "sink rates");
  // Ã = ½ · mean + ½ I; mean row 1 = [0.75, 0.25, 0]: Ã row 1 = [0.375, 0.625, 0].
  const R = rollout(attention);
  assertClose(R.data.subarray(3, 6), [0.375, 0.625, 0], TOL, "rollout row 1");
  // residual 1: the identity, whatever the weights.
  assertClose(rollout(attention, { residual: 1 }).data, [1, 0, 0, 0, 1, 0, 0, 0, 1], 0, "rollout with residual 1");
});

test("bad input to sinkRates and rollout is an error that names it", () => {
  const good = { data: new Float32Array(4), shape: [1, 1, 2, 2] };
  good.data.set([1, 0, 0.5, 0.5]);
  for (const f of [sinkRates, rollout]) {
    assertAttnLensError(() => f(null), "BAD_ARGUMENT", /attention must be attention weights/);
    assertAttnLensError(
      () => f({ data: [1, 0], shape: [1, 1, 1, 1] }),
      "BAD_ARGUMENT",
      /attention must be attention weights.*got an object/,
    );
    assertAttnLensError(
      () => f({ data: new Float32Array(6), shape: [1, 1, 2, 3] }),
      "BAD_ARGUMENT",
      /attention\.shape must be \[layers, heads, L, L\]/,
    );
    assertAttnLensError(
      () => f({ data: new Float32Array(5), shape: [1, 1, 2, 2] }),
      "BAD_ARGUMENT",
      /holds 5 values but shape \[1, 1, 2, 2\] needs 4/,
    );
    const nan = { data: Float32Array.from([1, 0, NaN, 0.5]), shape: [1, 1, 2, 2] };
    assertAttnLensError(
      () => f(nan),
      "BAD_ARGUMENT",
      /attention\.data\[2\] \(layer 0, head 0, row 1, key 0\) is NaN; weights lie in \[0, 1\]/,
    );
  }
  assertAttnLensError(() => sinkRates(good, { causal: "yes" }), "BAD_ARGUMENT", /options\.causal must be a boolean/);
  assertAttnLensError(
    () => sinkRates(good, { special: [2] }),
    "BAD_ARGUMENT",
    /options\.special\[0\] must be a token position from 0 to 1; got number 2/,
  );
  assertAttnLensError(() => rollout(good, { residual: 1.5 }), "BAD_ARGUMENT", /options\.residual must be a number from 0 to 1/);
});

/** valueWeighted [layers, L, L] as one head of shares [layers, 1, L, L]: each row over its sum. */
function shares({ data, shape: [layers, L] }) {
  const out = new Float64Array(layers * L * L);
  for (let r = 0; r < layers * L; r++) {
    const row = Array.from(data.subarray(r * L, (r + 1) * L));
    const sum = row.reduce((s, x) => s + x, 0);
    row.forEach((x, j) => (out[r * L + j] = sum > 0 ? x / sum : 0));
  }
  return { data: out, shape: [layers, 1, L, L] };
}

test("rollout of value-weighted attention: the shares of what each token receives, rolled out; rows proportional to the weights give the weights' rollout", async () => {
  const model = await load("attnlens");
  const ids = Int32Array.from([5, 17, 300, 5, 17, 300, 42, 8, 9]);
  const { attention, valueWeighted } = model.forward(ids, { attention: true, valueWeighted: true });
  const R = rollout(valueWeighted);
  assert.deepEqual(R.shape, [attention.shape[0], ids.length, ids.length]);
  assertClose(R.data, referenceRollout(shares(valueWeighted)), TOL, "value-weighted rollout", R.shape);
  assertClose(rollout(valueWeighted, { residual: 0 }).data, referenceRollout(shares(valueWeighted), 0), TOL, "residual 0");
  // It differs from the weights' rollout (value weighting moves attention off the first token).
  const moved = R.data.reduce((m, x, i) => Math.max(m, Math.abs(x - rollout(attention).data[i])), 0);
  assert.ok(moved > 1e-3, `value weighting moved the rollout (by ${moved})`);
  model.dispose();

  // One head whose value-weighted rows are its weights times a positive number per row: the same
  // shares, so the same rollout as the weights (to float32 rounding of the scaled inputs).
  const L = 3;
  const weights = Float32Array.from([1, 0, 0, 0.25, 0.75, 0, 0.5, 0.25, 0.25, 1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
  const scaled = weights.map((w, i) => w * (1 + Math.floor(i / L)));
  assertClose(
    rollout({ data: scaled, shape: [2, L, L] }).data,
    rollout({ data: weights, shape: [2, 1, L, L] }).data,
    TOL,
    "proportional rows",
  );
  // A row that receives nothing (every head switched off): with residual 0 it keeps itself.
  const silent = rollout({ data: new Float32Array([1, 0, 0, 0]), shape: [1, 2, 2] }, { residual: 0 });
  assert.deepEqual(Array.from(silent.data), [1, 0, 0, 1]);
  assertAttnLensError(
    () => rollout({ data: new Float32Array([1, -1, 0, 1]), shape: [1, 2, 2] }),
    "BAD_ARGUMENT",
    /attention.data\[1\] \(layer 0, row 0, key 1\) is -1; value-weighted norms are finite and >= 0/,
  );
  assertAttnLensError(() => rollout({ data: new Float32Array([NaN, 0, 0, 1]), shape: [1, 2, 2] }), "BAD_ARGUMENT", /is NaN/);
  assertAttnLensError(() => rollout({ data: new Float32Array(4), shape: [1, 2, 3] }), "BAD_ARGUMENT", /\[layers, L, L\]/);
  assertAttnLensError(() => rollout({ data: new Float32Array(5), shape: [1, 2, 2] }), "BAD_ARGUMENT", /holds 5 values/);
});
