// What each head of a saved training run (scripts/train-induction.mjs --snapshot DIR) attends to,
// on 64 rows of random tokens whose span appears twice (seed 12345):
//   q-n+k: mean weight from each second-copy token q to q - n + k, the place k after the earlier
//          occurrence of the current token (k = 1 is the textbook induction head's target);
//   t-d:   mean weight from each token t >= 3 to t - d (d = 1: a previous-token head).
//   node scripts/train-heads.mjs web/train/snapshot
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { generator, repeatedBatch } from "../web/train/task.js";
import { cli, cliError } from "./cli.mjs";
const usage = "usage: node scripts/train-heads.mjs SNAPSHOT_DIR (e.g. web/train/snapshot)";
const [dir] = cli({ usage, positionals: 1 }).positionals;
if (!dir) cliError("name the snapshot directory", usage);
const lens = await loadAttnLens();
const model = await lens.loadModel({
  files: {
    "model.safetensors": new Uint8Array(readFileSync(dir + "/model.safetensors")),
    "config.json": readFileSync(dir + "/config.json", "utf8"),
  },
});
const o = JSON.parse(readFileSync(dir + "/state.json", "utf8")).options;
const B = 64;
const probe = repeatedBatch(generator(12345), { ...o, batch: B, periodic: false, chainRows: 0 });
const inputs = { data: probe.data.filter((_, i) => i % o.length < o.length - 1), shape: [B, o.length - 1] };
const { attention } = model.forward(inputs, { attention: true });
const [L, , H, T] = attention.shape;
for (let l = 0; l < L; l++)
  for (let h = 0; h < H; h++) {
    const sums = {};
    const counts = {};
    const back = {};
    for (let b = 0; b < B; b++) {
      const { start, n } = probe.spans[b];
      const a = attention.data.subarray(((l * B + b) * H + h) * T * T, ((l * B + b) * H + h + 1) * T * T);
      for (let q = start + n; q < Math.min(T, start + 2 * n); q++)
        for (let k = -2; k <= 4; k++) {
          const j = q - n + k;
          if (j < 0 || j > q) continue;
          sums[k] = (sums[k] ?? 0) + a[q * T + j];
          counts[k] = (counts[k] ?? 0) + 1;
        }
      for (let q = 3; q < T; q++) for (let d = 0; d <= 3; d++) back[d] = (back[d] ?? 0) + a[q * T + q - d] / ((T - 3) * B);
    }
    const row = Object.keys(sums)
      .sort((x, y) => x - y)
      .map((k) => `${k >= 0 ? "+" : ""}${k}:${(sums[k] / counts[k]).toFixed(2)}`)
      .join(" ");
    console.log(`layer ${l + 1} head ${h + 1}  q-n+k: ${row}   t-d: ${[0, 1, 2, 3].map((d) => `${d}:${back[d].toFixed(2)}`).join(" ")}`);
  }
