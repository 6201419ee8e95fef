// The painter of paint.js, writing SVG text instead of pixels (used by the SVG export only).
// Every id is prefixed with the document's own prefix, so figures in one page never share ids.
import { FONT_FAMILY } from "./text.js";

const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const n = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(2));

export class SvgPainter {
  /** @param {string} idPrefix  unique per exported document, e.g. "attnlens-3" */
  constructor(idPrefix) {
    this.idPrefix = idPrefix;
    this.parts = [];
    this.defs = [];
    // Groups opened by translate() and clip() since each save(); restore() closes them.
    this.open = [0];
    this.ids = new Map();
  }

  _id(kind, key, make) {
    const k = `${kind}/${key}`;
    let id = this.ids.get(k);
    if (!id) {
      id = `${this.idPrefix}-${kind}-${this.ids.size}`;
      this.ids.set(k, id);
      this.defs.push(make(id));
    }
    return id;
  }

  save() {
    this.open.push(0);
  }

  restore() {
    this.parts.push("</g>".repeat(this.open.pop()));
  }

  translate(x, y) {
    this.parts.push(`<g transform="translate(${n(x)},${n(y)})">`);
    this.open[this.open.length - 1]++;
  }

  clip(x, y, w, h) {
    const id = this._id(
      "clip",
      `${x},${y},${w},${h}`,
      (i) => `<clipPath id="${i}"><rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}"/></clipPath>`,
    );
    this.parts.push(`<g clip-path="url(#${id})">`);
    this.open[this.open.length - 1]++;
  }

  rect(x, y, w, h, fill, opacity = 1) {
    this.parts.push(
      `<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${fill}"${opacity < 1 ? ` fill-opacity="${n(opacity)}"` : ""}/>`,
    );
  }

  strokeRect(x, y, w, h, stroke, width = 1) {
    this.parts.push(
      `<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="none" stroke="${stroke}" stroke-width="${n(width)}"/>`,
    );
  }

  hatch(x, y, w, h, background, stripe) {
    this.hatchRects([x, y, w, h], background, stripe);
  }

  /** hatch() over rectangles [x, y, w, h, ...]: one path. */
  hatchRects(rects, background, stripe) {
    if (!rects.length) return;
    const id = this._id(
      "hatch",
      `${background}/${stripe}`,
      (i) =>
        `<pattern id="${i}" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="${background}"/>` +
        `<path d="M-6 6L0 0M0 6L6 0M6 6L12 0" stroke="${stripe}" stroke-width="1.5"/></pattern>`,
    );
    if (rects.length === 4) {
      const [x, y, w, h] = rects;
      this.parts.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="url(#${id})"/>`);
      return;
    }
    let d = "";
    for (let k = 0; k < rects.length; k += 4)
      d += `M${n(rects[k])} ${n(rects[k + 1])}h${n(rects[k + 2])}v${n(rects[k + 3])}h${n(-rects[k + 2])}z`;
    this.parts.push(`<path d="${d}" fill="url(#${id})"/>`);
  }

  segments(coords, stroke, width = 1, opacity = 1) {
    if (!coords.length) return;
    let d = "";
    for (let k = 0; k < coords.length; k += 4) d += `M${n(coords[k])} ${n(coords[k + 1])}L${n(coords[k + 2])} ${n(coords[k + 3])}`;
    this.parts.push(
      `<path d="${d}" fill="none" stroke="${stroke}" stroke-width="${n(width)}"${opacity < 1 ? ` stroke-opacity="${opacity.toFixed(3)}"` : ""}/>`,
    );
  }

  line(x1, y1, x2, y2, stroke, width = 1, opacity = 1) {
    this.segments([x1, y1, x2, y2], stroke, width, opacity);
  }

  text(str, x, y, { size = 12, weight = 400, fill, anchor = "start", baseline = "alphabetic", rotate = 0 } = {}) {
    const attrs = [
      `x="${n(rotate ? 0 : x)}"`,
      `y="${n(rotate ? 0 : y)}"`,
      `font-size="${size}"`,
      weight !== 400 ? `font-weight="${weight}"` : "",
      `fill="${fill}"`,
      anchor !== "start" ? `text-anchor="${anchor}"` : "",
      baseline === "middle" ? `dominant-baseline="central"` : "",
      rotate ? `transform="translate(${n(x)},${n(y)}) rotate(${rotate})"` : "",
    ];
    this.parts.push(`<text ${attrs.filter(Boolean).join(" ")}>${escape(str)}</text>`);
  }

  circle(cx, cy, r, { fill, stroke, width = 1 }) {
    this.parts.push(
      `<circle cx="${n(cx)}" cy="${n(cy)}" r="${n(r)}" fill="${fill ?? "none"}"${stroke ? ` stroke="${stroke}" stroke-width="${n(width)}"` : ""}/>`,
    );
  }

  arrow(x1, y1, x2, y2, color, width = 1) {
    const a = Math.atan2(y2 - y1, x2 - x1);
    const p = (r, t) => `${n(x2 - r * Math.cos(a + t))} ${n(y2 - r * Math.sin(a + t))}`;
    this.parts.push(
      `<path d="M${n(x1)} ${n(y1)}L${p(5, 0)}" stroke="${color}" stroke-width="${n(width)}" fill="none"/>` +
        `<path d="M${n(x2)} ${n(y2)}L${p(7, -0.45)}L${p(7, 0.45)}Z" fill="${color}"/>`,
    );
  }

  /** Small bitmaps become one rect per pixel run; large ones an embedded PNG. */
  image(x, y, w, h, bitmap) {
    const sx = w / bitmap.width;
    const sy = h / bitmap.height;
    if (bitmap.width * bitmap.height <= 32 * 32) {
      const { rgba, width } = bitmap;
      for (let r = 0; r < bitmap.height; r++) {
        for (let c = 0; c < width;) {
          const k = (r * width + c) * 4;
          let end = c + 1;
          while (
            end < width &&
            rgba[k] === rgba[(r * width + end) * 4] &&
            rgba[k + 1] === rgba[(r * width + end) * 4 + 1] &&
            rgba[k + 2] === rgba[(r * width + end) * 4 + 2]
          )
            end++;
          this.rect(x + c * sx, y + r * sy, (end - c) * sx, sy, `rgb(${rgba[k]},${rgba[k + 1]},${rgba[k + 2]})`);
          c = end;
        }
      }
      return;
    }
    const href = bitmap.canvas().toDataURL("image/png");
    this.parts.push(
      `<image x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${href}"/>`,
    );
  }

  /** The finished document. */
  document(width, height, { title, description } = {}) {
    return (
      `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="0 0 ${n(width)} ${n(height)}" ` +
      `font-family="${escape(FONT_FAMILY)}" role="img"${title ? ` aria-label="${escape(title)}"` : ""}>` +
      (title ? `<title>${escape(title)}</title>` : "") +
      (description ? `<desc>${escape(description)}</desc>` : "") +
      (this.defs.length ? `<defs>${this.defs.join("")}</defs>` : "") +
      this.parts.join("") +
      "</g>".repeat(this.open.reduce((a, b) => a + b, 0)) +
      "</svg>"
    );
  }
}
