// Type declarations for the npm package "attnlens" (the browser and the Node entry alike).

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

/** A tensor argument: a Tensor (data may also be any array of numbers) or nested arrays. */
export type TensorInput = Tensor | { data: ArrayLike<number>; shape: number[] } | NestedNumbers[];

/**
 * A mask shaped [L, S] or broadcastable to the scores ([B, H, L, S] / [B, L, S]).
 * Boolean: Uint8Array or nested booleans, 1/true = may attend (as PyTorch's SDPA).
 * Additive: Float32Array or nested numbers, added to the scaled scores; -Infinity masks.
 */
export type MaskInput =
  { data: Uint8Array; shape: number[] } | { data: Float32Array; shape: number[] } | NestedBooleans[] | NestedNumbers[];

export interface AttentionOptions {
  /** Query i attends keys j <= i (see causalAlign). Default false. */
  causal?: boolean;
  /** "top-left" (default, PyTorch's is_causal) or "bottom-right" (j <= i + S - L, KV cache). */
  causalAlign?: "top-left" | "bottom-right";
  /** Combined with causal when both are given: a key must be allowed by both. */
  mask?: MaskInput | null;
  /** Multiplies q·kᵀ. Default 1 / sqrt(E). */
  scale?: number;
  /** Also return the weights [..., L, S]. Default false. */
  returnWeights?: boolean;
  /** Size limit on each tensor and on one L x S score slice. Default limits.maxElements (2^26). */
  maxElements?: number;
  /**
   * FlashAttention's schedule: key tiles with an online softmax, never holding the L x S
   * scores (memory O(L·D), no L x S limit). Cannot be combined with returnWeights. Default false.
   */
  streaming?: boolean;
}

export interface AttentionResult {
  /** [..., L, Ev] */
  output: Tensor;
  /** [..., L, S], present when returnWeights is true */
  weights?: Tensor;
}

export type Init = "xavier" | "normal" | "identity";

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

/** Every stage of a forward pass; shapes for x [L, E] (a batched x adds a leading B). */
export interface Trace {
  scale: number;
  x: Tensor;
  /** [H, L, d] per head, d = E / H */
  q: Tensor;
  k: Tensor;
  v: Tensor;
  /** [H, L, L] Q·Kᵀ */
  scores: Tensor;
  /** [H, L, L] scores · scale */
  scaled: Tensor;
  /** [L, L] additive: 0 or -Infinity */
  mask: Tensor;
  /** [H, L, L] softmax(scaled + mask) */
  weights: Tensor;
  /** [H, L, d] weights · V */
  headOutputs: Tensor;
  /** [L, E] */
  concat: Tensor;
  /** [L, E] concat · W_O */
  output: Tensor;
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
  positional?: "sinusoidal" | "none";
  /** Default 256, at most 1024. */
  maxTokens?: number;
  /** Over maxTokens: explain the first maxTokens instead of throwing TOO_LARGE. Default false. */
  truncate?: boolean;
}

export interface Token {
  /** The token; ASCII letters lowercased. */
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
  /** [H] variance of Q·Kᵀ over unmasked entries */
  rawScoreVariance: number[];
  /** [H] after scaling by 1/sqrt(d) */
  scaledScoreVariance: number[];
  /** [H, L] entropy of each weight row, in nats */
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
  trace: Trace;
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
  /** The options used, defaults filled in. */
  options: Required<ExplainOptions>;
}

export interface Limits {
  maxElements: number;
  maxModelDim: number;
  maxHeads: number;
  maxTokens: number;
  defaultMaxTokens: number;
  maxTextBytes: number;
}

export interface AttnLens {
  readonly version: string;
  readonly limits: Readonly<Limits>;
  readonly errorCodes: ReadonlyArray<{ name: AttnLensErrorCode; description: string }>;
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
