// Colours of the figures. Views receive concrete colours (not CSS variables) so an exported
// figure looks the same outside the page. The colour maps are D3's (d3-scale-chromatic), sampled
// at 256 points when the bundle is built (scripts/build-web.mjs), so the element ships tables
// of colours instead of D3's colour parsing and interpolation code.
import { MAPS, TABLEAU10 } from "virtual:attnlens-colormaps";

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
    highlight: "#e8590c",
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
    highlight: "#ffa94d",
  },
};

/** A map in [0, 1] from 256 "rrggbb" samples: the nearest sample's colour. */
export const sampled = (hex) => (t) => `#${hex.substr(6 * Math.round(Math.min(1, Math.max(0, t)) * 255), 6)}`;

/**
 * Sequential colour maps for weights in [0, 1]. viridis and cividis are readable with the
 * common colour-vision deficiencies; cividis is designed for them.
 */
export const COLORMAPS = {
  viridis: sampled(MAPS.viridis),
  cividis: sampled(MAPS.cividis),
  magma: sampled(MAPS.magma),
  blues: sampled(MAPS.blues),
};

/** The theme's palette: "light", "dark" or "auto" (the system's choice). */
export function paletteFor(theme) {
  if (theme === "dark" || theme === "light") return PALETTES[theme];
  const dark = typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
  return dark ? PALETTES.dark : PALETTES.light;
}

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

/** WCAG relative luminance of a colour. */
export function luminance(color) {
  const [r, g, b] = rgbOf(color).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two colours (1 = the same, 21 = black on white). */
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Weight 0 must stand apart from the background by at least this contrast ratio. */
export const MIN_LOW_END_CONTRAST = 1.5;

const scales = new Map();

/**
 * The colour scale of a map on a palette: color(w) for w in [0, 1], and rgb, a 256-entry table
 * of [r, g, b] for drawing pixels (rgb[round(w · 255)]). Where the map's low end would merge
 * with the background (viridis on dark, blues on white), the scale starts further along the map,
 * at the first point that has MIN_LOW_END_CONTRAST against the background.
 */
export function colorScale(name, palette) {
  const key = `${name}/${palette.name}`;
  let scale = scales.get(key);
  if (!scale) {
    const map = COLORMAPS[name] ?? COLORMAPS.viridis;
    let start = 0;
    while (start < 0.5 && contrast(map(start), palette.background) < MIN_LOW_END_CONTRAST) start += 0.01;
    const color = (w) => map(start + (1 - start) * Math.min(1, Math.max(0, w)));
    scale = { name, start, color, rgb: Array.from({ length: 256 }, (_, i) => rgbOf(color(i / 255))) };
    scales.set(key, scale);
  }
  return scale;
}

/** A colour per head. */
export const headColor = (h) => TABLEAU10[h % TABLEAU10.length];

const textColors = new Map();

/**
 * Black or white text, whichever reads better on the given background. Remembered per colour
 * (a matrix of numbers asks for the same few hundred colours cell after cell).
 */
export function textOn(color) {
  let text = textColors.get(color);
  if (text === undefined) {
    text = contrast(color, "#111111") >= contrast(color, "#ffffff") ? "#111" : "#fff";
    if (textColors.size >= 4096) textColors.clear();
    textColors.set(color, text);
  }
  return text;
}
