// The synthetic task where induction heads pay off (Olsson et al. 2022): each row is random
// tokens in which a span of n random tokens is followed at once by its repeat. The first copy
// cannot be predicted (its loss stays near ln V); the second can, by a head that finds the
// earlier occurrence of the current token and copies what followed it. n and the span's place
// vary from row to row, so neither a fixed distance back nor a fixed position solves it (with
// the span at the row's end, models learned position tricks instead: web/train/RECIPE.md).
// Deterministic for a seed in any JS engine: the generator is integer arithmetic only.

/**
 * mulberry32: a small 32-bit generator; next() returns an integer in [0, 2^32). Its whole
 * state is one integer: `state` reads it, generator(seed, state) resumes from it.
 */
export function generator(seed, state = seed) {
  let a = state >>> 0;
  return {
    get state() {
      return a;
    },
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    },
    /** An integer in [0, n), without modulo bias for n far below 2^32 (n ≤ 2^16 here). */
    below(n) {
      return this.next() % n;
    },
  };
}

/** A fixed shuffle of 0 .. vocab - 1 (the skip-bigram chain's rule), the same in every engine. */
export function chainPermutation(vocab) {
  const perm = Array.from({ length: vocab }, (_, i) => i);
  const g = generator(99);
  for (let i = vocab - 1; i > 0; i--) {
    const j = g.below(i + 1);
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  return perm;
}

/**
 * A batch of `batch` rows of `length` ids in [0, vocab): random ids, 2n of them, at a random
 * place, a span of n (nMin ≤ n ≤ nMax, per row) and its repeat; with `periodic`, the span
 * repeats on to the row's end. With `chainRows` k, the first k rows are a skip-bigram chain
 * instead — each id from the third on is, with probability `chainP`, chainPermutation(vocab) of
 * the id two places back — which a previous-token head helps to predict, as in natural text
 * (their `spans` entries are null). As trainStep wants it: { data: Int32Array,
 * shape: [batch, length] } (inputs are the first length - 1, targets the last), plus `spans`:
 * per row { start, n }, the first copy's start.
 */
export function repeatedBatch(rng, { batch, length, nMin, nMax, vocab, periodic = false, chainRows = 0, chainP = 0.9 }) {
  const data = new Int32Array(batch * length);
  const spans = [];
  for (let b = 0; b < batch; b++) {
    const row = data.subarray(b * length, (b + 1) * length);
    const n = nMin + rng.below(nMax - nMin + 1);
    const start = rng.below(length - 2 * n + 1);
    for (let j = 0; j < length; j++) row[j] = rng.below(vocab);
    row.copyWithin(start + n, start, start + n);
    // periodic: the span goes on repeating to the row's end (more copies to learn from per row).
    if (periodic && b >= chainRows) for (let j = start + 2 * n; j < length; j++) row[j] = row[j - n];
    spans.push(b < chainRows ? null : { start, n });
  }
  if (chainRows > 0) {
    const perm = chainPermutation(vocab);
    const threshold = Math.round(chainP * 1000);
    for (let b = 0; b < Math.min(chainRows, batch); b++) {
      const row = data.subarray(b * length, (b + 1) * length);
      for (let j = 2; j < length; j++) if (rng.below(1000) < threshold) row[j] = perm[row[j - 2]];
    }
  }
  return { data, shape: [batch, length], spans };
}

/**
 * Losses of a forward pass over `batch` (repeatedBatch's rows): logits [B, T, V] of the inputs
 * (the first T = length - 1 ids); position t predicts id t + 1. `first` averages the
 * predictions of the first copy's ids after its first (unpredictable: about ln V), `second`
 * those of the second copy's ids after its first (predictable by copying). The second copy's
 * first id is in neither: predicting it takes knowing where the span starts, not induction.
 */
export function copyLosses(logits, batch) {
  const [B, T, V] = logits.shape;
  const length = batch.shape[1];
  const sums = { first: 0, second: 0 };
  const counts = { first: 0, second: 0 };
  for (let b = 0; b < B; b++) {
    const { start, n } = batch.spans[b];
    for (let t = start; t < Math.min(T, start + 2 * n - 1); t++) {
      const target = t + 1;
      const part = target < start + n ? "first" : target > start + n ? "second" : null;
      if (!part) continue;
      const row = logits.data.subarray((b * T + t) * V, (b * T + t + 1) * V);
      let max = -Infinity;
      for (let v = 0; v < V; v++) if (row[v] > max) max = row[v];
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(row[v] - max);
      sums[part] += Math.log(sum) + max - row[batch.data[b * length + target]];
      counts[part]++;
    }
  }
  return { first: sums.first / counts.first, second: sums.second / counts.second };
}

/**
 * Per [layer][head] scores from attention [layers, B, heads, T, T] over repeatedBatch's rows:
 * `induction`, the mean attention from each second-copy token start + n + j to the token after
 * its earlier occurrence, start + j + 1; `previous`, the mean attention from each t ≥ 1 to t - 1.
 */
export function headScores(attention, batch) {
  const [layers, B, heads, T] = attention.shape;
  const induction = Array.from({ length: layers }, () => new Array(heads).fill(0));
  const previous = Array.from({ length: layers }, () => new Array(heads).fill(0));
  for (let l = 0; l < layers; l++)
    for (let b = 0; b < B; b++) {
      const { start, n } = batch.spans[b];
      for (let h = 0; h < heads; h++) {
        const m = (l * B + b) * heads + h;
        const a = attention.data.subarray(m * T * T, (m + 1) * T * T);
        let ind = 0;
        let pairs = 0;
        // Only the second copy's tokens: after it the row is random again.
        for (let j = 0; j < n && start + n + j < T; j++, pairs++) ind += a[(start + n + j) * T + start + j + 1];
        let prev = 0;
        for (let t = 1; t < T; t++) prev += a[t * T + t - 1];
        induction[l][h] += ind / pairs / B;
        previous[l][h] += prev / (T - 1) / B;
      }
    }
  return { induction, previous };
}
