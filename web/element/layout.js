// Laying out and drawing <attn-lens>'s figure: each frame box gets its view's layout (the entry
// of views/index.js says how) and is painted by its Frame; head thumbnails and grid canvases are
// painted from the heatmap's cached bitmaps.
import { colorScale, paletteFor } from "../theme.js";
import { headName } from "../figure-data.js";
import { canvasPainter } from "../paint.js";
import { weightBitmap } from "../views/heatmap.js";
import { loadedView, tracedHead, viewNamed } from "../views/index.js";
import { Frame, paintStaleFrames } from "./frame.js";

export const PANEL_GAP = 16;
const MIN_PANEL_WIDTH = 300;
/** Head thumbnails (40 px) of long sentences sample this many rows and columns. */
const THUMBNAIL_CELLS = 80;

/** The width of each of `count` panels: side by side when each gets MIN_PANEL_WIDTH, else stacked. */
export function panelWidth(element, count) {
  const width = Math.max(200, element._width || 600);
  return count > 1 && (width - PANEL_GAP) / count >= MIN_PANEL_WIDTH ? Math.floor((width - PANEL_GAP) / count) : width;
}

/** Heads the figure draws: the picked head alone, or every head not hidden (the lines view hides some). */
export function visibleHeads(state) {
  return Array.from({ length: state.heads }, (_, h) => (state.head === "mean" ? !state.hide.includes(h) : state.head === h));
}

/** A panel's title: its weights' title (and layer), then what the view shows of them. */
export function panelTitle(data, state) {
  const H = state.heads;
  if (data.weights.shape[0] > 1)
    data = { ...data, title: `${data.title}, ${data.layerNames?.[state.layer] ?? `layer ${state.layer + 1}`}` };
  const view = viewNamed(state.view);
  if (view.panelTitle) return view.panelTitle(data, state, visibleHeads(state));
  return `${data.title}, ${state.head === "mean" ? `mean of ${H} head${H > 1 ? "s" : ""}` : `${headName(data, state.head)} of ${H}`}`;
}

/** Whether the figure has what view `entry` draws: the trace of the head it shows, if it needs one. */
export function hasTrace(element, entry, state) {
  if (!entry.needsTrace) return true;
  const explanation = element._panels[0]?.explanation;
  const traced = explanation?.options.traceHead;
  return Boolean(explanation?.trace) && (traced === undefined || traced === tracedHead(state));
}

/**
 * What view `entry` derives from the whole figure (its prepare), once per figure and head; null
 * until it can, and for a view of random weights shown with weights from a file or a model.
 */
export function prepared(element, entry, state) {
  const m = loadedView(entry.name);
  if (!entry.prepare || !m || (element._figure?.file && entry.randomOnly) || !hasTrace(element, entry, state)) return null;
  const key = `${element._generation}/${entry.name}/${state.head}`;
  if (element._viewModelKey !== key) {
    element._viewModelKey = key;
    element._viewModel = entry.prepare(m, element._panels, state);
  }
  return element._viewModel;
}

/** The view and layout of frame `id` ("panel-k", or "pane-k" of a view's own frames), or null. */
export function layoutFor(element, id, state, palette, scale) {
  const entry = viewNamed(state.view);
  const m = loadedView(entry.name);
  const [kind, index] = id.split("-");
  const data = kind === "panel" ? element._panels[Number(index)] : null;
  const model = prepared(element, entry, state);
  if (!m || (kind === "panel" && !data) || (entry.prepare && !model)) return null;
  return entry.frame(m, {
    state,
    data,
    index: Number(index),
    model,
    palette,
    scale,
    title: data && panelTitle(data, state),
    visible: visibleHeads(state),
    zoom: element._zoom,
    width: element._width,
    panelWidth: panelWidth(element, element._panels.length),
  });
}

/** Lays out and paints every frame box of the figure; returns whether the figure shown changed. */
export function drawFrames(element) {
  if (!element._figure || element._figure.empty) return false;
  const state = element._drawnState();
  const palette = paletteFor(state.theme);
  const scale = colorScale(state.colormap, palette);
  const common = JSON.stringify([
    element._generation,
    state.view,
    state.head,
    state.layer,
    state.hide,
    element._zoom,
    element._width,
    palette.name,
    state.colormap,
  ]);
  // Size every frame, then measure them all (one layout), then paint: no layout per frame.
  const changed = [];
  for (const box of element.renderRoot.querySelectorAll(".frame")) {
    let frame = element._frames.get(box);
    if (!frame) {
      frame = new Frame(box, element);
      element._frames.set(box, frame);
      element._observeFrame(box);
    }
    const made = layoutFor(element, box.dataset.frame, state, palette, scale);
    if (!made) continue;
    frame.group = box.dataset.frame.startsWith("panel") ? "panels" : box.dataset.frame;
    const previous = frame.lay;
    if (frame.prepare(made.view, made.lay, `${common}/${box.dataset.frame}`)) changed.push({ frame, previous });
  }
  for (const { frame } of changed) frame.measure();
  for (const { frame } of changed) frame.place();
  for (const { frame, previous } of changed) {
    const { box, lay } = frame;
    if (previous && previous.kind === lay.kind && element._zoomChanged) {
      box.scrollLeft = ((frame.sx + frame.w / 2) / previous.fullW) * lay.fullW - frame.w / 2;
      box.scrollTop = ((frame.sy + frame.h / 2) / previous.fullH) * lay.fullH - frame.h / 2;
      frame.readScroll();
    }
    frame.paint();
  }
  // A view brought back from the cache may need no drawing, but the figure changed all the same.
  const shown = `${element._generation}/${state.view}`;
  const drew = changed.length > 0 || shown !== element._shown;
  element._shown = shown;
  element._zoomChanged = false;
  drawThumbnails(element, state, palette, scale);
  paintStaleFrames();
  return drew;
}

/** Paints the head buttons' thumbnails and the layers × heads grid (only canvases not painted yet). */
function drawThumbnails(element, state, palette, scale) {
  const data = element._panels[0];
  if (!data) return;
  const key = `${element._generation}/${palette.name}/${state.colormap}`;
  const grid = loadedView("grid");
  if (grid) element._panels.forEach((panel, k) => grid.paintGrid(element.renderRoot, panel, scale, palette, `${key}/${k}`, k));
  for (const canvas of element.renderRoot.querySelectorAll("canvas[data-head]:not([data-layer])")) {
    if (canvas.drawnFor === key) continue;
    canvas.drawnFor = key;
    const head = canvas.dataset.head === "mean" ? "mean" : Number(canvas.dataset.head);
    const p = canvasPainter(canvas, 40, 40, { scale: 2 });
    p.image(0, 0, 40, 40, weightBitmap(data, 0, head, scale, palette, THUMBNAIL_CELLS));
  }
}
