// <attn-lens>: a live, deterministic attention figure for blog posts and the demo page.
// The class lives here; registration is in define.js (as github/relative-time-element does).
import { LitElement, css, html } from "lit";
import { guard } from "lit/directives/guard.js";
import { COMPUTE_KEYS, DEFAULTS, normalizeState, stateToParams } from "../state.js";
import { computeFigure, loadLens, MAX_TOKENS } from "../lens.js";
import { headColor, paletteFor, rgbOf, weightRgb } from "../theme.js";
import { download, figureToSvg, svgToPng } from "../export.js";
import { heatmapView } from "../views/heatmap.js";
import { linesView } from "../views/lines.js";
import { pcaView } from "../views/pca.js";
import { stepsView } from "../views/steps.js";

// Figures below the fold are computed when they come near the viewport (one shared observer),
// and figures are computed one per animation frame, so a post with many stays smooth.
const pending = new Set();
let frameRequested = false;
function schedule(element) {
  pending.add(element);
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(function next() {
    const [first] = pending;
    if (first) {
      pending.delete(first);
      first._computeNow();
    }
    if (pending.size) requestAnimationFrame(next);
    else frameRequested = false;
  });
}
let observer;
function observe(element) {
  if (typeof IntersectionObserver !== "function") {
    element._onVisible();
    return;
  }
  observer ??= new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        entry.target._onVisible();
      }
    },
    { rootMargin: "400px 0px" },
  );
  observer.observe(element);
}

const TITLES = { causal: "Causal attention", full: "Full attention" };

export class AttnLensElement extends LitElement {
  static properties = {
    sentence: { type: String, reflect: true },
    mode: { type: String, reflect: true },
    view: { type: String, reflect: true },
    heads: { type: String, reflect: true },
    head: { type: String, reflect: true },
    dim: { type: String, reflect: true },
    seed: { type: String, reflect: true },
    positional: { type: String, reflect: true },
    init: { type: String, reflect: true },
    theme: { type: String, reflect: true },
    noToolbar: { type: Boolean, attribute: "no-toolbar", reflect: true },
    demoHref: { type: String, attribute: "demo-href" },
    _figure: { state: true },
    _error: { state: true },
    _focus: { state: true },
    _hidden: { state: true },
    _readout: { state: true },
  };

  static styles = css`
    :host {
      display: block;
      color: var(--attn-lens-fg, #1d232b);
      background: var(--attn-lens-bg, #fff);
      font:
        14px/1.4 system-ui,
        -apple-system,
        "Segoe UI",
        sans-serif;
      border-radius: 8px;
      min-height: 120px;
    }
    :host([data-theme="dark"]) {
      color: var(--attn-lens-fg, #e6e9ee);
      background: var(--attn-lens-bg, #14181e);
    }
    .toolbar {
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
      padding: 6px 8px;
      font-size: 12px;
    }
    .toolbar .readout {
      flex: 1 1 auto;
      min-width: 8em;
      opacity: 0.85;
      font-variant-numeric: tabular-nums;
    }
    button,
    a.button {
      font: inherit;
      font-size: 12px;
      color: inherit;
      background: transparent;
      border: 1px solid currentColor;
      border-radius: 4px;
      padding: 2px 8px;
      cursor: pointer;
      text-decoration: none;
      opacity: 0.85;
    }
    button:hover,
    a.button:hover,
    button:focus-visible {
      opacity: 1;
      outline: 2px solid #3b5bdb;
      outline-offset: 1px;
    }
    button[aria-pressed="true"] {
      background: rgba(59, 91, 219, 0.18);
    }
    .figures {
      display: flex;
      flex-wrap: wrap;
      gap: 16px;
      padding: 4px 8px 8px;
      overflow-x: auto;
    }
    .figures > div {
      flex: 1 1 320px;
      min-width: 0;
    }
    svg.figure {
      display: block;
      max-width: 100%;
      height: auto;
    }
    .heads {
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      padding: 0 8px 8px;
      align-items: center;
      font-size: 12px;
    }
    .heads canvas {
      display: block;
      width: 48px;
      height: 48px;
      image-rendering: pixelated;
    }
    .heads button {
      display: flex;
      flex-direction: column;
      align-items: center;
      gap: 2px;
      padding: 3px;
    }
    .message {
      padding: 8px 12px;
      font-size: 13px;
    }
    .message.warning {
      color: #b35c00;
    }
    .message.error {
      color: #c92a2a;
    }
    .placeholder {
      padding: 24px 12px;
      opacity: 0.6;
    }
    .swatch {
      display: inline-block;
      width: 10px;
      height: 10px;
      border-radius: 2px;
    }
  `;

  constructor() {
    super();
    this.noToolbar = false;
    this._figure = null;
    this._error = null;
    this._focus = null;
    this._hidden = [];
    this._readout = "";
    this._visible = false;
    this._lens = null;
    this._computedKey = null;
    this._renderStart = 0;
    this._onScheme = () => this.requestUpdate();
  }

  /** The validated state these attributes describe, and what was wrong with them. */
  get figureState() {
    const raw = {};
    for (const key of Object.keys(DEFAULTS)) if (this[key] !== undefined && this[key] !== null) raw[key] = this[key];
    return normalizeState(raw);
  }

  /** The last computation: { causal?, full?, totalTokens, truncated } or { empty: true }. */
  get explanation() {
    return this._figure;
  }

  connectedCallback() {
    super.connectedCallback();
    this._scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
    this._scheme?.addEventListener("change", this._onScheme);
    observe(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._scheme?.removeEventListener("change", this._onScheme);
    pending.delete(this);
  }

  _onVisible() {
    this._visible = true;
    this.requestUpdate();
  }

  willUpdate() {
    this._state = this.figureState;
    const { state } = this._state;
    const key = JSON.stringify(COMPUTE_KEYS.map((k) => state[k]));
    if (this._visible && key !== this._computedKey) {
      this._computedKey = key;
      schedule(this);
    }
    this.dataset.theme = paletteFor(state.theme).name;
  }

  async _computeNow() {
    const started = performance.now();
    try {
      this._lens ??= await loadLens();
      const { state } = this.figureState;
      this._figure = { ...computeFigure(this._lens, state), state };
      this._error = null;
      if (this._hidden.length !== state.heads) this._hidden = Array(state.heads).fill(false);
    } catch (error) {
      this._figure = null;
      this._error = error.message;
    }
    this._renderStart = started;
  }

  updated() {
    this._drawThumbnails();
    if (this._renderStart) {
      const ms = performance.now() - this._renderStart;
      this._renderStart = 0;
      this.dispatchEvent(
        new CustomEvent("attn-lens-render", {
          bubbles: true,
          composed: true,
          detail: { ms, figure: this._figure, error: this._error },
        }),
      );
    }
  }

  _setHead(head) {
    this.head = String(head);
    this.dispatchEvent(new CustomEvent("attn-lens-change", { bubbles: true, composed: true, detail: { head: this.head } }));
  }

  _toggleHead(h) {
    this._hidden = this._hidden.map((hidden, i) => (i === h ? !hidden : hidden));
  }

  _onPointer(event) {
    const d = event.target.dataset ?? {};
    const figure = this._figure;
    const ex = figure && (figure.causal ?? figure.full);
    if (!ex) return;
    const tokens = ex.tokens.map((t) => t.text);
    if (d.w !== undefined && d.i !== undefined && d.j !== undefined) {
      const head = d.h !== undefined ? `head ${Number(d.h) + 1}: ` : "";
      this._readout =
        d.masked === "true"
          ? `${tokens[d.i]} → ${tokens[d.j]}: masked`
          : `${head}${tokens[d.i]} → ${tokens[d.j]}: ${Number(d.w).toFixed(4)}`;
    } else if (d.v !== undefined) {
      this._readout = `${d.stage} [${d.r}, ${d.c}] = ${d.v}`;
    }
    if (event.target.classList?.contains("query")) this._focus = Number(d.i);
  }

  _svgElements() {
    return [...this.renderRoot.querySelectorAll("svg.figure")];
  }

  /** The current figure as a standalone SVG document (text). */
  toSVG() {
    const svgs = this._svgElements();
    if (!svgs.length) throw new Error("attn-lens: there is no figure to export yet");
    return figureToSvg(svgs);
  }

  /** The current figure as a PNG Blob (2x). */
  toPNG(scale = 2) {
    return svgToPng(this.toSVG(), scale);
  }

  _demoLink() {
    const { state } = this._state;
    const url = new URL(this.demoHref, document.baseURI);
    url.search = stateToParams(state).toString();
    return url.href;
  }

  _renderFigure(ex, mode, state, palette) {
    const tokens = ex.tokens.map((t) => t.text);
    const L = tokens.length;
    const H = state.heads;
    const head = state.head;
    const headName = head === "mean" ? `mean of ${H} head${H > 1 ? "s" : ""}` : `head ${head + 1} of ${H}`;
    const title = `${TITLES[mode]}, ${headName}`;
    if (state.view === "heatmap") {
      const matrix = head === "mean" ? ex.meanWeights.data : ex.weights.data.subarray(head * L * L, (head + 1) * L * L);
      return heatmapView({ tokens, matrix, mask: ex.trace.mask.data, palette, title });
    }
    if (state.view === "lines") {
      const visible = this._hidden.length === H ? this._hidden.map((h, i) => !h && (head === "mean" || head === i)) : Array(H).fill(true);
      return linesView({
        tokens,
        weights: ex.weights.data,
        visible,
        focus: this._focus,
        palette,
        title: `${TITLES[mode]}, ${visible.filter(Boolean).length} of ${H} heads`,
      });
    }
    if (state.view === "pca") {
      return pcaView({
        tokens,
        original: ex.pca.original.data,
        contextual: ex.pca.contextual.data,
        explained: ex.pca.explained,
        palette,
        title: `${TITLES[mode]}: words before and after context`,
      });
    }
    return stepsView({
      ex,
      head: head === "mean" ? 0 : head,
      palette,
      title: `${TITLES[mode]}, every step${head === "mean" && H > 1 ? " (head 1; pick a head to see another)" : ""}`,
    });
  }

  _renderHeads(ex, state) {
    if (state.heads < 2 || state.view === "pca") return "";
    const choices = ["mean", ...Array.from({ length: state.heads }, (_, h) => h)];
    if (state.view === "lines") {
      return html`<div class="heads" part="heads" role="group" aria-label="Heads to draw">
        ${choices
          .slice(1)
          .map(
            (h) =>
              html`<button aria-pressed=${String(!this._hidden[h])} @click=${() => this._toggleHead(h)} title="Show or hide head ${h + 1}">
                <span class="swatch" style="background:${headColor(h)}"></span>head ${h + 1}
              </button>`,
          )}
      </div>`;
    }
    return html`<div class="heads" part="heads" role="group" aria-label="Choose a head">
      ${choices.map(
        (h) =>
          html`<button
            aria-pressed=${String(state.head === h)}
            @click=${() => this._setHead(h)}
            title=${h === "mean" ? "Mean of all heads" : `Head ${h + 1}`}
          >
            <canvas width="48" height="48" data-head=${h}></canvas>${h === "mean" ? "mean" : `head ${h + 1}`}
          </button>`,
      )}
    </div>`;
  }

  _drawThumbnails() {
    const figure = this._figure;
    const ex = figure && (figure.causal ?? figure.full);
    if (!ex) return;
    const L = ex.tokens.length;
    const palette = paletteFor(this._state.state.theme);
    const masked = rgbOf(palette.maskedBackground);
    for (const canvas of this.renderRoot.querySelectorAll("canvas[data-head]")) {
      // A thumbnail is drawn once per computation and theme, not on every hover update.
      if (canvas.drawnFor === ex && canvas.drawnTheme === palette.name) continue;
      canvas.drawnFor = ex;
      canvas.drawnTheme = palette.name;
      const head = canvas.dataset.head;
      const data = head === "mean" ? ex.meanWeights.data : ex.weights.data.subarray(Number(head) * L * L, (Number(head) + 1) * L * L);
      const context = canvas.getContext("2d");
      const image = context.createImageData(L, L);
      for (let k = 0; k < L * L; k++) {
        const [r, g, b] = ex.trace.mask.data[k] === -Infinity ? masked : weightRgb[Math.round(Math.min(1, Math.max(0, data[k])) * 255)];
        image.data.set([r, g, b, 255], k * 4);
      }
      canvas.width = L;
      canvas.height = L;
      context.putImageData(image, 0, 0);
    }
  }

  firstUpdated() {
    this.renderRoot.addEventListener("pointerover", (e) => this._onPointer(e));
    this.renderRoot.addEventListener(
      "pointerleave",
      () => {
        this._focus = null;
        this._readout = "";
      },
      true,
    );
  }

  render() {
    // The figures are rebuilt only when what they draw changes; a hover that updates the readout
    // re-renders the toolbar alone (guard, below).
    const { state, problems } = this._state;
    const palette = paletteFor(state.theme);
    const figure = this._figure;
    const toolbar = this.noToolbar
      ? ""
      : html`<div class="toolbar" part="toolbar">
          <span class="readout" aria-live="polite">${this._readout || "Hover a cell for its exact value"}</span>
          <button
            @click=${() => download(this.toSVG(), `attnlens-${state.view}.svg`, "image/svg+xml")}
            ?disabled=${!figure || figure.empty}
          >
            SVG
          </button>
          <button @click=${async () => download(await this.toPNG(), `attnlens-${state.view}.png`)} ?disabled=${!figure || figure.empty}>
            PNG
          </button>
          ${this.demoHref ? html`<a class="button" href=${this._demoLink()} target="_blank" rel="noopener">Open in demo</a>` : ""}
        </div>`;
    const messages = problems.map((p) => html`<div class="message warning" part="message" role="status">${p}</div>`);
    if (this._error) {
      return html`${toolbar}${messages}
        <div class="message error" part="message" role="alert">${this._error}</div>`;
    }
    if (!figure)
      return html`${toolbar}${messages}
        <div class="placeholder" part="message">Computing attention…</div>`;
    if (figure.empty) {
      return html`${toolbar}${messages}
        <div class="message" part="message" role="status">Type a sentence to see its attention.</div>`;
    }
    // Until the next computation lands, draw what was computed: the modes and heads of the
    // state it was computed for, with the current drawing choices (view, head, theme).
    const drawn = { ...state, ...Object.fromEntries(COMPUTE_KEYS.map((k) => [k, figure.state[k]])) };
    if (drawn.head !== "mean" && drawn.head >= drawn.heads) drawn.head = "mean";
    const modes = drawn.mode === "compare" ? ["causal", "full"] : [drawn.mode];
    const truncated = figure.truncated
      ? html`<div class="message warning" part="message" role="status">
          Showing the first ${MAX_TOKENS} of ${figure.totalTokens} tokens.
        </div>`
      : "";
    const first = figure[modes[0]];
    return html`${toolbar}${messages}${truncated}
      <div class="figures" part="figure" @pointerleave=${() => (this._focus = null)}>
        ${guard([figure, JSON.stringify([drawn, palette.name, this._focus, this._hidden])], () =>
          modes.map((mode) => html`<div>${this._renderFigure(figure[mode], mode, drawn, palette)}</div>`),
        )}
      </div>
      ${this._renderHeads(first, drawn)}`;
  }
}
