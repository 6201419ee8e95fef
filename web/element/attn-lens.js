// <attn-lens>: a live, deterministic attention figure for blog posts and the demo page.
// The class lives here; registration is in define.js (as github/relative-time-element does).
// Lit renders the chrome (toolbar, messages, head buttons, the frames' boxes); the figures are
// canvases drawn by the views through Frame (frame.js), so hovering, the keyboard and scrolling
// repaint only what changed. SVG is written only for export.
import { LitElement, html, nothing } from "lit";
import { cache } from "lit/directives/cache.js";
import { COMPUTE_KEYS, DEFAULTS, normalizeState, parseHeadList, stateToParams } from "../state.js";
import { computeFigure, loadLens } from "../lens.js";
import { colorScale, headColor, paletteFor } from "../theme.js";
import { panelsOf, headName } from "../figure-data.js";
import { canvasPainter } from "../paint.js";
import { SvgPainter } from "../svg.js";
import { font, wrapText } from "../text.js";
import * as heatmapView from "../views/heatmap.js";
import * as linesView from "../views/lines.js";
import { Frame, NEAR } from "./frame.js";
import { describe } from "./describe.js";
import { estimateHeight } from "./estimate.js";
import { hostStyles } from "./host-styles.js";
import { attnLensStyles } from "./styles.js";

// The views a plain figure needs are in this module; PCA and every-step load when first shown.
const LAZY = { pca: () => import("../views/pca.js"), steps: () => import("../views/steps.js"), grid: () => import("../views/grid.js") };
const loaded = {};
const loading = {};
function loadView(name) {
  loading[name] ??= LAZY[name]().then((m) => (loaded[name] = m));
  return loading[name];
}
// Attention files: the parsers and the layers × heads grid, loaded when a figure shows a file or data.
let filesModules;
const loadFiles = () => (filesModules ??= Promise.all([import("../files/index.js"), loadView("grid")]).then(([files]) => files));
// Trained mode (a model computes the figure): loaded when a figure shows a model.
let trainedModule;
let trained;
const loadTrained = () => (trainedModule ??= Promise.all([import("./trained.js"), loadView("grid")]).then(([m]) => (trained = m)));
/** Views that need an explain() trace, which weights from a file do not have. */
const TRACE_VIEWS = { steps: "every-step", pca: "PCA" };
/** The head the every-step view shows (the first for "mean"). */
const stepsHead = (state) => Math.min(state.head === "mean" ? 0 : state.head, state.heads - 1);

/** Fetches the views loaded on demand (a page that offers every view calls this when idle). */
export const preloadViews = () => Promise.all(Object.keys(LAZY).map(loadView));

// Figures below the fold are computed when they come near the viewport (one shared observer).
// A figure's first computation waits for its own animation frame, so a post with many stays
// smooth; later ones (an edit) run at once unless the last one was slow.
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

/**
 * A computation slower than this moves the next one to a task of its own, after the input
 * events already queued, so fast typing on a long text computes once for several keys.
 */
const SLOW_COMPUTE_MS = 50;
const soon = (() => {
  const channel = new MessageChannel();
  const queue = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (callback) => {
    queue.push(callback);
    channel.port2.postMessage(0);
  };
})();
const PANEL_GAP = 16;
const MIN_PANEL_WIDTH = 300;
const ZOOMS = [1, 2, 4, 8, 16, 32];
/** Head thumbnails (40 px) of long sentences sample this many rows and columns. */
const THUMBNAIL_CELLS = 80;
const hoverNone = typeof matchMedia === "function" && matchMedia("(hover: none)").matches;

/** A short stable hash (FNV-1a) of a string, for export ids. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return (h >>> 0).toString(36);
}

export class AttnLensElement extends LitElement {
  static properties = {
    sentence: { type: String, reflect: true },
    mode: { type: String, reflect: true },
    view: { type: String, reflect: true },
    heads: { type: String, reflect: true },
    head: { type: String, reflect: true },
    hide: { type: String, reflect: true },
    dim: { type: String, reflect: true },
    seed: { type: String, reflect: true },
    positional: { type: String, reflect: true },
    init: { type: String, reflect: true },
    theme: { type: String, reflect: true },
    colormap: { type: String, reflect: true },
    noToolbar: { type: Boolean, attribute: "no-toolbar", reflect: true },
    // Each computation writes into the previous figure's arrays (explain's `into`) instead of new
    // ones: several ms less per mode at 512 tokens in Chromium, but an `explanation` (or render
    // event `figure`) read earlier then changes with the next edit. Off unless asked for.
    recycle: { type: Boolean },
    demoHref: { type: String, attribute: "demo-href" },
    caption: { type: String },
    figureTitle: { type: String, attribute: "figure-title" },
    label: { type: String },
    src: { type: String, reflect: true },
    tokensSrc: { type: String, attribute: "tokens-src", reflect: true },
    data: { attribute: false },
    layer: { type: String, reflect: true },
    model: { type: String, reflect: true },
    modelSrc: { type: String, attribute: "model-src", reflect: true },
    _loading: { state: true },
    _figure: { state: true },
    _error: { state: true },
    _width: { state: true },
    _zoom: { state: true },
    _describing: { state: true },
    _views: { state: true },
  };

  static styles = [hostStyles, attnLensStyles];

  constructor() {
    super();
    this.noToolbar = false;
    this.recycle = false;
    this._figure = null;
    this._panels = [];
    this._error = null;
    this._width = 0;
    this._zoom = 1;
    this._describing = false;
    this._views = 0;
    this._visible = false;
    this._lens = null;
    this._computedKey = null;
    this._generation = 0;
    this._loadGeneration = 0;
    this._loading = null;
    this._changeStart = 0;
    this._computeMs = 0;
    // Frame of each frame box; boxes of a view not shown are kept by Lit's cache() with their
    // canvases (a new canvas costs milliseconds to allocate), and their Frames with them.
    this._frames = new WeakMap();
    this._onScheme = () => this.requestUpdate();
    // Print shows every frame, also those never scrolled near (they are drawn when they come near).
    this._onPrint = () => {
      for (const frame of this._liveFrames()) frame.visibility(true);
    };
  }

  requestUpdate(name, oldValue, options) {
    // The time of the first change an update answers: the render event reports from here.
    if (!this._changeStart) this._changeStart = performance.now();
    super.requestUpdate(name, oldValue, options);
  }

  /** The validated state these attributes describe, and what was wrong with them. */
  get figureState() {
    const raw = {};
    for (const key of Object.keys(DEFAULTS)) if (this[key] !== undefined && this[key] !== null) raw[key] = this[key];
    // "custom" is what model reads after openModel(); it cannot be set as an attribute.
    if (raw.model === "custom" && this._picked) delete raw.model;
    if (!this._fileMode && !this._modelMode) return normalizeState(raw);
    // Weights from a file or a model: heads and layers are theirs; head, hide and layer are checked against them.
    const { head, hide, ...rest } = raw;
    const { state, problems } = normalizeState(rest);
    if (this._modelMode && state.mode !== "causal")
      problems.push(
        `The trained model is causal: it was trained with the mask, and without it its heads would show nothing it learned, so mode "${state.mode}" is offered with random weights only.`,
      );
    const data = this._figure?.file ? this._panels[0] : null;
    state.layer = 0;
    state.head = "mean";
    if (!data) return { state, problems };
    const [layers, heads] = data.weights.shape;
    state.heads = heads;
    const index = (text, n) => (/^\s*\d+\s*$/.test(String(text)) && Number(text) < n ? Number(text) : null);
    if (this.layer !== undefined && this.layer !== null) {
      const layer = index(this.layer, layers);
      if (layer === null) problems.push(`layer must be a layer from 0 to ${layers - 1}; got "${this.layer}"`);
      else state.layer = layer;
    }
    if (head !== undefined && head !== "mean") {
      const h = index(head, heads);
      if (h === null) problems.push(`head must be "mean" or a head from 0 to ${heads - 1}; got "${head}"`);
      else state.head = h;
    }
    state.hide = hide ? (parseHeadList(hide, heads) ?? []) : [];
    return { state, problems };
  }

  /** Whether a model computes the figure (model="attnlens", or a checkpoint given to openModel). */
  get _modelMode() {
    return !this._fileMode && (this.model === "attnlens" || (this.model === "custom" && Boolean(this._picked)));
  }

  /** Where the model comes from: { url } or { files }, and a key that changes with it. */
  _modelSource() {
    if (this.model === "custom") return { files: this._picked, key: this._picked };
    const url = new URL(this.modelSrc || trained.shippedModelUrl(), document.baseURI).href;
    return { url: url.endsWith("/") ? url : `${url}/`, key: url };
  }

  /**
   * Shows a GPT-2-family checkpoint a reader picked: `files` a FileList or File[] (model.safetensors,
   * config.json, vocab.json, merges.txt; others are ignored) or an object name -> bytes/text.
   * `model` then reads "custom". Resolves when the model is shown; rejects with the error also
   * shown in the figure. Progress: `options.onProgress` and attn-lens-model-progress events.
   */
  openModel(files, options = {}) {
    this._picked = files;
    this._pickedProgress = options.onProgress;
    this.model = "custom";
    this._modelLoad = null;
    return this._startModel();
  }

  /** Frees a checkpoint given to openModel() and returns to random weights. */
  closeModel() {
    if (this._picked) this._openedModel?.model.dispose();
    this._picked = null;
    this._openedModel = null;
    this._modelLoad = null;
    this.model = "random";
    this._figure = null;
    this._computedKey = null;
  }

  /** Loads the model of `model`/`model-src` (once per source); a newer source cancels an older one. */
  _startModel() {
    if (this._modelLoad) return this._modelLoad;
    const generation = ++this._loadGeneration;
    this._abort?.abort();
    const controller = (this._abort = new AbortController());
    this._figure = null;
    this._panels = [];
    this._error = null;
    this._openedModel = null;
    this._loading = this.model === "custom" ? "your checkpoint" : "the trained model";
    this.requestUpdate();
    const onProgress = (progress) => {
      if (generation !== this._loadGeneration) return;
      this._loading = trained.progressText(this.model === "custom" ? "your checkpoint" : "the trained model", progress);
      (this._pickedProgress && this.model === "custom" ? this._pickedProgress : null)?.(progress);
      this.dispatchEvent(new CustomEvent("attn-lens-model-progress", { bubbles: true, composed: true, detail: progress }));
    };
    const event = (detail) => this.dispatchEvent(new CustomEvent("attn-lens-model", { bubbles: true, composed: true, detail }));
    this._modelLoad = Promise.all([loadTrained(), this._lens ?? loadLens()])
      .then(([, lens]) => {
        this._lens = lens;
        const source = this._modelSource();
        this._modelKey = source.key;
        return trained.openModel(lens, source, { signal: controller.signal, onProgress });
      })
      .then(
        (opened) => {
          if (generation !== this._loadGeneration) return;
          this._openedModel = opened;
          this._loading = null;
          this._computedKey = null;
          this.requestUpdate();
          event({ name: opened.name, config: opened.model.config, error: null });
        },
        (error) => {
          if (generation !== this._loadGeneration || error.name === "AbortError") return;
          this._loading = null;
          this._error = error.message;
          this.requestUpdate();
          event({ name: null, config: null, error });
          throw error;
        },
      );
    return this._modelLoad;
  }

  /** Computes the figure of the sentence under the opened model. */
  _computeModel() {
    this._computeWith((state) => {
      const data = trained.modelFigure(this._openedModel, state.sentence);
      this._panels = data ? [data] : [];
      this._figure = data
        ? { file: true, model: true, state, totalTokens: data.totalTokens, truncated: data.totalTokens > data.tokens.length }
        : { empty: true };
    });
    this._state = this.figureState;
  }

  /** Whether the figure shows given weights (src, data or opened files) rather than computing them. */
  get _fileMode() {
    return Boolean(this.src) || (this.data !== undefined && this.data !== null) || Boolean(this._opened);
  }

  /** The weights shown from src, data or opened files (FigureData), or null. */
  get attention() {
    return this._figure?.file ? this._panels[0] : null;
  }

  /**
   * Shows attention from files a reader picked or dropped (File objects): one attention file,
   * and optionally a tokens file (.txt, or a JSON list named *tokens*.json). Resolves when shown;
   * rejects with the message also shown in the figure.
   */
  openFiles(files) {
    this._opened = [...files];
    return this._startLoad();
  }

  /** Starts reading src, data or the opened files; a newer call cancels an older one. */
  _startLoad() {
    this._abort?.abort();
    const generation = ++this._loadGeneration;
    this._figure = null;
    this._panels = [];
    this._error = null;
    this.requestUpdate();
    if (!this._fileMode) {
      this._loading = null;
      this._computedKey = null;
      return Promise.resolve();
    }
    const controller = (this._abort = new AbortController());
    const { signal } = controller;
    const given = this.data !== undefined && this.data !== null;
    const opened = this._opened;
    this._loading = given ? "data" : opened ? opened.map((f) => f.name).join(", ") : this.src;
    const read = async (files) => {
      if (given) return files.fromObject(this.data, "data");
      if (opened) return files.parsePicked(opened);
      const base = document.baseURI;
      const [main, side] = await Promise.all([
        files.fetchBytes(new URL(this.src, base), { signal }),
        this.tokensSrc ? files.fetchBytes(new URL(this.tokensSrc, base), { signal }) : null,
      ]);
      return files.parseAttentionFile(main.bytes, { name: main.name, tokens: side ? files.parseTokens(side.bytes, side.name) : undefined });
    };
    return loadFiles()
      .then(read)
      .then(
        (data) => {
          if (generation === this._loadGeneration) this._showData(data);
        },
        (error) => {
          if (generation !== this._loadGeneration || error.name === "AbortError") return;
          this._loading = null;
          this._error = error.message;
          this._loaded(null, error.message);
          throw error;
        },
      );
  }

  _showData(data) {
    this._loading = null;
    this._panels = [data];
    this._figure = { file: true, state: this._state?.state, totalTokens: data.tokens.length, truncated: false };
    this._generation++;
    this._computeMs = 0;
    this._computedSinceRender = true;
    this._error = null;
    this._loaded(data, null);
  }

  _loaded(data, error) {
    this.requestUpdate();
    this.dispatchEvent(new CustomEvent("attn-lens-load", { bubbles: true, composed: true, detail: { data, error } }));
  }

  /** The last computation: { causal?, full?, totalTokens, truncated, state } or { empty: true }, or null. */
  get explanation() {
    return this._figure;
  }

  connectedCallback() {
    super.connectedCallback();
    this._scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
    this._scheme?.addEventListener("change", this._onScheme);
    addEventListener("beforeprint", this._onPrint);
    if (typeof ResizeObserver === "function") {
      this._resize ??= new ResizeObserver(([entry]) => this._measure(entry.contentRect.width));
      this._resize.observe(this);
    }
    for (const frame of this._liveFrames()) this._observeFrame(frame.box);
    observe(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._scheme?.removeEventListener("change", this._onScheme);
    removeEventListener("beforeprint", this._onPrint);
    this._resize?.disconnect();
    this._frameObserver?.disconnect();
    this._frameObserver = null;
    pending.delete(this);
  }

  /** The width the figures may use: the element's content box less the figures' padding. */
  _measure(contentWidth) {
    if (contentWidth === undefined) {
      const style = getComputedStyle(this);
      contentWidth = this.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    }
    const width = Math.floor(contentWidth) - 16;
    if (width > 0 && width !== this._width) this._width = width;
  }

  _onVisible() {
    this._visible = true;
    this.requestUpdate();
  }

  willUpdate(changed) {
    if (!this._width) this._measure();
    if (changed.has("src") || changed.has("tokensSrc") || changed.has("data")) {
      this._opened = null;
      this._startLoad().catch(() => {});
    }
    if ((changed.has("model") || changed.has("modelSrc")) && this.model !== "custom") {
      if (this._picked) this.closeModel();
      this._modelLoad = null;
      this._openedModel = null;
      if (!this._modelMode && changed.get("model") && changed.get("model") !== "random") {
        // Back to random weights: drop the model's figure and compute again.
        ++this._loadGeneration;
        this._loading = null;
        this._figure = null;
        this._panels = [];
        this._error = null;
        this._computedKey = null;
      }
    }
    this._state = this.figureState;
    const { state } = this._state;
    const key = JSON.stringify(COMPUTE_KEYS.map((k) => state[k]));
    if (this._modelMode && this._visible) {
      if (!this._modelLoad) this._startModel().catch(() => {});
      else if (this._openedModel && state.sentence !== this._computedKey) {
        this._computedKey = state.sentence;
        this._computeModel();
      }
    } else if (
      !this._fileMode &&
      this._visible &&
      (state.view === "steps" ? `${key}/trace/${stepsHead(state)}` : key) !== this._computedKey &&
      !(state.view !== "steps" && this._computedKey?.startsWith(`${key}/trace/`))
    ) {
      // Only the every-step view needs the trace, and only the score stages of the head it shows
      // (a head switch there computes again); a figure computed with it serves every other view.
      this._traceHead = state.view === "steps" ? stepsHead(state) : undefined;
      this._computedKey = state.view === "steps" ? `${key}/trace/${this._traceHead}` : key;
      // An edit computes inside this update, so the figure changes in the same frame; the first
      // figure waits for its animation frame (one figure per frame on a page with many).
      if (!this._lens || !this._figure) schedule(this);
      else if (this._computeMs < SLOW_COMPUTE_MS) this._compute();
      else if (!this._deferred) {
        this._deferred = true;
        soon(() => {
          this._deferred = false;
          this._compute();
          this.requestUpdate();
        });
      }
    }
    const theme = paletteFor(state.theme).name;
    if (this.dataset.theme !== theme) this.dataset.theme = theme;
    if (LAZY[state.view] && !loaded[state.view])
      loadView(state.view).then(
        () => this._views++,
        (e) => (this._error = e.message),
      );
  }

  async _computeNow() {
    try {
      this._lens ??= await loadLens();
    } catch (error) {
      this._error = error.message;
      return;
    }
    this._compute();
    this.requestUpdate();
  }

  _compute() {
    this._computeWith((state) => {
      const trace = this._traceHead !== undefined;
      const into = this.recycle ? this._figure : undefined;
      this._figure = { ...computeFigure(this._lens, state, { trace, traceHead: this._traceHead, into }), state };
      this._panels = this._figure.empty ? [] : panelsOf(this._figure);
    });
  }

  /** Runs `compute(state)`, which sets the figure and its panels; an error empties them and is shown. */
  _computeWith(compute) {
    const started = performance.now();
    try {
      compute(this.figureState.state);
      this._error = null;
    } catch (error) {
      this._figure = null;
      this._panels = [];
      this._error = error.message;
    }
    // The first computation also warms the module up; only later ones predict the next one's cost.
    this._computeMs = this._generation++ ? performance.now() - started : 0;
    this._computedSinceRender = true;
  }

  _setHead(head) {
    this.head = String(head);
    this._changed();
  }

  /** Lines view: show or hide head h (a picked single head becomes the visible set). */
  _toggleHead(h, state) {
    const visible = this._visibleHeads(state);
    visible[h] = !visible[h];
    this.head = "mean";
    this.hide = visible.flatMap((on, k) => (on ? [] : [k + 1])).join(",");
    this._changed();
  }

  _changed(view = this._state.state.view) {
    const detail = { head: this.head ?? "mean", hide: this.hide ?? "", layer: this.layer ?? "0", view };
    this.dispatchEvent(new CustomEvent("attn-lens-change", { bubbles: true, composed: true, detail }));
  }

  /** A click in the layers × heads grid: that head, large (the grid view switches to the heatmap). */
  _pick(layer, head) {
    this.layer = String(layer);
    this.head = String(head);
    const view = this._state.state.view === "grid" ? "heatmap" : this._state.state.view;
    this.view = view;
    this._changed(view);
  }

  /** Heads the lines view draws: the picked head alone, or every head not hidden. */
  _visibleHeads(state) {
    return Array.from({ length: state.heads }, (_, h) => (state.head === "mean" ? !state.hide.includes(h) : state.head === h));
  }

  // ---- drawing -------------------------------------------------------------------------------

  /** The state the current figure shows: computed keys from its computation, the rest live. */
  _drawnState() {
    const { state } = this._state;
    if (this._figure?.file) return state;
    const drawn = { ...state, ...Object.fromEntries(COMPUTE_KEYS.map((k) => [k, this._figure.state[k]])) };
    if (drawn.head !== "mean" && drawn.head >= drawn.heads) drawn.head = "mean";
    drawn.hide = drawn.hide.filter((h) => h < drawn.heads);
    return drawn;
  }

  _panelWidth(count) {
    const width = Math.max(200, this._width || 600);
    return count > 1 && (width - PANEL_GAP) / count >= MIN_PANEL_WIDTH ? Math.floor((width - PANEL_GAP) / count) : width;
  }

  _title(data, state) {
    const H = state.heads;
    if (data.weights.shape[0] > 1)
      data = { ...data, title: `${data.title}, ${data.layerNames?.[state.layer] ?? `layer ${state.layer + 1}`}` };
    if (state.view === "lines") {
      const shown = this._visibleHeads(state).filter(Boolean).length;
      return `${data.title}, ${shown} of ${H} head${H > 1 ? "s" : ""}`;
    }
    if (state.view === "pca") return `${data.title}: before and after context`;
    return `${data.title}, ${state.head === "mean" ? `mean of ${H} head${H > 1 ? "s" : ""}` : `${headName(data, state.head)} of ${H}`}`;
  }

  /** The view module and layout of frame `id` ("panel-k" or "pane-k"), or null. */
  /** The Frames of the boxes in the figure now. */
  _liveFrames() {
    return [...this.renderRoot.querySelectorAll(".frame")].map((box) => this._frames.get(box)).filter(Boolean);
  }

  /** Tells frames when they come near the viewport (frames far off screen are drawn then). */
  _observeFrame(box) {
    this._frameObserver ??= new IntersectionObserver(
      (entries) => {
        for (const e of entries) this._frames.get(e.target)?.visibility(e.isIntersecting);
      },
      { rootMargin: `${NEAR}px 0px` },
    );
    this._frameObserver.observe(box);
  }

  _layoutFor(id, state, palette, scale) {
    const [kind, index] = id.split("-");
    const k = Number(index);
    if (kind === "pane") {
      const pane = this._stepsModel?.panes[k];
      if (!pane) return null;
      const view = loaded.steps.matrixView;
      return { view, lay: view.layout({ pane, palette, scale, width: Math.max(120, (this._width || 600) - 16) }) };
    }
    const data = this._panels[k];
    if (!data) return null;
    const width = this._panelWidth(this._panels.length);
    const title = this._title(data, state);
    if (state.view === "heatmap")
      return {
        view: heatmapView,
        lay: heatmapView.layout({ data, layer: state.layer ?? 0, head: state.head, title, palette, scale, width, zoom: this._zoom }),
      };
    if (state.view === "lines")
      return {
        view: linesView,
        lay: linesView.layout({
          data,
          layer: state.layer ?? 0,
          visible: this._visibleHeads(state),
          title,
          palette,
          width,
          zoom: this._zoom,
        }),
      };
    const pca = loaded.pca;
    return { view: pca, lay: pca.layout({ data, domain: (this._pcaDomain ??= pca.sharedDomain(this._panels)), title, palette, width }) };
  }

  _drawFrames() {
    if (!this._figure || this._figure.empty) return false;
    const state = this._drawnState();
    const palette = paletteFor(state.theme);
    const scale = colorScale(state.colormap, palette);
    const common = JSON.stringify([
      this._generation,
      state.view,
      state.head,
      state.layer,
      state.hide,
      this._zoom,
      this._width,
      palette.name,
      state.colormap,
    ]);
    // Size every frame, then measure them all (one layout), then paint: no layout per frame.
    const changed = [];
    for (const box of this.renderRoot.querySelectorAll(".frame")) {
      let frame = this._frames.get(box);
      if (!frame) {
        frame = new Frame(box, this);
        this._frames.set(box, frame);
        this._observeFrame(box);
      }
      const made = this._layoutFor(box.dataset.frame, state, palette, scale);
      if (!made) continue;
      frame.group = box.dataset.frame.startsWith("panel") ? "panels" : box.dataset.frame;
      const previous = frame.lay;
      if (frame.prepare(made.view, made.lay, `${common}/${box.dataset.frame}`)) changed.push({ frame, previous });
    }
    for (const { frame } of changed) frame.measure();
    for (const { frame } of changed) frame.place();
    for (const { frame, previous } of changed) {
      const { box, lay } = frame;
      if (previous && previous.kind === lay.kind && this._zoomChanged) {
        box.scrollLeft = ((frame.sx + frame.w / 2) / previous.fullW) * lay.fullW - frame.w / 2;
        box.scrollTop = ((frame.sy + frame.h / 2) / previous.fullH) * lay.fullH - frame.h / 2;
        frame.readScroll();
      }
      frame.paint();
    }
    // A view brought back from the cache may need no drawing, but the figure changed all the same.
    const shown = `${this._generation}/${state.view}`;
    const drew = changed.length > 0 || shown !== this._shown;
    this._shown = shown;
    this._zoomChanged = false;
    this._drawThumbnails(state, palette, scale);
    return drew;
  }

  _drawThumbnails(state, palette, scale) {
    const data = this._panels[0];
    if (!data) return;
    const key = `${this._generation}/${palette.name}/${state.colormap}`;
    if (loaded.grid) this._panels.forEach((panel, k) => loaded.grid.paintGrid(this.renderRoot, panel, scale, palette, `${key}/${k}`, k));
    for (const canvas of this.renderRoot.querySelectorAll("canvas[data-head]:not([data-layer])")) {
      if (canvas.drawnFor === key) continue;
      canvas.drawnFor = key;
      const head = canvas.dataset.head === "mean" ? "mean" : Number(canvas.dataset.head);
      const p = canvasPainter(canvas, 40, 40, { scale: 2 });
      p.image(0, 0, 40, 40, heatmapView.weightBitmap(data, 0, head, scale, palette, THUMBNAIL_CELLS));
    }
  }

  updated() {
    let drew = false;
    try {
      drew = this._drawFrames();
    } catch (error) {
      this._error = `attn-lens could not draw this figure: ${error.message}`;
      this.requestUpdate();
    }
    this._showReadout();
    this._updateZoomButton();
    const settled = drew || this._error || this._figure?.empty;
    // A change whose figure is still to come (a computation in its own task, a view loading)
    // keeps its start time, so the render event counts from the change itself.
    const waiting =
      this._deferred || this._loading || pending.has(this) || (LAZY[this._state.state.view] && !loaded[this._state.state.view]);
    if (!settled && waiting) return;
    if (settled && this._changeStart) {
      const ms = performance.now() - this._changeStart;
      this.dispatchEvent(
        new CustomEvent("attn-lens-render", {
          bubbles: true,
          composed: true,
          detail: { ms, computeMs: this._computedSinceRender ? this._computeMs : 0, figure: this._figure, error: this._error },
        }),
      );
      this._computedSinceRender = false;
    }
    this._changeStart = 0;
  }

  // ---- hover, touch and keyboard ---------------------------------------------------------------

  /** Called by a Frame: show `focus` in its group (both panels side by side), the readout and a tip. */
  focusChanged(source, focus, pointer) {
    for (const frame of this._liveFrames()) {
      const same = frame.group === source.group;
      if (same) frame.setFocus(focus);
      else if (frame.focus) frame.setFocus(null);
    }
    this._showReadout(pointer);
  }

  /** Scrolling one panel scrolls the panels beside it to the same place. */
  scrolled(source) {
    if (source.group !== "panels") return;
    for (const frame of this._liveFrames()) {
      if (frame === source || frame.group !== "panels") continue;
      if (frame.sx !== source.sx) frame.box.scrollLeft = source.sx;
      if (frame.sy !== source.sy) frame.box.scrollTop = source.sy;
    }
  }

  _hint() {
    const view = this._state?.state.view;
    if (!this._figure || this._figure.empty || this._error) return "";
    const act = hoverNone ? "Tap" : "Hover";
    if (view === "lines") return `${act} a word to see its lines; arrow keys work too`;
    if (view === "pca") return `${act} a point to see the word and how far context moved it`;
    if (view === "steps") return `${act} a number for its exact value; arrow keys work too`;
    if (view === "grid") return "Click a head to see it large";
    return `${act} a cell to read its weight; arrow keys work too`;
  }

  _showReadout(pointer) {
    const readout = this.renderRoot.querySelector(".readout");
    const tip = this.renderRoot.querySelector(".tip");
    if (!readout) return;
    const focused = this._liveFrames().filter((f) => f.focus);
    const text =
      focused.length > 1
        ? focused.map((f) => `${f.lay.data?.mode === "full" ? "full" : "causal"}: ${f.readout()}`).join(" · ")
        : (focused[0]?.readout() ?? "");
    const shown = text || this._hint();
    if (readout.textContent !== shown) readout.textContent = shown;
    if (!tip) return;
    if (text && pointer) {
      tip.hidden = false;
      if (tip.textContent !== text) tip.textContent = text;
      const x = Math.min(pointer.x + 14, innerWidth - 20 - Math.min(tip.offsetWidth, innerWidth * 0.9));
      tip.style.left = `${Math.max(4, x)}px`;
      tip.style.top = `${pointer.y + 18}px`;
    } else if (!text && !tip.hidden) tip.hidden = true;
  }

  // ---- export -----------------------------------------------------------------------------------

  /** What the export draws: { width, height, draw(p), title } for the current view. */
  _exportScene() {
    if (!this._figure || this._figure.empty) throw new Error("attn-lens: there is no figure to export yet");
    const state = this._drawnState();
    const palette = paletteFor(state.theme);
    const scale = colorScale(state.colormap, palette);
    let body;
    if (this._figure.file && TRACE_VIEWS[state.view])
      throw new Error(`attn-lens: the ${TRACE_VIEWS[state.view]} view has no figure for weights from a file`);
    if (state.view === "grid") {
      if (!loaded.grid) throw new Error("attn-lens: the grid view is still loading");
      body = loaded.grid.gridScene(this._panels[0], palette, scale, Math.max(360, this._width));
    } else if (state.view === "steps") {
      if (!this._stepsModel) throw new Error("attn-lens: the every-step view is still loading");
      body = loaded.steps.stepsExport(this._stepsModel, palette, scale, Math.max(720, this._width));
    } else {
      const made = this._panels.map((_, k) => this._layoutFor(`panel-${k}`, state, palette, scale));
      const width = made.reduce((w, m) => w + m.lay.fullW, 0) + PANEL_GAP * (made.length - 1);
      const height = Math.max(...made.map((m) => m.lay.fullH));
      body = {
        width,
        height,
        draw(p) {
          p.rect(0, 0, width, height, palette.background);
          let x = 0;
          for (const m of made) {
            p.save();
            p.translate(x, 0);
            m.view.draw(p, m.lay);
            p.restore();
            x += m.lay.fullW + PANEL_GAP;
          }
        },
      };
    }
    const titleLines = this.figureTitle ? wrapText(this.figureTitle, body.width - 16, font(15, 600)) : [];
    const captionLines = this.caption ? wrapText(this.caption, body.width - 16, font(13)) : [];
    const top = titleLines.length ? titleLines.length * 20 + 8 : 0;
    const height = top + body.height + (captionLines.length ? captionLines.length * 18 + 8 : 0);
    return {
      width: body.width,
      height,
      title: this.label || this.figureTitle || this._panels.map((d) => this._title(d, state)).join("; "),
      draw(p) {
        p.rect(0, 0, body.width, height, palette.background);
        titleLines.forEach((line, k) => p.text(line, 8, 20 + 20 * k, { size: 15, weight: 600, fill: palette.foreground }));
        p.save();
        p.translate(0, top);
        body.draw(p);
        p.restore();
        captionLines.forEach((line, k) => p.text(line, 8, top + body.height + 18 + 18 * k, { size: 13, fill: palette.muted }));
      },
    };
  }

  /** The current figure as a standalone SVG document (text). */
  toSVG() {
    const scene = this._exportScene();
    const state = this._drawnState();
    const painter = new SvgPainter(`attnlens-${hash(JSON.stringify([state, this._zoom, this.caption, this.figureTitle]))}`);
    scene.draw(painter);
    return painter.document(scene.width, scene.height, { title: scene.title });
  }

  /** The current figure as a PNG Blob, `scale` times its CSS size (at most 64 megapixels). */
  toPNG(scale = 2) {
    try {
      const scene = this._exportScene();
      const canvas = document.createElement("canvas");
      scene.draw(canvasPainter(canvas, scene.width, scene.height, { scale, maxPixels: 64e6 }));
      return new Promise((done, fail) =>
        canvas.toBlob((png) => (png ? done(png) : fail(new Error("attn-lens: PNG encoding failed"))), "image/png"),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async _download(kind) {
    const { state } = this._state;
    const blob = kind === "svg" ? new Blob([this.toSVG()], { type: "image/svg+xml" }) : await this.toPNG();
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = `attnlens-${state.view}.${kind}`;
    this.renderRoot.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // ---- rendering --------------------------------------------------------------------------------

  _demoLink() {
    try {
      const url = new URL(this.demoHref, document.baseURI);
      url.search = stateToParams(this._state.state).params.toString();
      return { href: url.href };
    } catch {
      return { problem: `demo-href "${this.demoHref}" is not a valid URL, so the "Open in demo" link is left out` };
    }
  }

  _frame(id, label) {
    return html`<div class="frame" data-frame=${id} tabindex="0" role="application" aria-roledescription="figure" aria-label=${label}>
      <div class="sticky"><canvas class="figure" aria-hidden="true"></canvas><canvas class="overlay" aria-hidden="true"></canvas></div>
      <div class="spacer"></div>
    </div>`;
  }

  _toolbar(state, link) {
    const canZoom = (state.view === "heatmap" || state.view === "lines") && this._figure && !this._figure.empty;
    const ready = this._figure && !this._figure.empty;
    return html`<div class="toolbar" part="toolbar">
      <span class="readout" part="readout" role="status" aria-live="polite"></span>
      ${
        this.noToolbar
          ? nothing
          : html`${
                canZoom
                  ? html`<button aria-label="Zoom out" title="Zoom out" ?disabled=${this._zoom <= 1} @click=${() => this._zoomBy(-1)}>
                        −
                      </button>
                      <button class="zoom-in" aria-label="Zoom in" title="Zoom in (then scroll)" @click=${() => this._zoomBy(1)}>+</button>`
                  : nothing
              }
              <button @click=${() => this._download("svg")} ?disabled=${!ready}>SVG</button>
              <button @click=${() => this._download("png")} ?disabled=${!ready}>PNG</button>
              ${link?.href ? html`<a class="button" href=${link.href} target="_blank" rel="noopener">Open in demo</a>` : nothing}`
      }
    </div>`;
  }

  /** Zooming in stays possible while cells (or rows) are under 40 px; known once the frames are laid out. */
  _updateZoomButton() {
    const button = this.renderRoot.querySelector("button.zoom-in");
    if (!button) return;
    const frame = this._liveFrames().find((f) => f.group === "panels" && f.lay);
    const size = frame ? (frame.lay.kind === "heatmap" ? frame.lay.cell : frame.lay.row) : Infinity;
    const disabled = !(this._zoom < ZOOMS.at(-1) && size < 40);
    if (button.disabled !== disabled) button.disabled = disabled;
  }

  _zoomBy(step) {
    const k = Math.max(0, Math.min(ZOOMS.length - 1, ZOOMS.indexOf(this._zoom) + step));
    this._zoomChanged = ZOOMS[k] !== this._zoom;
    this._zoom = ZOOMS[k];
  }

  /** The layers × heads grid of panel k (the grid view), or the chooser under a file's heatmap or lines. */
  _renderGrid(state, k, big) {
    const data = this._panels[k];
    const selected = { layer: state.layer ?? 0, head: state.head };
    const label = this._panels.length > 1 ? data.title : "Layers and heads";
    return loaded.grid.gridTemplate({
      data,
      selected,
      width: this._width || 600,
      big,
      onPick: (l, h) => this._pick(l, h),
      label,
      panel: k,
    });
  }

  _renderHeads(state) {
    if (this._figure?.file) {
      const [layers, heads] = this._panels[0].weights.shape;
      if (state.view === "grid" || TRACE_VIEWS[state.view] || layers * heads < 2 || !loaded.grid) return nothing;
      return this._renderGrid(state, 0, false);
    }
    if (state.heads < 2 || state.view === "pca" || state.view === "grid") return nothing;
    if (state.view === "lines") {
      const visible = this._visibleHeads(state);
      return html`<div class="heads" part="heads" role="group" aria-label="Heads to draw">
        ${visible.map(
          (on, h) =>
            html`<button aria-pressed=${String(on)} @click=${() => this._toggleHead(h, state)} title="Show or hide head ${h + 1}">
              <span class="swatch" style="background:${headColor(h)}"></span>head ${h + 1}
            </button>`,
        )}
      </div>`;
    }
    const choices = ["mean", ...Array.from({ length: state.heads }, (_, h) => h)];
    return html`<div class="heads" part="heads" role="group" aria-label="Choose a head">
      ${choices.map(
        (h) =>
          html`<button
            aria-pressed=${String(state.head === h)}
            @click=${() => this._setHead(h)}
            title=${h === "mean" ? "Mean of all heads" : `Head ${h + 1}`}
          >
            <canvas width="40" height="40" data-head=${h} aria-hidden="true"></canvas>${h === "mean" ? "mean" : `head ${h + 1}`}
          </button>`,
      )}
    </div>`;
  }

  _renderBody(state) {
    if (LAZY[state.view] && !loaded[state.view]) {
      return html`<div class="placeholder" style="height:${this._reserve(state)}px">Loading the ${state.view} view…</div>`;
    }
    if (this._figure.file && TRACE_VIEWS[state.view])
      return html`<div class="message" part="message" role="status">
        The ${TRACE_VIEWS[state.view]} view shows the computation of one layer of random weights (queries, keys, scores, the vectors before
        and after attention), so it is not offered for ${this._figure.model ? "a trained model" : "weights from a file"}. The grid, heatmap
        and lines views show its weights.
      </div>`;
    if (state.view === "grid") return html`${this._panels.map((_, k) => this._renderGrid(state, k, true))}`;
    if (state.view === "steps") {
      if (!this._panels[0]?.explanation)
        return html`<div class="message" role="status">The every-step view needs the random-weights mode.</div>`;
      // A figure computed for another view (or head) has no trace of the head yet: its computation
      // with one is under way.
      const traced = this._panels[0].explanation.options.traceHead;
      if (!this._panels[0].explanation.trace || (traced !== undefined && traced !== stepsHead(state)))
        return html`<div class="placeholder" style="height:${this._reserve(state)}px">Computing every step…</div>`;
      const steps = loaded.steps;
      const key = `${this._generation}/${state.head}`;
      if (this._stepsKey !== key) {
        this._stepsKey = key;
        this._stepsModel = steps.stepsModel(this._panels, stepsHead(state));
      }
      return steps.stepsTemplate(this._stepsModel, (id, label) => this._frame(id, label));
    }
    if (this._pcaGeneration !== this._generation) {
      this._pcaGeneration = this._generation;
      this._pcaDomain = null;
    }
    const label = this.label || this.figureTitle || "";
    return html`<div class="panels">
      ${this._panels.map((data, k) => this._frame(`panel-${k}`, `${label ? `${label}: ` : ""}${this._title(data, state)}. ${this._hint()}`))}
    </div>`;
  }

  /** Height to hold for the figure before it is computed (no layout shift when it lands). */
  _reserve(state) {
    return estimateHeight(state, this._panelWidth(state.mode === "compare" ? 2 : 1), this._width || 600);
  }

  render() {
    const { state, problems } = this._state;
    const link = this.demoHref ? this._demoLink() : null;
    const notes = [...problems, ...(link?.problem ? [link.problem] : []), ...(this._figure?.file ? this._panels[0].warnings : [])];
    const messages = notes.map((p) => html`<div class="message warning" part="message" role="status">${p}</div>`);
    const title = this.figureTitle ? html`<div class="figure-title" part="title">${this.figureTitle}</div>` : nothing;
    const caption = this.caption ? html`<p class="caption" part="caption">${this.caption}</p>` : nothing;
    const tip = html`<div class="tip" part="tooltip" hidden></div>`;
    const figure = this._figure;
    if (this._error || !figure || figure.empty) {
      const body = this._error
        ? html`<div class="message error" part="message" role="alert">${this._error}</div>`
        : this._loading
          ? html`<div class="placeholder" part="message" role="status">Loading ${this._loading}…</div>`
          : !figure
            ? html`<div class="placeholder" part="message" style="height:${this._reserve(state)}px">Computing attention…</div>`
            : html`<div class="message" part="message" role="status">Type a sentence to see its attention.</div>`;
      return html`${this._toolbar(state, link)}${messages}${title}${body}${caption}${tip}`;
    }
    // Until the next computation lands, draw what was computed with the current drawing choices.
    const drawn = this._drawnState();
    const truncated = figure.truncated
      ? html`<div class="message warning" part="message" role="status">
          Showing the first ${this._panels[0].tokens.length} of ${figure.totalTokens} tokens
          (${figure.model ? "the model's context" : "the most the library explains at once"}).
        </div>`
      : nothing;
    const allHidden =
      drawn.view === "lines" && !this._visibleHeads(drawn).some(Boolean)
        ? html`<div class="message warning" part="message" role="status">Every head is hidden: pick a head below to draw its lines.</div>`
        : nothing;
    return html`${this._toolbar(drawn, link)}${messages}${truncated}${allHidden}${title}
      <div class="figures" part="figure">${cache(this._renderBody(drawn))}</div>
      ${this._renderHeads(drawn)}${figure.model && trained ? trained.predictionsTemplate(this._panels[0]) : nothing}${caption}
      <details class="describe" part="description" @toggle=${(e) => (this._describing = e.target.open)}>
        <summary>Describe this figure in text</summary>
        ${this._describing ? describe({ view: drawn.view, panels: this._panels, head: drawn.head, layer: drawn.layer ?? 0, stepsModel: this._stepsModel }) : nothing}
      </details>
      ${tip}`;
  }
}
