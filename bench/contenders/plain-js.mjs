// Plain JavaScript loops over Float32Arrays: what a page would write without a library.
import { parseArgs, readInputs, report, time } from "../common.mjs";

const args = parseArgs();
const { q, k, v } = readInputs(args);
const { H, L, D } = args;
const causal = args.mode === "causal";
const scale = 1 / Math.sqrt(D);
const out = new Float32Array(H * L * D);
const row = new Float32Array(L);
const run = () => {
  out.fill(0);
  for (let h = 0; h < H; h++) {
    const base = h * L * D;
    for (let i = 0; i < L; i++) {
      const keys = causal ? i + 1 : L;
      let max = -Infinity;
      for (let j = 0; j < keys; j++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[base + i * D + d] * k[base + j * D + d];
        row[j] = s * scale;
        if (row[j] > max) max = row[j];
      }
      let sum = 0;
      for (let j = 0; j < keys; j++) sum += row[j] = Math.exp(row[j] - max);
      const o = base + i * D;
      for (let j = 0; j < keys; j++) {
        const p = row[j] / sum;
        for (let d = 0; d < D; d++) out[o + d] += p * v[base + j * D + d];
      }
    }
  }
  return out;
};
const { ms, result } = await time(run, args.reps, 1);
report(args, ms, result);
