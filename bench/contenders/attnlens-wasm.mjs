// attnlens from the built npm package (WebAssembly), one call per run.
//   modes: full, causal, weights (full + weights), weights-into (the same, written into arrays
//   the caller allocated once), streaming, streaming-causal, reference and causal-reference
//   (the plain 3-step path)
import { loadAttnLens } from "attnlens";
import { parseArgs, readInputs, report, time } from "../common.mjs";

const args = parseArgs();
const lens = await loadAttnLens();
const { q, k, v } = readInputs(args);
const shape = [1, args.H, args.L, args.D];
const [Q, K, V] = [q, k, v].map((data) => ({ data, shape }));
const mode = args.mode;
const options = {
  full: {},
  causal: { causal: true },
  weights: { returnWeights: true },
  "weights-into": {
    returnWeights: true,
    into: { output: new Float32Array(q.length), weights: new Float32Array(args.H * args.L * args.L) },
  },
  streaming: { streaming: true },
  "streaming-causal": { streaming: true, causal: true },
  reference: {},
  "causal-reference": { causal: true },
}[mode];
const call = mode.endsWith("reference") ? lens.attentionReference : lens.attention;
const { ms, result } = await time(() => call(Q, K, V, options), args.reps);
report(args, ms, result.output.data, { heapBytes: lens.memory().heapBytes });
