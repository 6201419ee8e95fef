// A layer with a sliding window (Gemma 3's local layers: each query sees itself and the W - 1 keys
// before it; ModernBERT's: W - 1 on each side) is drawn as it computes: the heatmap's cells farther back are in the masked colour
// (flat, where later keys are hatched), its legend and readout say "outside the window", the text
// description says so, and the layers × heads grid labels the layer with its window. A layer
// without one, and a model without windows, draw as before.
import { test } from "node:test";
import assert from "node:assert/strict";
import { importWeb } from "./web-modules.mjs";

// Text widths come from a canvas (web/text.js); Node has none: a stand-in 6 px per character.
globalThis.OffscreenCanvas ??= class {
  getContext() {
    return { font: "", measureText: (text) => ({ width: 6 * text.length }) };
  }
};
const heatmap = await importWeb("views/heatmap.js");
const figureData = await importWeb("figure-data.js");
const { isMasked } = figureData;
const { PALETTES } = await importWeb("theme.js");
const { attentionText } = await importWeb("views/describe.js");
const { gridTemplate } = await importWeb("views/grid.js");

const L = 7;
const WINDOW = 3;
/** Two layers of one head: layer 0 windowed (keys i - 2 .. i), layer 1 full causal; rows sum to 1. */
function windowedData(windows = [WINDOW, 0]) {
  const weights = new Float32Array(2 * L * L);
  for (let l = 0; l < 2; l++)
    for (let i = 0; i < L; i++) {
      const first = windows[l] ? Math.max(0, i - windows[l] + 1) : 0;
      for (let j = first; j <= i; j++) weights[(l * L + i) * L + j] = 1 / (i - first + 1);
    }
  return {
    tokens: Array.from({ length: L }, (_, i) => ({ text: `t${i}` })),
    causal: true,
    title: "Gemma",
    weights: { data: weights, shape: [2, 1, L, L] },
    windows,
  };
}

test("isMasked: later keys, and in a windowed layer keys W or more behind the query", () => {
  const data = windowedData();
  for (let i = 0; i < L; i++)
    for (let j = 0; j < L; j++) {
      assert.equal(isMasked(data, i, j, 0), j > i || i - j >= WINDOW, `layer 0 (${i}, ${j})`);
      assert.equal(isMasked(data, i, j, 1), j > i, `layer 1 (${i}, ${j})`);
    }
  // No windows at all (every family before Gemma): causal only, whatever the layer.
  assert.equal(isMasked({ causal: true }, 6, 0, 0), false);
  assert.equal(isMasked({ causal: false }, 6, 0, 0), false);
  assert.equal(isMasked({ causal: false }, 0, 6, 0), false);
});

/** An encoder's two layers of one head: layer 0 windowed on both sides (|i - j| < W), layer 1 full. */
function bidirectionalData(windows = [WINDOW, 0]) {
  const weights = new Float32Array(2 * L * L);
  for (let l = 0; l < 2; l++)
    for (let i = 0; i < L; i++) {
      const [first, last] = windows[l] ? [Math.max(0, i - windows[l] + 1), Math.min(L - 1, i + windows[l] - 1)] : [0, L - 1];
      for (let j = first; j <= last; j++) weights[(l * L + i) * L + j] = 1 / (last - first + 1);
    }
  return {
    tokens: Array.from({ length: L }, (_, i) => ({ text: `t${i}` })),
    causal: false,
    title: "ModernBERT",
    weights: { data: weights, shape: [2, 1, L, L] },
    windows,
  };
}

test("an encoder's windowed layer (ModernBERT's local layers) hides keys W or more away on either side, and says so", () => {
  const data = bidirectionalData();
  for (let i = 0; i < L; i++)
    for (let j = 0; j < L; j++) {
      assert.equal(isMasked(data, i, j, 0), Math.abs(i - j) >= WINDOW, `layer 0 (${i}, ${j})`);
      assert.equal(isMasked(data, i, j, 1), false, `layer 1 (${i}, ${j})`);
    }
  const palette = PALETTES.light;
  const scale = { name: "ramp", rgb: Array.from({ length: 256 }, (_, i) => [i, 255 - i, 128]), color: () => "#808080" };
  const masked = [1, 3, 5].map((k) => parseInt(palette.maskedBackground.slice(k, k + 2), 16));
  for (const layer of [0, 1]) {
    const bitmap = heatmap.weightBitmap(data, layer, 0, scale, palette);
    for (let i = 0; i < L; i++)
      for (let j = 0; j < L; j++) {
        const at = 4 * (i * L + j);
        const rgb = [...bitmap.rgba.subarray(at, at + 3)];
        if (layer === 0 && Math.abs(i - j) >= WINDOW) assert.deepEqual(rgb, masked, `layer ${layer} (${i}, ${j}) outside the window`);
        else assert.notDeepEqual(rgb, masked, `layer ${layer} (${i}, ${j}) is a weight`);
      }
  }
  const texts = [];
  const p = new Proxy({}, { get: (_, name) => (name === "text" ? (text) => texts.push(text) : () => {}) });
  const lay0 = heatmap.layout({ data, layer: 0, head: 0, title: "layer 1", palette, scale, width: 700 });
  heatmap.draw(p, lay0);
  assert.ok(texts.join(" ").includes(`flat grey: outside this layer's window of ±${WINDOW - 1} keys (−∞)`), texts.join(" | "));
  // Later keys of an encoder are outside the window, never "masked".
  assert.match(heatmap.readout(lay0, { i: 1, j: 6 }), /outside the window, weight 0$/);
  assert.match(heatmap.readout(lay0, { i: 6, j: 1 }), /outside the window, weight 0$/);
  assert.match(heatmap.readout(lay0, { i: 3, j: 5 }), /weight 0\.2/);
  const local = textOf(attentionText(data, 0, 0));
  assert.match(local, /sliding window: each token sees itself and at most the 2 tokens on each side/);
  assert.doesNotMatch(local, /masked/);
  const grid = textOf(gridTemplate({ data, selected: { layer: 0, head: 0 }, width: 600, big: true, onPick() {} }));
  assert.match(grid, /the 2 tokens on each side/);
  assert.match(grid, /local ±2/);
});

test("the heatmap paints cells outside the window in the masked colour, and says so in its legend and readout", () => {
  const palette = PALETTES.light;
  // (The colour maps are sampled at build time: a stand-in ramp, blue 128, never the masked colour.)
  const scale = { name: "ramp", rgb: Array.from({ length: 256 }, (_, i) => [i, 255 - i, 128]), color: () => "#808080" };
  const masked = [1, 3, 5].map((k) => parseInt(palette.maskedBackground.slice(k, k + 2), 16));
  const data = windowedData();
  for (const layer of [0, 1]) {
    const bitmap = heatmap.weightBitmap(data, layer, 0, scale, palette);
    for (let i = 0; i < L; i++)
      for (let j = 0; j <= i; j++) {
        const at = 4 * (i * L + j);
        const rgb = [...bitmap.rgba.subarray(at, at + 3)];
        const hidden = layer === 0 && i - j >= WINDOW;
        if (hidden) assert.deepEqual(rgb, masked, `layer ${layer} (${i}, ${j}) outside the window`);
        else assert.notDeepEqual(rgb, masked, `layer ${layer} (${i}, ${j}) is a weight`);
      }
  }
  const texts = [];
  const p = new Proxy({}, { get: (_, name) => (name === "text" ? (text) => texts.push(text) : () => {}) });
  const lay0 = heatmap.layout({ data, layer: 0, head: 0, title: "layer 1", palette, scale, width: 700 });
  heatmap.draw(p, lay0);
  assert.ok(texts.join(" ").includes(`flat grey: outside this layer's window of ${WINDOW} keys (−∞)`), texts.join(" | "));
  assert.match(heatmap.readout(lay0, { i: 6, j: 1 }), /outside the window, weight 0$/);
  assert.match(heatmap.readout(lay0, { i: 1, j: 6 }), /: masked, weight 0$/);
  assert.match(heatmap.readout(lay0, { i: 6, j: 4 }), /weight 0\.333/);
  texts.length = 0;
  heatmap.draw(p, heatmap.layout({ data, layer: 1, head: 0, title: "layer 2", palette, scale, width: 700 }));
  assert.ok(!texts.some((t) => /window/.test(t)), "a full layer's legend names no window");
});

/** The text of a Lit template, its values filled in (nested templates and arrays too). */
function textOf(v) {
  if (v === null || v === undefined || typeof v === "symbol") return "";
  if (Array.isArray(v)) return v.map(textOf).join("");
  if (v.strings) return v.strings.map((s, k) => s + (k < v.values.length ? textOf(v.values[k]) : "")).join("");
  return String(v);
}

test("the description and the grid name the window of a windowed layer", () => {
  const data = windowedData();
  const local = textOf(attentionText(data, 0, 0));
  assert.match(local, /sliding window: each token sees itself and at most the 2 tokens before it/);
  assert.match(local, /outside the window/);
  const full = textOf(attentionText(data, 0, 1));
  assert.doesNotMatch(full, /window/);
  const grid = textOf(gridTemplate({ data, selected: { layer: 0, head: 0 }, width: 600, big: true, onPick() {} }));
  // Each layer of a windowed model is named by its reach: layer 1 (index 0) "sliding 3", layer 2 "global".
  assert.equal((grid.match(/sliding 3/g) ?? []).length, 1, grid);
  assert.equal((grid.match(/>\s*global</g) ?? []).length, 1, grid);
  assert.doesNotMatch(
    textOf(gridTemplate({ data: windowedData([0, 0]), selected: { layer: 0, head: 0 }, width: 600, big: true, onPick() {} })),
    /sliding \d|global/,
  );
});

test("windowText says a layer's reach the one way every view says it", () => {
  const { windowText, hiddenWord } = figureData;
  const causal = { causal: true, windows: [0, 512] };
  const encoder = { causal: false, windows: [0, 65] };
  assert.deepEqual(windowText(causal, 1), { label: "sliding 512", width: "512", reach: "the 511 tokens before it" });
  assert.deepEqual(windowText(encoder, 1), { label: "local ±64", width: "±64", reach: "the 64 tokens on each side" });
  assert.deepEqual(windowText(causal, 0), { label: "global", width: "", reach: "every earlier token" });
  assert.deepEqual(windowText(encoder, 0), { label: "global", width: "", reach: "every token" });
  assert.deepEqual(windowText({ causal: true }, 3).label, "global");
  // A later key of a causal model is masked; an encoder has no mask, only a window.
  assert.equal(hiddenWord(causal, 2, 5), "masked");
  assert.equal(hiddenWord(causal, 600, 5), "outside the window");
  assert.equal(hiddenWord(encoder, 2, 500), "outside the window");
});
