// onnxruntime-node, native CPU execution provider, one thread.
import * as ort from "onnxruntime-node";
import { attentionModel } from "../onnx.mjs";
import { parseArgs, readInputs, report, time } from "../common.mjs";

const args = parseArgs();
const { q, k, v } = readInputs(args);
const dims = [1, args.H, args.L, args.D];
const model = attentionModel({ B: 1, H: args.H, L: args.L, D: args.D, causal: args.mode === "causal" });
const session = await ort.InferenceSession.create(model, {
  executionProviders: ["cpu"],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
});
const feeds = { q: new ort.Tensor("float32", q, dims), k: new ort.Tensor("float32", k, dims), v: new ort.Tensor("float32", v, dims) };
const { ms, result } = await time(() => session.run(feeds), args.reps);
report(args, ms, result.output.data);
