// Shared by the node:test files: a float64 reference, a seeded generator, comparisons.
import assert from "node:assert/strict";

/** Mulberry32, a tiny seeded generator for test inputs: the one generate() draws with. */
export { seededRandom as randomGenerator } from "../../wasm/generate.js";

export function randomTensor(shape, rand, lo = -1, hi = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  return { data: Float32Array.from({ length: n }, () => lo + (hi - lo) * rand()), shape };
}

/**
 * Attention in float64 from the definition, for q [.., L, E] lifted to [B, H, L, E].
 * mask: { kind: "bool" | "float", data, shape } broadcast from the right.
 */
export function referenceAttention(q, k, v, { causal = false, bottomRight = false, scale, mask } = {}) {
  const r = q.shape.length;
  const [B, H, Hkv] = [r >= 3 ? q.shape[0] : 1, r === 4 ? q.shape[1] : 1, r === 4 ? k.shape[1] : 1];
  const [L, E, S, Ev] = [q.shape[r - 2], q.shape[r - 1], k.shape[r - 2], v.shape[r - 1]];
  const s = scale ?? 1 / Math.sqrt(E);
  const output = new Float64Array(B * H * L * Ev);
  const weights = new Float64Array(B * H * L * S);
  const maskAt = (b, h, i, j) => {
    const idx = r === 4 ? [b, h, i, j] : r === 3 ? [b, i, j] : [i, j];
    const ms = mask.shape;
    let flat = 0;
    for (let d = 0; d < ms.length; d++) flat = flat * ms[d] + (ms[d] === 1 ? 0 : idx[idx.length - ms.length + d]);
    return mask.data[flat];
  };
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kh = Math.floor(h / (H / Hkv));
      for (let i = 0; i < L; i++) {
        const logits = new Float64Array(S);
        for (let j = 0; j < S; j++) {
          let dot = 0;
          for (let e = 0; e < E; e++) dot += q.data[((b * H + h) * L + i) * E + e] * k.data[((b * Hkv + kh) * S + j) * E + e];
          let logit = dot * s;
          if (mask) {
            const m = maskAt(b, h, i, j);
            if (mask.kind === "bool") logit = m ? logit : -Infinity;
            else logit += m;
          }
          if (causal && j > i + (bottomRight ? S - L : 0)) logit = -Infinity;
          logits[j] = logit;
        }
        const max = Math.max(...logits);
        if (max === -Infinity) continue;
        let sum = 0;
        for (let j = 0; j < S; j++) sum += logits[j] = logits[j] === -Infinity ? 0 : Math.exp(logits[j] - max);
        for (let j = 0; j < S; j++) {
          const p = logits[j] / sum;
          weights[((b * H + h) * L + i) * S + j] = p;
          for (let e = 0; e < Ev; e++) output[((b * H + h) * L + i) * Ev + e] += p * v.data[((b * Hkv + kh) * S + j) * Ev + e];
        }
      }
    }
  }
  return { output, weights };
}

/** Largest |x| over an array-like of numbers; NaN if any is NaN (a bound built on it then fails). */
export function maxAbs(values) {
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]);
    if (Number.isNaN(a)) return NaN;
    if (a > m) m = a;
  }
  return m;
}

const where = (flat, shape) => {
  if (!shape) return `index ${flat}`;
  const index = [];
  let rest = flat;
  for (let d = shape.length - 1; d >= 0; d--) {
    index[d] = rest % shape[d];
    rest = Math.floor(rest / shape[d]);
  }
  return `index ${flat} [${index.join(", ")}]`;
};

/**
 * Compares two array-likes of numbers: |actual - expected| <= tolerance everywhere, equal lengths
 * (and the product of `shape`, when given). Identical values differ by 0 (equal infinities
 * included); any other non-finite difference fails, as do a NaN or negative tolerance.
 * Returns { ok, report }; the report names the worst difference, where it is and both values.
 */
export function compareClose(actual, expected, tolerance, shape) {
  if (!(tolerance >= 0)) return { ok: false, report: `the tolerance is ${tolerance}, not a number >= 0` };
  if (actual.length !== expected.length) {
    return { ok: false, report: `size mismatch: actual has ${actual.length} values, expected has ${expected.length}` };
  }
  if (shape) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (count !== actual.length)
      return { ok: false, report: `shape [${shape.join(", ")}] holds ${count} values but ${actual.length} were given` };
  }
  let worst = 0;
  let worstAt = 0;
  let over = 0;
  for (let i = 0; i < actual.length; i++) {
    const [a, e] = [actual[i], expected[i]];
    const diff = a === e ? 0 : Math.abs(a - e);
    if (!Number.isFinite(diff)) return { ok: false, report: `non-finite difference at ${where(i, shape)}: actual ${a}, expected ${e}` };
    if (diff > tolerance) over++;
    if (diff > worst) [worst, worstAt] = [diff, i];
  }
  const worstText =
    actual.length === 0
      ? "no values"
      : `max |actual - expected| = ${worst.toPrecision(3)} at ${where(worstAt, shape)}: actual ${actual[worstAt]}, expected ${expected[worstAt]}`;
  const ok = over === 0;
  return { ok, report: `${worstText} (${ok ? "within" : "over"} ${tolerance}; ${over} of ${actual.length} values over)` };
}

/** Asserts compareClose(); `label` says what is compared. */
export function assertClose(actual, expected, tolerance, label = "values", shape = undefined) {
  const { ok, report } = compareClose(actual, expected, tolerance, shape);
  assert.ok(ok, `${label}: ${report}`);
}

const U = 2 ** -24; // float32 rounding, relative
const gamma = (n) => (n * U) / (1 - n * U); // error of an n-term float32 sum or dot product

/**
 * Worst-case float32 error of attention against the exact answer, computed in any order (the
 * same bound as tests/cpp/reference.hpp's attention_tolerance, which derives it): inputs bounded
 * by qMax, kMax, vMax, head dimension E, S keys, the scale, additive mask values bounded by
 * maskMax and extra logit error (for inputs that carry errors). Returns { weights, output }.
 */
export function attentionTolerance({ E, S, qMax, kMax, vMax, scale, maskMax = 0, logitError = 0 }) {
  const raw = E * qMax * kMax;
  const d = Math.abs(scale) * gamma(E) * raw + 6 * U * (Math.abs(scale) * raw + maskMax) + logitError;
  const weights = Math.expm1(2 * d) + 2 * d + gamma(S + 10);
  return { weights, output: vMax * (weights + gamma(S)) };
}

/** attentionTolerance() for these tensors ({ data, shape }, last dimension E, S keys). */
export function attentionToleranceFor(q, k, v, { scale, maskMax = 0 } = {}) {
  const r = q.shape.length;
  const E = q.shape[r - 1];
  return attentionTolerance({
    E,
    S: k.shape[r - 2],
    qMax: maxAbs(q.data),
    kMax: maxAbs(k.data),
    vMax: maxAbs(v.data),
    scale: scale ?? 1 / Math.sqrt(E),
    maskMax,
  });
}

/** The same bounds for two float32 computations compared with each other. */
export const twice = (t) => ({ weights: 2 * t.weights, output: 2 * t.output });

/**
 * Worst-case float32 error of a self-attention layer's output (tests/cpp/reference.hpp's
 * mha_tolerance): model dimension E, H heads, L tokens, |x| <= xMax, weights <= wMax, biases
 * <= bMax, projected values <= projectedMax, head concatenation <= concatMax.
 * Returns { weights, output }: the bound on each head's weights and on the layer's output.
 */
export function mhaTolerance({ E, H, L, xMax, wMax, bMax = 0, projectedMax, concatMax }) {
  const d = E / H;
  const p = gamma(E + 1) * (E * xMax * wMax + bMax);
  const big = projectedMax + p;
  const scale = 1 / Math.sqrt(d);
  const head = attentionTolerance({ E: d, S: L, qMax: big, kMax: big, vMax: big, scale, logitError: scale * d * (2 * big * p + p * p) });
  const concatError = head.output + p;
  return { weights: head.weights, output: E * wMax * concatError + gamma(E + 1) * (E * (concatMax + concatError) * wMax + bMax) };
}

/** Requires `fn` to throw an AttnLensError with `code` and a message matching each pattern. */
export function assertAttnLensError(fn, code, ...patterns) {
  assert.throws(fn, (error) => {
    assert.equal(error.name, "AttnLensError", `expected AttnLensError, got ${error}`);
    assert.equal(error.code, code, `expected ${code}: ${error.message}`);
    for (const p of patterns) assert.match(error.message, p);
    return true;
  });
}
