// Types of the model module (attnlens-model.wasm): GPT-2-family checkpoints, their tokenizer,
// forward passes, predictions and training. loadModel, createModel and loadTokenizer on an
// AttnLens (attnlens.d.ts) return them; attnlens.d.ts re-exports every one.
import type { Tensor } from "./attnlens.js";

/** A text file's contents: a string, or its UTF-8 bytes. */
export type FileText = string | Uint8Array | ArrayBuffer;

/** The files of a checkpoint, by their names in a Hugging Face model directory. */
export interface CheckpointFiles {
  /** The weights (required). */
  "model.safetensors": Uint8Array | ArrayBuffer;
  /** GPT2Config's JSON (required): n_layer, n_head, n_embd, n_positions, vocab_size. */
  "config.json": FileText;
  /** The tokenizer: give both or neither. */
  "vocab.json"?: FileText;
  "merges.txt"?: FileText;
}

/** Progress while a checkpoint loads (model.safetensors is copied into the wasm heap in chunks). */
export interface LoadProgress {
  /** "copy": `bytes` of model.safetensors are in the heap; "parse": the checkpoint is being
   * read (one synchronous step); "done": the model is ready. */
  phase: "copy" | "parse" | "done";
  bytes: number;
  totalBytes: number;
}

export interface LoadModelOptions {
  /** The files' contents. Each typed array is read through its own memory (its intrinsic buffer,
   * offset and length; a subclass or an own `length` cannot change what is read) and must stay
   * unchanged until the promise settles. Loads in flight are independent of each other. */
  files: CheckpointFiles;
  /** Called after each chunk of model.safetensors is copied (16 MiB), then at "parse" and "done".
   * If it throws, the load fails with that error and frees what it took (the model too). */
  onProgress?: (progress: LoadProgress) => void;
}

/** A GPT-2 configuration (Hugging Face's n_layer, n_head, n_embd, n_positions, vocab_size). */
export interface ModelConfig {
  layers: number;
  heads: number;
  dModel: number;
  /** The longest sequence (rows of the position embedding). */
  context: number;
  vocabSize: number;
  /**
   * GPT-2's LayerNorm before each block's attention (default true). false: attention reads the
   * residual stream as it is and the blocks have no ln_1 tensors; saved as
   * "attnlens_attention_norm": false in config.json, which other GPT-2 loaders ignore.
   */
  attentionNorm: boolean;
}

export interface CreateModelOptions {
  /** Sizes; each omitted one takes the library's default (2 layers, 4 heads, 128, 128, 256, attentionNorm true). */
  config?: Partial<ModelConfig>;
  /** An integer 0 .. 2^53 - 1; default 0. */
  seed?: number;
  /** A tokenizer for the model (its vocabulary may not exceed config.vocabSize). */
  tokenizer?: { vocab: FileText; merges: FileText };
}

/** A token of a text: UTF-16 offsets into the text (a token that cuts a character covers the
 * whole character) and UTF-8 byte offsets (exact: tokens tile the bytes). */
export interface TextToken {
  id: number;
  /** The token's bytes as text (U+FFFD for a cut character). */
  text: string;
  begin: number;
  end: number;
  byteBegin: number;
  byteEnd: number;
}

export interface Tokenizer {
  /** GPT-2's ids for `text` (equal to the reference encoder's). INVALID_UTF8 for a lone surrogate. */
  encode(text: string): Int32Array;
  /** The tokens' bytes as text; decode(encode(text)) === text. BAD_ARGUMENT names an unknown id. */
  decode(ids: Int32Array | readonly number[]): string;
  tokens(text: string): TextToken[];
  /** Frees the tokenizer; using it afterwards throws BAD_ARGUMENT. */
  dispose(): void;
}

/**
 * Token ids: one sequence (Int32Array or number[]) or a batch (number[][] or
 * { data, shape: [batch, length] }).
 */
export type TokenIdsInput =
  Int32Array | readonly number[] | readonly (readonly number[])[] | { data: Int32Array | readonly number[]; shape: [number, number] };

export interface ModelForwardOptions {
  /** Return every layer's attention weights. Default false. */
  attention?: boolean;
  /** Return the residual stream before the first block and after each block. Default false. */
  residuals?: boolean;
}

/**
 * For one sequence of L ids: logits [L, V], attention [layers, heads, L, L] (causal: upper
 * triangles exactly 0), residuals [layers + 1, L, dModel]. For a batch [B, T]: logits [B, T, V],
 * attention [layers, B, heads, T, T], residuals [layers + 1, B, T, dModel].
 */
export interface ModelForwardResult {
  logits: Tensor;
  attention?: Tensor;
  residuals?: Tensor;
}

export interface Prediction {
  id: number;
  /** The token's text; "" for an id beyond the tokenizer's vocabulary (a padded embedding row). */
  text: string;
  /** Softmax probability of the token as the next one. */
  p: number;
}

export interface Analysis {
  tokens: TextToken[];
  totalTokens: number;
  predictions: Prediction[][];
  attention: Tensor | null;
}

export interface AdamWSettings {
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay on 2-D tensors (embeddings and matrices). */
  weightDecay: number;
  /** Global-norm gradient clipping threshold; 0 = none. */
  maxGradNorm: number;
}

/** Linear warm-up then cosine decay (nanoGPT's); steps count from 0. */
export interface LrSchedule {
  maxLr: number;
  minLr: number;
  warmupSteps: number;
  totalSteps: number;
}

export interface OptimizerOptions extends Partial<AdamWSettings> {
  /** A schedule that gives trainStep its rate when it is called without `lr`; null removes it. */
  schedule?: Partial<LrSchedule> | null;
}

export interface OptimizerState {
  adamw: AdamWSettings;
  schedule: LrSchedule | null;
  /** AdamW steps taken. */
  steps: number;
}

export interface TrainStepDetails {
  loss: number;
  /** The rate used. */
  lr: number;
  /** AdamW steps taken after this one. */
  step: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

export interface Model extends Omit<Tokenizer, "dispose"> {
  readonly config: Readonly<ModelConfig>;
  /** Number of float parameters. */
  readonly parameters: number;
  /** Whether the model has a tokenizer (encode, decode, tokens and predict need one). */
  readonly hasTokenizer: boolean;
  /** Finite weights whose products overflow float32 for these ids are a NON_FINITE error naming
   * the stage (embeddings, a block, a LayerNorm, the logits), never NaN or zeroed logits. */
  forward(ids: TokenIdsInput, options?: ModelForwardOptions): ModelForwardResult;
  /** Per position of `text`'s tokens: the k (default 5, at most 256) likeliest next tokens,
   * likeliest first (ties: the smaller id first). */
  predict(text: string, options?: { k?: number }): Prediction[][];
  /**
   * One forward pass over `text`'s first `maxTokens` tokens (default and at most the context):
   * the tokens, the k (default 5, at most 256) likeliest next tokens at each, and with `attention: true` the
   * attention [layers, heads, L, L] (else null). `totalTokens` counts all of the text's tokens.
   */
  analyze(text: string, options?: { k?: number; attention?: boolean; maxTokens?: number }): Analysis;
  /** Mean cross-entropy (nats per token) of targets given ids (same shape; -1 ignores a
   * position) and its gradient for every tensor, named as in the checkpoint. */
  gradients(ids: TokenIdsInput, targets: TokenIdsInput): { loss: number; grads: Record<string, Tensor> };
  /** One AdamW step on ids [B, T + 1] (inputs [:, :T], targets [:, 1:]); returns the loss
   * before the update. `lr` is required unless setOptimizer gave a schedule. An update that would
   * leave a parameter or a moment non-finite (a huge rate, an overflowing gradient) is a
   * NON_FINITE error and changes nothing. */
  trainStep(batch: TokenIdsInput, options?: { lr?: number }): number;
  trainStepDetails(batch: TokenIdsInput, options?: { lr?: number }): TrainStepDetails;
  /** Changes the optimizer's settings (kept moments); returns them. */
  setOptimizer(options: OptimizerOptions): OptimizerState;
  readonly optimizer: OptimizerState;
  /** The checkpoint's files, as the native writer writes them; loadModel() reads them back. */
  save(options?: { dtype?: "F32" | "F16" }): {
    "model.safetensors": Uint8Array;
    "config.json": string;
    "vocab.json"?: string;
    "merges.txt"?: string;
  };
  /** Frees the model; using it afterwards throws BAD_ARGUMENT. */
  dispose(): void;
}
