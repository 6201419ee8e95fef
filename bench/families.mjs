// npm run bench: the block's families at real shapes (random weights, BF16 files written by
// scripts/llama-checkpoint.mjs): SmolLM2-135M (30 layers, every one full) beside Gemma-3-270M
// (18 layers, 15 of them a sliding window of 512 keys with their own rotary base, sandwich norms,
// GeGLU, a 262 144-token vocabulary), and the encoder ModernBERT-base (F32 as it ships, by
// scripts/modernbert-checkpoint.mjs: 22 layers, 14 of them a window of ±64 tokens, with what its
// page figure costs: an edit of 32 tokens with one [MASK], every layer's attention and the mask's
// logits). Per model: loadModel() from the folder's bytes, and
// forward(ids, { logits: false }) at 64 tokens (no window hides anything) and 640 (every query
// past the 512th has keys outside its local layers' windows: the masks are built and used): every
// layer of every row, without the head (the same product at both lengths, not what differs) and
// without returning the weights (640 rows of every layer's are over the element limit).
// Medians of 5 runs after one warm-up (2 with --quick), one thread, in this process.
//   node bench/families.mjs [--quick]
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens } from "../dist/attnlens.node.js";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../scripts/llama-checkpoint.mjs";
import { MODERNBERT_PRESETS, writeModernbertCheckpoint } from "../scripts/modernbert-checkpoint.mjs";
import { cli } from "../scripts/cli.mjs";
import { medianMs, tokenIds } from "./shared.mjs";

const { values } = cli({ usage: "usage: node bench/families.mjs [--quick]", options: { quick: { type: "boolean" } } });
const runs = values.quick ? 2 : 5;
const lens = await loadAttnLens();
const started = performance.now();
const log = (text) => console.error(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${text}`);

const MODELS = [
  {
    name: "smollm2-135m",
    vocab: LLAMA_PRESETS["smollm2-135m"].vocab,
    write: (dir) => writeLlamaCheckpoint(dir, LLAMA_PRESETS["smollm2-135m"], { dtype: "BF16", seed: 1 }),
  },
  {
    name: "gemma-3-270m",
    vocab: LLAMA_PRESETS["gemma-3-270m"].vocab,
    write: (dir) => writeLlamaCheckpoint(dir, LLAMA_PRESETS["gemma-3-270m"], { dtype: "BF16", seed: 1 }),
  },
  {
    name: "modernbert-base",
    vocab: MODERNBERT_PRESETS.base.vocab,
    write: (dir) => writeModernbertCheckpoint(dir, MODERNBERT_PRESETS.base, { dtype: "F32", seed: 1 }),
  },
];
const rows = [];
const fills = [];
for (const { name, vocab, write } of MODELS) {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-families-"));
  try {
    log(`writing ${name}'s shapes (random weights)...`);
    write(dir);
    const files = {
      "model.safetensors": readFileSync(join(dir, "model.safetensors")),
      "config.json": readFileSync(join(dir, "config.json"), "utf8"),
    };
    if (existsSync(join(dir, "tokenizer.json"))) files["tokenizer.json"] = readFileSync(join(dir, "tokenizer.json"), "utf8");
    let t = performance.now();
    const model = await lens.loadModel({ files });
    const load = performance.now() - t;
    log(`${name}: loadModel ${load.toFixed(0)} ms`);
    const windows = model.config.windows.filter((w) => w > 0).length;
    const cells = [name, `${model.config.layers} (${windows ? `${windows} windowed` : "all full"})`, load.toFixed(0)];
    for (const L of [64, 640]) {
      const ids = tokenIds(L, vocab, 3);
      const ms = medianMs(() => model.forward(ids, { logits: false }), runs);
      log(`${name}: forward ${L} tokens ${ms.toFixed(0)} ms`);
      cells.push(ms.toFixed(0));
    }
    rows.push(cells);
    if (!model.config.causal) {
      // The page's figure of an encoder after an edit: analyze() of a 32-token sentence with one
      // [MASK] (every layer's attention, the fillers of the mask row).
      const text =
        "The old lighthouse keeper climbed the stairs every night to light the [MASK], and the ships that passed far out at sea saw it.";
      const tokens = model.tokens(text).length;
      const ms = medianMs(() => model.analyze(text, { k: 5, attention: true }), runs);
      log(`${name}: analyze ${tokens} tokens with one [MASK] ${ms.toFixed(0)} ms`);
      fills.push(
        `${name}: an edit of ${tokens} tokens with one [MASK] (analyze: every layer's attention, the mask's fillers): ${ms.toFixed(0)} ms`,
      );
    }
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`\nThe block's families: Node ${process.versions.node}, ${lens.simd} module, one thread, median of ${runs} (ms)\n`);
console.log("| shapes | layers | loadModel | forward 64 tokens | forward 640 tokens |");
console.log("|---|---|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
if (fills.length) console.log(`\n${fills.join("\n")}`);
