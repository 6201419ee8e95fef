// <attn-lens>: a live, deterministic attention figure for blog posts and the demo page.
// The class lives here; registration is in define.js (as github/relative-time-element does).
// Lit renders the chrome (toolbar, messages, head buttons, the frames' boxes); the figures are
// canvases drawn by the views through Frame (frame.js), so hovering, the keyboard and scrolling
// repaint only what changed. SVG is written only for export.
//
// What a view is and does comes from its entry in views/index.js; the figure comes from one of
// three sources (explain-source.js, file-source.js, model-source.js); layout.js lays out and
// paints the frames, toolbar.js holds the toolbar and readout, figure-export.js the SVG and PNG.
import { LitElement, html, nothing } from "lit";
import { cache } from "lit/directives/cache.js";
import { COMPUTE_KEYS, DEFAULTS, normalizeState, parseHeadList } from "../state.js";
import { headColor, paletteFor } from "../theme.js";
import { VIEWS, loadTexts, loadView, loadedView, viewNamed } from "../views/index.js";
import { NEAR } from "../paint.js";
import { estimateHeight } from "./estimate.js";
import { hostStyles } from "./host-styles.js";
import { attnLensStyles } from "./styles.js";
import { explainIfChanged, isScheduled, unschedule } from "./explain-source.js";
import { fileMode, startLoad } from "./file-source.js";
import { closeModel, modelChanged, modelMode, openModel, predictions, showModel } from "./model-source.js";
import { toPNG, toSVG } from "./figure-export.js";
import { drawFrames, hasTrace, panelTitle, panelWidth, prepared, visibleHeads } from "./layout.js";
import { demoLink, hint, showReadout, toolbarTemplate, updateZoomButton } from "./toolbar.js";

// The figure in words (views/describe.js), once a reader has opened a description.
let texts;

/** Fetches the module of every view (a page that offers every view calls this when idle). */
// A view that fails to preload is loaded again when it is shown (chunks.js): no error here.
export const preloadViews = () => Promise.all(VIEWS.map((v) => loadView(v.name).catch(() => null)));

// Figures below the fold are computed when they come near the viewport (one shared observer).
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
    specials: { type: String, reflect: true },
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
    // A next-token model writes this many tokens after the sentence once in view (trained.js).
    generate: { type: String },
    temperature: { type: String },
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
    // A figure under way in the model worker (trained.js, computeInWorker).
    this._workerBusy = false;
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
    // A picked or model-src checkpoint is causal or not as it was trained; mode only chooses
    // among the shipped models (model-source.js).
    if (this._modelMode && (this.model === "custom" || this.modelSrc) && this.mode && state.mode !== "causal")
      problems.push(`mode "${state.mode}" chooses among the shipped models; this model's attention is as it was trained.`);
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
    return modelMode(this);
  }

  /**
   * Shows a checkpoint a reader picked (any family the library loads): `files` a FileList or File[]
   * (model.safetensors, config.json and the family's tokenizer files: vocab.json + merges.txt,
   * vocab.txt or tokenizer.json; others are ignored) or an object name -> bytes/text.
   * `model` then reads "custom". Resolves when the model is shown; rejects with the error also
   * shown in the figure. Progress: `options.onProgress` and attn-lens-model-progress events.
   */
  openModel(files, options = {}) {
    return openModel(this, files, options);
  }

  /** Frees a checkpoint given to openModel() and returns to random weights. */
  closeModel() {
    closeModel(this);
  }

  /** Whether the figure shows given weights (src, data or opened files) rather than computing them. */
  get _fileMode() {
    return fileMode(this);
  }

  /** The weights shown from src, data, opened files or a model (FigureData), or null: the first panel's. */
  get attention() {
    return this._figure?.file ? this._panels[0] : null;
  }

  /** What each panel shows from a file or a model (two in compare mode); empty for random weights. */
  get panels() {
    return this._figure?.file ? [...this._panels] : [];
  }

  /**
   * Shows attention from files a reader picked or dropped (File objects): one attention file,
   * and optionally a tokens file (.txt, or a JSON list named *tokens*.json). Resolves when shown;
   * rejects with the message also shown in the figure.
   */
  openFiles(files) {
    this._opened = [...files];
    return startLoad(this);
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
    unschedule(this);
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
      startLoad(this).catch(() => {});
    }
    // With the shipped models, mode picks which are shown (the causal model, the encoder, or both).
    const shippedMode = changed.has("mode") && this.model === "attnlens" && !this.modelSrc;
    // (Not when a failed openModel() put back the model it replaced: model-source.js restored it whole.)
    if ((changed.has("model") || changed.has("modelSrc") || shippedMode) && this.model !== "custom" && !this._restored)
      modelChanged(this, changed);
    this._restored = false;
    // A part that failed to load (chunks.js) is tried again at the next change of an attribute
    // or property (not at the element's own updates, which would retry in a loop while offline).
    if (this._loadFailed && [...changed.keys()].some((key) => !String(key).startsWith("_"))) {
      if (this._error === this._loadFailed) this._error = null;
      this._loadFailed = null;
      if (this._modelLoadFailed) this._modelLoad = null;
      this._modelLoadFailed = false;
    }
    this._state = this.figureState;
    const { state } = this._state;
    if (this._modelMode && this._visible) showModel(this, state);
    else if (!this._fileMode && this._visible) explainIfChanged(this, state);
    const theme = paletteFor(state.theme).name;
    if (this.dataset.theme !== theme) this.dataset.theme = theme;
    if (!loadedView(state.view))
      loadView(state.view).then(
        () => this._views++,
        (e) => this._failedToLoad(e),
      );
  }

  /** Shows why a part of the element did not load; the next change tries again (chunks.js). */
  _failedToLoad(error) {
    this._error = this._loadFailed = error.message;
    this.requestUpdate();
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

  /** The swatches (lines view): show or hide head h (a picked single head becomes the visible set). */
  _toggleHead(h, state) {
    const visible = visibleHeads(state);
    visible[h] = !visible[h];
    this.head = "mean";
    this.hide = visible.flatMap((on, k) => (on ? [] : [k + 1])).join(",");
    this._changed();
  }

  _changed(view = this._state.state.view) {
    const detail = { head: this.head ?? "mean", hide: this.hide ?? "", layer: this.layer ?? "0", view };
    this.dispatchEvent(new CustomEvent("attn-lens-change", { bubbles: true, composed: true, detail }));
  }

  /**
   * A click in the layers × heads grid: that head, large. A view without a heads row shows every
   * head at once (the grid view), so the pick opens the heatmap.
   */
  _pick(layer, head) {
    this.layer = String(layer);
    this.head = String(head);
    const view = viewNamed(this._state.state.view).headsRow ? this._state.state.view : "heatmap";
    this.view = view;
    this._changed(view);
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

  updated() {
    let drew = false;
    try {
      drew = drawFrames(this);
    } catch (error) {
      this._error = `attn-lens could not draw this figure: ${error.message}`;
      this.requestUpdate();
    }
    showReadout(this);
    updateZoomButton(this);
    // (While the model worker computes, the figure, error or empty text shown is the last one's.)
    const settled = !this._workerBusy && (drew || this._error || this._figure?.empty);
    // A change whose figure is still to come (a computation in its own task, a view loading)
    // keeps its start time, so the render event counts from the change itself.
    const waiting = this._deferred || this._workerBusy || this._loading || isScheduled(this) || !loadedView(this._state.state.view);
    if (!settled && waiting) return;
    if (settled && this._changeStart) {
      const ms = performance.now() - this._changeStart;
      this.dispatchEvent(
        new CustomEvent("attn-lens-render", {
          bubbles: true,
          composed: true,
          detail: {
            ms,
            computeMs: this._computedSinceRender ? this._computeMs : 0,
            figure: this._figure,
            panels: this._figure?.file ? [...this._panels] : [],
            error: this._error,
          },
        }),
      );
      this._computedSinceRender = false;
      // The draw calls are issued; the reader sees the figure when the browser has painted the
      // frame that holds them: the task after the next animation frame (a lines figure
      // at 61 tokens was issued in 9 ms and painted 218 ms after the keystroke).
      const start = this._changeStart;
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          channel.port1.close();
          const detail = { ms: performance.now() - start };
          this.dispatchEvent(new CustomEvent("attn-lens-painted", { bubbles: true, composed: true, detail }));
        };
        channel.port2.postMessage(null);
      });
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
    showReadout(this, pointer);
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

  // ---- export -----------------------------------------------------------------------------------

  /** The current figure as a standalone SVG document (text). */
  toSVG() {
    return toSVG(this);
  }

  /** The current figure as a PNG Blob, `scale` times its CSS size (at most 64 megapixels). */
  toPNG(scale = 2) {
    return toPNG(this, scale);
  }

  // ---- rendering --------------------------------------------------------------------------------

  _frame(id, label) {
    return html`<div class="frame" data-frame=${id} tabindex="0" role="application" aria-roledescription="figure" aria-label=${label}>
      <div class="sticky"><canvas class="figure" aria-hidden="true"></canvas><canvas class="overlay" aria-hidden="true"></canvas></div>
      <div class="spacer"></div>
    </div>`;
  }

  /** The layers × heads grid under a file's or a model's heatmap or lines: a click shows that head. */
  _renderChooser(state) {
    return loadedView("grid").gridTemplate({
      data: this._panels[0],
      selected: { layer: state.layer ?? 0, head: state.head },
      width: this._width || 600,
      big: false,
      onPick: (l, h) => this._pick(l, h),
    });
  }

  _renderHeads(state) {
    const view = viewNamed(state.view);
    if (this._figure?.file) {
      const [layers, heads] = this._panels[0].weights.shape;
      if (!view.headsRow || view.randomOnly || layers * heads < 2 || !loadedView("grid")) return nothing;
      return this._renderChooser(state);
    }
    if (state.heads < 2 || !view.headsRow) return nothing;
    if (view.headsRow === "swatches") {
      const visible = visibleHeads(state);
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
    const view = viewNamed(state.view);
    const m = loadedView(view.name);
    if (!m) return html`<div class="placeholder" style="height:${this._reserve(state)}px">Loading the ${state.view} view…</div>`;
    if (this._figure.file && view.randomOnly)
      return html`<div class="message" part="message" role="status">
        The ${view.title} view shows the computation of one layer of random weights (queries, keys, scores, the vectors before and after
        attention), so it is not offered for ${this._figure.model ? "a trained model" : "weights from a file"}. The grid, heatmap and lines
        views show its weights.
      </div>`;
    // A figure computed for another view (or head) has no trace of the head yet: its computation
    // with one is under way.
    if (!hasTrace(this, view, state))
      return html`<div class="placeholder" style="height:${this._reserve(state)}px">Computing the ${view.title} view…</div>`;
    if (view.body)
      return view.body(m, {
        state,
        panels: this._panels,
        model: prepared(this, view, state),
        width: this._width,
        selected: { layer: state.layer ?? 0, head: state.head },
        onPick: (l, h) => this._pick(l, h),
        frame: (id, label) => this._frame(id, label),
      });
    const label = this.label || this.figureTitle || "";
    return html`<div class="panels">
      ${this._panels.map((data, k) => this._frame(`panel-${k}`, `${label ? `${label}: ` : ""}${panelTitle(data, state)}. ${hint(this)}`))}
    </div>`;
  }

  /** Opening the description shows it, once its texts have loaded (the first time on the page). */
  _describe(open) {
    this._describing = open;
    if (open && !texts)
      loadTexts().then(
        (m) => {
          texts = m;
          this.requestUpdate();
        },
        (e) => this._failedToLoad(e),
      );
  }

  /** Height to hold for the figure before it is computed (no layout shift when it lands). */
  _reserve(state) {
    return estimateHeight(state, panelWidth(this, state.mode === "compare" ? 2 : 1), this._width || 600);
  }

  render() {
    const { state, problems } = this._state;
    const link = this.demoHref ? demoLink(this) : null;
    const notes = [
      ...problems,
      ...(link?.problem ? [link.problem] : []),
      ...(this._figure?.file ? [...new Set(this._panels.flatMap((p) => p.warnings))] : []),
    ];
    const messages = notes.map((p) => html`<div class="message warning" part="message" role="status">${p}</div>`);
    const title = this.figureTitle ? html`<div class="figure-title" part="title">${this.figureTitle}</div>` : nothing;
    const caption = this.caption ? html`<p class="caption" part="caption">${this.caption}</p>` : nothing;
    const tip = html`<div class="tip" part="tooltip" hidden></div>`;
    const figure = this._figure;
    if (this._error || !figure || figure.empty) {
      const body = this._error
        ? html`<div class="message error" part="message" role="alert">${this._error}</div>`
        : this._loading
          ? html`<div class="placeholder" part="message" role="status">${this._loading}</div>`
          : !figure
            ? html`<div class="placeholder" part="message" style="height:${this._reserve(state)}px">Computing attention…</div>`
            : html`<div class="message" part="message" role="status">Type a sentence to see its attention.</div>`;
      return html`${toolbarTemplate(this, state, link)}${messages}${title}${body}${caption}${tip}`;
    }
    // Until the next computation lands, draw what was computed with the current drawing choices.
    const drawn = this._drawnState();
    const view = viewNamed(drawn.view);
    const truncated = figure.truncated
      ? html`<div class="message warning" part="message" role="status">
          Showing the first ${this._panels[0].tokens.length} of ${figure.totalTokens} tokens
          (${figure.model ? "the model's context" : "the most the library explains at once"}).
        </div>`
      : nothing;
    const allHidden =
      view.headsRow === "swatches" && !visibleHeads(drawn).some(Boolean)
        ? html`<div class="message warning" part="message" role="status">Every head is hidden: pick a head below to draw its lines.</div>`
        : nothing;
    return html`${toolbarTemplate(this, drawn, link)}${messages}${truncated}${allHidden}${title}
      <div class="figures" part="figure">${cache(this._renderBody(drawn))}</div>
      ${this._renderHeads(drawn)}${figure.model ? predictions(this._panels) : nothing}${caption}
      <details class="describe" part="description" @toggle=${(e) => this._describe(e.target.open)}>
        <summary>Describe this figure in text</summary>
        ${
          this._describing && texts
            ? view.describe(texts, { panels: this._panels, head: drawn.head, layer: drawn.layer ?? 0, model: prepared(this, view, drawn) })
            : nothing
        }
      </details>
      ${tip}`;
  }
}
