// Type declarations for the npm package "attnlens" (the browser and the Node entry alike).
import type { CreateModelOptions, FileText, LoadModelOptions, Model, ModelFamily, Tokenizer } from "./model.js";

// The model module's types (checkpoints, tokenizer, training) are declared in model.d.ts.
export type * from "./model.js";

/** The error codes of attnlens, from the one list in lib/include/attnlens/status.hpp. */
export type AttnLensErrorCode =
  | "SHAPE_MISMATCH"
  | "NON_FINITE"
  | "TOO_LARGE"
  | "BAD_ARGUMENT"
  | "INVALID_UTF8"
  | "EMPTY_INPUT"
  | "UNKNOWN_OPTION"
  | "OUT_OF_MEMORY"
  | "INTERNAL"
  | "BAD_FILE";

/** Thrown by every attnlens function on bad input; `message` names the argument and shapes. */
export declare class AttnLensError extends Error {
  constructor(code: AttnLensErrorCode, message: string);
  readonly name: "AttnLensError";
  readonly code: AttnLensErrorCode;
}

/** A row-major float32 tensor. `data.length` equals the product of `shape`. */
export interface Tensor {
  data: Float32Array;
  shape: number[];
}

/** Nested arrays of numbers, e.g. [[1, 0], [0, 1]] for a [2, 2] tensor. */
export type NestedNumbers = number | NestedNumbers[];
export type NestedBooleans = boolean | NestedBooleans[];

/**
 * The arrays a tensor's `data` may be. A Float32Array is read in place; the other typed arrays
 * and plain arrays are converted to float32 (BigInt64Array and BigUint64Array are not
 * accepted). Every entry must be a number that is finite in float32, or NaN or an infinity,
 * which attention() reports as NON_FINITE: holes, null, strings, booleans and BigInts are
 * BAD_ARGUMENT naming the index. Typed arrays are read through their real length (a subclass
 * or Proxy cannot change it); a detached buffer is BAD_ARGUMENT.
 */
export type TensorData =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | readonly number[];

/**
 * A tensor argument: `{ data, shape }` with `data.length` equal to the product of `shape` (an
 * array of non-negative integers), or nested arrays of numbers (the same rules per entry, rows
 * of equal length).
 */
export type TensorInput = Tensor | { data: TensorData; shape: readonly number[] } | NestedNumbers[];

/**
 * A mask shaped [L, S] or broadcastable to the scores ([B, H, L, S] / [B, L, S]).
 * Boolean: a Uint8Array or nested booleans, 1/true = may attend (as PyTorch's SDPA).
 * Additive: a Float32Array or nested numbers, added to the scaled scores; -Infinity masks.
 * The same entry rules as TensorData (no holes; numbers finite in float32 or -Infinity).
 */
export type MaskInput =
  { data: Uint8Array; shape: readonly number[] } | { data: Float32Array; shape: readonly number[] } | NestedBooleans[] | NestedNumbers[];

export interface AttentionOptions {
  /** Query i attends keys j <= i (see causalAlign). Default false. */
  causal?: boolean;
  /** "top-left" (default, PyTorch's is_causal) or "bottom-right" (j <= i + S - L, KV cache). */
  causalAlign?: CausalAlign;
  /** Combined with causal when both are given: a key must be allowed by both. */
  mask?: MaskInput | null;
  /**
   * Multiplies q·kᵀ. Default 1 / sqrt(E). Must be finite in float32: a JS number beyond
   * ±3.4028234663852886e38 is NON_FINITE with a message saying so.
   */
  scale?: number;
  /** Also return the weights [..., L, S]. Default false. */
  returnWeights?: boolean;
  /** Size limit on each tensor and on one L x S score slice; an integer >= 1. Default limits.maxElements (2^26). */
  maxElements?: number;
  /**
   * Limit on the call's work, B·H·L·S·(E + Ev + 32) multiply-adds (the 32 stands for each
   * score's softmax); an integer >= 1. Default limits.maxWork (2^36, about 4 s of wasm time on a
   * 2-core server). Over it: TOO_LARGE. It bounds streaming calls too.
   */
  maxWork?: number;
  /**
   * FlashAttention's schedule: key tiles with an online softmax, never holding the L x S
   * scores (memory O(L·D), no L x S limit). Cannot be combined with returnWeights. Default false.
   */
  streaming?: boolean;
  /**
   * Arrays to write the results into instead of new ones: `output` and (with returnWeights)
   * `weights`, each a Float32Array of exactly the result's element count; the result's `data`
   * is then that array. Saves allocating (and the operating system zeroing) a fresh array per
   * call: at [1, 8, 1024, 1024] weights that is most of the time weights add.
   */
  into?: { output?: Float32Array; weights?: Float32Array };
}

/**
 * Overflow: finite inputs always give finite, right answers (within float32 rounding). Where
 * float32 scores, logits or sums of weights times values could overflow, the call is computed in
 * float64 instead (the same rule for attention(), attentionReference(), forward() and explain()).
 */
export interface AttentionResult {
  /** [..., L, Ev] */
  output: Tensor;
  /** [..., L, S], present when returnWeights is true */
  weights?: Tensor;
}

export type Init = "normal" | "xavier" | "identity";
export type Positional = "sinusoidal" | "none";
export type CausalAlign = "top-left" | "bottom-right";

export interface SelfAttentionWeights {
  wq: Tensor;
  wk: Tensor;
  wv: Tensor;
  wo: Tensor;
  bq?: Tensor;
  bk?: Tensor;
  bv?: Tensor;
  bo?: Tensor;
}

export interface SelfAttentionConfig {
  /** E, 1..1024, divisible by numHeads. Default 64. */
  modelDim?: number;
  /** H, 1..64. Default 4. */
  numHeads?: number;
  /** Seeds the portable generator; integer 0..2^53-1. Default 0. */
  seed?: number;
  /** Default "xavier". Ignored when weights are given. */
  init?: Init;
  /** Zero biases for the four projections. Default false. */
  bias?: boolean;
  /** Given weights: wq, wk, wv, wo shaped [E, E] (Q = X·W_Q), biases [E]. */
  weights?: { [K in keyof SelfAttentionWeights]?: TensorInput };
}

/**
 * Every stage of a forward pass, in the order the data flows (lens.traceStages lists them from
 * the C++ library). Shapes are for x [L, E] with H heads of width d = E / H; a batched x
 * [B, L, E] adds a leading B to each, except `mask`. Its `weights` and `output` are the result's
 * `weights` and `output` Tensor objects themselves (one array each, copied out of the module
 * once), so writing into one changes the other.
 */
export interface Trace {
  /** The factor applied to the raw scores (1 / sqrt(d) unless given). */
  scale: number;
  /** [L, E] the input */
  x: Tensor;
  /** [H, L, d] per-head queries: columns h*d .. h*d + d - 1 of x W_Q + b_Q */
  q: Tensor;
  /** [H, L, d] per-head keys: x W_K + b_K, split the same way */
  k: Tensor;
  /** [H, L, d] per-head values: x W_V + b_V, split the same way */
  v: Tensor;
  /** [H, L, L] Q_h K_h^T */
  scores: Tensor;
  /** [H, L, L] scores * scale */
  scaled: Tensor;
  /** [L, L] the additive causal mask: 0, or -Infinity where a key is hidden */
  mask: Tensor;
  /** [H, L, L] the logits softmax reads: scaled + mask, -Infinity where masked */
  masked: Tensor;
  /** [H, L, L] softmax(masked): the same numbers as the result's weights */
  weights: Tensor;
  /** [H, L, d] weights_h V_h */
  headOutputs: Tensor;
  /** [L, E] the heads' outputs side by side */
  concat: Tensor;
  /** [L, E] concat W_O + b_O: the same numbers as the result's output */
  output: Tensor;
}

/** One stage of a Trace, as the C++ library describes it. */
export interface TraceStage {
  name: Exclude<keyof Trace, "scale">;
  /** e.g. "[H, L, L]" */
  shape: string;
  meaning: string;
}

export interface ForwardOptions {
  causal?: boolean;
  trace?: boolean;
}

export interface ForwardResult {
  output: Tensor;
  /** [H, L, L] or [B, H, L, L] */
  weights: Tensor;
  trace?: Trace;
}

export interface SelfAttention {
  readonly modelDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  /**
   * A copy of the layer's weights, made on each read. The layer keeps its own copy of given
   * weights too: changing either the arrays passed in or these changes nothing.
   */
  readonly weights: SelfAttentionWeights;
  /** x: [L, E] or [B, L, E] */
  forward(x: TensorInput, options?: ForwardOptions): ForwardResult;
}

export interface ExplainOptions {
  /** Default true. */
  causal?: boolean;
  /** Default 64. */
  modelDim?: number;
  /** Default 4. */
  numHeads?: number;
  /** Default 7. */
  seed?: number;
  /** Default "xavier". */
  init?: Init;
  /** Default "sinusoidal". */
  positional?: Positional;
  /** Default 256, at most 1024. */
  maxTokens?: number;
  /** Over maxTokens: explain the first maxTokens instead of throwing TOO_LARGE. Default false. */
  truncate?: boolean;
  /**
   * Record every stage (`trace`) and the score variances. false: `trace` is null and the
   * variances are [], the rest is the same; a long text is explained several times faster.
   * Default true.
   */
  trace?: boolean;
  /**
   * With `trace`: record the [H, L, L] stages (`scores`, `scaled`, `masked`) and the score
   * variances of this head only (0-based), as [1, L, L] and one variance each; the other stages
   * keep every head. At 512 tokens and 8 heads this makes the trace several times cheaper.
   * Default: every head.
   */
  traceHead?: number;
  /**
   * An earlier result whose large arrays (weights, meanWeights, output, the trace's stages) this
   * call writes its numbers into where the sizes match, instead of allocating new ones: at 512
   * tokens in Chromium a fresh 8 MB array costs several times the copy. That earlier result then
   * holds some of this one's numbers: pass only a result nothing else still reads.
   */
  into?: Explanation;
}

export interface Token {
  /** The token as typed (its embedding is keyed by its simple Unicode case folding). */
  text: string;
  /** UTF-16 offsets into the sentence (absent when the sentence was given as bytes). */
  start?: number;
  end?: number;
  /** UTF-8 byte offsets into the sentence. */
  byteStart: number;
  byteEnd: number;
}

export interface Pca {
  /** [L, 2] the input embeddings X, projected */
  original: Tensor;
  /** [L, 2] X + output, projected with the same fit */
  contextual: Tensor;
  /** [2, E] */
  components: Tensor;
  /** [E] */
  mean: Tensor;
  /** Fraction of X's variance on each axis. */
  explained: [number, number];
}

export interface ExplainStats {
  totalTokens: number;
  truncated: boolean;
  /** [H] variance of Q·Kᵀ over unmasked entries ([1] with traceHead, [] without trace) */
  rawScoreVariance: number[];
  /** The same after scaling by 1/sqrt(d) ([1] with traceHead, [] without trace) */
  scaledScoreVariance: number[];
  /**
   * [H, L] entropy of each weight row, in nats, from the softmax's own sums: within
   * 5e-6 (1 + 2 H) + 4e-7 (1 + H) of the weights' entropy H at 512 keys.
   */
  entropy: Tensor;
}

export interface Explanation {
  tokens: Token[];
  /** [L, E] */
  tokenEmbeddings: Tensor;
  /** [L, E] sinusoidal positions (zeros with positional "none") */
  positions: Tensor;
  /** [L, E] X = tokenEmbeddings + positions */
  embeddings: Tensor;
  projections: SelfAttentionWeights;
  /** Every stage; null with `trace: false`; scores, scaled and masked one head's with traceHead. */
  trace: Trace | null;
  /** [H, L, L] */
  weights: Tensor;
  /** [L, L] the mean of the heads' weights */
  meanWeights: Tensor;
  /** [L, E] */
  output: Tensor;
  /** [L, E] X + output */
  contextual: Tensor;
  pca: Pca;
  stats: ExplainStats;
  /** The options used, defaults filled in (traceHead only when given). */
  options: Required<Omit<ExplainOptions, "traceHead" | "into">> & Pick<ExplainOptions, "traceHead">;
}

export interface Limits {
  maxElements: number;
  maxWork: number;
  maxModelDim: number;
  maxHeads: number;
  maxTokens: number;
  defaultMaxTokens: number;
  maxTextBytes: number;
}

export interface Defaults {
  attention: Readonly<Required<Omit<AttentionOptions, "mask" | "scale">>>;
  selfAttention: Readonly<Required<Omit<SelfAttentionConfig, "weights">>>;
  forward: Readonly<Required<ForwardOptions>>;
  explain: Readonly<Required<Omit<ExplainOptions, "traceHead" | "into">>>;
}

export interface Choices {
  init: readonly Init[];
  positional: readonly Positional[];
  causalAlign: readonly CausalAlign[];
}

export interface AttnLens {
  readonly version: string;
  readonly limits: Readonly<Limits>;
  readonly errorCodes: ReadonlyArray<{ name: AttnLensErrorCode; description: string }>;
  /** The stages of a Trace in data-flow order, from the C++ library's one list. */
  readonly traceStages: ReadonlyArray<Readonly<TraceStage>>;
  /** The library's defaults for each call's options (what an omitted option means). */
  readonly defaults: Readonly<Defaults>;
  /** The accepted values of each option that takes a name. */
  readonly choices: Readonly<Choices>;
  attention(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): AttentionResult;
  /** The same contract computed the plain way (three Eigen steps); slower, for checking. */
  attentionReference(q: TensorInput, k: TensorInput, v: TensorInput, options?: AttentionOptions): AttentionResult;
  selfAttention(config?: SelfAttentionConfig): SelfAttention;
  explain(sentence: string | Uint8Array, options?: ExplainOptions): Explanation;
  /** Diagnostics: the wasm heap's size and the bytes malloc holds. */
  memory(): { heapBytes: number; usedBytes: number };
  /**
   * The module this instance runs: "relaxed" (attnlens-relaxed.wasm, relaxed SIMD with fused
   * multiply-adds) or "baseline" (attnlens.wasm, SIMD128); null when the module came from
   * `wasmBinary` or `wasmUrl`.
   */
  readonly simd: "relaxed" | "baseline" | null;
  /**
   * Loads a checkpoint folder (Hugging Face's file names, tensor names and shapes; F32, F16 or
   * BF16 weights) from its files' contents: GPT-2, BERT, DistilBERT, RoBERTa, the Llama families,
   * Gemma 2, Gemma 3 or ModernBERT, by config.json's
   * model_type (modelFamilies() lists them). The model module (attnlens-model.wasm, the variant
   * of `simd`) is fetched and instantiated on the first call of loadModel, createModel,
   * loadTokenizer or modelFamilies, once, and shared. Rejects with BAD_FILE whose message starts
   * with the file at fault and names the tensor or key (truncated or inconsistent files, wrong
   * shapes, another family's tensors or files, a model_type attnlens does not load such as
   * "roberta", relative position embeddings), TOO_LARGE, OUT_OF_MEMORY; BAD_ARGUMENT /
   * UNKNOWN_OPTION for arguments of the wrong type.
   */
  loadModel(options: LoadModelOptions): Promise<Model>;
  /** The model families loadModel reads, with the tokenizer files each takes. */
  modelFamilies(): Promise<readonly ModelFamily[]>;
  /** A new model with GPT-2's random initialisation (deterministic for a seed), for training. */
  createModel(options: CreateModelOptions): Promise<Model>;
  /** GPT-2's byte-level BPE tokenizer from vocab.json and merges.txt (BAD_FILE naming the file). */
  loadTokenizer(options: { vocab: FileText; merges: FileText }): Promise<Tokenizer>;
  /**
   * Diagnostics of the model module (instantiating it): its heap size, the bytes malloc holds,
   * and the threads its matrix products split over (1 but in the threaded module, which only a
   * page's Web Worker loads where the page is cross-origin isolated: docs/api.md, "Threads").
   */
  modelMemory(): Promise<{
    heapBytes: number;
    usedBytes: number;
    threads: number;
    /** Why the threaded model module did not load where it could have (the single-threaded one runs instead). */
    threadsUnavailable?: string;
  }>;
}

/**
 * Which of the package's two modules to load. "auto" (the default): attnlens-relaxed.wasm where
 * the engine runs relaxed SIMD (Chromium >= 114, Node >= 22; see relaxedSimdSupported()), else
 * attnlens.wasm. "relaxed" forces the relaxed module and rejects with BAD_ARGUMENT where the
 * engine cannot run it; "baseline" forces the SIMD128 module. Results of the two agree within
 * float32 rounding; the relaxed one is faster.
 */
export type SimdChoice = "auto" | "relaxed" | "baseline";

export interface LoadOptions {
  /** The module's bytes, if you have them already. Not combinable with `simd`. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Where to read a module from (a URL in browsers, a path or file URL in Node). Not
   * combinable with `simd`.
   */
  wasmUrl?: string | URL;
  /** Which of the package's modules to load; default "auto". */
  simd?: SimdChoice;
}

/**
 * Instantiates the WebAssembly module. Without `wasmBinary` or `wasmUrl`, each of the package's
 * modules is instantiated once and shared by every caller that picks it.
 */
export declare function loadAttnLens(options?: LoadOptions): Promise<AttnLens>;

/** True when this JS engine runs relaxed SIMD, i.e. `simd: "auto"` picks the relaxed module. */
export declare function relaxedSimdSupported(): boolean;

/** Each head's attention sink: what sinkRates() returns. */
export interface SinkRates {
  /** [layers, heads]: the mean share of a query row's attention on the first token. */
  first: Float32Array;
  /** [layers, heads]: the mean share on the token positions given as `special`; null without them. */
  special: Float32Array | null;
  shape: [number, number];
}

/**
 * Per layer and head of attention weights [layers, heads, L, L] (a forward's or analyze()'s
 * `attention` for one sentence, any family), the mean share of each query row's attention on the
 * first token and on the token positions `special` (e.g. [CLS] and [SEP], or a beginning-of-text
 * token). With `causal`, rows from 1 on are averaged: a causal model's first row can attend only
 * to the first token. A weight outside [0, 1] (NaN included) is BAD_ARGUMENT naming its place.
 */
export declare function sinkRates(attention: Tensor, options?: { causal?: boolean; special?: readonly number[] }): SinkRates;

/**
 * Attention rollout (Abnar & Zuidema 2020) of attention weights [layers, heads, L, L]: per layer,
 * Ã = (1 - residual) · (the mean over heads) + residual · I with rows renormalised, and
 * R_l = Ã_l · R_(l-1). Returns every layer's R, [layers, L, L]: row i of layer l says from which
 * input tokens token i's representation after layer l comes (rows sum to 1; a causal model's
 * keep the triangle). `residual` defaults to 0.5. Given a forward's `valueWeighted` [layers, L, L]
 * instead, each row over its sum (the share of what token i receives from each token) takes the
 * heads' mean's place: rollout of what the attention carries rather than of its weights.
 */
export declare function rollout(
  attention: Tensor,
  options?: { residual?: number },
): { data: Float32Array; shape: [number, number, number] };

/**
 * Each head's value-weighted attention α^h_ij · ‖f_h(x_j)‖ (Kobayashi et al. 2020) from a
 * forward's attention [layers, heads, L, L] and valueNorms [layers, heads, L] (forward(ids, {
 * attention: true, valueWeighted: true })), as [layers, heads, L, L].
 */
export declare function valueWeightedHeads(
  attention: Tensor,
  valueNorms: Tensor,
): { data: Float32Array; shape: [number, number, number, number] };
