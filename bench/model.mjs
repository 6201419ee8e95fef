// Speed of the model module (a benchmark that prints numbers, not a test):
//   node bench/model.mjs [--quick]          (Node 20: SIMD128; Node 22: relaxed SIMD)
// Prints: forward time for 64 tokens on a 2-layer d = 128 model and on a GPT-2-small-shaped
// model (random weights), GPT-2 small's save() and loadModel() time (124 M parameters, ~500 MB
// F32), and AdamW training tokens per second for the 2-layer model at B = 16, T = 128.
// Timings move ±10–25 % between runs on shared machines: compare within one run.
// The package as built by scripts/build.sh (bench/ has its own package.json and dependencies).
import { loadAttnLens } from "../dist/attnlens.node.js";
import { cli } from "../scripts/cli.mjs";
import { tokenIds } from "./shared.mjs";

const quick = cli({ usage: "usage: node bench/model.mjs [--quick]", options: { quick: { type: "boolean" } } }).values.quick ?? false;
const lens = await loadAttnLens();
const now = () => performance.now();

const ids = tokenIds;

// Median of `runs` timed calls after one warm-up call, in ms.
function time(fn, runs) {
  fn();
  const t = [];
  for (let i = 0; i < runs; i++) {
    const start = now();
    fn();
    t.push(now() - start);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)];
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
console.log(`attnlens ${lens.version}, Node ${process.version}, module ${lens.simd}`);

const small = { layers: 2, heads: 4, dModel: 128, context: 128, vocabSize: 4096 };
const tiny = await lens.createModel({ config: small, seed: 1 });
const forwardSmall = time(() => tiny.forward(ids(64, small.vocabSize, 1)), quick ? 5 : 30);
const forwardSmallAttention = time(() => tiny.forward(ids(64, small.vocabSize, 1), { attention: true }), quick ? 5 : 30);
console.log(
  `2-layer d=128 (vocab ${small.vocabSize}): forward 64 tokens ${forwardSmall.toFixed(2)} ms, with attention ${forwardSmallAttention.toFixed(2)} ms`,
);

const B = 16;
const T = 128;
const batch = { data: ids(B * (T + 1), small.vocabSize, 2), shape: [B, T + 1] };
const steps = quick ? 2 : 5;
tiny.trainStep(batch, { lr: 1e-3 });
const trainStart = now();
for (let i = 0; i < steps; i++) tiny.trainStep(batch, { lr: 1e-3 });
const trainSeconds = (now() - trainStart) / 1000;
console.log(
  `2-layer d=128: trainStep B=${B} T=${T}: ${((1000 * trainSeconds) / steps).toFixed(0)} ms/step, ${((steps * B * T) / trainSeconds).toFixed(0)} tokens/s`,
);
tiny.dispose();

const gpt2 = { layers: 12, heads: 12, dModel: 768, context: 1024, vocabSize: 50257 };
let start = now();
const big = await lens.createModel({ config: gpt2, seed: 1 });
console.log(`GPT-2 small shape (${big.parameters} parameters): createModel ${(now() - start).toFixed(0)} ms`);
for (const L of [32, 64]) {
  const f = time(() => big.forward(ids(L, gpt2.vocabSize, 3)), quick ? 2 : 5);
  console.log(`GPT-2 small shape: forward ${L} tokens ${f.toFixed(0)} ms`);
}
start = now();
const files = big.save();
console.log(`GPT-2 small shape: save() ${(now() - start).toFixed(0)} ms, model.safetensors ${mib(files["model.safetensors"].length)}`);
big.dispose();
start = now();
const loaded = await lens.loadModel({ files });
const loadMs = now() - start;
const check = time(() => loaded.forward(ids(32, gpt2.vocabSize, 3)), 2);
const memory = await lens.modelMemory();
console.log(
  `GPT-2 small shape: loadModel ${loadMs.toFixed(0)} ms; then forward 32 tokens ${check.toFixed(0)} ms; model heap ${mib(memory.heapBytes)}, malloc holds ${mib(memory.usedBytes)}`,
);
loaded.dispose();
