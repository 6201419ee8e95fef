// The view registry (web/views/index.js) is the one list of views: state.js's choices, the demo
// page's view buttons and element.d.ts's AttnLensView follow it, and each entry gives what the
// element uses (docs/views.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { importWeb } from "./web-modules.mjs";

const { VIEWS, VIEW_NAMES, viewNamed, tracedHead } = await importWeb("views/index.js");
const { CHOICES, DEFAULTS, normalizeState } = await importWeb("state.js");
const { estimateHeight } = await importWeb("element/estimate.js");
const { pcaSize } = await importWeb("views/sizes.js");
const source = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** frame.js's contract: what a view module drawn in a frame exports. */
const FRAME_VIEW = ["layout", "draw", "hit", "highlight", "readout", "move", "reveal"];

test("every entry declares the registry's fields", () => {
  assert.deepEqual(
    VIEWS.map((v) => v.name),
    VIEW_NAMES,
  );
  assert.equal(new Set(VIEW_NAMES).size, VIEW_NAMES.length, "names are unique");
  for (const view of VIEWS) {
    assert.match(view.name, /^[a-z]+$/, "a name fits an attribute and a URL as it is");
    for (const key of ["label", "title"]) assert.ok(typeof view[key] === "string" && view[key].length > 0, `${view.name}.${key}`);
    for (const key of ["hint", "load", "estimate", "describe"]) assert.equal(typeof view[key], "function", `${view.name}.${key}`);
    for (const key of ["needsTrace", "randomOnly", "zoom"]) assert.equal(typeof view[key], "boolean", `${view.name}.${key}`);
    assert.ok([null, "thumbnails", "swatches"].includes(view.headsRow), `${view.name}.headsRow`);
    assert.match(view.hint("Hover"), /\w/);
    assert.ok(view.frame || view.body, `${view.name} is drawn in frames or renders its own body`);
    for (const key of ["frame", "body", "scene", "prepare", "panelTitle"])
      assert.ok(view[key] === undefined || typeof view[key] === "function", `${view.name}.${key}`);
    // A view that needs the trace draws what explain computes from random weights.
    if (view.needsTrace) assert.ok(view.randomOnly, `${view.name} needs the trace, which weights from a file do not have`);
  }
});

test("each view's module gives what its entry uses", async () => {
  for (const view of VIEWS) {
    const m = await view.load();
    assert.equal(viewNamed(view.name), view);
    // A view with its own body draws its frames ("pane-k") with a module of its own: steps' matrices.
    const framed = view.body ? m.matrixView : m;
    if (view.frame) for (const name of FRAME_VIEW) assert.equal(typeof framed?.[name], "function", `${view.name}: ${name}`);
  }
  const grid = await viewNamed("grid").load();
  for (const name of ["gridTemplate", "paintGrid", "gridScene"]) assert.equal(typeof grid[name], "function", `grid: ${name}`);
});

test("state.js offers exactly the registry's views, the default among them", () => {
  assert.deepEqual(CHOICES.view, VIEW_NAMES);
  assert.ok(VIEW_NAMES.includes(DEFAULTS.view));
});

test("element.d.ts's AttnLensView is the registry's names, in its order", () => {
  const union = source("web/element/element.d.ts").match(/export type AttnLensView = ([^;]+);/)[1];
  assert.deepEqual(
    union.split("|").map((s) => JSON.parse(s.trim())),
    VIEW_NAMES,
  );
});

test("docs/api.md's row of the view attribute names every view", () => {
  // "| `view` | `heatmap` \| `lines` \| … (`heatmap`); …": the names, then the default in brackets.
  const row = source("docs/api.md").match(/^\| `view` \| (.*?) \(`/m)[1];
  assert.deepEqual([...row.matchAll(/`([a-z]+)`/g)].map(([, name]) => name).sort(), [...VIEW_NAMES].sort());
});

test("docs/views.md has a row for every view", () => {
  const table = source("docs/views.md").split("## The views")[1].split("\n## ")[0];
  assert.deepEqual(
    [...table.matchAll(/^\| `([a-z]+)` /gm)].map(([, name]) => name),
    VIEW_NAMES,
  );
});

test("the demo page makes its view buttons from the registry (none written in index.html)", () => {
  const html = source("web/index.html");
  assert.match(html, /<fieldset id="views">/);
  assert.doesNotMatch(html, /name="view"/);
  assert.match(source("web/demo.js"), /\$\("#views"\)\.append\(\s*\.\.\.VIEWS\.map\(/);
});

test("an unknown view name: state validation names the attribute and the views; the registry refuses it by name", () => {
  const list = VIEW_NAMES.map((n) => `"${n}"`).join(", ");
  const { state, problems } = normalizeState({ view: "sideways" });
  assert.deepEqual(problems, [`view must be ${list}; got "sideways"`]);
  assert.equal(state.view, DEFAULTS.view);
  // The demo page names it the way its controls do.
  assert.deepEqual(normalizeState({ view: "sideways" }, { names: { view: "View" } }).problems, [`View must be ${list}; got "sideways"`]);
  assert.throws(() => viewNamed("sideways"), { message: `attn-lens: there is no view "sideways"; the views are ${list}` });
});

test("tracedHead: the head shown, the first for the mean, never past the last head", () => {
  assert.equal(tracedHead({ head: "mean", heads: 4 }), 0);
  assert.equal(tracedHead({ head: 2, heads: 4 }), 2);
  assert.equal(tracedHead({ head: 5, heads: 4 }), 3);
});

test("estimates of the views laid out without measuring text (grid, every step, PCA)", () => {
  // The reservation: the view's figure, the figures' padding (12), the heads row (72 for
  // thumbnails when there are several heads) and the description's line (25).
  const state = (view, mode, heads = 4) => ({ ...DEFAULTS, view, mode, heads, sentence: "the cat sat on the mat" });
  // Grid: a row of thumbnails per panel, (600 - 64) / 5 - 12 = 95 px each, and a label.
  assert.equal(estimateHeight(state("grid", "causal"), 600, 600), 95 + 26 + 8 + 12 + 25);
  assert.equal(estimateHeight(state("grid", "compare"), 600, 600), 2 * (95 + 26) + 8 + 12 + 25);
  // Every step: eleven captions and matrices of 6 rows; compare adds the full mode's five, and
  // stacks when one panel takes the width.
  const rows = 18 + 6 * 20 + 16;
  assert.equal(estimateHeight(state("steps", "causal"), 600, 600), 30 + 11 * (24 + rows) + 12 + 72 + 25);
  assert.equal(estimateHeight(state("steps", "causal", 1), 600, 600), 30 + 11 * (24 + rows) + 12 + 25);
  assert.equal(estimateHeight(state("steps", "compare"), 600, 600), 2 * (30 + 11 * (24 + rows) + 5 * (rows + 20)) + 16 + 12 + 72 + 25);
  // PCA: no heads row; two panels side by side when each has its width.
  assert.equal(estimateHeight(state("pca", "causal"), 600, 600), pcaSize(600).h + 12 + 25);
  assert.equal(estimateHeight(state("pca", "compare"), 400, 816), pcaSize(400).h + 12 + 25);
  assert.equal(estimateHeight({ ...state("pca", "causal"), sentence: "  " }, 600, 600), 60);
});
