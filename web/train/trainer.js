// Trains a small GPT-2-layout model on the repeated-sequence task (task.js) with the library's
// backward pass and AdamW, and measures as it goes. No DOM: the same code runs in a Web Worker
// (worker.js) and in Node (scripts/train-induction.mjs).
import { copyLosses, generator, headScores, repeatedBatch } from "./task.js";

/** The defaults: the best of the runs recorded in web/train/RECIPE.md (no induction head formed yet). */
export const DEFAULTS = Object.freeze({
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
  steps: 6000,
  seed: 1,
  probeEvery: 25,
});

/** The phase change: an induction head and a second copy far easier than the first. */
export const formed = (report) => report.bestInduction >= 0.4 && report.second < report.first / 3;

/**
 * A trainer: `await createTrainer(lens, options)`. `step(k)` runs k AdamW steps and returns the
 * report after them; reports are also kept in `history` (one per probe). `snapshot()` gives the
 * checkpoint's files, `dispose()` frees the model.
 */
export async function createTrainer(lens, options = {}) {
  const o = { ...DEFAULTS, ...options };
  const config = { layers: o.layers, heads: o.heads, dModel: o.dModel, context: o.length, vocabSize: o.vocab };
  const model = await lens.createModel({ config, seed: o.seed });
  model.setOptimizer({ schedule: { maxLr: o.lr, minLr: o.lr / 10, warmupSteps: o.warmup, totalSteps: o.steps } });
  const rng = generator(o.seed);
  // A fixed probe, from its own stream, measured every probeEvery steps.
  const probe = repeatedBatch(generator(o.seed ^ 0x5eed), { ...o, batch: 8 });
  const probeInputs = { data: probe.data.filter((_, i) => i % o.length < o.length - 1), shape: [8, o.length - 1] };
  const history = [];
  let steps = 0;
  let seconds = 0;
  let lastLoss = NaN;

  function measure() {
    const { logits, attention } = model.forward(probeInputs, { attention: true });
    const losses = copyLosses(logits, probe);
    const scores = headScores(attention, probe);
    const flat = (m) => m.flat().reduce((a, b) => Math.max(a, b), 0);
    const tokens = steps * o.batch * (o.length - 1);
    const report = {
      step: steps,
      tokens,
      seconds,
      loss: lastLoss,
      first: losses.first,
      second: losses.second,
      induction: scores.induction,
      previous: scores.previous,
      bestInduction: flat(scores.induction),
      bestPrevious: flat(scores.previous),
      tokensPerSecond: seconds > 0 ? tokens / seconds : 0,
      eta: seconds > 0 ? ((o.steps - steps) * seconds) / steps : NaN,
      attention,
    };
    history.push({ ...report, attention: undefined });
    return report;
  }

  return {
    options: Object.freeze(o),
    /** The probe's first row (the ids its attention grid shows). */
    probeRow: Array.from(probeInputs.data.subarray(0, o.length - 1)),
    config,
    history,
    get steps() {
      return steps;
    },
    /** Runs up to k steps (never past options.steps); returns the report after them. */
    step(k = 1) {
      const started = performance.now();
      for (let i = 0; i < k && steps < o.steps; i++) {
        lastLoss = model.trainStep(repeatedBatch(rng, o));
        steps++;
      }
      seconds += (performance.now() - started) / 1000;
      return measure();
    },
    measure,
    snapshot: () => model.save({ dtype: "F32" }),
    dispose: () => model.dispose(),
  };
}
