// Trains a small GPT-2-layout model on the repeated-sequence task (task.js) with the library's
// backward pass and AdamW, and measures as it goes. No DOM: the same code runs in a Web Worker
// (worker.js) and in Node (scripts/train-induction.mjs).
import { copyLosses, generator, headScores, repeatedBatch } from "./task.js";

/** The defaults: run 32 of web/train/RECIPE.md (no LayerNorm before attention; the induction head forms at step 3 000). */
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
  steps: 12000,
  seed: 1,
  probeEvery: 25,
  attentionOnly: false,
  periodic: true,
  chainRows: 16,
  chainP: 0.9,
  attentionNorm: false,
});

export { copies, formed } from "./criteria.js";

/** The model's config (createModel's) for trainer options. */
export const modelConfig = (o) => ({
  layers: o.layers,
  heads: o.heads,
  dModel: o.dModel,
  context: o.length,
  vocabSize: o.vocab,
  attentionNorm: o.attentionNorm,
});

/** The c_fc bias that switches an MLP off (see switchOffMlps). */
export const MLP_OFF_BIAS = -20;

/**
 * The model with every block's MLP switched off, so that it trains as an attention-only
 * transformer (Olsson et al. 2022) while keeping GPT-2's tensors (with attentionNorm true, a
 * checkpoint any GPT-2 loader reads): each
 * mlp.c_fc.bias is set to -20, which puts every GELU input near -20, where the tanh GELU is
 * exactly 0 in float32 and so is its slope. The MLPs then add only c_proj's bias, and get no
 * gradient (biases do not decay, so they stay off). An option (attentionOnly), off by default:
 * measured in RECIPE.md, it did not make the model learn to copy sooner.
 */
export async function switchOffMlps(lens, model) {
  const files = model.save({ dtype: "F32" });
  const bytes = files["model.safetensors"];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  for (const [name, entry] of Object.entries(header)) {
    if (!name.endsWith("mlp.c_fc.bias")) continue;
    const {
      dtype,
      data_offsets: [begin, end],
    } = entry;
    if (dtype !== "F32") throw new Error(`${name} is ${dtype}; expected F32`);
    for (let at = 8 + n + begin; at < 8 + n + end; at += 4) view.setFloat32(at, MLP_OFF_BIAS, true);
  }
  model.dispose();
  return lens.loadModel({ files: { "model.safetensors": bytes, "config.json": files["config.json"] } });
}

/**
 * The learning rate for a step: linear warm-up to lr over `warmup` steps, then a cosine to lr/10
 * at `steps` (the library's schedule, computed here so a run resumed from a snapshot goes on
 * with the same rates; V8's Math.cos is the same in Chromium and Node).
 */
export function learningRate(o, step) {
  if (step < o.warmup) return (o.lr * (step + 1)) / o.warmup;
  if (step >= o.steps) return o.lr / 10;
  const progress = (step - o.warmup) / (o.steps - o.warmup);
  return o.lr / 10 + 0.5 * (1 + Math.cos(Math.PI * progress)) * (o.lr - o.lr / 10);
}

/** What a snapshot's state.json holds (besides the model's files). */
export const SNAPSHOT_FORMAT = "attnlens-train-snapshot";

/**
 * A trainer: `await createTrainer(lens, options)`, or `createTrainer(lens, {}, { snapshot })` to
 * go on from a snapshot (the files `snapshot()` gave: its options, step, batches and curve carry
 * on; AdamW's moments start afresh). `step(k)` runs k AdamW steps and returns the report after
 * them; reports are also kept in `history` (one per probe). `dispose()` frees the model.
 */
export async function createTrainer(lens, options = {}, { snapshot } = {}) {
  let state = null;
  if (snapshot) {
    state = JSON.parse(snapshot["state.json"]);
    if (state?.format !== SNAPSHOT_FORMAT || state.version !== 1)
      throw new Error(`state.json is not a training snapshot (format "${state?.format}", version ${state?.version})`);
  }
  let o = { ...DEFAULTS, ...(state ? state.options : options) };
  let model;
  if (state) {
    const files = { "model.safetensors": snapshot["model.safetensors"], "config.json": snapshot["config.json"] };
    model = await lens.loadModel({ files });
    // A snapshot saved before attentionNorm existed has none in its options: its config.json says.
    o = { ...o, attentionNorm: model.config.attentionNorm };
  } else {
    model = await lens.createModel({ config: modelConfig(o), seed: o.seed });
    if (o.attentionOnly) model = await switchOffMlps(lens, model);
  }
  const rng = generator(o.seed, state ? state.rng : o.seed);
  // A fixed probe, from its own stream, measured every probeEvery steps.
  // It holds each span twice, however the training rows repeat theirs (the standard test).
  const probe = repeatedBatch(generator(o.seed ^ 0x5eed), { ...o, batch: 8, periodic: false, chainRows: 0 });
  const probeInputs = { data: probe.data.filter((_, i) => i % o.length < o.length - 1), shape: [8, o.length - 1] };
  const history = state ? state.history : [];
  let steps = state ? state.step : 0;
  let seconds = state ? state.seconds : 0;
  let lastLoss = state ? state.loss : NaN;
  // Speed and ETA count this session's steps only (a snapshot's were timed elsewhere).
  const startStep = steps;
  const startSeconds = seconds;

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
      tokensPerSecond: steps > startStep ? ((steps - startStep) * o.batch * (o.length - 1)) / (seconds - startSeconds) : 0,
      eta: steps > startStep ? ((o.steps - steps) * (seconds - startSeconds)) / (steps - startStep) : NaN,
      attention,
    };
    history.push({ ...report, attention: undefined });
    return report;
  }

  return {
    options: Object.freeze(o),
    /** The probe's first row (the ids its attention grid shows). */
    probeRow: Array.from(probeInputs.data.subarray(0, o.length - 1)),
    config: modelConfig(o),
    history,
    get steps() {
      return steps;
    },
    /** Runs up to k steps (never past options.steps); returns the report after them. */
    step(k = 1) {
      const started = performance.now();
      for (let i = 0; i < k && steps < o.steps; i++) {
        lastLoss = model.trainStep(repeatedBatch(rng, o), { lr: learningRate(o, steps) });
        steps++;
      }
      seconds += (performance.now() - started) / 1000;
      return measure();
    },
    measure,
    /** The files that resume this run: model.safetensors, config.json and state.json. */
    snapshot() {
      const files = model.save({ dtype: "F32" });
      // The curve rounded to 4 decimals (the page draws it; the weights and state are exact).
      const round = (v) => (typeof v === "number" ? Math.round(v * 1e4) / 1e4 : Array.isArray(v) ? v.map(round) : v);
      const curve = history.map((r) =>
        Object.fromEntries(
          Object.entries(r)
            .filter(([k]) => k !== "attention")
            .map(([k, v]) => [k, round(v)]),
        ),
      );
      const saved = {
        format: SNAPSHOT_FORMAT,
        version: 1,
        options: o,
        step: steps,
        seconds,
        loss: lastLoss,
        rng: rng.state,
        history: curve,
      };
      return { "model.safetensors": files["model.safetensors"], "config.json": files["config.json"], "state.json": JSON.stringify(saved) };
    },
    dispose: () => model.dispose(),
  };
}
