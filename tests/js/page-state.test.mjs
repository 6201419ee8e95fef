// The element and the demo page validate their settings (web/state.js) before the library is
// loaded, so state.js states the values the library owns; these tests hold them to the library's
// (lens.defaults, lens.choices, lens.limits).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadAttnLens } from "attnlens";
import { importWeb } from "./web-modules.mjs";

const lens = await loadAttnLens();
const { CHOICES, DEFAULTS, MAX_DIM, MAX_HEADS, MAX_SEED, dimsFor } = await importWeb("state.js");

test("the page's defaults are explain()'s", () => {
  const d = lens.defaults.explain;
  assert.equal(DEFAULTS.heads, d.numHeads);
  assert.equal(DEFAULTS.dim, d.modelDim);
  assert.equal(DEFAULTS.seed, d.seed);
  assert.equal(DEFAULTS.positional, d.positional);
  assert.equal(DEFAULTS.init, d.init);
  assert.equal(DEFAULTS.mode === "causal", d.causal);
});

test("the page offers the library's choices (the default first, for the menus)", () => {
  for (const key of ["positional", "init"]) {
    assert.deepEqual([...CHOICES[key]].sort(), [...lens.choices[key]].sort(), key);
    assert.equal(CHOICES[key][0], DEFAULTS[key], `${key}: the default comes first`);
  }
});

test("the page's limits are within the library's, and explain() takes their extremes", () => {
  assert.ok(MAX_HEADS <= lens.limits.maxHeads);
  assert.ok(MAX_DIM <= lens.limits.maxModelDim);
  const explain = (options) => lens.explain("the cat sat", { ...options, trace: false });
  assert.equal(explain({ numHeads: MAX_HEADS, modelDim: dimsFor(MAX_HEADS).at(-1), seed: MAX_SEED }).weights.shape[0], MAX_HEADS);
  assert.equal(explain({ numHeads: 1, modelDim: 1, seed: 0 }).weights.shape[0], 1);
  for (const init of CHOICES.init) for (const positional of CHOICES.positional) explain({ init, positional });
});

test("the long-paragraph preset is varied text: no sentence twice, 250+ words", async () => {
  const { RANDOM_MODE_EXAMPLES } = await importWeb("examples.js");
  const { sentence } = RANDOM_MODE_EXAMPLES.find((e) => /long paragraph/.test(e.label));
  const sentences = sentence.split(/(?<=\.)\s+/);
  assert.equal(new Set(sentences).size, sentences.length, "a sentence repeats");
  const words = sentence.split(/\s+/);
  assert.ok(words.length >= 250, `${words.length} words`);
  assert.ok(new Set(words.map((w) => w.toLowerCase())).size >= 150, "distinct words");
});
