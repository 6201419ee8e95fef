// What the Node runner (run.mjs, common.mjs), the Chromium run (browser.mjs) and the model
// benches (model.mjs, typing.mjs, beyond.mjs, contenders/attnlens-model.mjs) share; no Node APIs
// here, so the page imports it too.

/** n token ids below `vocab`, the same for a seed on every run (a linear congruential generator). */
export function tokenIds(n, vocab, seed) {
  let x = seed;
  return Int32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % vocab;
  });
}

/** Median ms of `fn` over `runs` runs after one warm-up; `before()` (untimed) runs before each. */
export function medianMs(fn, runs, before = () => {}) {
  before();
  fn();
  const t = [];
  for (let i = 0; i < runs; i++) {
    before();
    const start = performance.now();
    fn();
    t.push(performance.now() - start);
  }
  return t.sort((a, b) => a - b)[runs >> 1];
}

/** q, k, v = [1, H, L, D] each, one Float32Array, uniform in [-1, 1) from a seeded generator. */
export function randomInputs(L, seed, H = 8, D = 64) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  return Float32Array.from({ length: 3 * H * L * D }, () => 2 * rand());
}

/** softmax(q kᵀ / √D (+ causal mask)) v in float64, for `all` = randomInputs(L, …). */
export function reference(all, L, causal, H = 8, D = 64) {
  const n = H * L * D;
  const [q, k, v] = [all.subarray(0, n), all.subarray(n, 2 * n), all.subarray(2 * n)];
  const out = new Float64Array(n);
  const row = new Float64Array(L);
  const scale = 1 / Math.sqrt(D);
  for (let h = 0; h < H; h++) {
    const b = h * L * D;
    for (let i = 0; i < L; i++) {
      const keys = causal ? i + 1 : L;
      let max = -Infinity;
      for (let j = 0; j < keys; j++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[b + i * D + d] * k[b + j * D + d];
        row[j] = s * scale;
        max = Math.max(max, row[j]);
      }
      let sum = 0;
      for (let j = 0; j < keys; j++) sum += row[j] = Math.exp(row[j] - max);
      for (let j = 0; j < keys; j++) for (let d = 0; d < D; d++) out[b + i * D + d] += (row[j] / sum) * v[b + j * D + d];
    }
  }
  return out;
}

/**
 * Warm-up (at least `warmup` runs and 300 ms, so that the engine has tiered WebAssembly and JS up
 * to its optimising compiler), then `reps` timed runs; returns the median in ms and the last result.
 */
export async function time(run, reps, warmup = 2) {
  let result;
  const start = performance.now();
  for (let i = 0; i < warmup || (performance.now() - start < 300 && i < 1000); i++) result = await run();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    result = await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], result };
}

/** The largest |a[i] − b[i]|; NaN anywhere, or a length mismatch, gives Infinity. */
export function worstDifference(a, b) {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
  }
  return worst;
}
