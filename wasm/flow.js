// Where attention flows, from the weights a forward returned: each head's attention sink (the
// share of its attention on the first token and on special tokens) and attention rollout
// (Abnar & Zuidema 2020). Plain JS over [layers, heads, L, L] weights, so they serve every
// family and the weights of a file alike; imported by the package's entry points and by the
// views that draw them. Sums run in float64 and are rounded once.
import { describe, fail, readTyped } from "./boundary.js";

/** The weights as { data, layers, heads, L }, after checking what the functions below need. */
function weightsOf(where, attention) {
  const shape = attention?.shape;
  const typed = readTyped(`${where}.data`, attention?.data, ["Float32Array", "Float64Array"]);
  if (!typed)
    fail(
      "BAD_ARGUMENT",
      `${where} must be attention weights { data: Float32Array, shape: [layers, heads, L, L] }; got ${describe(attention)}`,
    );
  if (!Array.isArray(shape) || shape.length !== 4 || !shape.every((n) => Number.isInteger(n) && n > 0) || shape[2] !== shape[3])
    fail("BAD_ARGUMENT", `${where}.shape must be [layers, heads, L, L] (positive integers, square rows); got ${JSON.stringify(shape)}`);
  const [layers, heads, L] = shape;
  if (typed.length !== layers * heads * L * L)
    fail("BAD_ARGUMENT", `${where}.data holds ${typed.length} values but shape [${shape.join(", ")}] needs ${layers * heads * L * L}`);
  return { data: typed.view, layers, heads, L };
}

/** A weight, checked: a probability, else an error naming where it is (never a silent NaN). */
function weightAt(where, data, index, shape) {
  const w = data[index];
  if (!(w >= 0 && w <= 1 + 1e-3)) {
    const [, H, L] = shape;
    const at = [Math.floor(index / (H * L * L)), Math.floor(index / (L * L)) % H, Math.floor(index / L) % L, index % L];
    fail(
      "BAD_ARGUMENT",
      `${where}.data[${index}] (layer ${at[0]}, head ${at[1]}, row ${at[2]}, key ${at[3]}) is ${w}; weights lie in [0, 1]`,
    );
  }
  return w;
}

/**
 * Per layer and head, the mean share of each query row's attention on the first token (`first`)
 * and on the token positions `special` ([CLS], [SEP], a beginning-of-text token: `special`, when
 * given), as Float32Arrays of shape [layers, heads]. A causal model's first row can attend only to
 * the first token: with `causal`, rows from 1 on are averaged (all rows when L is 1).
 */
export function sinkRates(attention, options = {}) {
  const { data, layers, heads, L } = weightsOf("attention", attention);
  const { causal = false, special = [] } = options ?? {};
  if (typeof causal !== "boolean") fail("BAD_ARGUMENT", `options.causal must be a boolean; got ${describe(causal)}`);
  if (!Array.isArray(special)) fail("BAD_ARGUMENT", `options.special must be an array of token positions; got ${describe(special)}`);
  special.forEach((p, i) => {
    if (!Number.isInteger(p) || p < 0 || p >= L)
      fail("BAD_ARGUMENT", `options.special[${i}] must be a token position from 0 to ${L - 1}; got ${describe(p)}`);
  });
  const keys = [...new Set(special)];
  const start = causal && L > 1 ? 1 : 0;
  const first = new Float32Array(layers * heads);
  const onSpecial = new Float32Array(layers * heads);
  const shape = [layers, heads, L, L];
  for (let g = 0; g < layers * heads; g++) {
    let sumFirst = 0;
    let sumSpecial = 0;
    for (let i = start; i < L; i++) {
      const row = (g * L + i) * L;
      sumFirst += weightAt("attention", data, row, shape);
      for (const j of keys) sumSpecial += weightAt("attention", data, row + j, shape);
    }
    first[g] = sumFirst / (L - start);
    onSpecial[g] = sumSpecial / (L - start);
  }
  return { first, special: keys.length ? onSpecial : null, shape: [layers, heads] };
}

/**
 * A forward's value-weighted attention [layers, L, L] (‖Σ_h α^h_ij f_h(x_j)‖, what token j gives
 * token i through the whole layer) as rollout's input: each row divided by its sum, the share of
 * what row i receives that comes from each token, as { data, layers, heads: 1, L }. A row that
 * receives nothing (every head of the layer switched off) stays 0: the identity alone carries it.
 */
function sharesOf(where, mixed) {
  const shape = mixed.shape;
  const typed = readTyped(`${where}.data`, mixed?.data, ["Float32Array", "Float64Array"]);
  if (!typed || !shape.every((n) => Number.isInteger(n) && n > 0) || shape[1] !== shape[2])
    fail("BAD_ARGUMENT", `${where} must be value-weighted attention { data, shape: [layers, L, L] }; got shape ${JSON.stringify(shape)}`);
  const [layers, L] = shape;
  if (typed.length !== layers * L * L)
    fail("BAD_ARGUMENT", `${where}.data holds ${typed.length} values but shape [${shape.join(", ")}] needs ${layers * L * L}`);
  const out = new Float64Array(layers * L * L);
  for (let row = 0; row < layers * L; row++) {
    let sum = 0;
    for (let j = 0; j < L; j++) {
      const x = typed.view[row * L + j];
      if (!(x >= 0 && x < Infinity))
        fail(
          "BAD_ARGUMENT",
          `${where}.data[${row * L + j}] (layer ${Math.floor(row / L)}, row ${row % L}, key ${j}) is ${x}; value-weighted norms are finite and >= 0`,
        );
      sum += x;
    }
    if (sum > 0) for (let j = 0; j < L; j++) out[row * L + j] = typed.view[row * L + j] / sum;
  }
  return { data: out, layers, heads: 1, L };
}

/**
 * Attention rollout: per layer l, Ã_l = ½ · mean over heads of A_l + ½ · I with each row
 * renormalised, and R_l = Ã_l · R_(l-1) (R_0 = I): row i of R_l says from which input tokens the
 * representation of token i after layer l comes. Returns { data: Float32Array, shape: [layers, L,
 * L] }, every layer's R. A causal model's product keeps the triangle (both factors are lower
 * triangular). `residual` (default 0.5) is the weight of the identity. `attention` is weights
 * [layers, heads, L, L], or a forward's valueWeighted [layers, L, L], whose rows are taken as
 * shares of what each token receives (each row over its sum) in place of the heads' mean.
 */
export function rollout(attention, options = {}) {
  const { data, layers, heads, L } =
    Array.isArray(attention?.shape) && attention.shape.length === 3 ? sharesOf("attention", attention) : weightsOf("attention", attention);
  const { residual = 0.5 } = options ?? {};
  if (typeof residual !== "number" || !(residual >= 0 && residual <= 1))
    fail("BAD_ARGUMENT", `options.residual must be a number from 0 to 1 (the identity's weight); got ${describe(residual)}`);
  const shape = [layers, heads, L, L];
  const out = new Float32Array(layers * L * L);
  let R = new Float64Array(L * L);
  for (let i = 0; i < L; i++) R[i * L + i] = 1;
  const A = new Float64Array(L * L);
  for (let l = 0; l < layers; l++) {
    A.fill(0);
    for (let h = 0; h < heads; h++) {
      const base = (l * heads + h) * L * L;
      for (let k = 0; k < L * L; k++) A[k] += weightAt("attention", data, base + k, shape);
    }
    for (let i = 0; i < L; i++) {
      let sum = 0;
      for (let j = 0; j < L; j++) sum += A[i * L + j] = ((1 - residual) * A[i * L + j]) / heads + (i === j ? residual : 0);
      // (Only a value-weighted row that receives nothing, with residual 0: the token keeps itself.)
      if (sum === 0) A[i * L + i] = sum = 1;
      for (let j = 0; j < L; j++) A[i * L + j] /= sum;
    }
    const next = new Float64Array(L * L);
    for (let i = 0; i < L; i++)
      for (let k = 0; k < L; k++) {
        const a = A[i * L + k];
        if (a === 0) continue;
        for (let j = 0; j < L; j++) next[i * L + j] += a * R[k * L + j];
      }
    R = next;
    out.set(R, l * L * L);
  }
  return { data: out, shape: [layers, L, L] };
}

/**
 * Each head's value-weighted attention α^h_ij · ‖f_h(x_j)‖ (Kobayashi et al. 2020) from a
 * forward's `attention` [layers, heads, L, L] and `valueNorms` [layers, heads, L] (forward(ids, {
 * attention: true, valueWeighted: true })): { data: Float32Array, shape: [layers, heads, L, L] }.
 */
export function valueWeightedHeads(attention, valueNorms) {
  const { data, layers, heads, L } = weightsOf("attention", attention);
  const norms = readTyped("valueNorms.data", valueNorms?.data, ["Float32Array", "Float64Array"]);
  const shape = valueNorms?.shape;
  if (!norms || !Array.isArray(shape) || shape.join() !== [layers, heads, L].join() || norms.length !== layers * heads * L)
    fail(
      "BAD_ARGUMENT",
      `valueNorms must be { data: Float32Array, shape: [${layers}, ${heads}, ${L}] } (the forward's valueNorms for this attention); got ${norms ? `shape ${JSON.stringify(shape)}` : describe(valueNorms)}`,
    );
  const out = new Float32Array(layers * heads * L * L);
  for (let g = 0; g < layers * heads; g++)
    for (let j = 0; j < L; j++) {
      const n = norms.view[g * L + j];
      if (!(n >= 0 && n < Infinity)) fail("BAD_ARGUMENT", `valueNorms.data[${g * L + j}] is ${n}; a norm is a finite number >= 0`);
      for (let i = 0; i < L; i++) out[(g * L + i) * L + j] = weightAt("attention", data, (g * L + i) * L + j, [layers, heads, L, L]) * n;
    }
  return { data: out, shape: [layers, heads, L, L] };
}
