// The layers × heads grid: a small heatmap of every head (and each layer's mean), as BertViz's
// model view lays them out; a click picks a head, which the heatmap and lines views then show
// large. Used for attention files and trained models: any FigureData with several
// layers or heads. Loaded on demand, with the file parsers, so a random-mode figure does not
// pay for it. Thumbnails are canvases painted from the heatmap's cached bitmaps.
import { html } from "lit";
import { headName, windowText } from "../figure-data.js";
import { NEAR, canvasPainter, whenIdle } from "../paint.js";
import { font, fitText } from "../text.js";
import { weightBitmap } from "./heatmap.js";

/** Long sequences sample this many rows and columns in a thumbnail. */
const THUMBNAIL_CELLS = 96;
const GAP = 4;
const LABEL_W = 64;
/** Extra space before the first head of each grouped-query group but the first. */
const GROUP_GAP = 10;

export const layerName = (data, layer) => data.layerNames?.[layer] ?? `layer ${layer + 1}`;

/**
 * A causal model's head's sink rate, the mean share of its rows' attention on the first token
 * (over the rows after it: the first can look nowhere else), from the head scores a model's
 * figure carries (head-labels.js, the same number as the package's sinkRates()); else undefined.
 * Many decoders' heads park most of their attention there (Xiao et al. 2023), which is why a
 * reader sees bright first columns: the grid says how much, head by head.
 */
export function sinkRate(data, layer, head) {
  const s = data.causal && head !== "mean" ? data.categories?.[layer]?.[head]?.cls : undefined;
  return Number.isFinite(s) ? s : undefined;
}
const SINK_NOTE = "sink: the share of a head's attention on the first token, whatever it is (its attention sink)";

/** Side of a thumbnail in CSS px: `big` (the grid view) fills the width, else a chooser strip. */
export function thumbSize(data, width, big) {
  const heads = data.weights.shape[1];
  const columns = heads + (heads > 1 ? 1 : 0);
  if (!big) return 40;
  // (The gaps between grouped-query groups take their share of the width.)
  const group = headsPerKv(data);
  const gaps = group ? (heads / group - 1) * GROUP_GAP : 0;
  return Math.max(40, Math.min(120, Math.floor((width - LABEL_W - gaps) / columns) - GAP - 8));
}

/**
 * Query heads per key/value head of a model with grouped-query attention (Llama 3, Qwen: the
 * heads of a group score their queries against the same keys and mix the same values), or 0.
 */
export function headsPerKv(data) {
  const heads = data.weights.shape[1];
  const kv = data.source?.config?.kvHeads;
  return Number.isInteger(kv) && kv > 0 && kv < heads && heads % kv === 0 ? heads / kv : 0;
}

/**
 * Buttons of every (layer, head) of `data`, a "mean" per layer when there are several heads.
 * With grouped-query attention the heads of a key/value head stand together, a gap between
 * groups, and a line above the rows says so.
 * `onPick(layer, head)`; `selected` = { layer, head } is pressed; `panel` tells the canvases of
 * several grids apart (causal and full side by side), and `heading` (the panel's title) names
 * each of them above its rows, whose labels would otherwise read "layer 1" in both.
 */
export function gridTemplate({ data, selected, width, big, onPick, label = "Layers and heads", panel = 0, heading = null }) {
  const [layers, heads] = data.weights.shape;
  const size = thumbSize(data, width, big);
  const choices = [...(heads > 1 ? ["mean"] : []), ...Array.from({ length: heads }, (_, h) => h)];
  const group = headsPerKv(data);
  const kvOf = (h) => (group && h !== "mean" ? `, key/value head ${Math.floor(h / group) + 1}` : "");
  const groups = group
    ? html`<div class="grid-title grid-groups">
        Grouped-query attention: ${heads} query heads share ${heads / group} key/value heads, ${group} each; a gap separates the groups.
      </div>`
    : "";
  const sinks = sinkRate(data, 0, 0) !== undefined;
  return html`<div class="grid" part="grid" role="group" aria-label=${label} style="--thumb:${size}px">
    ${heading ? html`<div class="grid-title">${heading}</div>` : ""}${groups}${
      sinks ? html`<div class="grid-title grid-sinks">Under each head: what it does on this sentence, and its ${SINK_NOTE}.</div>` : ""
    }${Array.from(
      { length: layers },
      (_, l) =>
        html`<div class="grid-row">
          <span class="grid-label"
            >${layerName(data, l)}${
              // A model with windows names each layer's reach: "sliding 512" (a causal window of
              // 512 keys), "local ±64" (an encoder's), or "global".
              data.windows?.some((w) => w > 0)
                ? html`<small
                    style="display: block; font-size: 9px; opacity: 0.75"
                    title=${
                      data.windows[l]
                        ? `a sliding window: each query sees itself and ${windowText(data, l).reach}`
                        : `global: each query sees ${windowText(data, l).reach}`
                    }
                  >
                    ${windowText(data, l).label}</small
                  >`
                : ""
            }</span
          >
          ${choices.map((h) => {
            const name = h === "mean" ? "mean" : headName(data, h);
            const pressed = selected.layer === l && selected.head === h;
            return html`<button
              aria-pressed=${String(pressed)}
              style=${group && h !== "mean" && h > 0 && h % group === 0 ? `margin-left: ${GROUP_GAP}px` : ""}
              title=${`${layerName(data, l)}, ${name}${kvOf(h)}${h !== "mean" && data.headNotes ? `: ${data.headNotes[l][h]}` : ""}${
                sinks && h !== "mean" ? `; sink ${sinkRate(data, l, h).toFixed(2)}` : ""
              }`}
              aria-label=${`${layerName(data, l)}, ${name}${kvOf(h)}`}
              @click=${() => onPick(l, h)}
            >
              <canvas data-panel=${panel} data-layer=${l} data-head=${h} aria-hidden="true"></canvas>${name}${
                h !== "mean" && data.headNotes ? html`<small>${data.headNotes[l][h]}</small>` : ""
              }${sinks && h !== "mean" ? html`<span class="grid-sink" style="font-size: 9px; opacity: 0.75">sink ${sinkRate(data, l, h).toFixed(2)}</span>` : ""}
            </button>`;
          })}
        </div>`,
    )}
  </div>`;
}

// Thumbnails far from the screen are painted while the browser is idle after a pause in typing,
// or as they come near, whichever is first: a keystroke on a 12-layer model paints the rows a
// reader sees, not all 156 canvases (each painted canvas also costs its raster and upload in the
// frame; an edit of GPT-2 small's 32 tokens to the painted frame went from 70–80 to 36–50 ms with
// 3 of its 12 rows painted). The pause: while a reader types, the page is "idle" exactly while the
// model worker computes the next figure, and painting then took a core from it (a 308-token
// figure's other thumbnails: 30 ms of the page's thread per keystroke on a two-core machine).
// A canvas waiting here keeps its previous thumbnail, off screen, until then.
const waiting = new Map(); // canvas -> its paint()
let observer = null;
let idleQueued = false;
let pause = 0; // the timer of the pause before idle painting
let paused = false;
const PAUSE_MS = 300;

function paintNow(canvas) {
  const paint = waiting.get(canvas);
  if (!paint) return;
  waiting.delete(canvas);
  observer.unobserve(canvas);
  // A canvas taken out of the page (a new grid, a view put away) is painted when it is shown again.
  if (canvas.isConnected) paint();
}

function paintIdle(deadline) {
  idleQueued = false;
  // A grid drawn since: its pause queues the painting again.
  if (paused) return;
  for (const canvas of waiting.keys()) {
    if (deadline.timeRemaining() < 2) break;
    paintNow(canvas);
  }
  if (waiting.size) queueIdle();
}

function queueIdle() {
  if (idleQueued) return;
  idleQueued = true;
  whenIdle(paintIdle);
}

/** Idle painting, once no grid has been drawn for PAUSE_MS (each new one starts it again). */
function queueAfterPause() {
  clearTimeout(pause);
  paused = true;
  pause = setTimeout(() => {
    paused = false;
    queueIdle();
  }, PAUSE_MS);
}

function paintLater(canvas, paint) {
  observer ??= new IntersectionObserver((entries) => entries.forEach((e) => e.isIntersecting && paintNow(e.target)), {
    rootMargin: `${NEAR}px 0px`,
  });
  waiting.set(canvas, paint);
  observer.observe(canvas);
  queueAfterPause();
}

/**
 * Paints the canvases of grid `panel` under `root` not painted for `key` yet: those on screen or
 * within NEAR px of it now, the others when the browser is idle or when they come near.
 */
export function paintGrid(root, data, scale, palette, key, panel = 0) {
  const todo = [];
  // Every position is read before any canvas is sized (a size written between two reads would
  // make each read lay the page out again).
  for (const canvas of root.querySelectorAll(`.grid canvas[data-panel="${panel}"]`)) {
    const size = canvas.parentElement.closest(".grid").style.getPropertyValue("--thumb");
    const side = parseFloat(size) || 40;
    const drawn = `${key}/${side}`;
    if (canvas.drawnFor === drawn) continue;
    const r = canvas.getBoundingClientRect();
    todo.push({ canvas, side, drawn, near: r.height > 0 && r.bottom > -NEAR && r.top < innerHeight + NEAR });
  }
  for (const { canvas, side, drawn, near } of todo) {
    const paint = () => {
      canvas.drawnFor = drawn;
      const layer = Number(canvas.dataset.layer);
      const head = canvas.dataset.head === "mean" ? "mean" : Number(canvas.dataset.head);
      const p = canvasPainter(canvas, side, side, { scale: 2 });
      p.image(0, 0, side, side, weightBitmap(data, layer, head, scale, palette, THUMBNAIL_CELLS));
    };
    if (near) {
      if (waiting.delete(canvas)) observer.unobserve(canvas);
      paint();
    } else paintLater(canvas, paint);
  }
}

/** The grid as an export scene { width, height, draw(p) }: every thumbnail with its labels. */
export function gridScene(data, palette, scale, width) {
  const [layers, heads] = data.weights.shape;
  const choices = [...(heads > 1 ? ["mean"] : []), ...Array.from({ length: heads }, (_, h) => h)];
  const side = thumbSize(data, width, true);
  const cellW = side + GAP + 8;
  const sinks = sinkRate(data, 0, 0) !== undefined;
  const rowH = side + (data.headNotes ? 46 : 22) + (sinks ? 11 : 0);
  const w = LABEL_W + choices.length * cellW + 8;
  const h = 30 + layers * rowH + 8;
  return {
    width: w,
    height: h,
    draw(p) {
      p.rect(0, 0, w, h, palette.background);
      p.text(fitText(data.title, w - 16, font(13, 600)), 8, 18, { size: 13, weight: 600, fill: palette.foreground });
      for (let l = 0; l < layers; l++) {
        const y = 30 + l * rowH;
        p.text(fitText(layerName(data, l), LABEL_W - 8, font(11)), 8, y + side / 2, {
          size: 11,
          fill: palette.foreground,
          baseline: "middle",
        });
        choices.forEach((hd, k) => {
          const x = LABEL_W + k * cellW;
          p.image(x, y, side, side, weightBitmap(data, l, hd, scale, palette, THUMBNAIL_CELLS));
          const name = hd === "mean" ? "mean" : headName(data, hd);
          p.text(fitText(name, cellW - 2, font(10)), x + side / 2, y + side + 13, { size: 10, fill: palette.muted, anchor: "middle" });
          // (Under the head's note, when it has one.)
          const noteLines = hd !== "mean" && data.headNotes ? data.headNotes[l][hd].split("\n").length : 0;
          if (sinks && hd !== "mean")
            p.text(`sink ${sinkRate(data, l, hd).toFixed(2)}`, x + side / 2, y + side + 25 + 11 * noteLines, {
              size: 9,
              fill: palette.muted,
              anchor: "middle",
            });
          if (hd !== "mean" && data.headNotes)
            data.headNotes[l][hd].split("\n").forEach((note, k) =>
              p.text(fitText(note, cellW - 2, font(9)), x + side / 2, y + side + 25 + 11 * k, {
                size: 9,
                fill: palette.muted,
                anchor: "middle",
              }),
            );
        });
      }
    },
  };
}
