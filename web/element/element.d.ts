// Types for "attnlens/element": the <attn-lens> custom element.

export type AttnLensMode = "causal" | "full" | "compare";
export type AttnLensView = "heatmap" | "lines" | "steps" | "pca";

export declare class AttnLensElement extends HTMLElement {
  /** The sentence to explain. Default "The cat sat on the mat." */
  sentence: string;
  mode: AttnLensMode;
  view: AttnLensView;
  /** Number of heads, "1".."8". */
  heads: string;
  /** "mean" or a head number "0".."heads-1". */
  head: string;
  /** Model dimension, divisible by heads. */
  dim: string;
  seed: string;
  positional: "sinusoidal" | "none";
  init: "xavier" | "normal" | "identity";
  theme: "light" | "dark" | "auto";
  /** Hide the export toolbar. */
  noToolbar: boolean;
  /** Where "Open in demo" links to; the link is shown only when set. */
  demoHref: string | undefined;
  /** The current figure as a standalone SVG document. */
  toSVG(): string;
  /** The current figure as a PNG image. */
  toPNG(scale?: number): Promise<Blob>;
  /** Resolves when pending attribute changes have been rendered. */
  readonly updateComplete: Promise<boolean>;
}

/** Registers the element under `tagName` unless that name is taken. */
export declare function defineAttnLens(tagName?: string, registry?: CustomElementRegistry): typeof AttnLensElement;

declare global {
  interface HTMLElementTagNameMap {
    "attn-lens": AttnLensElement;
  }
}
