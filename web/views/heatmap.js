// Heatmap of attention weights: query rows x key columns, one pixel block per weight, hatched
// masked cells, a legend. Fits its width; zoomed, the grid scrolls under frozen labels. Labels
// are measured and thinned (every n-th) so they never overlap; the hovered row and column are
// outlined and their labels shown on the overlay, without redrawing the figure.
import { Bitmap } from "../paint.js";
import { font, fitText, formatValue, labelStep, textWidth, cellText, wrapText } from "../text.js";
import { hiddenWord, isMasked, matrixOf, windowText } from "../figure-data.js";
import { textOn } from "../theme.js";

const TITLE_H = 26;
const PAD = 8;
const LEGEND_TEXT = "rows: queries (who attends) · columns: keys · each row sums to 1";
// Weights from a file whose rows do not all sum to 1 (the note above the figure says which).
const LEGEND_UNNORMALISED = "rows: queries (who attends) · columns: keys · the file's rows do not all sum to 1";
const MAX_CELL = 56;
const MAX_LABEL_W = 110;
const SIN60 = Math.sin(Math.PI / 3);

/** A colour as one RGBA pixel in a Uint32Array over canvas bytes (little-endian: A B G R). */
const pixel = ([r, g, b]) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
const lookups = new WeakMap();
/** The colour scale as 256 pixels (cached per scale). */
function pixelTable(scale) {
  let table = lookups.get(scale);
  if (!table) lookups.set(scale, (table = Uint32Array.from(scale.rgb, pixel)));
  return table;
}

/**
 * The weights as pixels in the colour scale, masked cells in the masked colour; cached on the
 * data. `size` < L samples every (L / size)-th cell (thumbnails of long sentences).
 */
export function weightBitmap(data, layer, head, scale, palette, size = data.tokens.length) {
  const L = data.tokens.length;
  const n = Math.min(L, size);
  const key = `${layer}/${head}/${scale.name}/${palette.name}/${n}`;
  data._bitmaps ??= new Map();
  let bitmap = data._bitmaps.get(key);
  if (!bitmap) {
    const table = pixelTable(scale);
    const masked = pixel(hexRgb(palette.maskedBackground));
    bitmap = new Bitmap(n, n);
    const px = new Uint32Array(bitmap.rgba.buffer);
    if (n === L) {
      const m = matrixOf(data, layer, head);
      // One pixel per weight (the common case, and at 512 tokens 262 144 a head): a causal row
      // is coloured up to its diagonal and filled with the masked colour after it, and before
      // its layer's window when it has one (flat there; draw() hatches the later keys only); an
      // encoder's row is coloured within its layer's window on each side.
      const win = data.windows?.[layer] || n;
      for (let r = 0; r < n; r++) {
        const row = r * n;
        const end = data.causal ? r + 1 : Math.min(n, r + win);
        const start = Math.max(0, r - win + 1);
        px.fill(masked, row, row + start);
        for (let c = start; c < end; c++) {
          const w = m[row + c];
          px[row + c] = table[w > 0 ? (w < 1 ? (w * 255 + 0.5) | 0 : 255) : 0];
        }
        if (end < n) px.fill(masked, row + end, row + n);
      }
    } else {
      const cells = Int32Array.from({ length: n }, (_, r) => Math.floor(((r + 0.5) * L) / n));
      // Weights kept row by row read the sampled cells where they are (causal-rows.js).
      const at = data.weights.cells?.(layer, head, cells, cells);
      const m = at ? null : matrixOf(data, layer, head);
      for (let r = 0; r < n; r++) {
        const i = cells[r];
        for (let c = 0; c < n; c++) {
          const j = cells[c];
          const w = at ? at[r * n + c] : m[i * L + j];
          px[r * n + c] = isMasked(data, i, j, layer) ? masked : table[Math.round((w < 0 ? 0 : w > 1 ? 1 : w) * 255)];
        }
      }
    }
    data._bitmaps.set(key, bitmap);
  }
  return bitmap;
}

/** The [L, L] weights the layout shows (looked up once). */
const weightsOf = (lay) => (lay.matrix ??= matrixOf(lay.data, lay.layer, lay.head));

const hexRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

/**
 * @param {object} p
 * @param {object} p.data     FigureData
 * @param {number} p.layer
 * @param {number|"mean"} p.head
 * @param {string} p.title    drawn above the grid
 * @param {object} p.palette  theme colours
 * @param {object} p.scale    colorScale() of the colour map
 * @param {number} p.width    CSS px available
 * @param {number} p.zoom     1 = the whole grid fits; 2, 4… = cells that many times larger
 */
export function layout({ data, layer, head, title, palette, scale, width, zoom = 1 }) {
  const L = data.tokens.length;
  const fit = (cellFor) => {
    const fontSize = Math.max(9, Math.min(12, Math.floor(cellFor) - 2));
    const f = font(fontSize);
    const labels = data.tokens.map((t) => fitText(t.text, MAX_LABEL_W, f));
    const labelW = Math.max(24, ...labels.map((t) => textWidth(t, f)));
    return { fontSize, f, labels, labelW };
  };
  // Label sizes depend on the cell size and the cell size on the room left by labels: settle in two passes.
  let guess = fit(Math.min(MAX_CELL, (width - 2 * PAD) / (L + 4)));
  const margins = () => ({ left: PAD + guess.labelW + 6, right: Math.ceil(guess.labelW / 2) + 4 });
  const cellFor = () => Math.max(0.5, Math.min(MAX_CELL, (width - margins().left - margins().right) / L));
  let cell = cellFor();
  guess = fit(cell);
  cell = cellFor();
  const { fontSize, f, labels, labelW } = guess;
  const { left, right } = margins();
  const top = TITLE_H + Math.ceil(labelW * SIN60 + fontSize) + 4;
  const grid = cell * L;
  const legendBar = Math.max(80, Math.min(grid, 240, width - left - 100));
  const viewW = Math.min(width, Math.max(left + grid + right, left + legendBar + 100));
  // Tokens the model wrote (web/write.js, the element's generate) are labelled in the accent colour.
  const legend =
    (data.rowsSumToOne === false ? LEGEND_UNNORMALISED : LEGEND_TEXT) +
    (data.tokens.some((t) => t.written) ? " · accent labels: written by the model" : "") +
    (data.windows?.[layer] ? ` · flat grey: outside this layer's window of ${windowText(data, layer).width} keys (−∞)` : "");
  const legendLines = wrapText(legend, viewW - 2 * PAD, font(10));
  const legendH = 54 + 13 * (legendLines.length - 1);
  const viewH = top + grid + legendH;
  const zcell = cell * Math.max(1, zoom);
  const zgrid = zcell * L;
  return {
    kind: "heatmap",
    data,
    layer,
    head,
    title,
    palette,
    scale,
    L,
    cell: zcell,
    left,
    right,
    top,
    legendBar,
    legendLines,
    legendH,
    viewW,
    viewH,
    fullW: viewW + zgrid - grid,
    fullH: viewH + zgrid - grid,
    fontSize,
    font: f,
    labels,
    // A line of text is about 1.3 font sizes tall (ascent and descent); rotated labels only need
    // their strokes apart across the slant.
    rowStep: labelStep(zcell, Math.ceil(fontSize * 1.3)),
    colStep: labelStep(zcell * SIN60, fontSize + 2),
  };
}

/** The visible part of the grid for a view `w` x `h` scrolled by (sx, sy). */
function gridRect(lay, w, h) {
  return {
    x: lay.left,
    y: lay.top,
    w: Math.min(w - lay.left - lay.right, lay.cell * lay.L),
    h: Math.min(h - lay.top - lay.legendH, lay.cell * lay.L),
  };
}

/**
 * Draws the figure into a view of `w` x `h` px whose grid is scrolled by (sx, sy); the export
 * passes the full size and no scroll.
 */
export function draw(p, lay, { sx = 0, sy = 0, w = lay.fullW, h = lay.fullH } = {}) {
  const { palette, cell, L, left, top, fontSize } = lay;
  const g = gridRect(lay, w, h);
  p.rect(0, 0, w, h, palette.background);
  p.text(fitText(lay.title, w - PAD - Math.min(left, 40), font(13, 600)), Math.min(left, 40), 18, {
    size: 13,
    weight: 600,
    fill: palette.foreground,
  });

  p.save();
  p.clip(g.x, g.y, g.w, g.h);
  p.image(left - sx, top - sy, cell * L, cell * L, weightBitmap(lay.data, lay.layer, lay.head, lay.scale, palette));
  const i0 = Math.max(0, Math.floor(sy / cell));
  const i1 = Math.min(L, Math.ceil((sy + g.h) / cell));
  const j0 = Math.max(0, Math.floor(sx / cell));
  const j1 = Math.min(L, Math.ceil((sx + g.w) / cell));
  if (lay.data.causal && cell >= 6) {
    const rects = [];
    for (let i = i0; i < i1; i++) {
      const from = Math.max(i + 1, j0);
      if (from < j1) rects.push(left + from * cell - sx, top + i * cell - sy, (j1 - from) * cell, cell);
    }
    p.hatchRects(rects, palette.maskedBackground, palette.masked);
  }
  if (cell >= 34) {
    for (let i = i0; i < i1; i++) {
      for (let j = j0; j < j1; j++) {
        if (isMasked(lay.data, i, j, lay.layer)) continue;
        const w8 = weightsOf(lay)[i * L + j];
        p.text(cellText(w8), left + (j + 0.5) * cell - sx, top + (i + 0.5) * cell - sy, {
          size: 10,
          fill: textOn(lay.scale.color(w8)),
          anchor: "middle",
          baseline: "middle",
        });
      }
    }
  }
  p.restore();

  p.save();
  // Row labels may reach half a line above and below the grid (the first and last rows).
  p.clip(0, g.y - fontSize, left, g.h + 2 * fontSize);
  for (let i = i0 - (i0 % lay.rowStep); i < i1; i += lay.rowStep) {
    p.text(lay.labels[i], left - 6, top + (i + 0.5) * cell - sy, {
      size: fontSize,
      fill: labelFill(lay, i),
      anchor: "end",
      baseline: "middle",
    });
  }
  p.restore();
  p.save();
  p.clip(g.x, TITLE_H, w - g.x, g.y - TITLE_H);
  for (let j = j0 - (j0 % lay.colStep); j < j1; j += lay.colStep) {
    p.text(lay.labels[j], left + (j + 0.5) * cell - sx + fontSize / 3, top - 6, { size: fontSize, fill: labelFill(lay, j), rotate: -60 });
  }
  p.restore();

  drawLegend(p, lay, left, g.y + g.h + 14);
}

const labelFill = (lay, i) => (lay.data.tokens[i].written ? lay.palette.accent : lay.palette.foreground);

function drawLegend(p, lay, x, y) {
  const { palette } = lay;
  const w = lay.legendBar;
  const bar = lay.scale.bar ?? (lay.scale.bar = legendBitmap(lay.scale));
  p.image(x, y, w, 10, bar);
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    p.text(String(t), x + t * w, y + 23, { size: 10, fill: palette.muted, anchor: t === 0 ? "start" : t === 1 ? "end" : "middle" });
  }
  if (lay.data.causal) {
    p.hatch(x + w + 14, y, 10, 10, palette.maskedBackground, palette.masked);
    p.text("masked (−∞)", x + w + 28, y + 9, { size: 10, fill: palette.muted });
  }
  lay.legendLines.forEach((line, k) => p.text(line, PAD, y + 36 + 13 * k, { size: 10, fill: palette.muted }));
}

function legendBitmap(scale) {
  const b = new Bitmap(256, 1);
  scale.rgb.forEach((c, i) => b.rgba.set([...c, 255], i * 4));
  return b;
}

/** The cell under (x, y) in view coordinates, or null. */
export function hit(lay, x, y, { sx = 0, sy = 0, w = lay.viewW, h = lay.viewH } = {}) {
  const g = gridRect(lay, w, h);
  const inRows = y >= g.y && y < g.y + g.h;
  const inCols = x >= g.x && x < g.x + g.w;
  const i = Math.floor((y - lay.top + sy) / lay.cell);
  const j = Math.floor((x - lay.left + sx) / lay.cell);
  if (inRows && inCols) return { i, j };
  if (inRows && x < g.x && i >= 0 && i < lay.L) return { i, j: null };
  if (inCols && y < g.y && y > TITLE_H && j >= 0 && j < lay.L) return { i: null, j };
  return null;
}

/** Outlines the focused row and column (and cell) and shows their labels in full. */
export function highlight(p, lay, focus, { sx = 0, sy = 0, w = lay.viewW, h = lay.viewH } = {}) {
  if (!focus) return;
  const { cell, left, top, palette, L } = lay;
  const g = gridRect(lay, w, h);
  p.save();
  p.clip(0, TITLE_H, w, g.y + g.h - TITLE_H);
  const stroke = palette.highlight;
  const line = Math.max(1, Math.min(2, cell / 4));
  const f = font(Math.max(11, lay.fontSize), 600);
  if (focus.i !== null && focus.i !== undefined) {
    const y = top + focus.i * cell - sy;
    p.strokeRect(left - 0.5, y - 0.5, cell * L - sx + 1, cell + 1, stroke, line);
    const text = lay.data.tokens[focus.i].text;
    const tw = Math.min(textWidth(text, f), left - 8);
    p.rect(left - 10 - tw, y + cell / 2 - 9, tw + 8, 18, palette.background, 0.92);
    p.text(fitText(text, left - 8, f), left - 6, y + cell / 2, {
      size: Math.max(11, lay.fontSize),
      weight: 600,
      fill: stroke,
      anchor: "end",
      baseline: "middle",
    });
  }
  if (focus.j !== null && focus.j !== undefined) {
    const x = left + focus.j * cell - sx;
    p.strokeRect(x - 0.5, top - 0.5, cell + 1, cell * L - sy + 1, stroke, line);
    const text = fitText(lay.data.tokens[focus.j].text, MAX_LABEL_W, f);
    // On a box of the background as long as the column's own label, which it is drawn over.
    p.text(text, x + cell / 2 + lay.fontSize / 3, top - 6, {
      size: Math.max(11, lay.fontSize),
      weight: 600,
      fill: stroke,
      rotate: -60,
      background: { fill: palette.background, width: textWidth(lay.labels[focus.j], font(lay.fontSize)) },
    });
  }
  if (focus.i !== null && focus.j !== null && focus.i !== undefined && focus.j !== undefined) {
    p.strokeRect(left + focus.j * cell - sx - 1, top + focus.i * cell - sy - 1, cell + 2, cell + 2, palette.foreground, 2);
  }
  p.restore();
}

/** The readout for a focus: query → key, 1-based positions, the weight to 4 significant digits. */
export function readout(lay, focus) {
  const t = lay.data.tokens;
  if (!focus) return "";
  if (focus.i !== null && focus.j !== null) {
    const where = `row ${focus.i + 1} “${t[focus.i].text}” → column ${focus.j + 1} “${t[focus.j].text}”`;
    return isMasked(lay.data, focus.i, focus.j, lay.layer)
      ? `${where}: ${hiddenWord(lay.data, focus.i, focus.j)}, weight 0`
      : `${where}: weight ${formatValue(weightsOf(lay)[focus.i * lay.L + focus.j])}`;
  }
  if (focus.i !== null) return `row ${focus.i + 1} “${t[focus.i].text}”: what this query attends to`;
  return `column ${focus.j + 1} “${t[focus.j].text}”: which queries attend to this key`;
}

/** Moves a keyboard focus one cell (arrow keys, Home/End); the first key press lands on cell 1, 1. */
export function move(lay, focus, key) {
  const L = lay.L;
  const f = focus && focus.i !== null && focus.j !== null ? { ...focus } : { i: 0, j: 0 };
  if (!focus) return f;
  const clamp = (x) => Math.max(0, Math.min(L - 1, x));
  if (key === "ArrowUp") f.i = clamp(f.i - 1);
  else if (key === "ArrowDown") f.i = clamp(f.i + 1);
  else if (key === "ArrowLeft") f.j = clamp(f.j - 1);
  else if (key === "ArrowRight") f.j = clamp(f.j + 1);
  else if (key === "Home") f.j = 0;
  else if (key === "End") f.j = L - 1;
  return f;
}

/** Scroll offsets that bring a focused cell into a view of w x h. */
export function reveal(lay, focus, { sx, sy, w, h }) {
  const g = gridRect(lay, w, h);
  const fix = (s, pos, size) => (pos < s ? pos : pos + lay.cell > s + size ? pos + lay.cell - size : s);
  return {
    sx: focus.j === null ? sx : fix(sx, focus.j * lay.cell, g.w),
    sy: focus.i === null ? sy : fix(sy, focus.i * lay.cell, g.h),
  };
}
