// The height a figure will take, known before it is computed, so <attn-lens> can hold that space
// and the page does not jump when the figure lands (layout shift): the view's own estimate
// (views/index.js) and the parts around it. Tokens are estimated from the text the way the
// library splits it (words with inner apostrophes, single punctuation marks).
import { viewNamed } from "../views/index.js";

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
  const view = viewNamed(state.view);
  const data = { tokens, causal: state.mode !== "full", weights: { shape: [1, state.heads, L, L] } };
  const figure = view.estimate({ state, data, panels: state.mode === "compare" ? 2 : 1, panelWidth, width });
  const heads = state.heads > 1 && view.headsRow ? HEADS_ROW[view.headsRow] : 0;
  return figure + FIGURES_PADDING + heads + DESCRIBE;
}
