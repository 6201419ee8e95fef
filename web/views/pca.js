// PCA of each word before (X) and after context (X + attention output), with an arrow between.
// Panels side by side share one domain, so the same position means the same thing in both.
// Labels are placed greedily around their point with measured widths; one that would overlap
// another is left out and shown when its point is hovered.
import { scaleLinear } from "d3-scale";
import { headColor } from "../theme.js";
import { font, fitText, formatValue, textWidth } from "../text.js";
import { pcaSize } from "./sizes.js";

const M = { left: 48, right: 16, top: 34, bottom: 58 };
const LABEL = font(11);

const points = (data) => data.explanation.pca;

/** One [lo, hi] per axis covering every panel's points before and after context. */
export function sharedDomain(panels) {
  const lo = [Infinity, Infinity];
  const hi = [-Infinity, -Infinity];
  for (const data of panels) {
    for (const t of [points(data).original.data, points(data).contextual.data]) {
      for (let k = 0; k < t.length; k++) {
        const axis = k % 2;
        if (t[k] < lo[axis]) lo[axis] = t[k];
        if (t[k] > hi[axis]) hi[axis] = t[k];
      }
    }
  }
  const pad = (a) => (hi[a] - lo[a] < 1e-6 ? [lo[a] - 1, hi[a] + 1] : [lo[a], hi[a]]);
  return { x: pad(0), y: pad(1) };
}

/**
 * @param {object} p
 * @param {object} p.data     FigureData with an explanation (its pca)
 * @param {object} p.domain   sharedDomain() of the panels shown together
 * @param {string} p.title
 * @param {object} p.palette
 * @param {number} p.width    CSS px available
 */
export function layout({ data, domain, title, palette, width }) {
  const { w, h } = pcaSize(width);
  const x = scaleLinear()
    .domain(domain.x)
    .nice()
    .range([M.left, w - M.right]);
  const y = scaleLinear()
    .domain(domain.y)
    .nice()
    .range([h - M.bottom, M.top]);
  const pca = points(data);
  const L = data.tokens.length;
  const at = (t, i) => [x(t[2 * i]), y(t[2 * i + 1])];
  const before = Array.from({ length: L }, (_, i) => at(pca.original.data, i));
  const after = Array.from({ length: L }, (_, i) => at(pca.contextual.data, i));
  const labels = placeLabels(
    data.tokens.map((t) => fitText(t.text, 90, LABEL)),
    after,
    { x0: M.left, x1: w - M.right, y0: M.top, y1: h - M.bottom },
    [...before, ...after],
  );
  const ticks = (s) => s.ticks(Math.max(3, Math.round(Math.abs(s.range()[1] - s.range()[0]) / 80)));
  return {
    kind: "pca",
    data,
    title,
    palette,
    L,
    x,
    y,
    xTicks: ticks(x),
    yTicks: ticks(y),
    before,
    after,
    labels,
    viewW: w,
    viewH: h,
    fullW: w,
    fullH: h,
  };
}

/**
 * Greedy label placement: each label tries four spots around its point and takes the first
 * free one; a label with no free spot is left out (its point's hover shows it). Boxes are
 * kept in a grid of 32 px buckets, so 500 labels place in a few milliseconds.
 */
function placeLabels(texts, at, bounds, markers) {
  const BUCKET = 32;
  const grid = new Map();
  const cells = (b, visit) => {
    for (let gx = Math.floor(b.x0 / BUCKET); gx <= Math.floor(b.x1 / BUCKET); gx++) {
      for (let gy = Math.floor(b.y0 / BUCKET); gy <= Math.floor(b.y1 / BUCKET); gy++) if (visit(`${gx},${gy}`)) return true;
    }
    return false;
  };
  const add = (b) =>
    cells(b, (key) => {
      if (!grid.has(key)) grid.set(key, []);
      grid.get(key).push(b);
      return false;
    });
  const overlaps = (b) => cells(b, (key) => (grid.get(key) ?? []).some((o) => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1));
  // Labels keep off every point as well as off each other.
  for (const [x, y] of markers) add({ x0: x - 4, x1: x + 4, y0: y - 4, y1: y + 4 });
  const placed = [];
  texts.forEach((text, i) => {
    const tw = textWidth(text, LABEL);
    const [px, py] = at[i];
    for (const [dx, dy, anchor] of [
      [7, -6, "start"],
      [7, 14, "start"],
      [-7, -6, "end"],
      [-7, 14, "end"],
    ]) {
      const x0 = anchor === "start" ? px + dx : px + dx - tw;
      const b = { x0, x1: x0 + tw, y0: py + dy - 10, y1: py + dy + 2 };
      if (b.x0 < bounds.x0 || b.x1 > bounds.x1 || b.y0 < bounds.y0 - 20 || b.y1 > bounds.y1 + 10 || overlaps(b)) continue;
      add(b);
      placed[i] = { text, x: px + dx, y: py + dy, anchor };
      return;
    }
  });
  return placed;
}

export function draw(p, lay) {
  const { palette, x, y, viewW: w, viewH: h } = lay;
  const pca = points(lay.data);
  p.rect(0, 0, w, h, palette.background);
  p.text(fitText(lay.title, w - 16, font(13, 600)), 8, 20, { size: 13, weight: 600, fill: palette.foreground });
  for (const t of lay.xTicks) {
    p.line(x(t), M.top, x(t), h - M.bottom, palette.grid);
    p.text(formatTick(t), x(t), h - M.bottom + 14, { size: 10, fill: palette.muted, anchor: "middle" });
  }
  for (const t of lay.yTicks) {
    const yt = y(t);
    if (yt < M.top - 0.5 || yt > h - M.bottom + 0.5) continue;
    p.line(M.left, yt, w - M.right, yt, palette.grid);
    p.text(formatTick(t), M.left - 6, yt + 3, { size: 10, fill: palette.muted, anchor: "end" });
  }
  p.text(`PC 1 (${pct(pca.explained[0])} of the variance of X)`, (M.left + w - M.right) / 2, h - M.bottom + 30, {
    size: 11,
    fill: palette.muted,
    anchor: "middle",
  });
  p.text(`PC 2 (${pct(pca.explained[1])})`, 14, (M.top + h - M.bottom) / 2, {
    size: 11,
    fill: palette.muted,
    anchor: "middle",
    rotate: -90,
  });
  for (let i = 0; i < lay.L; i++) {
    const [x0, y0] = lay.before[i];
    const [x1, y1] = lay.after[i];
    if (Math.hypot(x1 - x0, y1 - y0) > 6) p.arrow(x0, y0, x1, y1, palette.muted, 1.1);
    p.circle(x0, y0, 3.5, { stroke: palette.accent, width: 1.5 });
    p.circle(x1, y1, 4, { fill: headColor(1) });
  }
  for (const label of lay.labels)
    if (label) p.text(label.text, label.x, label.y, { size: 11, fill: palette.foreground, anchor: label.anchor });
  const ly = h - 12;
  p.circle(M.left + 4, ly - 3, 3.5, { stroke: palette.accent, width: 1.5 });
  p.text("X = embedding + position", M.left + 12, ly, { size: 10, fill: palette.muted });
  const second = M.left + 24 + textWidth("X = embedding + position", font(10));
  p.circle(second, ly - 3, 4, { fill: headColor(1) });
  p.text("X + attention output", second + 9, ly, { size: 10, fill: palette.muted });
}

const pct = (f) => `${(f * 100).toFixed(1)}%`;
const formatTick = (t) => (Math.abs(t) < 1e-9 ? "0" : String(Number(t.toPrecision(3)))).replace("-", "−");

/** The token whose point (before or after context) is nearest (x, y), within 14 px. */
export function hit(lay, x, y) {
  let best = null;
  let bestD = 14;
  for (let i = 0; i < lay.L; i++) {
    for (const [px, py] of [lay.after[i], lay.before[i]]) {
      const d = Math.hypot(px - x, py - y);
      if (d < bestD) {
        bestD = d;
        best = { i, j: null };
      }
    }
  }
  return best;
}

export function highlight(p, lay, focus) {
  if (!focus || focus.i === null) return;
  const { palette } = lay;
  const i = focus.i;
  const [x0, y0] = lay.before[i];
  const [x1, y1] = lay.after[i];
  p.arrow(x0, y0, x1, y1, palette.highlight, 2);
  p.circle(x0, y0, 6, { stroke: palette.highlight, width: 2 });
  p.circle(x1, y1, 6.5, { stroke: palette.highlight, width: 2 });
  const f = font(12, 600);
  const text = fitText(lay.data.tokens[i].text, 200, f);
  const tw = textWidth(text, f);
  const right = x1 + 10 + tw < lay.viewW;
  p.rect(right ? x1 + 8 : x1 - 12 - tw, y1 - 22, tw + 6, 17, palette.background, 0.92);
  p.text(text, right ? x1 + 10 : x1 - 10, y1 - 9, { size: 12, weight: 600, fill: palette.highlight, anchor: right ? "start" : "end" });
}

export function readout(lay, focus) {
  if (!focus || focus.i === null) return "";
  const pca = points(lay.data);
  const i = focus.i;
  const o = [pca.original.data[2 * i], pca.original.data[2 * i + 1]];
  const c = [pca.contextual.data[2 * i], pca.contextual.data[2 * i + 1]];
  return `token ${i + 1} “${lay.data.tokens[i].text}”: before context (${o.map(formatValue).join(", ")}), after (${c.map(formatValue).join(", ")}), moved ${formatValue(Math.hypot(c[0] - o[0], c[1] - o[1]))}`;
}

/** Arrow keys walk the tokens in sentence order. */
export function move(lay, focus, key) {
  if (!focus || focus.i === null) return { i: 0, j: null };
  const step = key === "ArrowUp" || key === "ArrowLeft" ? -1 : key === "ArrowDown" || key === "ArrowRight" ? 1 : 0;
  if (key === "Home") return { i: 0, j: null };
  if (key === "End") return { i: lay.L - 1, j: null };
  return { i: Math.max(0, Math.min(lay.L - 1, focus.i + step)), j: null };
}

export const reveal = (lay, focus, view) => view;
