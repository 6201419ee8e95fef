// Types for "attnlens/element": the <attn-lens> custom element.
import type { Explanation, Init, Positional } from "./attnlens.js";
import type { LoadedModelConfig } from "./model.js";

export type AttnLensMode = "causal" | "full" | "compare";
/**
 * "grid": every layer's heads as small heatmaps; "steps" and "pca" need computed attention (not files).
 * The names of web/views/index.js, in its order (tests/js/views-registry.test.mjs checks).
 */
export type AttnLensView = "heatmap" | "lines" | "grid" | "steps" | "pca";
export type AttnLensTheme = "light" | "dark" | "auto";
/** Colour maps for the weights; viridis and cividis read well with colour-vision deficiencies. */
export type AttnLensColormap = "viridis" | "cividis" | "magma" | "blues";

/** The validated settings a figure shows (attribute strings parsed, defaults filled in). */
export interface AttnLensState {
  sentence: string;
  mode: AttnLensMode;
  view: AttnLensView;
  heads: number;
  /** "mean" or a 0-based head index. */
  head: "mean" | number;
  /** 0-based indices of the heads the lines view hides. */
  hide: number[];
  dim: number;
  seed: number;
  positional: Positional;
  init: Init;
  theme: AttnLensTheme;
  colormap: AttnLensColormap;
  /** For weights from a file: the 0-based layer shown. */
  layer?: number;
}

/**
 * Attention weights to show, as the views draw them (what `src`, `data` and openFiles() produce).
 * Rows are queries; `weights.data` is row-major [layers, heads, L, L].
 */
export interface AttnLensAttention {
  /** From a model: `special` marks [CLS], [SEP] and the like, `segment` a sentence pair's half (0 or 1). */
  tokens: { text: string; start?: number; end?: number; special?: boolean; segment?: number }[];
  weights: { data: Float32Array; shape: [number, number, number, number] };
  /** Keys after the query are masked (detected when every weight above the diagonal is exactly 0, unless the file says). */
  causal: boolean;
  title: string;
  layerNames?: string[];
  headNames?: string[];
  /** Sentences shown above the figure: rows that do not sum to 1, placeholder tokens, a guessed layout. */
  warnings: string[];
  /** From a file: whether every row sums to 1 within the storage's rounding (the heatmap's legend says which). */
  rowsSumToOne?: boolean;
  /** Where the weights came from: a file, an object, or (format "model") a model computing them. */
  source:
    | { file: string; format: "attnlens" | "bertviz" | "circuitsvis" | "npy" | "safetensors" | "object"; storage: string }
    | { format: "model"; config: LoadedModelConfig };
  /** From a model: "next-token" (a causal model) or "masked-token" (an encoder). */
  prediction?: "next-token" | "masked-token";
  /**
   * From a model, per token, its five likeliest tokens ({ id, text, p }), likeliest first: the next
   * token after it (a causal model), or what fills it if it is a [MASK] (an encoder; null elsewhere).
   */
  predictions?: ({ id: number; text: string; p: number }[] | null)[];
  /** From a model: per [layer][head], previous-token scores on this text and induction scores on a fixed probe (null for an encoder, or if the context is too short). */
  scores?: { previous: number[][]; induction: number[][] | null };
  /**
   * From a model: per [layer][head], what the head does on this text — the mean weight to the
   * previous token, the next token, itself, [CLS], [SEP] and punctuation (NaN where the text has
   * none), and the mean entropy of its rows in nats.
   */
  categories?: { previous: number; next: number; self: number; cls: number; sep: number; punctuation: number; entropy: number }[][];
  /** From a model: per [layer][head], a label from those scores ("previous token 0.93", "[SEP] 0.71", "broad (4.1 nats)", "mixed"). */
  headNotes?: string[][];
  /** From a model: the text's token count before it was cut to the model's context. */
  totalTokens?: number;
}

/**
 * What the `data` property accepts: AttnLensAttention-like objects ({ tokens, weights: { data, shape } },
 * shape [L, L], [heads, L, L] or [layers, heads, L, L]) or the parsed JSON of any file format.
 */
export type AttnLensData =
  | {
      tokens: (string | { text: string })[];
      weights: { data: Float32Array | number[]; shape: number[] };
      causal?: boolean;
      title?: string;
      layerNames?: string[];
      headNames?: string[];
    }
  | Record<string, unknown>;

/** What the element last computed: one explain() result per mode shown. */
export type AttnLensFigure =
  | { empty: true; state: AttnLensState }
  | { empty?: undefined; file: true; causal?: undefined; full?: undefined; totalTokens: number; truncated: false }
  | {
      empty?: undefined;
      file?: undefined;
      causal?: Explanation;
      full?: Explanation;
      /** Tokens in the sentence (the figure shows at most the library's limit, 1024). */
      totalTokens: number;
      truncated: boolean;
      state: AttnLensState;
    };

export interface AttnLensRenderDetail {
  /** Milliseconds from the first change (attribute or property) to the drawn figure. */
  ms: number;
  /** Of which explain() took this long (0 for a change that did not recompute, and for the first figure). */
  computeMs: number;
  figure: AttnLensFigure | null;
  /** What each panel shows from a file or a model (two in compare mode), or empty for random weights. */
  panels: AttnLensAttention[];
  /** A message when the figure could not be computed or drawn, else null. */
  error: string | null;
}

export interface AttnLensPaintedDetail {
  /**
   * Milliseconds from the first change to the painted frame that shows the figure (the task
   * after the next animation frame following attn-lens-render): what a reader waits.
   */
  ms: number;
}

export interface AttnLensLoadDetail {
  /** The weights now shown, or null when the file could not be read. */
  data: AttnLensAttention | null;
  /** Why the file could not be read (also shown in the figure), else null. */
  error: string | null;
}

export interface AttnLensChangeDetail {
  /** The picked head: "mean" or a 0-based index (the `head` attribute's value). */
  head: string;
  /** The picked layer, 0-based (the `layer` attribute's value). */
  layer: string;
  /** The view after the change (a click in the grid view opens the heatmap). */
  view: AttnLensView;
  /** The heads the lines view hides, 1-based, comma-separated (the `hide` attribute's value). */
  hide: string;
}

export declare class AttnLensElement extends HTMLElement {
  /** The sentence to explain. Default "The cat sat on the mat." */
  sentence: string;
  /**
   * Causal attention, full attention, or both side by side. Default "causal". With
   * model="attnlens" it picks the shipped model: the causal one, the encoder, or both.
   */
  mode: AttnLensMode;
  /** Default "heatmap". */
  view: AttnLensView;
  /** Number of heads, "1".."8". Default "4". */
  heads: string;
  /** "mean" or a 0-based head index "0".."heads-1" (the figure labels head "0" as head 1). Default "mean". */
  head: string;
  /** For weights from a file or a model: the 0-based layer the heatmap and lines show. Default "0". */
  layer: string | undefined;
  /**
   * URL of an attention file (relative to the page): our JSON, BertViz or CircuitsVis JSON, .npy or
   * .safetensors, detected from the content. The figure then shows its weights instead of computing
   * any; a new src cancels a load under way. Files over 128 MB (JSON: 32 MB) are refused unread.
   */
  src: string | undefined;
  /** URL of a tokens file for a .npy or .safetensors src: a JSON list or one token per line. Attribute `tokens-src`. */
  tokensSrc: string | undefined;
  /** Weights to show, given directly (wins over src). */
  data: AttnLensData | null | undefined;
  /**
   * What computes the figure: "random" (default; one layer of seeded random weights, every view);
   * "attnlens" (the trained models shipped with the package, each 2 layers × 4 heads: with mode
   * "causal" the causal model and its next-token predictions, with "full" the encoder — full
   * attention, [CLS] and [SEP], the fillers of each [MASK] typed — and with "compare" both side by
   * side; the grid, heatmap and lines views, a label per head); "attnlens-encoder" (the encoder,
   * whatever the mode). Reads "custom" after openModel(). The models and their module are
   * fetched only when shown. A src, data or opened file wins over a model.
   */
  model: "random" | "attnlens" | "attnlens-encoder" | "custom";
  /**
   * Directory URL (relative to the page) of a checkpoint to show instead of the shipped model:
   * model.safetensors and config.json of a GPT-2, BERT or DistilBERT model, with its tokenizer's
   * files (vocab.json + merges.txt; vocab.txt or tokenizer.json). Attribute `model-src`.
   */
  modelSrc: string | undefined;
  /**
   * With a next-token model: once in view, the model writes this many tokens after `sentence`
   * (each joins `sentence`), with a Replay button under the predictions. Attribute `generate`.
   */
  generate: string | undefined;
  /** With `generate`: 0 (default) writes the likeliest tokens; above 0 they are drawn with `seed`. */
  temperature: string | undefined;
  /**
   * An encoder's [CLS] and [SEP]: "show" (default) or "hide" (dropped from the figure, each row
   * renormalised over the tokens left).
   */
  specials: "show" | "hide";
  /** Heads the lines view hides: 1-based numbers, comma-separated, e.g. "2,4". Default "". */
  hide: string;
  /** d_model, the embedding size: a multiple of heads, at most 256. Default "64". */
  dim: string;
  /** Seed of the random weights, "0".."2147483647". Default "7". */
  seed: string;
  /** Default "sinusoidal". */
  positional: Positional;
  /** How the random weights are drawn. Default "xavier". */
  init: Init;
  /** Default "auto" (the reader's system setting). */
  theme: AttnLensTheme;
  /** Colour map of the weights. Default "viridis". */
  colormap: AttnLensColormap;
  /** Hides the buttons (zoom, SVG, PNG, Open in demo); the readout stays. Attribute `no-toolbar`. */
  noToolbar: boolean;
  /**
   * Each computation writes its numbers into the previous figure's arrays instead of new ones
   * (explain's `into`): several ms less per mode at 512 tokens in Chromium, but an `explanation`
   * or render-event `figure` read earlier then changes with the next edit (copy what you keep).
   * Default false. Attribute `recycle`.
   */
  recycle: boolean;
  /** Where "Open in demo" links to; the link is shown only when set. Attribute `demo-href`. */
  demoHref: string | undefined;
  /** Text under the figure (also in exports). */
  caption: string | undefined;
  /** A title above the figure (also in exports). Attribute `figure-title`. */
  figureTitle: string | undefined;
  /** The accessible name of the figure (its title otherwise). */
  label: string | undefined;
  /** The validated state the attributes describe, and a sentence for each invalid one. */
  readonly figureState: { state: AttnLensState; problems: string[] };
  /** The last computation, or null before the first one. */
  readonly explanation: AttnLensFigure | null;
  /** The weights shown from src, data, openFiles() or a model, or null (the first panel's). */
  readonly attention: AttnLensAttention | null;
  /**
   * What each panel shows from a file or a model: one, or two side by side (model="attnlens" with
   * mode="compare": the causal model, then the encoder). Empty for random weights.
   */
  readonly panels: readonly AttnLensAttention[];
  /**
   * Shows files a reader picked or dropped: one attention file and optionally a tokens file (.txt or
   * *tokens*.json). Nothing is uploaded. Rejects with the message the figure shows.
   */
  openFiles(files: FileList | File[]): Promise<void>;
  /**
   * Shows a checkpoint a reader picked (GPT-2, BERT or DistilBERT): files named model.safetensors
   * and config.json, plus its tokenizer's (vocab.json and merges.txt for GPT-2; vocab.txt or
   * tokenizer.json for an encoder; others are ignored), or an object name ->
   * bytes or text. Nothing is uploaded. `model` then reads "custom". Rejects with the
   * AttnLensError the figure shows (BAD_FILE names what was found for another architecture).
   * With `keepOnError`, a checkpoint that cannot be loaded leaves the figure (and the model) as
   * they were instead, and only the rejection says why (the demo page shows it beside the picker).
   * The same files (names, sizes and times) picked again while shown, or after closeModel() or
   * another checkpoint put them away, are shown without loading them again (the last one put
   * away is kept; picking other files frees it).
   */
  openModel(
    files: FileList | File[] | Record<string, Uint8Array | ArrayBuffer | string>,
    options?: { onProgress?: (progress: AttnLensModelProgress) => void; keepOnError?: boolean },
  ): Promise<void>;
  /**
   * Puts away a checkpoint given to openModel() (kept for a second openModel() of the same files,
   * freed when other files are picked) and returns to model="random".
   */
  closeModel(): void;
  /** The current figure as a standalone SVG document. Throws before the first figure. */
  toSVG(): string;
  /** The current figure as a PNG image, `scale` (default 2) times its CSS size. */
  toPNG(scale?: number): Promise<Blob>;
  /** Resolves when pending attribute changes have been rendered. */
  readonly updateComplete: Promise<boolean>;

  addEventListener<K extends keyof AttnLensEventMap>(
    type: K,
    listener: (this: AttnLensElement, event: AttnLensEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof AttnLensEventMap>(
    type: K,
    listener: (this: AttnLensElement, event: AttnLensEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

export interface AttnLensEventMap extends HTMLElementEventMap {
  /** After each drawn figure (a computation, or a view, head, theme or zoom change); bubbles, composed. */
  "attn-lens-render": CustomEvent<AttnLensRenderDetail>;
  /** After each attn-lens-render, once the frame holding the figure is painted; bubbles, composed. */
  "attn-lens-painted": CustomEvent<AttnLensPaintedDetail>;
  /** When the reader picks a head or shows/hides one with the element's own buttons; bubbles, composed. */
  "attn-lens-change": CustomEvent<AttnLensChangeDetail>;
  /** When src, data or openFiles() has been read (or failed to); bubbles, composed. */
  "attn-lens-load": CustomEvent<AttnLensLoadDetail>;
  /** While a model loads; bubbles, composed. */
  "attn-lens-model-progress": CustomEvent<AttnLensModelProgress>;
  /** When a model is ready (error null) or failed to load; bubbles, composed. */
  "attn-lens-model": CustomEvent<AttnLensModelDetail>;
}

/** "fetch": model.safetensors downloading; "copy", "parse", "done": the library loading it. */
export interface AttnLensModelProgress {
  phase: "fetch" | "copy" | "parse" | "done";
  bytes: number;
  totalBytes: number;
}

export interface AttnLensModelDetail {
  name: string | null;
  config: { layers: number; heads: number; dModel: number; context: number; vocabSize: number } | null;
  /** Each model shown (two for the trained models side by side). */
  models: { name: string; config: AttnLensModelDetail["config"] }[];
  /** The files of a picked folder that were not read (README.md, MODEL.md, generation_config.json...). */
  ignored: string[];
  error: (Error & { code?: string }) | null;
}

/** One measurement of the training run (every 25 steps), as drawn by <attn-lens-train>. */
export interface AttnLensTrainReport {
  step: number;
  /** Training tokens seen so far. */
  tokens: number;
  /** Seconds spent training (this page's, plus a snapshot's if one was loaded). */
  seconds: number;
  /** The last training batch's loss (nats per token). */
  loss: number;
  /** The probe's loss on the first and on the second copy of its spans (nats per token). */
  first: number;
  second: number;
  /** Per layer, per head: the induction and previous-token scores on the probe. */
  induction: number[][];
  previous: number[][];
  bestInduction: number;
  bestPrevious: number;
  tokensPerSecond: number;
  /** Seconds to the run's last step at this speed (NaN before the first timed step). */
  eta: number;
  /** The vocabulary size (chance loss is ln vocab). */
  vocab: number;
  /** The run's last step (what `eta` counts down to). */
  totalSteps: number;
}

export interface AttnLensTrainReportDetail {
  report: AttnLensTrainReport;
  running: boolean;
  /** An induction head formed: induction score >= 0.4 and second-copy loss under a third of the first's. */
  formed: boolean;
  /** The second copy's loss is under a third of the first's. */
  copies: boolean;
}

/**
 * <attn-lens-train>: trains a 2-layer transformer on repeated random spans in a Web Worker and
 * draws the loss on each copy, the heads' scores and the attention grid as it goes.
 */
export declare class AttnLensTrainElement extends HTMLElement {
  /** A whole number from 0 to 2^31 - 1 (attribute `seed`; default "1"). */
  seed: string;
  /** "32" or "64" (attribute `d-model`; default "32"). */
  dModel: string;
  /** The peak learning rate, above 0 and at most 0.1 (attribute `lr`; default "0.003"). */
  lr: string;
  /** Folder URL of the "Skip ahead" run, relative to the page; default: train-snapshot/ beside element.js. */
  snapshot: string | undefined;
  /** URL of the worker script, relative to the page; default: element-train-worker.js beside element.js. */
  workerSrc: string | undefined;
  theme: string | undefined;
  /** Every report so far, oldest first. */
  readonly history: AttnLensTrainReport[];
  readonly running: boolean;
  /** Trains until paused or the run's last step. */
  start(): void;
  /** Stops after the chunk of steps under way (at most 25 steps). */
  pause(): void;
  /** A new model with the current settings; false (and an error event) if a setting is invalid. */
  reset(): boolean;
  /** Loads the saved run at its last step, with its curve; start() goes on from it. */
  skipAhead(): void;
  readonly updateComplete: Promise<boolean>;
  addEventListener<K extends keyof AttnLensTrainEventMap>(
    type: K,
    listener: (this: AttnLensTrainElement, event: AttnLensTrainEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

export interface AttnLensTrainEventMap extends HTMLElementEventMap {
  /** After each report of the run (every 25 steps, and after a reset or a skip); bubbles, composed. */
  "attn-lens-train-report": CustomEvent<AttnLensTrainReportDetail>;
  /** A setting was invalid, or the worker or the snapshot failed; bubbles, composed. */
  "attn-lens-train-error": CustomEvent<{ message: string }>;
}

/** Registers the training element under `tagName` unless that name is taken. */
export declare function defineAttnLensTrain(tagName?: string, registry?: CustomElementRegistry): typeof AttnLensTrainElement;

/** Registers the element under `tagName` unless that name is taken. */
export declare function defineAttnLens(tagName?: string, registry?: CustomElementRegistry): typeof AttnLensElement;

/** Fetches the views the element loads on demand (PCA, every step), e.g. when the page is idle. */
export declare function preloadViews(): Promise<unknown[]>;

declare global {
  interface HTMLElementTagNameMap {
    "attn-lens": AttnLensElement;
    "attn-lens-train": AttnLensTrainElement;
  }
  interface HTMLElementEventMap {
    "attn-lens-render": CustomEvent<AttnLensRenderDetail>;
    "attn-lens-painted": CustomEvent<AttnLensPaintedDetail>;
    "attn-lens-change": CustomEvent<AttnLensChangeDetail>;
    "attn-lens-load": CustomEvent<AttnLensLoadDetail>;
    "attn-lens-model-progress": CustomEvent<AttnLensModelProgress>;
    "attn-lens-model": CustomEvent<AttnLensModelDetail>;
    "attn-lens-train-report": CustomEvent<AttnLensTrainReportDetail>;
    "attn-lens-train-error": CustomEvent<{ message: string }>;
  }
}
