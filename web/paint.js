// The drawing vocabulary of the figures. A view draws through a painter, so the same code paints
// the live canvas, the PNG export (a canvas too) and the SVG export (svg.js, the same calls).
import { font } from "./text.js";

// Canvases that hold a Bitmap's pixels for drawImage, one per size, reused: allocating a
// canvas costs milliseconds, copying pixels into one that exists does not.
const scratch = new Map();

/** Pixels of an image (RGBA, row-major) that a painter draws scaled, without smoothing. */
export class Bitmap {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.rgba = new Uint8ClampedArray(width * height * 4);
  }

  /** A canvas holding the pixels, until another bitmap of the same size needs it. */
  canvas() {
    const key = `${this.width}x${this.height}`;
    let c = scratch.get(key);
    if (!c) {
      c = document.createElement("canvas");
      c.width = this.width;
      c.height = this.height;
      scratch.set(key, c);
    }
    if (c.holds !== this) {
      c.getContext("2d").putImageData(new ImageData(this.rgba, this.width, this.height), 0, 0);
      c.holds = this;
    }
    return c;
  }
}

/** Canvases within this many px of the viewport count as on screen (painted now, not when idle). */
export const NEAR = 300;

/**
 * Runs `callback({ timeRemaining })` when the browser is idle. Without requestIdleCallback
 * (Safari): a task with a deadline of its own, 8 ms from its start.
 */
export const whenIdle =
  globalThis.requestIdleCallback ??
  ((f) =>
    setTimeout(() => {
      const end = performance.now() + 8;
      f({ timeRemaining: () => end - performance.now() });
    }, 16));

const ANCHOR = { start: "left", middle: "center", end: "right" };

/** Paints on a CanvasRenderingContext2D. */
export class CanvasPainter {
  constructor(context) {
    this.c = context;
    this.font = "";
  }

  save() {
    this.c.save();
    this.font = "";
  }

  restore() {
    this.c.restore();
    this.font = "";
  }

  translate(x, y) {
    this.c.translate(x, y);
  }

  clip(x, y, w, h) {
    this.c.beginPath();
    this.c.rect(x, y, w, h);
    this.c.clip();
  }

  rect(x, y, w, h, fill, opacity = 1) {
    this.c.globalAlpha = opacity;
    this.c.fillStyle = fill;
    this.c.fillRect(x, y, w, h);
    this.c.globalAlpha = 1;
  }

  strokeRect(x, y, w, h, stroke, width = 1) {
    this.c.strokeStyle = stroke;
    this.c.lineWidth = width;
    this.c.strokeRect(x, y, w, h);
  }

  /** Diagonal stripes on `background`: the mark of a masked cell. */
  hatch(x, y, w, h, background, stripe) {
    this.hatchRects([x, y, w, h], background, stripe);
  }

  /**
   * hatch() over rectangles [x, y, w, h, ...] filled as one path: a causal heatmap's masked
   * cells are one rectangle per row, and one fill of them all costs the pattern's set-up once
   * (and leaves no seam where two rows meet).
   */
  hatchRects(rects, background, stripe) {
    if (!rects.length) return;
    const key = `${background}/${stripe}`;
    if (this.patternKey !== key) {
      const tile = document.createElement("canvas");
      tile.width = tile.height = 6;
      const t = tile.getContext("2d");
      t.fillStyle = background;
      t.fillRect(0, 0, 6, 6);
      t.strokeStyle = stripe;
      t.lineWidth = 1.5;
      t.beginPath();
      for (const o of [-6, 0, 6]) {
        t.moveTo(o, 6);
        t.lineTo(o + 6, 0);
      }
      t.stroke();
      this.pattern = this.c.createPattern(tile, "repeat");
      this.patternKey = key;
    }
    const c = this.c;
    c.fillStyle = this.pattern;
    c.beginPath();
    for (let k = 0; k < rects.length; k += 4) c.rect(rects[k], rects[k + 1], rects[k + 2], rects[k + 3]);
    c.fill();
  }

  /**
   * Straight segments [x1, y1, x2, y2, ...] stroked as one path (one colour and opacity). A
   * whole width of 2 px or more is drawn as that many 1 px lines side by side, 1 px apart:
   * without a GPU, Skia fills a wider stroke's outline through a coverage mask as large as the
   * whole path's bounds, ~13 µs per 300 px segment here against ~1 µs for a 1 px line (200
   * segments: 2.6 ms stroked, 0.6 ms as pairs of 1 px lines; docs/performance.md, "The lines
   * view's thick lines"). Side by side they cover the same pixels.
   */
  segments(coords, stroke, width = 1, opacity = 1) {
    const c = this.c;
    c.globalAlpha = opacity;
    c.strokeStyle = stroke;
    const lines = width >= 2 && Number.isInteger(width) ? width : 1;
    c.lineWidth = lines > 1 ? 1 : width;
    c.beginPath();
    for (let k = 0; k < coords.length; k += 4) {
      const x1 = coords[k];
      const y1 = coords[k + 1];
      const x2 = coords[k + 2];
      const y2 = coords[k + 3];
      if (lines === 1) {
        c.moveTo(x1, y1);
        c.lineTo(x2, y2);
        continue;
      }
      // Offsets across the segment: along its unit normal, centred on it.
      const length = Math.hypot(x2 - x1, y2 - y1) || 1;
      const nx = -(y2 - y1) / length;
      const ny = (x2 - x1) / length;
      for (let n = 0; n < lines; n++) {
        const o = n - (lines - 1) / 2;
        c.moveTo(x1 + o * nx, y1 + o * ny);
        c.lineTo(x2 + o * nx, y2 + o * ny);
      }
    }
    c.stroke();
    c.globalAlpha = 1;
  }

  line(x1, y1, x2, y2, stroke, width = 1, opacity = 1) {
    this.segments([x1, y1, x2, y2], stroke, width, opacity);
  }

  /**
   * Text; anchor "start" | "middle" | "end", baseline "alphabetic" | "middle", rotate in degrees.
   * `background` { fill, width }: a box behind the text (at least `width` long, rotated with it),
   * so that a label drawn over another (a highlighted one) hides it.
   */
  text(str, x, y, { size = 12, weight = 400, fill, anchor = "start", baseline = "alphabetic", rotate = 0, background = null } = {}) {
    const c = this.c;
    const f = font(size, weight);
    if (f !== this.font) {
      c.font = f;
      this.font = f;
    }
    c.fillStyle = fill;
    c.textAlign = ANCHOR[anchor];
    c.textBaseline = baseline;
    // Most labels are level and unboxed: drawn in place, without saving and moving the context.
    if (!rotate && !background) {
      c.fillText(str, x, y);
      return;
    }
    c.save();
    c.translate(x, y);
    if (rotate) c.rotate((rotate * Math.PI) / 180);
    if (background) {
      const w = Math.max(c.measureText(str).width, background.width ?? 0) + 4;
      const x0 = anchor === "start" ? -2 : anchor === "middle" ? -w / 2 : 2 - w;
      const y0 = baseline === "middle" ? -size * 0.7 : -size * 1.05;
      c.fillStyle = background.fill;
      c.fillRect(x0, y0, w, size * 1.4);
      c.fillStyle = fill;
    }
    c.fillText(str, 0, 0);
    c.restore();
  }

  circle(cx, cy, r, { fill, stroke, width = 1 }) {
    const c = this.c;
    c.beginPath();
    c.arc(cx, cy, r, 0, 2 * Math.PI);
    if (fill) {
      c.fillStyle = fill;
      c.fill();
    }
    if (stroke) {
      c.strokeStyle = stroke;
      c.lineWidth = width;
      c.stroke();
    }
  }

  /** A line from (x1, y1) with an arrowhead at (x2, y2). */
  arrow(x1, y1, x2, y2, color, width = 1) {
    const c = this.c;
    const a = Math.atan2(y2 - y1, x2 - x1);
    c.strokeStyle = color;
    c.fillStyle = color;
    c.lineWidth = width;
    c.beginPath();
    c.moveTo(x1, y1);
    c.lineTo(x2 - 5 * Math.cos(a), y2 - 5 * Math.sin(a));
    c.stroke();
    c.beginPath();
    c.moveTo(x2, y2);
    c.lineTo(x2 - 7 * Math.cos(a - 0.45), y2 - 7 * Math.sin(a - 0.45));
    c.lineTo(x2 - 7 * Math.cos(a + 0.45), y2 - 7 * Math.sin(a + 0.45));
    c.closePath();
    c.fill();
  }

  /** A Bitmap scaled into the rectangle, each pixel a crisp block. */
  image(x, y, w, h, bitmap) {
    this.c.imageSmoothingEnabled = false;
    this.c.drawImage(bitmap.canvas(), x, y, w, h);
  }
}

/**
 * Sizes `canvas` to `width` x `height` CSS px at the device's pixel ratio (at most `maxPixels`
 * backing pixels), clears that area and returns a painter with CSS px units. With `grow`, the
 * canvas only ever grows (reallocating its pixels is what costs; a holder with overflow hidden
 * shows the part drawn): a view or zoom switch does not reallocate it.
 */
export function canvasPainter(canvas, width, height, { scale = globalThis.devicePixelRatio || 1, maxPixels = 16e6, grow = false } = {}) {
  const ratio = Math.max(0.25, Math.min(scale, Math.sqrt(maxPixels / Math.max(1, width * height))));
  let pw = Math.max(1, Math.round(width * ratio));
  let ph = Math.max(1, Math.round(height * ratio));
  const same = canvas.ratio === ratio;
  // Grown canvases shrink back when they hold over four times the pixels needed.
  if (grow && same && canvas.width * canvas.height <= 4 * pw * ph) {
    pw = Math.max(pw, canvas.width);
    ph = Math.max(ph, canvas.height);
  }
  if (canvas.width !== pw || canvas.height !== ph) {
    canvas.width = pw;
    canvas.height = ph;
  }
  canvas.ratio = ratio;
  if (canvas.style) {
    const w = `${pw / ratio}px`;
    const h = `${ph / ratio}px`;
    if (canvas.style.width !== w) canvas.style.width = w;
    if (canvas.style.height !== h) canvas.style.height = h;
  }
  const context = canvas.getContext("2d");
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, width, height);
  return new CanvasPainter(context);
}
