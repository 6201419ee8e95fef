// Helpers shared by the views.
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
