// Trains the in-browser task (web/train/) in Node with the same wasm module family, printing
// the loss on each copy, the best induction and previous-token scores, tokens/s and an ETA,
// and when the induction head forms (induction >= 0.4 and second-copy loss < first / 3).
//   node scripts/train-induction.mjs [--layers 2 --heads 4 --dim 32 --vocab 64 --length 32 --n-min 4 --n-max 16
//                                     --batch 64 --lr 3e-3 --warmup 100 --steps 12000 --seed 1 --chain-rows 16]
//                                    [--attention-only] [--attention-norm] [--once]
//                                    [--until-formed] [--stop-after N] [--json] [--snapshot DIR]
// --attention-only switches the blocks' MLPs off (trainer.js, switchOffMlps); --once
// trains on rows that hold each span twice only (the default repeats it to the row's end);
// --chain-rows N: rows per batch of the skip-bigram chain (task.js) that rewards a previous-token head;
// --attention-norm: GPT-2's LayerNorm before attention (the page's models have none: RECIPE.md).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadAttnLens } from "attnlens";
import { DEFAULTS, copies, createTrainer, formed } from "../web/train/trainer.js";
import { cli, cliNumber } from "./cli.mjs";

const usage = `usage: node scripts/train-induction.mjs [--layers N] [--heads N] [--dim N] [--vocab N] [--length N]
  [--n-min N] [--n-max N] [--batch N] [--lr X] [--warmup N] [--steps N] [--seed N] [--probe-every N]
  [--chain-rows N] [--attention-only] [--attention-norm] [--once] [--until-formed] [--stop-after N]
  [--json] [--snapshot DIR]`;
const NUMBERS = [
  "layers",
  "heads",
  "dim",
  "vocab",
  "length",
  "n-min",
  "n-max",
  "batch",
  "lr",
  "warmup",
  "steps",
  "seed",
  "probe-every",
  "chain-rows",
  "stop-after",
];
const FLAGS = ["attention-norm", "attention-only", "json", "once", "until-formed"];
// strict: an unknown flag is an error, not a run with the defaults.
const { values } = cli({
  usage,
  options: {
    ...Object.fromEntries(NUMBERS.map((name) => [name, { type: "string" }])),
    ...Object.fromEntries(FLAGS.map((name) => [name, { type: "boolean" }])),
    snapshot: { type: "string" },
  },
});
const flag = (name) => values[name.slice(2)] === true;
// Sizes and counts are at least 1; the learning rate, warm-up, seed and chain rows may be 0.
const MAY_BE_ZERO = new Set(["--lr", "--warmup", "--seed", "--chain-rows"]);
const number = (name, fallback) => cliNumber(values, name.slice(2), { fallback, min: MAY_BE_ZERO.has(name) ? 0 : 1, usage });
const options = {
  layers: number("--layers", DEFAULTS.layers),
  heads: number("--heads", DEFAULTS.heads),
  dModel: number("--dim", DEFAULTS.dModel),
  vocab: number("--vocab", DEFAULTS.vocab),
  length: number("--length", DEFAULTS.length),
  nMin: number("--n-min", DEFAULTS.nMin),
  nMax: number("--n-max", DEFAULTS.nMax),
  batch: number("--batch", DEFAULTS.batch),
  lr: number("--lr", DEFAULTS.lr),
  warmup: number("--warmup", DEFAULTS.warmup),
  steps: number("--steps", DEFAULTS.steps),
  seed: number("--seed", DEFAULTS.seed),
  probeEvery: number("--probe-every", DEFAULTS.probeEvery),
  chainRows: number("--chain-rows", DEFAULTS.chainRows),
  attentionOnly: flag("--attention-only"),
  attentionNorm: flag("--attention-norm") || DEFAULTS.attentionNorm,
  periodic: !flag("--once"),
};
const lens = await loadAttnLens();
const trainer = await createTrainer(lens, options);
console.log(`Node ${process.version}, ${lens.simd} module; ${JSON.stringify(options)}`);
let formedAt = null;
let copiedAt = null;
// --stop-after N: the first N steps of the run (same schedule), e.g. to compare with a browser.
const stop = Math.min(options.steps, number("--stop-after", options.steps));
while (trainer.steps < stop) {
  const r = trainer.step(options.probeEvery);
  const bar = "#".repeat(Math.round((30 * r.step) / options.steps)).padEnd(30, ".");
  console.log(
    `[${bar}] step ${String(r.step).padStart(5)}  loss ${r.loss.toFixed(3)}  first ${r.first.toFixed(3)}  second ${r.second.toFixed(3)}  ` +
      `induction ${r.bestInduction.toFixed(2)}  prev ${r.bestPrevious.toFixed(2)}  ${Math.round(r.tokensPerSecond)} tok/s  ` +
      `${r.seconds.toFixed(0)} s, ETA ${r.eta.toFixed(0)} s`,
  );
  if (!copiedAt && copies(r)) {
    copiedAt = r;
    console.log(`second copy under a third of the first at step ${r.step}: ${r.tokens} tokens, ${r.seconds.toFixed(1)} s of training`);
  }
  if (!formedAt && formed(r)) {
    formedAt = r;
    console.log(`induction head formed at step ${r.step}: ${r.tokens} tokens, ${r.seconds.toFixed(1)} s of training`);
    if (flag("--until-formed")) break;
  }
}
if (!formedAt) console.log(`no induction head within ${trainer.steps} steps (${trainer.history.at(-1).tokens} tokens)`);
// --json: the probe reports' losses, for comparing runs bit for bit (tests/e2e/train.test.mjs).
if (flag("--json")) console.log(JSON.stringify(trainer.history.map(({ step, loss, first, second }) => ({ step, loss, first, second }))));
// --snapshot DIR: the files that resume this run (the page's "Skip ahead" loads web/train/snapshot).
const snapshotDir = values.snapshot ?? null;
if (snapshotDir) {
  mkdirSync(snapshotDir, { recursive: true });
  for (const [name, contents] of Object.entries(trainer.snapshot())) writeFileSync(join(snapshotDir, name), contents);
  console.log(`snapshot of step ${trainer.steps} written to ${snapshotDir}`);
}
trainer.dispose();
