// The height a figure will take, known before it is computed, so <attn-lens> can hold that space
// and the page does not jump when the figure lands (layout shift). Tokens are estimated from the
// text the way the library splits it (words with inner apostrophes, single punctuation marks).
import * as heatmapView from "../views/heatmap.js";
import * as linesView from "../views/lines.js";
import { pcaSize } from "../views/sizes.js";
import { PALETTES, colorScale } from "../theme.js";

// The library's rules (lib/src/text/words.cpp), approximated: keycaps, flags and other emoji (with
// modifiers and ZWJ sequences) one token each; one Han ideograph per token; Hiragana and Katakana
// runs; words of other scripts with inner apostrophes; every other visible character alone.
const KANA = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}ー";
const EMOJI = "\\p{Extended_Pictographic}(?:\\uFE0F|\\p{Emoji_Modifier})?";
const WORD = `(?:(?![${KANA}])[\\p{L}\\p{N}\\p{M}])+`;
const TOKEN = new RegExp(
  [
    "[#*0-9]\\uFE0F?\\u20E3",
    "\\p{Regional_Indicator}{2}",
    `${EMOJI}(?:\\u200D${EMOJI})*`,
    "\\p{Script=Han}",
    "[\\p{Script=Hiragana}ー]+",
    "[\\p{Script=Katakana}ー]+",
    `${WORD}(?:['’]${WORD})*`,
    "[^\\s\\p{L}\\p{N}\\p{M}]",
  ].join("|"),
  "gu",
);
/** Heights of the parts around the figure, in CSS px (see the element's styles). */
const HEADS_ROW = { thumbnails: 72, swatches: 34 };
const FIGURES_PADDING = 12;
const DESCRIBE = 25;

export function estimateTokens(sentence) {
  return (sentence.match(TOKEN) ?? []).map((text) => ({ text }));
}

/** Pixels the figure area (figures, head buttons, description line) will take. */
export function estimateHeight(state, panelWidth, width) {
  const tokens = estimateTokens(state.sentence);
  if (!tokens.length) return 60;
  const L = tokens.length;
  const data = { tokens, causal: state.mode !== "full", weights: { shape: [1, state.heads, L, L] } };
  const panels = state.mode === "compare" ? 2 : 1;
  const stacked = panels > 1 && panelWidth >= width;
  const palette = PALETTES.light;
  let figure;
  if (state.view === "heatmap") {
    figure = heatmapView.layout({
      data,
      layer: 0,
      head: "mean",
      title: "",
      palette,
      scale: colorScale("viridis", palette),
      width: panelWidth,
    }).viewH;
  } else if (state.view === "lines") {
    figure = linesView.layout({ data, layer: 0, visible: [], title: "", palette, width: panelWidth }).viewH;
  } else if (state.view === "pca") {
    figure = pcaSize(panelWidth).h;
  } else if (state.view === "grid") {
    // One row of thumbnails per panel (one layer each in the random mode): up to 120 px and a label.
    const side = Math.max(40, Math.min(120, Math.floor((width - 64) / (state.heads + 1)) - 12));
    return panels * (side + 26) + 8 + FIGURES_PADDING + DESCRIBE;
  } else {
    // Every step: eleven captions and their matrices (at most 12 rows each, side by side).
    const rows = 18 + Math.min(L, 12) * 20 + 16;
    figure = 30 + 11 * (24 + rows) + (panels > 1 ? 5 * (rows + 20) : 0);
  }
  const heads = state.heads > 1 && state.view !== "pca" ? (state.view === "lines" ? HEADS_ROW.swatches : HEADS_ROW.thumbnails) : 0;
  return (stacked ? 2 * figure + 16 : figure) + FIGURES_PADDING + heads + DESCRIBE;
}
