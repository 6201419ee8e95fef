// Shared by the node:test files: a float64 reference, a seeded generator, comparisons.
import assert from "node:assert/strict";

/** Mulberry32: a tiny seeded generator for test inputs (not the library's generator). */
export function randomGenerator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, "lengths differ");
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

export function assertClose(actual, expected, tolerance, label = "values") {
  const diff = maxAbsDiff(actual, expected);
  assert.ok(diff <= tolerance, `${label}: max |difference| ${diff.toExponential(2)} > ${tolerance}`);
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
