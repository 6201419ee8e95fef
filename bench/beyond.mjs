// npm run bench: what "beyond the weights" costs beside the forward it explains, on GPT-2 small's
// shapes (12 layers, d 768, 12 heads, 50 257 tokens; random weights from createModel) and
// SmolLM2-135M's (30 layers, d 576, 9 heads over 3 key/value heads; scripts/llama-checkpoint.mjs,
// BF16, random weights), a 32-token sentence, every layer's attention and every row's logits:
//   forward          forward(ids, { attention: true })
//   + valueWeighted  the same with value-weighted attention (its norms and the layer sums)
//   sinkRates        the package's sink rates of that attention (first token), in JS
//   rollout          the package's attention rollout over every layer, in JS
//   ablate 1 head    forward with one head of the middle layer zeroed (every row and layer: the
//                    library does not yet reuse the layers before the ablated one)
//   logitLens        the last position's top 5 after every layer: one forward with the residual
//                    stream, then layers + 1 rows unembedded (and the unembedding alone, from the
//                    residuals a figure's forward already has)
//   attribute        the last position's first choice split into heads and MLPs (one forward of
//                    its own: hidden states, heads' writes, one row of logits)
// Medians of 7 runs after one warm-up (3 with --quick), in this process (Node), the module it loads
// printed with the table. Targets beside each row.
//   node bench/beyond.mjs [--quick]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens, rollout, sinkRates } from "../dist/attnlens.node.js";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../scripts/llama-checkpoint.mjs";
import { cli } from "../scripts/cli.mjs";
import { medianMs, tokenIds } from "./shared.mjs";

const { values } = cli({ usage: "usage: node bench/beyond.mjs [--quick]", options: { quick: { type: "boolean" } } });
const runs = values.quick ? 3 : 7;
const lens = await loadAttnLens();

const ids = tokenIds;
const median = (fn) => medianMs(fn, runs);

const rows = [];
const started = performance.now();
const row = (model, what, ms, note = "") => {
  rows.push({ model, what, ms, note });
  console.error(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${model}: ${what} ${ms.toFixed(1)} ms`);
};

function measure(name, model, vocab, layers) {
  const sentence = ids(32, vocab, 3);
  const o = { attention: true };
  const forward = median(() => model.forward(sentence, o));
  row(name, "forward, 32 tokens, attention and logits", forward);
  const weighted = median(() => model.forward(sentence, { ...o, valueWeighted: true }));
  row(name, "+ valueWeighted", weighted, `+${((100 * (weighted - forward)) / forward).toFixed(0)} % (target ≤ 20 %)`);
  const { attention } = model.forward(sentence, o);
  row(
    name,
    "sinkRates (first token, JS)",
    median(() => sinkRates(attention, { causal: true })),
    "target: with value weighting ≤ 20 %",
  );
  row(
    name,
    "rollout, every layer (JS)",
    median(() => rollout(attention)),
    "target ≤ 5 ms",
  );
  const ablated = median(() => model.forward(sentence, { ...o, ablate: [[layers >> 1, 0]] }));
  row(
    name,
    `ablate head 0 of layer ${layers >> 1}`,
    ablated,
    `${(ablated / forward).toFixed(2)}× a forward (target: ≤ a forward from that layer on)`,
  );
  row(
    name,
    "logitLens, last position, every layer (with its forward)",
    median(() => model.logitLens(sentence, { k: 5 })),
  );
  const { residuals } = model.forward(sentence, { residuals: true, logits: false });
  const d = residuals.shape[2];
  const last = new Float32Array((layers + 1) * d);
  for (let l = 0; l <= layers; l++) last.set(residuals.data.subarray((l * 32 + 31) * d, (l * 32 + 32) * d), l * d);
  row(
    name,
    `unembed ${layers + 1} rows (the lens from a forward's residuals)`,
    median(() => model.unembed({ data: last, shape: [layers + 1, d] })),
    "target ≤ 30 ms",
  );
  row(
    name,
    "attribute, last position (with its forward)",
    median(() => model.attribute(sentence)),
    "target ≤ 10 ms (beside a forward)",
  );
}

const gpt2 = await lens.createModel({ config: { layers: 12, heads: 12, dModel: 768, context: 1024, vocabSize: 50257 }, seed: 1 });
measure("GPT-2 small", gpt2, 50257, 12);
gpt2.dispose();

const dir = mkdtempSync(join(tmpdir(), "attnlens-beyond-"));
try {
  console.error("  writing SmolLM2-135M's shapes (BF16, random weights)...");
  writeLlamaCheckpoint(dir, LLAMA_PRESETS["smollm2-135m"], { dtype: "BF16", seed: 1 });
  const smol = await lens.loadModel({
    files: {
      "model.safetensors": readFileSync(join(dir, "model.safetensors")),
      "config.json": readFileSync(join(dir, "config.json"), "utf8"),
    },
  });
  measure("SmolLM2-135M", smol, 49152, 30);
  smol.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\nBeyond the weights: Node ${process.versions.node}, ${lens.simd} module, one thread, median of ${runs} (ms)\n`);
console.log("| model | call | ms | note |");
console.log("|---|---|---:|---|");
for (const r of rows) console.log(`| ${r.model} | ${r.what} | ${r.ms.toFixed(1)} | ${r.note} |`);
