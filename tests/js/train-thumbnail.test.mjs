// The front page's training card (web/train/thumbnail.js): computed from the committed run that
// the training page's "Skip ahead" loads, it must show a real induction head — the outlined cells
// hold the weight — and the formation step the run's record gives; random weights of the same
// shape must not pass for one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { describeThumbnail, inductionThumbnail, stripeCells } from "../../web/train/thumbnail.js";
import { modelConfig } from "../../web/train/trainer.js";

const dir = new URL("../../web/train/snapshot/", import.meta.url);
const files = {
  "model.safetensors": new Uint8Array(readFileSync(new URL("model.safetensors", dir))),
  "config.json": readFileSync(new URL("config.json", dir), "utf8"),
};
const state = JSON.parse(readFileSync(new URL("state.json", dir), "utf8"));
const lens = await loadAttnLens();

/** Mean weight on the outlined cells, and the largest row-sum error and weight above the diagonal. */
function check(thumb) {
  const { T, weights } = thumb;
  let rowError = 0;
  let above = 0;
  for (let q = 0; q < T; q++) {
    let sum = 0;
    for (let k = 0; k < T; k++) {
      const w = weights[q * T + k];
      assert.ok(Number.isFinite(w), `weight (${q}, ${k}) is ${w}`);
      sum += w;
      if (k > q) above = Math.max(above, Math.abs(w));
    }
    rowError = Math.max(rowError, Math.abs(sum - 1));
  }
  const cells = stripeCells(thumb.span, T);
  const stripe = cells.reduce((s, [q, k]) => s + weights[q * T + k], 0) / cells.length;
  return { rowError, above, stripe, cells: cells.length };
}

test("stripeCells: from each token of the second copy to the token after its first occurrence", () => {
  // A span of 4 at 3 (tokens 3-6), its copy at 7-10: 10 is past T = 10, so three cells.
  assert.deepEqual(stripeCells({ start: 3, n: 4 }, 10), [
    [7, 4],
    [8, 5],
    [9, 6],
  ]);
  assert.deepEqual(stripeCells({ start: 0, n: 5 }, 5), []);
});

test("the saved run's thumbnail shows its induction head, on the outlined cells, formed at step 3 000", async () => {
  const thumb = await inductionThumbnail(lens, files, state);
  const { rowError, above, stripe, cells } = check(thumb);
  // Rows of a float32 softmax over ≤ 31 keys: within 31 · 2^-24 of 1 each.
  assert.ok(rowError < 1e-5, `a row sums to 1 ± ${rowError}`);
  assert.equal(above, 0, "causal: nothing above the diagonal");
  assert.equal(thumb.T, state.options.length - 1);
  assert.ok(cells >= 8, `only ${cells} outlined cells`);
  assert.ok(thumb.score >= 0.4, `the best induction score is ${thumb.score}`);
  assert.ok(stripe >= 0.5, `the outlined cells hold ${stripe.toFixed(2)} of their rows on average`);
  // web/train/RECIPE.md's record of this run (run 32): formed at step 3 000.
  assert.equal(thumb.formedAt?.step, 3000);
  assert.equal(thumb.steps, state.step);
  const text = describeThumbnail(thumb);
  assert.match(
    text,
    new RegExp(`^Layer ${thumb.layer + 1}, head ${thumb.head + 1} of the saved run \\(step ${state.step.toLocaleString("en")}\\)\\.`),
  );
  assert.match(text, /; it formed at step 3,000 \(\d+\.\d M tokens\)\.$/);
});

test("random weights of the same shape show no induction head (the check can fail)", async () => {
  const model = await lens.createModel({ config: modelConfig(state.options), seed: 5 });
  const saved = model.save({ dtype: "F32" });
  model.dispose();
  const thumb = await inductionThumbnail(lens, saved, { ...state, history: [] });
  const { rowError, stripe } = check(thumb);
  assert.ok(rowError < 1e-5);
  assert.ok(thumb.score < 0.2, `random weights score ${thumb.score}`);
  assert.ok(stripe < 0.3, `random weights put ${stripe} on the outlined cells`);
  assert.equal(thumb.formedAt, null);
  assert.doesNotMatch(describeThumbnail(thumb), /formed/);
});
