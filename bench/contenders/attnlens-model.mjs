// attnlens' model module from the built package (WebAssembly), for bench/training.mjs: one JSON
// line with training tokens/s of the 2-layer d = 128 model at B = 16, T = 128 (median step of
// `steps` after one warm-up step) and the forward time of 32 tokens on GPT-2 small's shapes.
//   node bench/contenders/attnlens-model.mjs [--dist=DIR] [--quick]
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { cli } from "../../scripts/cli.mjs";
import { medianMs, tokenIds } from "../shared.mjs";

const { values } = cli({
  usage: "usage: node bench/contenders/attnlens-model.mjs [--dist=DIR] [--quick]",
  options: { dist: { type: "string" }, quick: { type: "boolean" } },
});
const quick = values.quick ?? false;
const dist = values.dist ?? join(new URL(".", import.meta.url).pathname, "../../dist");
const { loadAttnLens } = await import(pathToFileURL(join(dist, "attnlens.node.js")).href);
const lens = await loadAttnLens();

const ids = tokenIds;
const median = medianMs;

const small = { layers: 2, heads: 4, dModel: 128, context: 128, vocabSize: 4096 };
const model = await lens.createModel({ config: small, seed: 1 });
const [B, T] = [16, 128];
const batch = { data: ids(B * (T + 1), small.vocabSize, 2), shape: [B, T + 1] };
const stepMs = median(() => model.trainStep(batch, { lr: 1e-4 }), quick ? 3 : 5);
model.dispose();
const gpt2 = await lens.createModel({ config: { layers: 12, heads: 12, dModel: 768, context: 1024, vocabSize: 50257 }, seed: 1 });
const forwardMs = median(() => gpt2.forward(ids(32, 50257, 3)), quick ? 2 : 5);
gpt2.dispose();
console.log(
  JSON.stringify({
    module: lens.simd,
    node: process.versions.node,
    stepMs,
    tokensPerSecond: (B * T * 1000) / stepMs,
    gpt2Forward32Ms: forwardMs,
  }),
);
