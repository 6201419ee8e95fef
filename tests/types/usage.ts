// Type-checked with `tsc --noEmit --strict` (tests/types/tsconfig.json): the declarations must
// describe the package as a TypeScript user would use it.
import { AttnLensError, loadAttnLens, relaxedSimdSupported, rollout, sinkRates, valueWeightedHeads } from "attnlens";
import type {
  AttnLens,
  AttnLensErrorCode,
  Explanation,
  ForwardResult,
  GeneratedToken,
  GenerationEnd,
  Init,
  LoadProgress,
  MaskFill,
  MaskedBatch,
  Model,
  ModelCache,
  ModelFamily,
  Prediction,
  SimdChoice,
  Tensor,
  TextToken,
  Tokenizer,
  TokenizerInfo,
} from "attnlens";

async function main(): Promise<void> {
  const lens: AttnLens = await loadAttnLens();
  const choice: SimdChoice = relaxedSimdSupported() ? "relaxed" : "baseline";
  const module: "relaxed" | "baseline" | null = (await loadAttnLens({ simd: choice })).simd;
  const q: Tensor = { data: new Float32Array(8), shape: [2, 4] };
  const { output, weights } = lens.attention(q, q, q, {
    causal: true,
    causalAlign: "bottom-right",
    mask: { data: new Uint8Array(4), shape: [2, 2] },
    returnWeights: true,
  });
  const first: number = output.data[0];
  const maybe: Tensor | undefined = weights;
  lens.attention([[1, 2]], [[1, 2]], [[3]], { mask: [[true]], scale: 0.5, maxWork: 2 ** 40 });
  lens.attention({ data: Float64Array.of(1, 2), shape: [1, 2] }, { data: [1, 2], shape: [1, 2] }, [[3]]);
  const maxWork: number = lens.limits.maxWork;
  const inits: readonly Init[] = lens.choices.init;
  const defaultSeed: number = lens.defaults.explain.seed;
  const stages: string[] = lens.traceStages.map((s) => `${s.name} ${s.shape}`);

  const layer = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 1, init: "xavier" });
  const r: ForwardResult = layer.forward([[1, 2, 3, 4, 5, 6, 7, 8]], { causal: true, trace: true });
  const scale: number | undefined = r.trace?.scale;
  const masked: Tensor | undefined = r.trace?.masked;

  const ex: Explanation = lens.explain("The cat sat on the mat", { causal: false, positional: "none" });
  const start: number | undefined = ex.tokens[0].start;
  const explained: [number, number] = ex.pca.explained;

  try {
    lens.explain("");
  } catch (error) {
    if (error instanceof AttnLensError) {
      const code: AttnLensErrorCode = error.code;
      console.log(code, error.message);
    }
  }
  console.log(first, maybe, scale, masked, start, explained, lens.version, lens.memory().usedBytes);
  console.log(maxWork, inits, defaultSeed, stages);

  const model: Model = await lens.createModel({ config: { layers: 2, dModel: 64, heads: 4 }, seed: 1 });
  const out = model.forward([[1, 2, 3]], { attention: true, residuals: true });
  const logits: Tensor = out.logits;
  const attention: Tensor | undefined = out.attention;
  const loss: number = model.trainStep({ data: new Int32Array(8), shape: [2, 4] }, { lr: 1e-3 });
  model.setOptimizer({ weightDecay: 0, schedule: { maxLr: 1e-3, warmupSteps: 10, totalSteps: 100 } });
  const steps: number = model.optimizer.steps;
  const { grads } = model.gradients([1, 2], [2, 3]);
  const grad: Tensor | undefined = grads["wte.weight"];
  const files = model.save({ dtype: "F16" });
  const again: Model = await lens.loadModel({
    files,
    onProgress: (p: LoadProgress) => console.log(p.phase, p.bytes / p.totalBytes),
  });
  const tokenizer: Tokenizer = await lens.loadTokenizer({ vocab: "{}", merges: "" });
  const ids: Int32Array = tokenizer.encode("hi");
  const tokens: TextToken[] = tokenizer.tokens("hi");
  const text: string = tokenizer.decode([...ids]);
  const next: Prediction[][] = again.hasTokenizer ? again.predict("the", { k: 3 }) : [];
  const analysis = again.analyze("the cat", { k: 2, attention: true, maxTokens: 8 });
  console.log(analysis.tokens[0]?.begin, analysis.totalTokens, analysis.predictions[0]?.[0]?.p, analysis.attention?.shape);
  console.log(logits, attention, loss, steps, grad, tokens[0]?.begin, text, next, again.config.vocabSize);
  // A cache for edits of one sentence, and what the model says of itself.
  const cache: ModelCache = again.createCache();
  again.forward(again.encode("the cat"), { attention: true, cache });
  again.analyze("the cat sat", { cache, predictionRows: [2] });
  again.analyze("the cat sat", { cache, predictionRows: Int32Array.of(0, 1) });
  console.log(cache.tokens, cache.reused, again.config.family, again.config.causal, again.config.prediction);
  cache.dispose();
  // Beyond the weights: heads switched off, value-weighted attention, sinks and rollout.
  const off = again.forward(again.encode("the cat"), { attention: true, valueWeighted: true, ablate: [[0, 1]], ablation: "mean" });
  const norms: Tensor | undefined = off.valueNorms;
  const mixed: Tensor | undefined = off.valueWeighted;
  if (off.attention && norms) {
    const heads: Float32Array = valueWeightedHeads(off.attention, norms).data;
    const sinks: Float32Array = sinkRates(off.attention, { causal: true, special: [0] }).first;
    const flow: [number, number, number] = rollout(off.attention, { residual: 0.5 }).shape;
    console.log(heads, sinks, flow, mixed);
  }
  again.analyze("the cat", { ablate: [[1, 0]] });
  // The logit lens, heads' writes and direct logit attribution.
  const lensIds = again.encode("the cat sat");
  const seen = again.forward(lensIds, { residuals: true, headOutputRows: [2] });
  const writes: Tensor | undefined = seen.headOutputs;
  if (seen.residuals) {
    const logits: Tensor = again.unembed({ data: seen.residuals.data.subarray(0, again.config.dModel), shape: [1, again.config.dModel] });
    console.log(logits.shape, writes?.shape);
  }
  const lensed = again.logitLens(lensIds, { positions: [0, 2], k: 3, ablate: [[0, 1]] });
  const top: Int32Array = lensed.ids;
  const p: Float32Array = lensed.p;
  const shape: [number, number, number] = lensed.shape;
  const split = again.attribute(lensIds, { position: 2, token: 7 });
  const perHead: Float32Array = split.heads.data;
  const total: number = split.total + split.embeddings + split.constant + split.logit;
  console.log(top, p, shape, lensed.texts[0], perHead, total, split.mlps.shape, split.attentionBias.data);
  // Writing on: tokens as they come, and why it ended.
  const writing = again.generate("the cat", {
    maxTokens: 4,
    temperature: 0.8,
    topK: 40,
    topP: 0.95,
    seed: 1,
    stop: ["."],
    attention: true,
  });
  for await (const token of writing) {
    const t: GeneratedToken = token;
    console.log(t.id, t.text, t.p, t.top[0]?.p, t.special, t.attention?.shape);
  }
  const ended: IteratorResult<GeneratedToken, GenerationEnd> = await again.generate(Int32Array.of(1, 2), { maxTokens: 1 }).next();
  if (ended.done) console.log(ended.value.reason, ended.value.ids.length);
  // An encoder folder: pairs, [MASK] filling, a masked-LM step.
  const families: readonly ModelFamily[] = await lens.modelFamilies();
  const encoder: Model = await lens.loadModel({
    files: { "model.safetensors": new Uint8Array(0), "config.json": "{}", "vocab.txt": "[UNK]\n" },
  });
  const pairIds: Int32Array = encoder.encode(["the man", "a woman"]);
  const fills: MaskFill[] = encoder.fillMask("the [MASK] sat", { k: 3 });
  const filled: number | undefined = fills[0]?.predictions[0]?.p;
  const maskedBatch: MaskedBatch = { ids: [pairIds[0] ?? 0], labels: [-1], tokenTypes: [0] };
  encoder.trainStep(maskedBatch, { lr: 1e-3 });
  const info: TokenizerInfo | null = encoder.tokenizer;
  console.log(families[0]?.tokenizerFiles, filled, info?.maskId, info?.maskText, encoder.tokens(["a", "b"])[0]?.segment);
  for (const m of [model, again, encoder]) m.dispose();
  tokenizer.dispose();
}

void main();
