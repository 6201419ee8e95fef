// Tokens the model wrote (web/write.js, the element's generate) are labelled in the accent colour
// in the lines view as in the heatmap: its draw() against a painter that records the labels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { importWeb } from "./web-modules.mjs";

// Text widths come from a canvas (web/text.js); Node has none: a stand-in 6 px per character.
globalThis.OffscreenCanvas ??= class {
  getContext() {
    return { font: "", measureText: (text) => ({ width: 6 * text.length }) };
  }
};
const lines = await importWeb("views/lines.js");

const PALETTE = { background: "#fff", foreground: "#111", muted: "#777", accent: "#c00", grid: "#ddd" };

/** A painter that records each text it is asked to draw ({ text, fill }) and ignores the rest. */
function recorder() {
  const texts = [];
  const p = new Proxy(
    {},
    {
      get: (_, name) => (name === "text" ? (text, x, y, o) => texts.push({ text, fill: o?.fill }) : () => {}),
    },
  );
  return { p, texts };
}

test("the lines view labels written tokens in the accent colour, on both sides", () => {
  const words = ["The", " cat", " sat", " on", " the", " mat"];
  const L = words.length;
  const weights = new Float32Array(L * L);
  for (let i = 0; i < L; i++) for (let j = 0; j <= i; j++) weights[i * L + j] = 1 / (i + 1);
  const data = {
    tokens: words.map((text, i) => ({ text, written: i >= 4 })),
    causal: true,
    weights: { data: weights, shape: [1, 1, L, L] },
  };
  const lay = lines.layout({ data, layer: 0, visible: [true], title: "lines", palette: PALETTE, width: 600 });
  const { p, texts } = recorder();
  lines.draw(p, lay);
  for (const [i, word] of words.entries()) {
    const labels = texts.filter((t) => t.text === word.trim() || t.text === word);
    assert.equal(labels.length, 2, `"${word}" is labelled on the query and the key side`);
    for (const label of labels) assert.equal(label.fill, i >= 4 ? PALETTE.accent : PALETTE.foreground, `"${word}"'s label colour`);
  }
  // Without written tokens, every label is in the text colour.
  for (const t of data.tokens) t.written = false;
  const plain = recorder();
  lines.draw(plain.p, lines.layout({ data, layer: 0, visible: [true], title: "lines", palette: PALETTE, width: 600 }));
  assert.ok(plain.texts.every((t) => t.fill !== PALETTE.accent));
});
