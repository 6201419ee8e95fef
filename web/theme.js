// Colour palettes for the figures. Views receive concrete colours (not CSS variables) so an
// exported SVG looks the same outside the page.
import { interpolateRdBu, interpolateViridis, schemeTableau10 } from "d3-scale-chromatic";

export const PALETTES = {
  light: {
    name: "light",
    background: "#ffffff",
    foreground: "#1d232b",
    muted: "#5b6573",
    grid: "#d5dbe3",
    masked: "#b9c0ca",
    maskedBackground: "#eef1f5",
    accent: "#3b5bdb",
  },
  dark: {
    name: "dark",
    background: "#14181e",
    foreground: "#e6e9ee",
    muted: "#9aa4b2",
    grid: "#39414d",
    masked: "#59626f",
    maskedBackground: "#20262e",
    accent: "#8ea8ff",
  },
};

/** Sequential, perceptually uniform map for weights in [0, 1]. */
export const weightColor = (w) => interpolateViridis(w);

/** The same map as 256 [r, g, b] entries, for drawing pixels fast: weightRgb[round(w · 255)]. */
export const weightRgb = Array.from({ length: 256 }, (_, i) => rgbOf(interpolateViridis(i / 255)));

/** Diverging map for signed numbers, symmetric around 0 with half-range `extent`. */
export const signedColor = (x, extent) => interpolateRdBu(0.5 - 0.5 * Math.max(-1, Math.min(1, x / (extent || 1))));

/** A colour per head. */
export const headColor = (h) => schemeTableau10[h % schemeTableau10.length];

/** [r, g, b] of a "#rrggbb" or "rgb(r, g, b)" colour (what d3-scale-chromatic returns). */
export function rgbOf(color) {
  if (color.startsWith("#")) {
    const n = parseInt(color.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  return color
    .match(/\d+(\.\d+)?/g)
    .slice(0, 3)
    .map(Number);
}

/** Black or white text, whichever reads better on the given background. */
export function textOn(color) {
  const [r, g, b] = rgbOf(color);
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? "#111" : "#fff";
}

/** The palette for a theme attribute: "light", "dark" or "auto" (the system's choice). */
export function paletteFor(theme) {
  if (theme === "dark" || theme === "light") return PALETTES[theme];
  const dark = typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
  return dark ? PALETTES.dark : PALETTES.light;
}
