// The state of a figure: what the <attn-lens> attributes and the demo page's URL hold.
// One place validates it, so the element and the page agree on names, defaults and limits.
// The values the library also has (heads, d_model, seed, positional encoding, weights) are its
// defaults and choices (lens.defaults.explain, lens.choices; tests/js/page-state.test.mjs holds
// them together: the element reads these before the library is loaded); the views are
// views/index.js's.
import { VIEW_NAMES } from "./views/index.js";

export const DEFAULTS = Object.freeze({
  sentence: "The cat sat on the mat.",
  mode: "causal",
  view: "heatmap",
  heads: 4,
  head: "mean",
  hide: Object.freeze([]),
  dim: 64,
  seed: 7,
  positional: "sinusoidal",
  init: "xavier",
  theme: "auto",
  colormap: "viridis",
  model: "random",
  specials: "show",
});

export const CHOICES = Object.freeze({
  mode: ["causal", "full", "compare"],
  view: VIEW_NAMES,
  positional: ["sinusoidal", "none"],
  init: ["xavier", "normal", "identity"],
  theme: ["light", "dark", "auto"],
  colormap: ["viridis", "cividis", "magma", "blues"],
  model: ["random", "attnlens", "attnlens-encoder"],
  specials: ["show", "hide"],
});

export const MAX_HEADS = 8;
export const MAX_DIM = 256;
export const MAX_SEED = 2 ** 31 - 1;

/** The d_model values offered for a number of heads: heads x d_head, d_head a power of two, up to MAX_DIM. */
export function dimsFor(heads) {
  const dims = [];
  for (let d = 1; heads * d <= MAX_DIM; d *= 2) dims.push(heads * d);
  return dims;
}

/** How the element's attribute messages name each value (the demo page passes its own labels). */
export const ATTRIBUTE_NAMES = Object.freeze(Object.fromEntries(Object.keys(DEFAULTS).map((k) => [k, k])));

const integer = (text) => (typeof text === "number" ? text : /^\s*\d+\s*$/.test(String(text)) ? Number(text) : NaN);

/** Head numbers from "2,4" (1-based, as the figure labels them) to [1, 3]; null if malformed. */
export function parseHeadList(text, heads) {
  if (Array.isArray(text))
    return text.every((h) => Number.isInteger(h) && h >= 0 && h < heads) ? [...new Set(text)].sort((a, b) => a - b) : null;
  const parts = String(text)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const numbers = parts.map(integer);
  if (!numbers.every((n) => Number.isInteger(n) && n >= 1 && n <= heads)) return null;
  return [...new Set(numbers.map((n) => n - 1))].sort((a, b) => a - b);
}

/**
 * Validates raw values (strings from attributes or a URL, or numbers). An invalid value keeps
 * the `fallback` state's value (the defaults unless given) and adds a sentence to `problems`
 * that names the value the way `names` does and says what was wrong; head numbers in messages
 * start at `headBase` (0 for the attribute, 1 where the page shows head 1). Returns { state, problems }.
 */
export function normalizeState(raw, { fallback = DEFAULTS, names = ATTRIBUTE_NAMES, headBase = 0 } = {}) {
  const state = { ...DEFAULTS, ...fallback };
  const problems = [];
  const given = (key) => raw[key] !== undefined && raw[key] !== null;
  if (given("sentence")) state.sentence = String(raw.sentence);
  for (const key of Object.keys(CHOICES)) {
    if (!given(key)) continue;
    if (CHOICES[key].includes(raw[key])) state[key] = raw[key];
    else problems.push(`${names[key]} must be ${CHOICES[key].map((c) => `"${c}"`).join(", ")}; got "${raw[key]}"`);
  }
  const bounded = (key, min, max, what = "a whole number") => {
    if (!given(key)) return;
    const n = integer(raw[key]);
    if (Number.isInteger(n) && n >= min && n <= max) state[key] = n;
    else problems.push(`${names[key]} must be ${what} from ${min} to ${max}; got "${raw[key]}", kept ${state[key]}`);
  };
  bounded("heads", 1, MAX_HEADS);
  bounded("dim", 1, MAX_DIM);
  bounded("seed", 0, MAX_SEED);
  if (state.dim % state.heads !== 0) {
    const dims = dimsFor(state.heads);
    const dim = dims.reduce((best, d) => (Math.abs(d - state.dim) < Math.abs(best - state.dim) ? d : best), dims[0]);
    problems.push(
      `${names.dim} ${state.dim} cannot be split into ${state.heads} heads (it must be a multiple of ${names.heads}); using ${dim} = ${state.heads} × ${dim / state.heads}`,
    );
    state.dim = dim;
  }
  if (state.head !== "mean" && state.head >= state.heads) state.head = "mean";
  if (given("head") && raw.head !== "mean") {
    const n = integer(raw.head);
    if (Number.isInteger(n) && n < state.heads) state.head = n;
    else {
      const got = Number.isInteger(n) ? n + headBase : raw.head;
      problems.push(`${names.head} must be "mean" or a head from ${headBase} to ${state.heads - 1 + headBase}; got "${got}"`);
    }
  } else if (given("head")) state.head = "mean";
  state.hide = (state.hide ?? []).filter((h) => h < state.heads);
  if (given("hide")) {
    const list = raw.hide === "" ? [] : parseHeadList(raw.hide, state.heads);
    if (list) state.hide = list;
    else problems.push(`${names.hide} must list head numbers from 1 to ${state.heads}, like "2,4"; got "${raw.hide}"`);
  }
  return { state, problems };
}

/** The keys that change what is computed (the others only change how it is drawn). */
export const COMPUTE_KEYS = ["sentence", "mode", "heads", "dim", "seed", "positional", "init", "specials"];

/** A link holds at most this many characters of the sentence (a 20 000-word paste would make a 100 KB URL). */
export const MAX_LINK_SENTENCE = 2000;

/**
 * URL search parameters for a state, leaving out `defaults` (short links; the page passes its
 * own, which open on the trained models). Head numbers are
 * 1-based, as the page shows them: `h` is the picked head, `hide` the hidden ones. A longer
 * sentence is cut at a word boundary to MAX_LINK_SENTENCE characters. Returns { params, cut }.
 */
export function stateToParams(state, defaults = DEFAULTS) {
  const params = new URLSearchParams();
  let cut = false;
  for (const [key, value] of Object.entries(state)) {
    if (!(key in DEFAULTS) || key === "head" || key === "hide") continue;
    if (value === defaults[key]) continue;
    if (key === "sentence" && value.length > MAX_LINK_SENTENCE) {
      const head = value.slice(0, MAX_LINK_SENTENCE);
      const space = head.lastIndexOf(" ");
      params.set(key, space > MAX_LINK_SENTENCE / 2 ? head.slice(0, space) : head);
      cut = true;
    } else params.set(key, String(value));
  }
  if (state.head !== "mean") params.set("h", String(state.head + 1));
  if (state.hide?.length) params.set("hide", state.hide.map((h) => h + 1).join(","));
  return { params, cut };
}

/**
 * The raw state held by URL search parameters (validate it with normalizeState). Reads the
 * 1-based `h` and, from links made before it existed, the 0-based `head`.
 */
export function paramsToRaw(params) {
  const raw = {};
  for (const key of Object.keys(DEFAULTS)) if (params.has(key)) raw[key] = params.get(key);
  if (params.has("h")) {
    const n = integer(params.get("h"));
    raw.head = params.get("h") === "mean" ? "mean" : Number.isInteger(n) && n >= 1 ? n - 1 : `h=${params.get("h")}`;
  }
  return raw;
}
