// The lines view's pair finder, on its own so that Node can test it (views/lines.js needs the
// page's colour maps).

/**
 * The pairs of one head's row-major L × L weights that get a line: weight ≥ minWeight (NaN and
 * negative weights never do) and, when causal, key ≤ query. Grouped by quantised weight:
 * byLevel[level] holds the flat indices i · L + j of its pairs in increasing order, with
 * level = min(levels, ceil(weight · levels)), so byLevel has levels + 1 entries (the first one
 * empty when minWeight > 0).
 *
 * Two passes. The first visits every weight a query sees without a branch: it always writes the
 * index and advances only past a drawn one, so the unpredictable test (at 512 tokens most
 * weights are near the threshold) costs no mispredictions. The second sorts the few found into
 * levels. Against the loop that branched: 10.0 -> 6.7 ms per 512-token edit side by side in
 * Node 22 (bench/line-pairs.mjs).
 */
export function linePairs(weights, L, causal, minWeight, levels) {
  if (!(minWeight > 0)) throw new RangeError(`minWeight must be > 0; got ${minWeight}`);
  if (!Number.isInteger(levels) || levels < 1 || levels > 255)
    throw new RangeError(`levels must be a whole number from 1 to 255; got ${levels}`);
  if (weights.length < L * L) throw new RangeError(`weights hold ${weights.length} numbers, fewer than L × L = ${L * L}`);
  let found = new Int32Array(Math.min(L * L, 4096));
  let n = 0;
  for (let i = 0; i < L; i++) {
    const base = i * L;
    const end = base + (causal ? i + 1 : L);
    // Room for every key of this row: the write index stays below n + (end - base).
    if (n + (end - base) > found.length) {
      const more = new Int32Array(Math.max(2 * found.length, n + (end - base)));
      more.set(found.subarray(0, n));
      found = more;
    }
    for (let k = base; k < end; k++) {
      found[n] = k;
      n += +(weights[k] >= minWeight);
    }
  }
  const level = new Uint8Array(n);
  const counts = new Int32Array(levels + 1);
  for (let m = 0; m < n; m++) {
    const v = weights[found[m]];
    const l = v < 1 ? Math.ceil(v * levels) : levels;
    level[m] = l;
    counts[l]++;
  }
  const byLevel = Array.from(counts, (c) => new Int32Array(c));
  const filled = new Int32Array(levels + 1);
  for (let m = 0; m < n; m++) {
    const l = level[m];
    byLevel[l][filled[l]++] = found[m];
  }
  return byLevel;
}
