// One matrix of the every-step view, with every number readable at any size: a window of cells
// (with their values) scrolls under frozen row and column labels. Used live (a Frame) and by
// the export, which draws the whole matrix (numbers only when they fit).
import { cellText, fitText, font, formatValue, textWidth } from "../text.js";
import { rgbOf, sampled, textOn } from "../theme.js";
import { Bitmap } from "../paint.js";
// RdBu, D3's, sampled by the build (scripts/build-web.mjs); only this view draws it.
import { RDBU } from "virtual:attnlens-diverging";

/** Diverging map for signed numbers, symmetric around 0 with half-range `extent`. */
const interpolateRdBu = sampled(RDBU);
const signedColor = (x, extent) => interpolateRdBu(0.5 - 0.5 * Math.max(-1, Math.min(1, x / (extent || 1))));

export const CELL_W = 46;
export const CELL_H = 20;
const HEAD_H = 18;
const MAX_VIEW_ROWS = 12;
const LABEL_FONT = font(10);
/** Cells narrower or shorter than this (the export's large matrices) are one bitmap, a pixel per cell. */
const BITMAP_BELOW = 6;
/** A row label needs this many px of height; a column label this many px of width. */
const ROW_LABEL_H = 12;
const COL_LABEL_W = 28;

/** Every how many rows / columns a label is drawn, so that labels never overlap. */
const rowLabelEvery = (cellH) => Math.max(1, Math.ceil(ROW_LABEL_H / cellH));
const colLabelEvery = (cellW) => (cellW >= 18 ? 1 : Math.ceil(COL_LABEL_W / cellW));

/** Largest |x| over finite entries (for a symmetric diverging scale). */
function maxAbs(data) {
  let m = 0;
  for (let k = 0; k < data.length; k++) {
    const a = Math.abs(data[k]);
    if (a > m && a !== Infinity) m = a;
  }
  return m;
}

/**
 * A matrix to show. kind: "signed" (diverging colours around 0), "weights" (the colour map),
 * "mask" (0 or −∞). rowLabels/colLabels: token texts, or null for 1-based indices.
 */
export function matrixPane({ id, name, data, rows, cols, kind, rowLabels = null, colLabels = null, rowAxis, colAxis }) {
  // The colour scale's extent is found when the pane is first drawn: an L × L pane below the
  // fold (every step at 512 tokens) is not scanned on an edit that does not draw it.
  let extent = kind === "signed" ? undefined : 1;
  return {
    id,
    name,
    data,
    rows,
    cols,
    kind,
    rowLabels,
    colLabels,
    rowAxis,
    colAxis,
    get extent() {
      return (extent ??= maxAbs(data));
    },
  };
}

// Labels are measured once per label list (the panes of one figure share their tokens).
const rowCache = new WeakMap();
const colCache = new WeakMap();
const indexLabels = new Map();
/** The list a pane's labels come from: its tokens, or 1..n (one shared list per n). */
function labelList(labels, n) {
  if (labels) return labels;
  if (!indexLabels.has(n))
    indexLabels.set(
      n,
      Array.from({ length: n }, (_, k) => String(k + 1)),
    );
  return indexLabels.get(n);
}

function rowLabelsOf(labels, n) {
  const list = labelList(labels, n);
  let made = rowCache.get(list);
  if (!made) {
    const labelW = Math.ceil(Math.min(90, Math.max(16, ...list.map((t) => textWidth(t, LABEL_FONT))))) + 8;
    made = { labelW, rowLabels: list.map((t) => fitText(t, labelW - 8, LABEL_FONT)) };
    rowCache.set(list, made);
  }
  return made;
}

function colLabelsOf(labels, n, cellW) {
  const list = labelList(labels, n);
  let byWidth = colCache.get(list);
  if (!byWidth) colCache.set(list, (byWidth = new Map()));
  if (!byWidth.has(cellW))
    byWidth.set(
      cellW,
      list.map((t) => fitText(t, cellW - 4, LABEL_FONT)),
    );
  return byWidth.get(cellW);
}

/**
 * @param {object} p
 * @param {object} p.pane     matrixPane()
 * @param {object} p.palette
 * @param {object} p.scale    colour scale for "weights"
 * @param {number} p.width    CSS px available
 * @param {number} [p.cellW]  cell size (the export shrinks large matrices)
 * @param {boolean} [p.whole] the whole matrix, no scrolling (the export)
 */
export function layout({ pane, palette, scale, width, cellW = CELL_W, cellH = CELL_H, whole = false }) {
  const { labelW, rowLabels } = rowLabelsOf(pane.rowLabels, pane.rows);
  const fullW = labelW + pane.cols * cellW;
  const fullH = HEAD_H + pane.rows * cellH;
  return {
    kind: "matrix",
    pane,
    palette,
    scale,
    labelW,
    cellW,
    cellH,
    numbers: cellW >= 30 && cellH >= 14,
    rowLabels,
    // A column label may use the width of the columns up to the next label.
    colLabels: colLabelsOf(pane.colLabels, pane.cols, colLabelEvery(cellW) * cellW),
    fullW,
    fullH,
    viewW: whole ? fullW : Math.min(fullW, Math.max(120, width)),
    viewH: whole ? fullH : Math.min(fullH, HEAD_H + MAX_VIEW_ROWS * cellH),
  };
}

function fillOf(lay, v) {
  const { pane, palette } = lay;
  if (v === -Infinity) return palette.maskedBackground;
  if (pane.kind === "weights") return lay.scale.color(v);
  if (pane.kind === "mask") return palette.background;
  return signedColor(v, pane.extent);
}

/** Draws the cells of a view w x h scrolled by (sx, sy), with frozen labels. */
export function draw(p, lay, { sx = 0, sy = 0, w = lay.fullW, h = lay.fullH } = {}) {
  const { pane, palette, labelW, cellW, cellH } = lay;
  p.rect(0, 0, w, h, palette.background);
  const c0 = Math.max(0, Math.floor(sx / cellW));
  const c1 = Math.min(pane.cols, Math.ceil((sx + w - labelW) / cellW));
  const r0 = Math.max(0, Math.floor(sy / cellH));
  const r1 = Math.min(pane.rows, Math.ceil((sy + h - HEAD_H) / cellH));
  p.save();
  p.clip(labelW, HEAD_H, w - labelW, h - HEAD_H);
  if (!lay.numbers && (cellW < BITMAP_BELOW || cellH < BITMAP_BELOW)) {
    // Cells too small for a gap: one image (an SVG export embeds it as a PNG, not a rect per cell).
    if (r1 > r0 && c1 > c0) {
      const bitmap = new Bitmap(c1 - c0, r1 - r0);
      const rgb = new Map();
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          const fill = fillOf(lay, pane.data[r * pane.cols + c]);
          if (!rgb.has(fill)) rgb.set(fill, rgbOf(fill));
          bitmap.rgba.set([...rgb.get(fill), 255], ((r - r0) * (c1 - c0) + (c - c0)) * 4);
        }
      }
      p.image(labelW + c0 * cellW - sx, HEAD_H + r0 * cellH - sy, (c1 - c0) * cellW, (r1 - r0) * cellH, bitmap);
    }
  } else {
    for (let r = r0; r < r1; r++) {
      for (let c = c0; c < c1; c++) {
        const v = pane.data[r * pane.cols + c];
        const fill = fillOf(lay, v);
        const x = labelW + c * cellW - sx;
        const y = HEAD_H + r * cellH - sy;
        p.rect(x, y, cellW - 1, cellH - 1, fill);
        if (lay.numbers) {
          p.text(cellText(v), x + cellW / 2, y + cellH / 2, {
            size: 10,
            fill: v === -Infinity || pane.kind === "mask" ? palette.muted : textOn(fill),
            anchor: "middle",
            baseline: "middle",
          });
        }
      }
    }
  }
  p.restore();
  p.save();
  p.clip(0, HEAD_H, labelW, h - HEAD_H);
  const everyRow = rowLabelEvery(cellH);
  for (let r = r0 - (r0 % everyRow); r < r1; r += everyRow) {
    p.text(lay.rowLabels[r], labelW - 6, HEAD_H + (r + 0.5) * cellH - sy, {
      size: 10,
      fill: palette.foreground,
      anchor: "end",
      baseline: "middle",
    });
  }
  p.restore();
  p.save();
  p.clip(labelW, 0, w - labelW, HEAD_H);
  const every = colLabelEvery(cellW);
  let right = -Infinity;
  for (let c = c0 - (c0 % every); c < c1; c += every) {
    // A label wider than its column (narrow cells) is kept inside the matrix's edges; one that
    // would then touch the label before it is left out.
    const half = every > 1 ? textWidth(lay.colLabels[c], LABEL_FONT) / 2 : 0;
    const x = Math.max(labelW + half, Math.min(labelW + lay.pane.cols * cellW - half, labelW + (c + 0.5) * cellW)) - sx;
    if (every > 1 && x - half < right + 2) continue;
    right = x + half;
    p.text(lay.colLabels[c], x, HEAD_H / 2, {
      size: 10,
      fill: palette.muted,
      anchor: "middle",
      baseline: "middle",
    });
  }
  p.restore();
}

/** The cell under (x, y), or null. */
export function hit(lay, x, y, { sx = 0, sy = 0 } = {}) {
  if (x < lay.labelW || y < HEAD_H) return null;
  const r = Math.floor((y - HEAD_H + sy) / lay.cellH);
  const c = Math.floor((x - lay.labelW + sx) / lay.cellW);
  return r >= 0 && r < lay.pane.rows && c >= 0 && c < lay.pane.cols ? { i: r, j: c } : null;
}

export function highlight(p, lay, focus, { sx = 0, sy = 0, w = lay.viewW, h = lay.viewH } = {}) {
  if (!focus) return;
  const { labelW, cellW, cellH, palette } = lay;
  p.save();
  p.clip(0, 0, w, h);
  const x = labelW + focus.j * cellW - sx;
  const y = HEAD_H + focus.i * cellH - sy;
  p.strokeRect(labelW, y - 0.5, w - labelW, cellH, palette.highlight, 1);
  p.strokeRect(x - 0.5, HEAD_H, cellW, h - HEAD_H, palette.highlight, 1);
  p.strokeRect(x - 1, y - 1, cellW + 1, cellH + 1, palette.foreground, 2);
  p.restore();
}

/** Stage name, 1-based row and column with their labels, and the value to 4 significant digits. */
export function readout(lay, focus) {
  if (!focus) return "";
  const { pane } = lay;
  const named = (axis, labels, k) => `${axis} ${k + 1}${labels ? ` “${labels[k]}”` : ""}`;
  const v = pane.data[focus.i * pane.cols + focus.j];
  return `${pane.name}: ${named(pane.rowAxis, pane.rowLabels, focus.i)}, ${named(pane.colAxis, pane.colLabels, focus.j)} = ${formatValue(v)}`;
}

export function move(lay, focus, key) {
  if (!focus) return { i: 0, j: 0 };
  const clamp = (x, n) => Math.max(0, Math.min(n - 1, x));
  const { rows, cols } = lay.pane;
  if (key === "ArrowUp") return { i: clamp(focus.i - 1, rows), j: focus.j };
  if (key === "ArrowDown") return { i: clamp(focus.i + 1, rows), j: focus.j };
  if (key === "ArrowLeft") return { i: focus.i, j: clamp(focus.j - 1, cols) };
  if (key === "ArrowRight") return { i: focus.i, j: clamp(focus.j + 1, cols) };
  if (key === "Home") return { i: focus.i, j: 0 };
  if (key === "End") return { i: focus.i, j: cols - 1 };
  return focus;
}

export function reveal(lay, focus, { sx, sy, w, h }) {
  const fix = (s, pos, size, cell) => (pos < s ? pos : pos + cell > s + size ? pos + cell - size : s);
  return { sx: fix(sx, focus.j * lay.cellW, w - lay.labelW, lay.cellW), sy: fix(sy, focus.i * lay.cellH, h - HEAD_H, lay.cellH) };
}

/** Height of the label strip above the cells. */
export const HEADER_HEIGHT = HEAD_H;
