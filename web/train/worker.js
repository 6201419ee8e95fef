// The trainer in a Web Worker, so the page stays responsive while it trains. Messages in:
// { type: "reset", options } (a new model), { type: "skip", base } (go on from the snapshot at
// URL base), { type: "run" }, { type: "pause" }. Out: { type: "history", reports, options }
// (a snapshot's curve before its last report),
// { type: "report", report, running } after each probe (the probe's first row's attention
// [layers, heads, T, T] as `grid`), { type: "error", message }.
import { loadLens } from "../lens.js";
import { createTrainer } from "./trainer.js";

const SNAPSHOT_FILES = ["model.safetensors", "config.json", "state.json"];
let trainer = null;
let running = false;
let generation = 0;

function post(report) {
  const [layers, B, heads, T] = report.attention.shape;
  // Row 0 of the probe: [layers, heads, T, T].
  const grid = new Float32Array(layers * heads * T * T);
  for (let l = 0; l < layers; l++)
    grid.set(report.attention.data.subarray(l * B * heads * T * T, (l * B * heads + heads) * T * T), l * heads * T * T);
  const { attention, ...rest } = report;
  postMessage(
    {
      type: "report",
      running,
      vocab: trainer.options.vocab,
      steps: trainer.options.steps,
      report: rest,
      grid: { data: grid, shape: [layers, heads, T, T] },
      probe: trainer.probeRow,
    },
    [grid.buffer],
  );
}

function loop(g) {
  if (!running || g !== generation) return;
  try {
    const report = trainer.step(trainer.options.probeEvery);
    if (trainer.steps >= trainer.options.steps) running = false;
    post(report);
  } catch (error) {
    running = false;
    postMessage({ type: "error", message: error.message });
    return;
  }
  // A task per chunk of steps: a pause or reset message is handled in between.
  setTimeout(() => loop(g), 0);
}

onmessage = async ({ data: message }) => {
  try {
    if (message.type === "reset") {
      const g = ++generation;
      running = false;
      trainer?.dispose();
      trainer = null;
      const lens = await loadLens();
      const next = await createTrainer(lens, message.options);
      if (g !== generation) return next.dispose();
      trainer = next;
      post(trainer.measure());
    } else if (message.type === "skip") {
      // A saved run (web/train/snapshot, from scripts/train-induction.mjs --snapshot): its curve
      // so far, then the report of its last step.
      // The run so far is kept until the snapshot has loaded: a failed fetch loses nothing.
      const g = ++generation;
      running = false;
      const fetched = await Promise.all(
        SNAPSHOT_FILES.map(async (name) => {
          const response = await fetch(new URL(name, message.base));
          if (!response.ok) throw new Error(`the snapshot's ${name} could not be fetched (HTTP ${response.status})`);
          return name.endsWith(".safetensors") ? new Uint8Array(await response.arrayBuffer()) : response.text();
        }),
      );
      const lens = await loadLens();
      const next = await createTrainer(lens, {}, { snapshot: Object.fromEntries(SNAPSHOT_FILES.map((name, i) => [name, fetched[i]])) });
      if (g !== generation) return next.dispose();
      trainer?.dispose();
      trainer = next;
      postMessage({ type: "history", reports: trainer.history.slice(0, -1), options: trainer.options });
      post(trainer.measure());
    } else if (message.type === "run" && trainer && !running) {
      // (A second "run" while running would start a second chain of chunks.)
      running = true;
      loop(generation);
    } else if (message.type === "pause") {
      running = false;
    }
  } catch (error) {
    postMessage({ type: "error", message: error.message });
  }
};
