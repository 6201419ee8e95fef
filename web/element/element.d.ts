// Types for "attnlens/element": the <attn-lens> custom element.
import type { Explanation } from "./attnlens.js";

export type AttnLensMode = "causal" | "full" | "compare";
export type AttnLensView = "heatmap" | "lines" | "steps" | "pca";
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
  positional: "sinusoidal" | "none";
  init: "xavier" | "normal" | "identity";
  theme: AttnLensTheme;
  colormap: AttnLensColormap;
}

/** What the element last computed: one explain() result per mode shown. */
export type AttnLensFigure =
  | { empty: true; state: AttnLensState }
  | {
      empty?: undefined;
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
  /** A message when the figure could not be computed or drawn, else null. */
  error: string | null;
}

export interface AttnLensChangeDetail {
  /** The picked head: "mean" or a 0-based index (the `head` attribute's value). */
  head: string;
  /** The heads the lines view hides, 1-based, comma-separated (the `hide` attribute's value). */
  hide: string;
}

export declare class AttnLensElement extends HTMLElement {
  /** The sentence to explain. Default "The cat sat on the mat." */
  sentence: string;
  /** Causal attention, full attention, or both side by side. Default "causal". */
  mode: AttnLensMode;
  /** Default "heatmap". */
  view: AttnLensView;
  /** Number of heads, "1".."8". Default "4". */
  heads: string;
  /** "mean" or a 0-based head index "0".."heads-1" (the figure labels head "0" as head 1). Default "mean". */
  head: string;
  /** Heads the lines view hides: 1-based numbers, comma-separated, e.g. "2,4". Default "". */
  hide: string;
  /** d_model, the embedding size: a multiple of heads, at most 256. Default "64". */
  dim: string;
  /** Seed of the random weights, "0".."2147483647". Default "7". */
  seed: string;
  /** Default "sinusoidal". */
  positional: "sinusoidal" | "none";
  /** How the random weights are drawn. Default "xavier". */
  init: "xavier" | "normal" | "identity";
  /** Default "auto" (the reader's system setting). */
  theme: AttnLensTheme;
  /** Colour map of the weights. Default "viridis". */
  colormap: AttnLensColormap;
  /** Hides the buttons (zoom, SVG, PNG, Open in demo); the readout stays. Attribute `no-toolbar`. */
  noToolbar: boolean;
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
  /** When the reader picks a head or shows/hides one with the element's own buttons; bubbles, composed. */
  "attn-lens-change": CustomEvent<AttnLensChangeDetail>;
}

/** Registers the element under `tagName` unless that name is taken. */
export declare function defineAttnLens(tagName?: string, registry?: CustomElementRegistry): typeof AttnLensElement;

/** Fetches the views the element loads on demand (PCA, every step), e.g. when the page is idle. */
export declare function preloadViews(): Promise<unknown[]>;

declare global {
  interface HTMLElementTagNameMap {
    "attn-lens": AttnLensElement;
  }
  interface HTMLElementEventMap {
    "attn-lens-render": CustomEvent<AttnLensRenderDetail>;
    "attn-lens-change": CustomEvent<AttnLensChangeDetail>;
  }
}
