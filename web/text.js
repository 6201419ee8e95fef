// Text measured the way the figures draw it: canvas measureText in the figures' font, so wide
// glyphs (CJK, emoji) get the room they need. Labels are cut at grapheme boundaries.

export const FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", sans-serif';

/** A CSS font shorthand for `size` px (and an optional weight) in the figures' family. */
export const font = (size, weight = 400) => `${weight} ${size}px ${FONT_FAMILY}`;

let context;
const widths = new Map();

/** Width in CSS px of `text` drawn in `cssFont`. */
export function textWidth(text, cssFont) {
  const key = `${cssFont}\u0000${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    context ??= (typeof OffscreenCanvas === "function" ? new OffscreenCanvas(1, 1) : document.createElement("canvas")).getContext("2d");
    context.font = cssFont;
    w = context.measureText(text).width;
    if (widths.size > 20000) widths.clear();
    widths.set(key, w);
  }
  return w;
}

const segmenter = typeof Intl.Segmenter === "function" ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

/** The user-perceived characters of a string (emoji sequences stay whole). */
export function graphemes(text) {
  return segmenter ? Array.from(segmenter.segment(text), (s) => s.segment) : Array.from(text);
}

/** `text`, cut with an ellipsis so that it is at most `maxWidth` px wide in `cssFont`. */
export function fitText(text, maxWidth, cssFont) {
  if (textWidth(text, cssFont) <= maxWidth) return text;
  const parts = graphemes(text);
  let lo = 0;
  let hi = parts.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (textWidth(`${parts.slice(0, mid).join("")}…`, cssFont) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return `${parts.slice(0, lo).join("")}…`;
}

/** Breaks `text` into lines of at most `maxWidth` px at spaces (a long word gets a line of its own). */
export function wrapText(text, maxWidth, cssFont) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && textWidth(candidate, cssFont) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Every how many-th label to draw so that labels `extent` px tall, `pitch` px apart, never
 * overlap (1 = all of them).
 */
export const labelStep = (pitch, extent) => Math.max(1, Math.ceil(extent / Math.max(pitch, 1e-6)));

/** A number with 4 significant digits, −∞ for -Infinity and a true minus sign. */
export function formatValue(x) {
  if (x === -Infinity) return "−∞";
  if (x === Infinity) return "∞";
  if (Number.isNaN(x)) return "NaN";
  return x.toPrecision(4).replaceAll("-", "−");
}

/** A number for a matrix cell: 2 decimals, −∞ for -Infinity and a true minus sign. */
export function cellText(x) {
  if (x === -Infinity) return "−∞";
  return x.toFixed(2).replace("-", "−");
}
