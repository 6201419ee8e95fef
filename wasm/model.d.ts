// Types of the model module (attnlens-model.wasm): checkpoints of every family the library loads
// (GPT-2, BERT, DistilBERT, RoBERTa, the Llama families, Gemma 2, Gemma 3, ModernBERT), their tokenizers, forward passes, predictions, caches and training. loadModel, createModel and loadTokenizer on an
// AttnLens (attnlens.d.ts) return them; attnlens.d.ts re-exports every one.
import type { Tensor } from "./attnlens.js";

/** A text file's contents: a string, or its UTF-8 bytes. */
export type FileText = string | Uint8Array | ArrayBuffer;

/**
 * The files of a checkpoint, by their names in a Hugging Face model directory. config.json's
 * "model_type" names the family, and the family says which tokenizer files it reads (lens
 * families): GPT-2 vocab.json + merges.txt; BERT and DistilBERT vocab.txt (with
 * tokenizer_config.json when present), or tokenizer.json, or a byte-level BPE's vocab.json +
 * merges.txt, the first of these sets that is given; RoBERTa vocab.json + merges.txt.
 * A tokenizer's files are given whole or not at all. Other files are ignored (Model.ignored
 * lists them), except those without which the model would be misread: a sharded checkpoint's
 * index and shards, weights in another format without model.safetensors, and a non-empty
 * added_tokens.json are BAD_FILE.
 */
export interface CheckpointFiles {
  /**
   * The weights (required): F32, F16 or BF16. A Blob (a File a reader picked) is read in chunks
   * straight into the wasm heap, with no copy of the whole file in JS.
   */
  "model.safetensors": Uint8Array | ArrayBuffer | Blob;
  /** The model's config (required). */
  "config.json": FileText;
  "vocab.json"?: FileText;
  "merges.txt"?: FileText;
  "vocab.txt"?: FileText;
  "tokenizer.json"?: FileText;
  "tokenizer_config.json"?: FileText;
  /** Any other file of the folder: ignored unless it would change how the model reads. */
  [other: string]: unknown;
}

/** A family the library loads (its registry entry). */
export interface ModelFamily {
  /** "gpt2", "bert", "distilbert", "roberta", "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "modernbert". */
  name: string;
  /** The config.json "model_type" values the family reads. */
  modelTypes: string[];
  causal: boolean;
  prediction: "next-token" | "masked-token";
  /** Sets of files that make a tokenizer, in order of preference. */
  tokenizerFiles: string[][];
  /** Files read when present (e.g. "tokenizer_config.json"). */
  optionalFiles: string[];
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

/** A GPT-2 configuration for createModel (Hugging Face's n_layer, n_head, n_embd, n_positions, vocab_size). */
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

/** What a loaded model says of itself: its family, whether its attention is causal, what it
 * predicts, and its sizes. */
export interface LoadedModelConfig {
  family: string;
  /** true: each token attends to earlier tokens only (GPT-2); false: to every token (BERT). */
  causal: boolean;
  /** "next-token" (a language model) or "masked-token" (an encoder's masked-LM head). */
  prediction: "next-token" | "masked-token";
  /** Whether the checkpoint has its prediction head (an encoder folder may have none). */
  hasHead: boolean;
  layers: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads: as many as `heads`, or fewer (grouped-query attention: query head h reads
   * K/V head floor(h / (heads / kvHeads))). */
  kvHeads: number;
  dModel: number;
  /** The width of one head (Qwen3's is not dModel / heads). */
  headDim: number;
  context: number;
  vocabSize: number;
  /** Token types (sentence A/B); 0 when the family has none. */
  typeVocabSize: number;
  /** How positions enter: learned embeddings (GPT-2, BERT), rotary (the Llama family), none. */
  positions: "learned" | "rotary" | "none";
  /** The block's normalisation. */
  norm: "layernorm" | "rmsnorm" | "rmsnorm(1+w)";
  /**
   * Per layer, how far a query sees: 0 every key its attention allows, W > 0 itself and the W − 1
   * keys before it (a sliding window: Gemma 3's local layers) or, in an encoder, W − 1 on each
   * side (ModernBERT's local layers). Empty when no layer has a window.
   */
  windows: number[];
  /**
   * Soft caps (Gemma 2): each scaled attention score x becomes c · tanh(x / c) before the softmax
   * (scoreSoftcap) and each logit likewise (logitSoftcap); 0 when the model has none.
   */
  scoreSoftcap: number;
  logitSoftcap: number;
  /** GPT-2 only: see ModelConfig. */
  attentionNorm?: boolean;
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
 * whole character) and UTF-8 byte offsets (exact: tokens tile the bytes). Offsets are into the
 * text of the token's segment (the first or second of a pair); a special token the tokenizer
 * adds ([CLS], [SEP]) covers no text. */
export interface TextToken {
  id: number;
  /** The token's text as typed (U+FFFD for a cut character); a special token's name. */
  text: string;
  begin: number;
  end: number;
  byteBegin: number;
  byteEnd: number;
  /** Token type: 0, or 1 for the second text of a pair (RoBERTa: always 0). */
  type: number;
  /** Which text of a pair the offsets are in: 0 or 1. */
  segment: number;
  /** A token the tokenizer added ([CLS], [SEP]), not one of the text's. */
  special: boolean;
}

/** A text, or a sentence pair [textA, textB] (for encoders: [CLS] A [SEP] B [SEP]; RoBERTa
 * <s> A </s></s> B </s>). */
export type TextInput = string | readonly [string, string];

export interface Tokenizer {
  /** The ids of `text`, with the family's special tokens (none for GPT-2, whose ids equal the
   * reference encoder's). A written "[MASK]" (RoBERTa's "<mask>") is the mask token. INVALID_UTF8 for a lone surrogate. */
  encode(text: TextInput): Int32Array;
  /** The tokens' text; for GPT-2 decode(encode(text)) === text. BAD_ARGUMENT names an unknown id. */
  decode(ids: Int32Array | readonly number[]): string;
  tokens(text: TextInput): TextToken[];
  /** Frees the tokenizer; using it afterwards throws BAD_ARGUMENT. */
  dispose(): void;
}

/** What a model's tokenizer is. */
export interface TokenizerInfo {
  /** "byte-level BPE" or "WordPiece". */
  kind: string;
  size: number;
  /** The [MASK] token's id, or -1. */
  maskId: number;
  /** How the mask is written in a text ("[MASK]", RoBERTa's "<mask>"), or "" without one. */
  maskText: string;
  /** The id of the token unknown text becomes (the tokenizer's unk_token, "[UNK]" or another
   * name), or -1 when it has none (a byte-level BPE needs none). */
  unkId: number;
  /** The special tokens' ids, ascending: begin and end of text, [CLS], reserved ones (generate()
   * ends at one). */
  specialIds: Int32Array;
  /** The byte-fallback tokens' ids ("<0x00>" .. "<0xFF>" of a SentencePiece-style vocabulary), ascending. */
  byteIds: Int32Array;
  /** A sentence for readers about how text is read (e.g. lower-casing assumed), or "". */
  note: string;
}

/** A cache for forward() and analyze() on edits of one sentence (Model.createCache). */
export interface ModelCache {
  /** Tokens whose results the cache holds. */
  readonly tokens: number;
  /** Tokens the last call took from the cache instead of computing them. */
  readonly reused: number;
  /** Frees it; passing it afterwards is BAD_ARGUMENT. The model's dispose() frees it too. */
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
  /** Return the residual stream before the first layer and after each layer. Default false. */
  residuals?: boolean;
  /** Return the prediction head's logits. Default: when the model has a head. */
  logits?: boolean;
  /** Token types (same shape as the ids); encoders with token types only. Default all 0. */
  tokenTypes?: TokenIdsInput;
  /** 1 for a token, 0 for padding (same shape as the ids); encoders only. */
  attentionMask?: TokenIdsInput;
  /** A cache of this model (createCache): a causal model computes from the first token that
   * differs from the cached sentence. One sequence only. */
  cache?: ModelCache;
  /** With attention: the query rows from this one on only, [layers, heads, L - attentionFrom, L]
   * (an integer from 0 to L; default 0, every row). A caller holding the rows before an edit asks
   * for the rest: with a cache, a causal model copies out only the rows after the kept prefix
   * (an appended token of a 308-token GPT-2 small figure: 144 rows instead of 44 352). */
  attentionFrom?: number;
  /** Heads to switch off, as [layer, head] pairs (0-based; a non-empty list, each head once): each
   * one's output (its attention-weighted values, before the attention's output projection) is
   * replaced as `ablation` says, in every row. Zero ablation equals the model with those heads'
   * rows of the output projection set to 0. With a cache, every row is computed and the cache is
   * left as it was. */
  ablate?: readonly (readonly [number, number])[];
  /** "zero" (default): the head adds nothing. "mean": its output at each position is its mean
   * over the positions that row may read — 0 .. t in a causal model (so a prefix's rows do not
   * change as the sentence grows), every token the attention mask keeps in an encoder. */
  ablation?: Ablation;
  /** Value-weighted attention (Kobayashi et al. 2020): what each weight carries. Adds
   * `valueNorms`, ‖f_h(x_j)‖ with f_h(x) = (x W_V^h + b_V^h) W_O^h, token j's value through
   * head h's slice of the output projection, and `valueWeighted`, ‖Σ_h α^h_ij f_h(x_j)‖ summed
   * over the layer's heads; head h's own value-weighted attention is α^h_ij · ‖f_h(x_j)‖
   * (valueWeightedHeads(), from the package). Every row is computed, from this forward's own values; with a cache,
   * without it (the cache is left as it was). An ablated head's norms are 0 and it is left out of
   * the sum. */
  valueWeighted?: boolean;
  /** Positions (rows b · T + t of a batch) at which to return each head's write into the
   * residual stream: its slice of the heads' outputs through its rows of the attention's output
   * projection, without the projection's bias (which belongs to no head), as `headOutputs`
   * [layers, rows, heads, dModel]. A head switched off writes what the ablation left (0 for
   * zero). With a cache, computed without it. */
  headOutputRows?: readonly number[] | Int32Array;
}

/** How an ablated head's output is replaced (ModelForwardOptions.ablation). */
export type Ablation = "zero" | "mean";

/**
 * For one sequence of L ids: logits [L, V], attention [layers, heads, L, L] (causal: upper
 * triangles exactly 0), residuals [layers + 1, L, dModel]. For a batch [B, T]: logits [B, T, V],
 * attention [layers, B, heads, T, T], residuals [layers + 1, B, T, dModel]. With attentionFrom = f
 * the attention holds the query rows from f on: [layers, heads, L - f, L].
 */
export interface ModelForwardResult {
  logits: Tensor;
  attention?: Tensor;
  residuals?: Tensor;
  /** With valueWeighted: [layers, heads, L] (a batch: [layers, B, heads, T]), ‖f_h(x_j)‖ per key token j. */
  valueNorms?: Tensor;
  /** With valueWeighted: [layers, L, L] (a batch: [layers, B, T, T]), ‖Σ_h α^h_ij f_h(x_j)‖. */
  valueWeighted?: Tensor;
  /** With headOutputRows: [layers, rows, heads, dModel], each head's write at those rows. */
  headOutputs?: Tensor;
}

/** Model.logitLens(): what the residual stream predicts after each layer (entry 0: the
 * embeddings), at each position asked, through the model's own head. */
export interface LogitLens {
  positions: number[];
  k: number;
  /** [layers + 1, positions, k]: the order of `ids`, `p` and `texts`. */
  shape: [number, number, number];
  /** The k likeliest tokens per layer and position, likeliest first. */
  ids: Int32Array;
  /** Their softmax probabilities under the lens. */
  p: Float32Array;
  /** Their texts ("" without a tokenizer, or beyond it). */
  texts: string[];
}

/** Model.attribute(): one logit split into what each part of the model wrote into the residual
 * stream, through the final norm with its scale frozen at the stream's; the parts add up to the
 * logit (`total`), up to float32 rounding. */
export interface LogitAttribution {
  position: number;
  /** The token whose logit is split (the model's first choice unless named). */
  token: number;
  text: string;
  /** The model's logit of `token` at `position`. */
  logit: number;
  /** The final norm's frozen 1/σ (LayerNorm) or 1/rms (RMSNorm). */
  scale: number;
  /** Token (and position) embeddings. */
  embeddings: number;
  /** [layers, heads]: each head's write. */
  heads: Tensor;
  /** [layers]: each attention output projection's bias (0 without one). */
  attentionBias: Tensor;
  /** [layers]: each MLP's output. */
  mlps: Tensor;
  /** The final norm's bias and the head's bias. */
  constant: number;
  /** The parts' sum. */
  total: number;
}

export interface Prediction {
  id: number;
  /** The token's text; "" for an id beyond the tokenizer's vocabulary (a padded embedding row). */
  text: string;
  /** Softmax probability of the token (the next one, or the one at a [MASK]). */
  p: number;
}

export interface Analysis {
  tokens: TextToken[];
  totalTokens: number;
  /** Per token: a next-token model's predictions after it; a masked-token model's at each
   * [MASK] only (null elsewhere, and everywhere without a head). */
  predictions: (Prediction[] | null)[];
  attention: Tensor | null;
}

/** How generate() picks each token, and when it stops. */
export interface GenerateOptions {
  /** Tokens to write, 1 to the context left after the prompt (default 20, fewer when the context ends first). */
  maxTokens?: number;
  /** 0 (the default) takes the likeliest token; above 0, tokens are drawn from softmax(logits / temperature). */
  temperature?: number;
  /** Draw among the k likeliest only (0, the default: all). */
  topK?: number;
  /** Then among the fewest likeliest whose probabilities reach topP, in (0, 1] (default 1). */
  topP?: number;
  /** The draws' seed, 0 to 2^32 - 1 (default 0): the same seed and logits give the same tokens. */
  seed?: number;
  /** Texts that end the generation once the written tokens, decoded together, hold one (needs a tokenizer). */
  stop?: readonly string[];
  /** Each token's attention: the query row of the token before it, over every token so far. */
  attention?: boolean;
  /** How many likeliest tokens `top` lists (default 5, at most 256). */
  k?: number;
  /** Stops it: the iterator then throws the signal's reason (an AbortError). */
  signal?: AbortSignal;
}

/** A token generate() wrote. */
export interface GeneratedToken {
  id: number;
  /** Its text on its own ("" without a tokenizer, or for an id beyond the tokenizer's vocabulary; a
   * character split over several byte tokens reads U+FFFD in each: decode(ids) gives it whole). */
  text: string;
  /** Every token written so far decoded together, the text to show: a character written over
   * several byte tokens is whole here once its last byte is written (until then left out). */
  written: string;
  /** Its softmax probability (at temperature 1). */
  p: number;
  /** The k likeliest tokens at this step, likeliest first. */
  top: Prediction[];
  /** A special token (end of text, ...): the generation ends with it. */
  special: boolean;
  /** With `attention: true`: [layers, heads, n], where the last of the n tokens before it looked
   * when the model chose it; else null. */
  attention: Tensor | null;
}

/** Why a generation ended, and every token id (the prompt's and the written ones). */
export interface GenerationEnd {
  reason: "maxTokens" | "stop" | "special" | "context";
  ids: Int32Array;
}

/** A [MASK] of the text and the model's likeliest fillers for it. */
export interface MaskFill {
  /** Index of the mask among the text's tokens ([CLS] or <s> is 0). */
  position: number;
  token: TextToken;
  predictions: Prediction[];
}

/** A masked-token training batch: labels are the ids to predict, -1 where nothing is. */
export interface MaskedBatch {
  ids: TokenIdsInput;
  labels: TokenIdsInput;
  tokenTypes?: TokenIdsInput;
  attentionMask?: TokenIdsInput;
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
  readonly config: Readonly<LoadedModelConfig>;
  /** Number of float parameters. */
  readonly parameters: number;
  /**
   * The files loadModel() was given and did not read, in the order given: what a folder as
   * downloaded holds beside the checkpoint (README.md, .gitattributes, generation_config.json,
   * special_tokens_map.json, another family's tokenizer files). Empty for createModel().
   */
  readonly ignored: readonly string[];
  /** Whether the model has a tokenizer (encode, decode, tokens and predict need one). */
  readonly hasTokenizer: boolean;
  /** The tokenizer's kind, size and special ids; null without one. */
  readonly tokenizer: Readonly<TokenizerInfo> | null;
  /** A cache for forward() and analyze() on edits of one sentence (see ModelCache). */
  createCache(): ModelCache;
  /**
   * A next-token model writes on from `prompt` (a text, or token ids) one token at a time through
   * a prefix cache (one new row per token). The options are checked when it is called (named
   * errors); the tokens come from the iterator, whose return value says why it ended.
   */
  generate(
    prompt: string | Int32Array | readonly number[],
    options?: GenerateOptions,
  ): AsyncGenerator<GeneratedToken, GenerationEnd, undefined>;
  /** A masked-token model's fillers for each [MASK] of `text`: k (default 5, at most 256),
   * likeliest first. A text longer than the context is cut as analyze() cuts it (the masks cut
   * off are not filled). BAD_ARGUMENT for a next-token model or one without its head. */
  fillMask(text: TextInput, options?: { k?: number }): MaskFill[];
  /** Finite weights whose products overflow float32 for these ids are a NON_FINITE error naming
   * the stage (embeddings, a block, a LayerNorm, the logits), never NaN or zeroed logits. */
  forward(ids: TokenIdsInput, options?: ModelForwardOptions): ModelForwardResult;
  /** Per position of `text`'s tokens: the k (default 5, at most 256) likeliest tokens, likeliest
   * first (ties: the smaller id first): the next token for a next-token model, the token at that
   * position for a masked-token model. */
  predict(text: TextInput, options?: { k?: number }): Prediction[][];
  /** The logit lens: the model's prediction head (a decoder's final norm and unembedding, an
   * encoder's masked-LM head) on rows of the residual stream, as forward()'s residuals hold
   * them: logits [R, vocabSize]. */
  unembed(rows: Float32Array | { data: Float32Array; shape: readonly number[] }): Tensor;
  /** The logit lens of one sequence at `positions` (default: the last), the k (default 5)
   * likeliest tokens after every layer; only those rows are unembedded. `ablate` and `ablation`
   * as forward()'s. */
  logitLens(
    ids: Int32Array | readonly number[],
    options?: { positions?: readonly number[]; k?: number; ablate?: readonly (readonly [number, number])[]; ablation?: Ablation },
  ): LogitLens;
  /** Direct logit attribution of one sequence's `token` (default: the model's first choice) at
   * `position` (default: the last), with `ablate`'s heads off. Pre-norm models only: BERT and
   * DistilBERT (and RoBERTa) normalise after every layer, and are refused (BAD_ARGUMENT). */
  attribute(
    ids: Int32Array | readonly number[],
    options?: { position?: number; token?: number; ablate?: readonly (readonly [number, number])[]; ablation?: Ablation },
  ): LogitAttribution;
  /**
   * One forward pass over `text`'s first `maxTokens` tokens (default and at most the context):
   * the tokens, the k (default 5, at most 256) likeliest next tokens at each, and with `attention: true` the
   * attention [layers, heads, L, L] (else null). `totalTokens` counts all of the text's tokens.
   * With `cache` (a next-token model), the rows the cache kept are not computed again, nor are
   * their predictions ranked again when the cache's last use was analyze() with the same k.
   * `predictionRows` (token positions, 0 to tokens - 1) ranks those positions only (the others'
   * predictions are null): the unembedding, most of a short forward's work, runs for those rows
   * alone. With a cache, a second analyze() of the same text asking for other rows computes just
   * their unembedding (GPT-2 small: 2–4 ms a row). `attentionFrom` (0 to the tokens) returns the
   * attention's query rows from it on only, as forward()'s option does.
   */
  analyze(
    text: TextInput,
    options?: {
      k?: number;
      attention?: boolean;
      maxTokens?: number;
      cache?: ModelCache;
      predictionRows?: ArrayLike<number>;
      attentionFrom?: number;
      /** Heads switched off, as forward()'s option (the cache is then not used). */
      ablate?: readonly (readonly [number, number])[];
      ablation?: Ablation;
    },
  ): Analysis;
  /** Mean cross-entropy (nats per counted target) of the family's objective (next token; or the
   * labels of masked positions) and its gradient for every tensor, named as in the checkpoint.
   * targets has the ids' shape; -1 ignores a position. */
  gradients(
    ids: TokenIdsInput,
    targets: TokenIdsInput,
    options?: { tokenTypes?: TokenIdsInput; attentionMask?: TokenIdsInput },
  ): { loss: number; grads: Record<string, Tensor> };
  /** One AdamW step; returns the loss before the update. A next-token model takes ids
   * [B, T + 1] (inputs [:, :T], targets [:, 1:]); a masked-token model a MaskedBatch. `lr` is
   * required unless setOptimizer gave a schedule. An update that would leave a parameter or a
   * moment non-finite (a huge rate, an overflowing gradient) is a NON_FINITE error and changes
   * nothing. */
  trainStep(batch: TokenIdsInput | MaskedBatch, options?: { lr?: number }): number;
  trainStepDetails(batch: TokenIdsInput | MaskedBatch, options?: { lr?: number }): TrainStepDetails;
  /** Changes the optimizer's settings (kept moments); returns them. */
  setOptimizer(options: OptimizerOptions): OptimizerState;
  readonly optimizer: OptimizerState;
  /** The checkpoint's files, as the native writer writes them; loadModel() reads them back. */
  save(options?: { dtype?: "F32" | "F16" }): {
    "model.safetensors": Uint8Array;
    "config.json": string;
    "vocab.json"?: string;
    "merges.txt"?: string;
    "vocab.txt"?: string;
    "tokenizer_config.json"?: string;
  };
  /** Frees the model; using it afterwards throws BAD_ARGUMENT. */
  dispose(): void;
}
