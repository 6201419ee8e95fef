// Token-to-token lines, the way BertViz's head view draws attention: queries on the left, keys
// on the right, one line per (query, key, head) whose opacity is the weight, a colour per head.
// Lines of one head and similar weight are stroked as one path (weights quantised to 1/32), so
// 8 heads x 512 x 512 pairs draw in a few dozen calls. Hovering a token draws its lines on the
// overlay and dims the rest (a style change, not a redraw).
import { font, fitText, formatValue, labelStep, textWidth } from "../text.js";
import { headName, matrixOf } from "../figure-data.js";
import { linePairs } from "./line-pairs.js";
import { headColor } from "../theme.js";

const TITLE_H = 26;
const HEADER_H = 26;
const PAD = 8;
const MAX_LABEL_W = 120;
const LEVELS = 32;
/**
 * Lines lighter than this are not drawn. A line's opacity is its weight's level (its weight
 * rounded up to 1/LEVELS) minus a half, over LEVELS, and the lines of one level are one path, so
 * overlapping ones do not add up. The first two levels (weight ≤ 1/16) would be drawn at 1.6% and
 * 4.7% opacity: a haze, not a line a reader follows. Without a GPU (headless Chromium, software
 * raster) the browser rasterises the strokes when it paints the frame, ~4 µs per 300 px line
 * here, whatever the path's opacity, so the haze cost most of the wait: at 64 tokens, 8 heads,
 * both masks side by side, the second level alone held 5 500 of the 8 550 lines drawn, and
 * dropping it took the painted frame from 61 to 44 ms (docs/performance.md, "The lines view's
 * painted frame"). The hint under the figure says which weights get a line.
 */
const MIN_WEIGHT = 2 / LEVELS + 1e-6;
/** The lines of a hovered token are drawn strongly (opacity 0.15 + weight): from this weight up. */
const MIN_HIGHLIGHT_WEIGHT = 0.01;

/**
 * @param {object} p
 * @param {object} p.data        FigureData
 * @param {number} p.layer
 * @param {boolean[]} p.visible  which heads to draw
 * @param {string} p.title
 * @param {object} p.palette
 * @param {number} p.width       CSS px available
 * @param {number} p.zoom        1 = all rows fit; 2, 4… = rows that many times taller
 */
export function layout({ data, layer, visible, title, palette, width, zoom = 1 }) {
  const L = data.tokens.length;
  const row = Math.max(1.2, Math.min(22, 560 / L));
  const fontSize = Math.max(10, Math.min(13, Math.floor(row * zoom) - 3));
  const f = font(fontSize);
  const labels = data.tokens.map((t) => fitText(t.text, MAX_LABEL_W, f));
  const labelW = Math.max(30, ...labels.map((t) => textWidth(t, f)));
  const span = Math.max(100, Math.min(320, width - 2 * labelW - 4 * PAD));
  const leftX = PAD + labelW + 4;
  const rightX = leftX + span;
  const top = TITLE_H + HEADER_H;
  const viewW = Math.min(Math.max(width, 200), rightX + 4 + labelW + PAD);
  const viewH = top + row * L + PAD;
  const zrow = row * Math.max(1, zoom);
  return {
    kind: "lines",
    data,
    layer,
    visible,
    title,
    palette,
    L,
    row: zrow,
    top,
    leftX,
    rightX,
    labelW,
    fontSize,
    font: f,
    labels,
    step: labelStep(zrow, Math.ceil(fontSize * 1.3)),
    viewW,
    viewH,
    fullW: viewW,
    fullH: viewH + (zrow - row) * L,
  };
}

const headWeights = (lay, h) => matrixOf(lay.data, lay.layer, h);

/**
 * The pairs of one head that are drawn (weight >= MIN_WEIGHT), grouped by quantised weight
 * (line-pairs.js). Found once per data, layer and head: an edit brings new data; a scroll or a
 * head toggle reuses them.
 */
function pairsByLevel(lay, h) {
  const { data, L } = lay;
  data._linePairs ??= new Map();
  const key = `${lay.layer}:${h}`;
  let byLevel = data._linePairs.get(key);
  if (!byLevel) {
    byLevel = linePairs(headWeights(lay, h), L, data.causal, MIN_WEIGHT, LEVELS);
    data._linePairs.set(key, byLevel);
  }
  return byLevel;
}

const range = (n) => Array.from({ length: n }, (_, i) => i);

/** Draws the figure into a view of `w` x `h` px scrolled down by sy (the export: full size). */
export function draw(p, lay, { sy = 0, w = lay.fullW, h = lay.fullH } = {}) {
  const { palette, L, row, top, leftX, rightX, fontSize, visible } = lay;
  p.rect(0, 0, w, h, palette.background);
  p.text(fitText(lay.title, w - 2 * PAD, font(13, 600)), PAD, 18, { size: 13, weight: 600, fill: palette.foreground });
  p.text("query", leftX, top - 8, { size: 10, fill: palette.muted, anchor: "end" });
  p.text("key", rightX, top - 8, { size: 10, fill: palette.muted });
  visible.forEach((on, h) => {
    const x = leftX + 12 + h * 20;
    if (x + 14 > rightX - 20) return;
    p.rect(x, top - 20, 14, 14, headColor(h), on ? 1 : 0.25);
  });
  p.save();
  p.clip(0, top, w, h - top);
  // Every line may cross the view, whichever rows it joins: all are stroked and the clip cuts them.
  const ys = Float32Array.from({ length: L }, (_, i) => top + (i + 0.5) * row - sy);
  const x1 = leftX + 6;
  const x2 = rightX - 6;
  let coords = new Float32Array(0);
  for (let hd = 0; hd < visible.length; hd++) {
    if (!visible[hd]) continue;
    const byLevel = pairsByLevel(lay, hd);
    for (let level = 1; level <= LEVELS; level++) {
      const pairs = byLevel[level];
      if (!pairs.length) continue;
      if (coords.length < 4 * pairs.length) coords = new Float32Array(4 * pairs.length);
      for (let m = 0, c = 0; m < pairs.length; m++, c += 4) {
        const k = pairs[m];
        const i = (k / L) | 0;
        coords[c] = x1;
        coords[c + 1] = ys[i];
        coords[c + 2] = x2;
        coords[c + 3] = ys[k - i * L];
      }
      // The painter strokes the segments at once, so one scratch array serves every level.
      // Lines up to a quarter of the weight are 1 px: they are most of the segments, and Skia
      // draws 1 px strokes far faster than 2 px ones (their outline is not computed).
      const width = row >= 4 && level > LEVELS / 4 ? 2 : 1;
      p.segments(coords.subarray(0, 4 * pairs.length), headColor(hd), width, (level - 0.5) / LEVELS);
    }
  }
  const i0 = Math.max(0, Math.floor(sy / row));
  const i1 = Math.min(L, Math.ceil((sy + h - top) / row));
  for (let i = i0 - (i0 % lay.step); i < i1; i += lay.step) {
    const y = top + (i + 0.5) * row - sy;
    // Tokens the model wrote (web/write.js, the element's generate) in the accent colour, as the heatmap.
    const fill = lay.data.tokens[i].written ? palette.accent : palette.foreground;
    p.text(lay.labels[i], leftX, y, { size: fontSize, fill, anchor: "end", baseline: "middle" });
    p.text(lay.labels[i], rightX, y, { size: fontSize, fill, baseline: "middle" });
  }
  p.restore();
}

/** The token under (x, y): { i } on the query side, { j } on the key side, or null. */
export function hit(lay, x, y, { sy = 0 } = {}) {
  if (y < lay.top) return null;
  const k = Math.floor((y - lay.top + sy) / lay.row);
  if (k < 0 || k >= lay.L) return null;
  const mid = (lay.leftX + lay.rightX) / 2;
  return x < mid ? { i: k, j: null } : { i: null, j: k };
}

/** Draws the focused token's lines on the overlay, strongly, with its label in full. */
export function highlight(p, lay, focus, { sy = 0, w = lay.viewW, h = lay.viewH } = {}) {
  if (!focus) return;
  const { L, row, top, leftX, rightX, palette, visible } = lay;
  const y = (i) => top + (i + 0.5) * row - sy;
  p.save();
  p.clip(0, top, w, h - top);
  const query = focus.i !== null;
  const k = query ? focus.i : focus.j;
  for (let hd = 0; hd < visible.length; hd++) {
    if (!visible[hd]) continue;
    const wts = headWeights(lay, hd);
    for (let o = 0; o < L; o++) {
      const v = query ? wts[k * L + o] : wts[o * L + k];
      if (v < MIN_HIGHLIGHT_WEIGHT) continue;
      const [a, b] = query ? [k, o] : [o, k];
      if (lay.data.causal && b > a) continue; // masked: not drawn in the figure either
      p.line(leftX + 6, y(a), rightX - 6, y(b), headColor(hd), 2.5, Math.min(1, 0.15 + v));
    }
  }
  const f = font(Math.max(11, lay.fontSize), 600);
  const text = lay.data.tokens[k].text;
  const tw = Math.min(textWidth(text, f), lay.labelW + PAD);
  const x = query ? leftX : rightX;
  p.rect(query ? x - tw - 4 : x - 2, y(k) - 9, tw + 6, 18, palette.background, 0.92);
  p.text(fitText(text, lay.labelW + PAD, f), x, y(k), {
    size: Math.max(11, lay.fontSize),
    weight: 600,
    fill: palette.highlight,
    anchor: query ? "end" : "start",
    baseline: "middle",
  });
  p.restore();
}

/** The three strongest partners of the focused token, over the visible heads (their mean). */
export function readout(lay, focus) {
  if (!focus) return "";
  const { L, visible, data } = lay;
  const heads = visible.map((on, h) => (on ? h : -1)).filter((h) => h >= 0);
  if (!heads.length) return "every head is hidden";
  const query = focus.i !== null;
  const k = query ? focus.i : focus.j;
  const mean = new Float64Array(L);
  for (const h of heads) {
    const wts = headWeights(lay, h);
    for (let o = 0; o < L; o++) mean[o] += (query ? wts[k * L + o] : wts[o * L + k]) / heads.length;
  }
  const top = range(L)
    .sort((a, b) => mean[b] - mean[a])
    .slice(0, 3)
    .map((o) => `“${data.tokens[o].text}” (${o + 1}) ${formatValue(mean[o])}`);
  const who = heads.length === 1 ? headName(data, heads[0]) : `mean of ${heads.length} heads`;
  return query
    ? `query ${k + 1} “${data.tokens[k].text}” attends most to ${top.join(", ")} (${who})`
    : `key ${k + 1} “${data.tokens[k].text}” is attended most by ${top.join(", ")} (${who})`;
}

/** Arrow keys: up and down walk the tokens, left and right switch between queries and keys. */
export function move(lay, focus, key) {
  if (!focus) return { i: 0, j: null };
  const query = focus.i !== null;
  const k = query ? focus.i : focus.j;
  const at = (q, n) => (q ? { i: n, j: null } : { i: null, j: n });
  const clamp = (n) => Math.max(0, Math.min(lay.L - 1, n));
  if (key === "ArrowUp") return at(query, clamp(k - 1));
  if (key === "ArrowDown") return at(query, clamp(k + 1));
  if (key === "ArrowLeft") return at(true, k);
  if (key === "ArrowRight") return at(false, k);
  if (key === "Home") return at(query, 0);
  if (key === "End") return at(query, lay.L - 1);
  return focus;
}

/** Scroll offset that brings a focused token into a view of height h. */
export function reveal(lay, focus, { sx, sy, h }) {
  const k = focus.i ?? focus.j;
  const pos = k * lay.row;
  const size = h - lay.top;
  return { sx, sy: pos < sy ? pos : pos + lay.row > sy + size ? pos + lay.row - size : sy };
}
