// <attn-lens-train>: a small transformer trained in the reader's browser on repeated random spans
// (web/train/task.js), with its loss on each copy, the heads' scores and the attention grid drawn
// live. The training runs in a module Web Worker (element-train-worker.js, built from
// web/train/worker.js, beside the bundle that contains this file), single-threaded, so the element
// works on any static host. Registered by define.js.
import { LitElement, css, html, nothing } from "lit";
import { hostStyles } from "./host-styles.js";
import { once } from "./chunks.js";

// The drawing (train-draw.js, with D3's scale) is a chunk fetched when a training figure starts.
let draw = null;
const loadDraw = once(() => import("./train-draw.js").then((m) => (draw = m)), "the training charts");

// Variables, not literals: a literal `new URL("./x", import.meta.url)` makes Vite inline or
// rename the file; these are built and copied beside the bundle by scripts/build-web.mjs.
const WORKER_FILE = "./element-train-worker.js";
const SNAPSHOT_DIR = "./train-snapshot/";
/** The model sizes and learning rates the controls offer (web/train/RECIPE.md measures them). */
const SIZES = [32, 64];
const RATES = [0.001, 0.003, 0.01];
const MAX_SEED = 2 ** 31 - 1;
/** The grid (the nested <attn-lens>'s main-thread work) is redrawn every this many steps. */
const GRID_EVERY = 100;

/** A seed as typed: a whole number 0..2^31-1, or an Error saying what is wrong with it. */
export function parseSeed(text) {
  const trimmed = String(text ?? "").trim();
  const seed = Number(trimmed);
  if (trimmed === "" || !/^\d+$/.test(trimmed) || !Number.isSafeInteger(seed) || seed > MAX_SEED)
    return new Error(`Seed must be a whole number from 0 to ${MAX_SEED}; got "${text}"`);
  return seed;
}

export class AttnLensTrainElement extends LitElement {
  static properties = {
    seed: { type: String, reflect: true },
    dModel: { type: String, attribute: "d-model", reflect: true },
    lr: { type: String, reflect: true },
    /** Where "Skip ahead" loads a saved run from (a folder URL); none: train-snapshot/ beside the bundle. */
    snapshot: { type: String },
    /** The worker's URL; none: element-train-worker.js beside the bundle. */
    workerSrc: { type: String, attribute: "worker-src" },
    theme: { type: String, reflect: true },
    _status: { state: true },
    _running: { state: true },
    _busy: { state: true },
    _last: { state: true },
  };

  static styles = [
    hostStyles,
    css`
      :host([theme="dark"]) {
        color: var(--attn-lens-fg, #e6e9ee);
        background: var(--attn-lens-bg, #14181e);
      }
      .controls {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        align-items: center;
        padding: 8px;
      }
      button,
      input,
      select {
        font: inherit;
        color: inherit;
        background: transparent;
        border: 1px solid currentColor;
        border-radius: 4px;
        padding: 3px 8px;
      }
      select option {
        color: #1d232b;
        background: #fff;
      }
      button {
        cursor: pointer;
      }
      button.accent {
        background: #3b5bdb;
        border-color: #3b5bdb;
        color: #fff;
      }
      button:disabled {
        opacity: 0.4;
        cursor: default;
      }
      :is(button, input, select):focus-visible {
        outline: 2px solid #3b5bdb;
        outline-offset: 1px;
      }
      input[aria-invalid="true"] {
        border-color: #c92a2a;
      }
      .status,
      .note {
        margin: 0;
        padding: 0 8px 8px;
        font-size: 13px;
        font-variant-numeric: tabular-nums;
      }
      h3 {
        font-size: 15px;
        margin: 8px 8px 4px;
      }
      canvas.curve {
        display: block;
        width: 100%;
        height: 260px;
      }
      table {
        margin: 0 8px 8px;
        border-collapse: collapse;
        font-size: 12px;
        font-variant-numeric: tabular-nums;
      }
      th,
      td {
        padding: 2px 8px;
        text-align: right;
        border-bottom: 1px solid rgba(128, 128, 128, 0.3);
      }
      td.strong {
        font-weight: 700;
      }
      .swatch {
        display: inline-block;
        width: 10px;
        height: 10px;
        margin-right: 4px;
        border-radius: 2px;
      }
      caption {
        caption-side: top;
        text-align: left;
        padding-bottom: 4px;
      }
    `,
  ];

  constructor() {
    super();
    this.seed = "1";
    this.dModel = "32";
    this.lr = "0.003";
    this._status = "";
    this._busy = false;
    this._worker = null;
    this._resize = null;
    this._visible = null;
    this._halt();
    this._forgetRun();
  }

  /** Not training, and not about to start once the model is ready. */
  _halt() {
    this._running = false;
    this._startWhenReady = false;
  }

  /** A run not yet begun: no curve, no last report, nothing skipped to. */
  _forgetRun() {
    /** Every report so far (the curve), oldest first; a snapshot's curve when one was loaded. */
    this.history = [];
    this._skipped = null;
    this._last = null;
  }

  /** Whether it is training now. */
  get running() {
    return this._running;
  }

  connectedCallback() {
    super.connectedCallback();
    clearTimeout(this._dropping);
    this._resize ??= new ResizeObserver(() => this._drawCurve());
    const canvas = this.renderRoot?.querySelector?.("canvas.curve");
    if (canvas) this._resize.observe(canvas);
    if (this._worker) return;
    // The worker and its model are made when the figure comes near the viewport (a post may
    // hold it far down), or at once where IntersectionObserver is missing.
    if (typeof IntersectionObserver !== "function") return void this.reset();
    this._visible = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        this._visible?.disconnect();
        if (!this._worker) this.reset();
      },
      { rootMargin: "400px 0px" },
    );
    this._visible.observe(this);
  }

  firstUpdated() {
    this._resize.observe(this.renderRoot.querySelector("canvas.curve"));
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._resize?.disconnect();
    this._visible?.disconnect();
    // A figure taken out of the page stops training and frees its worker (and the model in it),
    // unless it is put back at once (moved within the page): then the run goes on.
    this._dropping = setTimeout(() => {
      this._worker?.terminate();
      this._worker = null;
      this._halt();
    }, 1000);
  }

  updated() {
    // Settings changed from outside (attributes or properties) or by the controls: a new model.
    const options = this._options();
    if (this._worker && !(options instanceof Error) && JSON.stringify(options) !== this._posted) this.reset();
  }

  _url(attribute, file) {
    // An attribute is relative to the page, like any src; the default sits beside the bundle.
    return attribute ? new URL(attribute, document.baseURI) : new URL(file, import.meta.url);
  }

  _ensureWorker() {
    if (this._worker) return this._worker;
    const worker = new Worker(this._url(this.workerSrc, WORKER_FILE), { type: "module" });
    // In order: each message waits for the same promise (the drawing chunk), then runs.
    worker.onmessage = ({ data }) => loadDraw().then(() => this._onMessage(data));
    worker.onerror = (event) => {
      event.preventDefault?.();
      this._fail(`The training worker could not run: ${event.message || "its script failed to load"}`);
    };
    this._worker = worker;
    return worker;
  }

  /** The controls' settings, or an Error naming the one that is wrong. */
  _options() {
    const seed = parseSeed(this.seed);
    if (seed instanceof Error) return seed;
    const dModel = Number(this.dModel);
    if (!SIZES.includes(dModel)) return new Error(`d-model must be one of ${SIZES.join(", ")}; got "${this.dModel}"`);
    const lr = Number(this.lr);
    if (!(lr > 0 && lr <= 0.1)) return new Error(`lr must be a learning rate above 0 and at most 0.1; got "${this.lr}"`);
    return { seed, dModel, lr };
  }

  /** A new model with the current seed, size and learning rate; the curve starts again. */
  reset() {
    const options = this._options();
    if (options instanceof Error) {
      // The model trained so far is kept: a typo does not throw away a run.
      this._status = options.message;
      this._error(options.message);
      return false;
    }
    this._forgetRun();
    this._halt();
    this._busy = true;
    this._posted = JSON.stringify(options);
    this._showSettings();
    this._ensureWorker().postMessage({ type: "reset", options });
    this._status = "Creating the model…";
    this._drawCurve();
    return true;
  }

  /** Trains until paused (or the run's last step); right after a reset, once the model is made. */
  start() {
    if (!this._worker && !this.reset()) return;
    this._running = true;
    if (this._busy) this._startWhenReady = true;
    else this._worker.postMessage({ type: "run" });
  }

  /** Stops after the chunk of steps under way (at most 25 steps). */
  pause() {
    this._halt();
    this._worker?.postMessage({ type: "pause" });
  }

  /** Loads the saved run (its curve, then its weights at its last step); Start goes on from it. */
  skipAhead() {
    // The run so far stays (curve and model) until the snapshot has loaded: if it cannot be
    // fetched, the message says so and Start goes on with the run.
    this._halt();
    this._skippedBefore = this._skipped;
    this._skipped = true;
    this._busy = true;
    this._ensureWorker().postMessage({ type: "skip", base: this._url(this.snapshot, SNAPSHOT_DIR).href });
    this._status = "Loading the snapshot…";
  }

  /**
   * The Skip ahead button: a run trained on this page past where it started (step 0, or a
   * snapshot's step) is only replaced once the reader says so (skipAhead() itself does not ask).
   */
  _onSkip() {
    const step = this._last?.step ?? 0;
    const from = typeof this._skipped === "number" ? this._skipped : 0;
    if (step > from && !confirm(`Replace this run (step ${step}) with the saved run of the default settings?`)) return;
    this.skipAhead();
  }

  /** The controls show the run's settings (a rejected seed typed into the box is replaced). */
  _showSettings() {
    const input = this.renderRoot?.querySelector("#train-seed");
    if (!input) return;
    input.value = this.seed;
    input.removeAttribute("aria-invalid");
  }

  _error(message) {
    this.dispatchEvent(new CustomEvent("attn-lens-train-error", { bubbles: true, composed: true, detail: { message } }));
  }

  _fail(message) {
    this._halt();
    if (this._skipped === true) this._skipped = this._skippedBefore;
    this._busy = false;
    this._status = message;
    this._error(message);
  }

  _onMessage(data) {
    if (data.type === "history") {
      // A snapshot's curve: its settings shown in the controls, its reports drawn.
      const { seed, dModel, lr } = data.options;
      this._posted = JSON.stringify({ seed, dModel, lr });
      this.seed = String(seed);
      this.dModel = String(dModel);
      this.lr = String(lr);
      this._showSettings();
      this.history = data.reports.map((r) => ({ ...r, vocab: data.options.vocab, totalSteps: data.options.steps }));
      return;
    }
    if (data.type === "error") return this._fail(this._skipped === true ? `Skip ahead failed: ${data.message}` : data.message);
    const r = { ...data.report, vocab: data.vocab, totalSteps: data.steps };
    this.history.push(r);
    this._busy = false;
    // A report already on its way when Pause was pressed says "running": Pause wins.
    this._running = this._running && data.running;
    if (this._startWhenReady) {
      this._startWhenReady = false;
      this._running = true;
      this._worker.postMessage({ type: "run" });
    }
    if (this._skipped === true) this._skipped = r.step;
    this._last = r;
    this._status = draw.describe(this.history, r, this._skipped);
    this._drawCurve();
    if (r.step % GRID_EVERY === 0 || this._skipped === r.step) this._drawGrid(r, data);
    this.dispatchEvent(
      new CustomEvent("attn-lens-train-report", {
        bubbles: true,
        composed: true,
        detail: { report: r, running: data.running, formed: draw.formed(r), copies: draw.copies(r) },
      }),
    );
  }

  _drawCurve() {
    const canvas = this.renderRoot?.querySelector("canvas.curve");
    if (canvas && draw) draw.drawCurve(canvas, this.history, getComputedStyle(this).color);
  }

  _drawGrid(r, data) {
    const grid = this.renderRoot.querySelector("#train-grid");
    if (!grid) return;
    grid.data = {
      tokens: data.probe.map((id) => `t${id}`),
      weights: data.grid,
      causal: true,
      title: `Step ${r.step}`,
      layerNames: r.induction.map((_, l) => `layer ${l + 1}`),
      headNames: r.induction[0].map((_, h) => `head ${h + 1}`),
    };
  }

  _onSeed(event) {
    const seed = parseSeed(event.target.value);
    if (seed instanceof Error) {
      event.target.setAttribute("aria-invalid", "true");
      this._status = seed.message;
      this._error(seed.message);
      return;
    }
    event.target.removeAttribute("aria-invalid");
    // The same seed typed again starts a fresh run too; a new one does through updated().
    if (String(seed) === this.seed) this.reset();
    else this.seed = String(seed);
  }

  render() {
    return html`
      <div class="controls" role="group" aria-label="Training">
        <button type="button" id="start" class="accent" ?disabled=${this._running} @click=${() => this.start()}>Start</button>
        <button type="button" id="pause" ?disabled=${!this._running} @click=${() => this.pause()}>Pause</button>
        <button type="button" id="reset" @click=${() => this.reset()}>Reset</button>
        <button type="button" id="skip" title="Load a saved run of the default settings at its last step" @click=${() => this._onSkip()}>
          Skip ahead
        </button>
        <label>Seed <input id="train-seed" type="text" inputmode="numeric" size="6" .value=${this.seed} @change=${this._onSeed} /></label>
        <label
          >Model
          <select id="train-size" @change=${(e) => (this.dModel = e.target.value)}>
            ${SIZES.map((d) => html`<option value=${d} ?selected=${String(d) === this.dModel}>d_model ${d}</option>`)}
          </select></label
        >
        <label
          >Learning rate
          <select id="train-lr" @change=${(e) => (this.lr = e.target.value)}>
            ${RATES.map((v) => html`<option value=${v} ?selected=${String(v) === this.lr}>${v}</option>`)}
          </select></label
        >
      </div>
      <p id="train-status" class="status" role="status" aria-live="polite">${this._status}</p>
      <h3>Loss on each copy, and the heads' scores</h3>
      <canvas
        id="curve"
        class="curve"
        role="img"
        aria-label="Loss on the first and second copy, and the best induction and previous-token scores, per step"
      ></canvas>
      <p id="curve-text" class="note">${draw?.curveText(this.history) ?? ""}</p>
      ${draw?.scoresTable(this._last) ?? nothing}
      <attn-lens
        id="train-grid"
        view="grid"
        theme=${this.theme ?? nothing}
        figure-title="Every head on a probe sequence (redrawn every ${GRID_EVERY} steps as it trains)"
      ></attn-lens>
    `;
  }
}
