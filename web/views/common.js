// Helpers shared by the views.
import { html, nothing, svg } from "lit";
import { ifDefined } from "lit/directives/if-defined.js";
import { format } from "d3-format";

export const fmt2 = format(".2f");
export const fmt3 = format(".3f");
export const pct = format(".1%");

/** Shortens a token label to `max` characters (by code point), adding an ellipsis. */
export function shorten(text, max = 12) {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Approximate width in px of a label at 12px in the system sans-serif font. */
export const labelWidth = (text) => Array.from(text).length * 7 + 8;

/** A number for display: fixed with 2 decimals, "−∞" for -Infinity, unicode minus. */
export function cellText(x) {
  if (x === -Infinity) return "−∞";
  return fmt2(x).replace("-", "−");
}

/** Largest |x| over an array (for symmetric diverging colour scales). */
export function maxAbs(data) {
  let m = 0;
  for (const x of data) if (Number.isFinite(x)) m = Math.max(m, Math.abs(x));
  return m;
}

/**
 * The standalone <svg> every view draws into: its size, accessible label, `data-view` (and
 * `data-tokens`), definitions, a background (so exports look the same anywhere) and the title.
 */
export function figureSvg({ view, width, height, label, palette, title, titleX, titleY, tokens, defs, content }) {
  return html`<svg
    class="figure ${view}"
    xmlns="http://www.w3.org/2000/svg"
    viewBox="0 0 ${width} ${height}"
    width=${width}
    height=${height}
    role="img"
    aria-label=${label}
    font-family="system-ui, -apple-system, Segoe UI, sans-serif"
    data-view=${view}
    data-tokens=${ifDefined(tokens)}
  >
    ${defs ? svg`<defs>${defs}</defs>` : nothing}
    <rect width=${width} height=${height} fill=${palette.background}></rect>
    <text x=${titleX} y=${titleY} font-size="13" font-weight="600" fill=${palette.foreground}>${title}</text>
    ${content}
  </svg>`;
}
