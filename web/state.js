// The state of a figure: what the <attn-lens> attributes and the demo page's URL hold.
// One place validates it, so the element and the page agree on names, defaults and limits.

export const DEFAULTS = Object.freeze({
  sentence: "The cat sat on the mat.",
  mode: "causal",
  view: "heatmap",
  heads: 4,
  head: "mean",
  dim: 64,
  seed: 7,
  positional: "sinusoidal",
  init: "xavier",
  theme: "auto",
});

export const CHOICES = Object.freeze({
  mode: ["causal", "full", "compare"],
  view: ["heatmap", "lines", "steps", "pca"],
  positional: ["sinusoidal", "none"],
  init: ["xavier", "normal", "identity"],
  theme: ["light", "dark", "auto"],
});

export const MAX_HEADS = 8;
export const MAX_DIM = 256;
export const MAX_SEED = 2 ** 31 - 1;

const integer = (text) => (typeof text === "number" ? text : /^\s*\d+\s*$/.test(String(text)) ? Number(text) : NaN);

/**
 * Validates raw values (strings from attributes or a URL, or numbers). Invalid values fall back
 * to the default and add a sentence to `problems`, naming the attribute and what was wrong.
 * Returns { state, problems }.
 */
export function normalizeState(raw) {
  const state = { ...DEFAULTS };
  const problems = [];
  const given = (key) => raw[key] !== undefined && raw[key] !== null;
  if (given("sentence")) state.sentence = String(raw.sentence);
  for (const key of Object.keys(CHOICES)) {
    if (!given(key)) continue;
    if (CHOICES[key].includes(raw[key])) state[key] = raw[key];
    else problems.push(`${key} must be ${CHOICES[key].map((c) => `"${c}"`).join(", ")}; got "${raw[key]}"`);
  }
  const bounded = (key, min, max) => {
    if (!given(key)) return;
    const n = integer(raw[key]);
    if (Number.isInteger(n) && n >= min && n <= max) state[key] = n;
    else problems.push(`${key} must be an integer from ${min} to ${max}; got "${raw[key]}"`);
  };
  bounded("heads", 1, MAX_HEADS);
  bounded("dim", 1, MAX_DIM);
  bounded("seed", 0, MAX_SEED);
  if (state.dim % state.heads !== 0) {
    problems.push(`dim ${state.dim} is not divisible by heads ${state.heads}; using dim ${DEFAULTS.dim} and heads ${DEFAULTS.heads}`);
    state.dim = DEFAULTS.dim;
    state.heads = DEFAULTS.heads;
  }
  if (given("head") && raw.head !== "mean") {
    const n = integer(raw.head);
    if (Number.isInteger(n) && n < state.heads) state.head = n;
    else problems.push(`head must be "mean" or a head number from 0 to ${state.heads - 1}; got "${raw.head}"`);
  }
  return { state, problems };
}

/** The keys that change what is computed (the others only change how it is drawn). */
export const COMPUTE_KEYS = ["sentence", "mode", "heads", "dim", "seed", "positional", "init"];

/** URL search parameters for a state, leaving out defaults (short links). */
export function stateToParams(state) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) {
    if (key in DEFAULTS && value !== DEFAULTS[key]) params.set(key, String(value));
  }
  return params;
}

/** The raw state held by URL search parameters (validate it with normalizeState). */
export function paramsToRaw(params) {
  const raw = {};
  for (const key of Object.keys(DEFAULTS)) if (params.has(key)) raw[key] = params.get(key);
  return raw;
}
