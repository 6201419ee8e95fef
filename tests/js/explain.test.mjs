// explain() and selfAttention() through the package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose, attentionToleranceFor, randomGenerator, randomTensor, twice } from "./helpers.mjs";

const lens = await loadAttnLens();

test("explain: tokens with UTF-16 offsets, per-head weights, causal zeros", () => {
  const sentence = "I ❤️ the 🐈, café!";
  const ex = lens.explain(sentence, { modelDim: 16, numHeads: 2 });
  assert.deepEqual(
    ex.tokens.map((t) => t.text),
    ["I", "❤️", "the", "🐈", ",", "café", "!"],
  );
  for (const t of ex.tokens) assert.equal(sentence.slice(t.start, t.end), t.text);
  const L = ex.tokens.length;
  assert.deepEqual(ex.weights.shape, [2, L, L]);
  for (let h = 0; h < 2; h++) {
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) assert.equal(ex.weights.data[(h * L + i) * L + j], 0);
  }
  assert.deepEqual(ex.trace.q.shape, [2, L, 8]);
  assert.deepEqual(ex.pca.original.shape, [L, 2]);
  assert.equal(ex.stats.totalTokens, L);
  assert.equal(ex.options.positional, "sinusoidal");
});

test("explain: same seed gives identical results, another seed differs, full differs from causal", () => {
  const a = lens.explain("attention is all you need");
  const b = lens.explain("attention is all you need");
  assert.deepEqual(a.weights.data, b.weights.data);
  assert.deepEqual(a.pca.contextual.data, b.pca.contextual.data);
  assert.notDeepEqual(lens.explain("attention is all you need", { seed: 8 }).weights.data, a.weights.data);
  const full = lens.explain("attention is all you need", { causal: false });
  assert.notDeepEqual(full.weights.data, a.weights.data);
  assert.ok(full.weights.data[1] > 0);
});

test("explain: the scaled score variance is the raw one divided by d", () => {
  const ex = lens.explain("the cat sat on the mat and the dog sat on the log", { modelDim: 64, numHeads: 4 });
  const L = ex.tokens.length;
  assert.equal(ex.stats.rawScoreVariance.length, 4);
  ex.stats.rawScoreVariance.forEach((raw, h) => {
    // The scaled scores are rounded to float32 (each moves by u |s|, u = 2^-24), which moves
    // their variance by at most 2 std(s) u max|s| + (u max|s|)^2.
    const scores = ex.trace.scores.data.subarray(h * L * L, (h + 1) * L * L);
    const sMax = scores.reduce((m, x) => Math.max(m, Math.abs(x)), 0) / 4;
    const tol = 2 * Math.sqrt(raw / 16) * 2 ** -24 * sMax + (2 ** -24 * sMax) ** 2;
    assertClose([ex.stats.scaledScoreVariance[h]], [raw / 16], tol, `head ${h} scaled variance`);
  });
});

test("explain: truncation keeps the first tokens and says so", () => {
  const ex = lens.explain("a b c d e f", { maxTokens: 4, truncate: true });
  assert.equal(ex.tokens.length, 4);
  assert.equal(ex.stats.truncated, true);
  assert.equal(ex.stats.totalTokens, 6);
});

/** Every number of an explanation's weights, output and trace is finite (masked logits aside). */
function assertFiniteTrace(ex) {
  const tensors = { weights: ex.weights, meanWeights: ex.meanWeights, output: ex.output, ...(ex.trace ?? {}) };
  for (const [name, t] of Object.entries(tensors)) {
    if (typeof t === "number" || name === "mask" || name === "masked") continue;
    assert.ok(t.data.every(Number.isFinite), `${name} holds a NaN or an infinity`);
  }
}

test("explain with traceHead: that head's score stages and variances, every other stage whole", () => {
  for (const causal of [true, false]) {
    const options = { modelDim: 32, numHeads: 4, causal };
    const text = "the cat sat on the mat because it was tired";
    const full = lens.explain(text, options);
    const L = full.tokens.length;
    for (const head of [0, 3]) {
      const one = lens.explain(text, { ...options, traceHead: head });
      assert.equal(one.options.traceHead, head);
      // deepEqual counts NaN equal to NaN: the compared numbers must be finite first.
      assertFiniteTrace(one);
      // The same operations on the same numbers in the same module: bit-identical.
      for (const stage of ["scores", "scaled", "masked"]) {
        assert.deepEqual(one.trace[stage].shape, [1, L, L], stage);
        assert.deepEqual(one.trace[stage].data, full.trace[stage].data.subarray(head * L * L, (head + 1) * L * L), stage);
      }
      for (const stage of ["x", "q", "k", "v", "mask", "weights", "headOutputs", "concat", "output"]) {
        assert.deepEqual(one.trace[stage], full.trace[stage], stage);
      }
      assert.deepEqual(one.weights, full.weights);
      assert.deepEqual(one.stats.rawScoreVariance, [full.stats.rawScoreVariance[head]]);
      assert.deepEqual(one.stats.scaledScoreVariance, [full.stats.scaledScoreVariance[head]]);
    }
  }
  assert.equal("traceHead" in lens.explain("the cat").options, false);
  for (const [traceHead, message] of [
    [4, /traceHead must be between 0 and numHeads - 1 = 3; got 4/],
    [-1, /traceHead must be between 0 and numHeads - 1 = 3; got -1/],
    [1.5, /traceHead/],
    ["1", /traceHead/],
  ]) {
    assert.throws(
      () => lens.explain("the cat", { numHeads: 4, traceHead }),
      (e) => e.code === "BAD_ARGUMENT" && message.test(e.message),
    );
  }
});

test("explain({ into }): the numbers of a fresh call, written into the earlier result's arrays", () => {
  const a = "the cat sat on the mat because it was tired";
  const b = "a dog ran in the park when it was sunny";
  for (const trace of [false, true]) {
    for (const traceHead of [undefined, 1]) {
      if (traceHead !== undefined && !trace) continue;
      const options = { modelDim: 32, numHeads: 4, trace, ...(traceHead === undefined ? {} : { traceHead }) };
      const earlier = lens.explain(a, options);
      const arrays = { weights: earlier.weights.data, meanWeights: earlier.meanWeights.data, output: earlier.output.data };
      const reused = lens.explain(b, { ...options, into: earlier });
      const fresh = lens.explain(b, options);
      assertFiniteTrace(fresh); // deepEqual counts NaN equal to NaN
      // Bit-identical to a call without `into`, in every part (same module, same operations).
      assert.deepEqual(reused, fresh);
      // Same sizes (both texts have 10 tokens): the earlier arrays were written, not replaced.
      for (const [key, data] of Object.entries(arrays)) assert.equal(reused[key].data, data, key);
      if (trace) {
        assert.equal(reused.trace.weights.data, earlier.weights.data);
        assert.equal(reused.trace.scores.data, earlier.trace.scores.data);
      }
    }
  }
  // Other sizes: new arrays, and the earlier result keeps its numbers.
  const earlier = lens.explain(a, { numHeads: 2, trace: false });
  const copy = Float32Array.from(earlier.weights.data);
  const longer = lens.explain(`${a} and more words`, { numHeads: 2, trace: false, into: earlier });
  assert.notEqual(longer.weights.data, earlier.weights.data);
  assert.deepEqual(earlier.weights.data, copy);
  // A non-traced earlier result gives a traced one its weights array.
  const traced = lens.explain(a, { numHeads: 2, into: earlier });
  assert.equal(traced.trace.weights.data, earlier.weights.data);
  assert.equal(traced.weights.data, earlier.weights.data);
  // A hand-made `into` whose stages share one array: each array serves one tensor of the result.
  const shared = lens.explain(a, { numHeads: 2 });
  const odd = { ...shared, trace: { ...shared.trace, scaled: shared.trace.scores, masked: shared.trace.scores } };
  assert.deepEqual(lens.explain(b, { numHeads: 2, into: odd }), lens.explain(b, { numHeads: 2 }));
  for (const into of [null, {}, { weights: [1, 2] }, "earlier", earlier.weights]) {
    assert.throws(
      () => lens.explain(a, { into }),
      (e) => e.code === "BAD_ARGUMENT" && /into must be an earlier explain\(\) result|into must be an object/.test(e.message),
    );
  }
});

test("explain without the trace: the same numbers, no stages, no score variances", () => {
  for (const causal of [true, false]) {
    const options = { modelDim: 32, numHeads: 4, causal };
    const full = lens.explain("the cat sat on the mat because it was tired", options);
    const lean = lens.explain("the cat sat on the mat because it was tired", { ...options, trace: false });
    // The same operations on the same numbers in the same module: bit-identical.
    for (const key of ["weights", "meanWeights", "output", "contextual", "embeddings"]) {
      assert.deepEqual(lean[key].shape, full[key].shape, key);
      assert.deepEqual(lean[key].data, full[key].data, key);
    }
    assert.deepEqual(lean.pca.contextual.data, full.pca.contextual.data);
    assert.deepEqual(lean.stats.entropy.data, full.stats.entropy.data);
    assert.equal(lean.trace, null);
    assert.deepEqual(lean.stats.rawScoreVariance, []);
    assert.equal(lean.options.trace, false);
    assert.equal(full.options.trace, true);
    // The trace's weights and output are the result's: one tensor each, copied out of the
    // module once (the C++ trace leaves its copies empty: ExplainOptions::trace_results).
    assert.equal(full.trace.weights, full.weights);
    assert.equal(full.trace.output, full.output);
    assert.deepEqual(full.weights.shape, [4, 10, 10]);
  }
  assert.throws(
    () => lens.explain("the cat", { trace: "no" }),
    (e) => e.code === "BAD_ARGUMENT" && /trace/.test(e.message),
  );
});

test("selfAttention: identity init with one head is attention(x, x, x)", () => {
  const rand = randomGenerator(9);
  const x = randomTensor([5, 4], rand);
  const layer = lens.selfAttention({ modelDim: 4, numHeads: 1, init: "identity" });
  const r = layer.forward(x, { causal: true });
  const expected = lens.attention(x, x, x, { causal: true });
  // With W = I every projection is exact, so both compute attention(x, x, x) in float32.
  assertClose(r.output.data, expected.output.data, twice(attentionToleranceFor(x, x, x)).output, "output", [5, 4]);
  assert.deepEqual(r.weights.shape, [1, 5, 5]);
});

test("selfAttention: given weights, trace stages are consistent, batches work", () => {
  const rand = randomGenerator(10);
  const E = 6;
  const w = () => randomTensor([E, E], rand);
  const layer = lens.selfAttention({ modelDim: E, numHeads: 3, weights: { wq: w(), wk: w(), wv: w(), wo: w() } });
  const x = randomTensor([4, E], rand);
  const r = layer.forward(x, { causal: true, trace: true });
  const t = r.trace;
  assert.deepEqual(t.scores.shape, [3, 4, 4]);
  t.scores.data.forEach((s, i) => assert.equal(t.scaled.data[i], Math.fround(s * t.scale)));
  assert.equal(t.output, r.output);
  assert.equal(t.weights, r.weights);
  assert.deepEqual(r.weights.shape, [3, 4, 4]);
  assert.equal(t.mask.data[1], -Infinity);
  const batched = layer.forward({ data: Float32Array.of(...x.data, ...x.data), shape: [2, 4, E] });
  assert.deepEqual(batched.weights.shape, [2, 3, 4, 4]);
  // The same slices through the same code, which does not depend on addresses: exact.
  assert.deepEqual(batched.output.data.slice(0, 4 * E), layer.forward(x).output.data);
});

test("selfAttention: the same seed gives the same weights", () => {
  const a = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 5 });
  const b = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 5 });
  const c = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 6 });
  assert.deepEqual(a.weights.wq.data, b.weights.wq.data);
  assert.notDeepEqual(a.weights.wq.data, c.weights.wq.data);
});

test("trace: the stages are the C++ list, in order, and the .d.ts declares exactly those", () => {
  const names = lens.traceStages.map((s) => s.name);
  assert.ok(names.includes("masked"));
  const layer = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 3 });
  const r = layer.forward(randomTensor([3, 8], randomGenerator(13)), { trace: true });
  assert.deepEqual(Object.keys(r.trace), ["scale", ...names]);
  const dts = readFileSync(new URL("../../dist/attnlens.d.ts", import.meta.url), "utf8");
  const body = dts.match(/export interface Trace \{([\s\S]*?)\n\}/)[1];
  const fields = [...body.matchAll(/\/\*\* ([^\n]*?) \*\/\n\s+(\w+): /g)].map(([, doc, name]) => ({ doc, name }));
  assert.deepEqual(
    fields.map((f) => f.name),
    ["scale", ...names],
  );
  // Each stage's comment starts with the shape the C++ list gives it.
  for (const stage of lens.traceStages) assert.ok(fields.find((f) => f.name === stage.name).doc.startsWith(stage.shape), stage.name);
});

test("trace: masked is scaled where the mask lets a key through and -Infinity elsewhere", () => {
  const ex = lens.explain("the cat sat on the mat", { modelDim: 16, numHeads: 2 });
  const t = ex.trace;
  const L = ex.tokens.length;
  assert.deepEqual(t.masked.shape, [2, L, L]);
  // The same multiplication by the same rule: the same bits.
  const expected = t.scaled.data.map((s, i) => (t.mask.data[i % (L * L)] === -Infinity ? -Infinity : s));
  assert.deepEqual(t.masked.data, expected);
  assert.equal(t.weights, ex.weights);
});

test("explain: keycap emoji are one token (once: # split off)", () => {
  assert.deepEqual(
    lens.explain("#️⃣ and 1️⃣!").tokens.map((t) => t.text),
    ["#️⃣", "and", "1️⃣", "!"],
  );
});

test("explain: a sentence over the byte limit is refused before it reaches the wasm heap", () => {
  // Once a 300 MB sentence grew the heap to 634 MB before TOO_LARGE. Every UTF-16 unit is at
  // least one UTF-8 byte, so 40 M units are over the 1 MiB limit without encoding them.
  lens.explain("warm up");
  const before = lens.memory().heapBytes;
  assert.throws(() => lens.explain("a".repeat(40_000_000)), { code: "TOO_LARGE", message: /40000000 UTF-16 code units/ });
  assert.throws(() => lens.explain(new Uint8Array(lens.limits.maxTextBytes + 1)), { code: "TOO_LARGE", message: /1048577 bytes/ });
  assert.equal(lens.memory().heapBytes, before);
  // Just under the limit in units but over it in bytes: encoded, then refused by the library.
  assert.throws(() => lens.explain("é".repeat(600_000)), { code: "TOO_LARGE", message: /1200000 bytes, over the limit of 1048576/ });
});

test("the .d.ts documents the library's defaults", () => {
  const dts = readFileSync(new URL("../../dist/attnlens.d.ts", import.meta.url), "utf8");
  for (const [iface, defaults] of [
    ["ExplainOptions", lens.defaults.explain],
    ["SelfAttentionConfig", lens.defaults.selfAttention],
  ]) {
    const body = dts.match(new RegExp(`export interface ${iface} \\{([\\s\\S]*?)\\n\\}`))[1];
    for (const [name, value] of Object.entries(defaults)) {
      const doc = body.match(new RegExp(`/\\*\\*([^/]*?)\\*/\\n\\s+${name}\\?:`));
      assert.ok(doc, `${iface}.${name} is documented`);
      assert.match(
        doc[1],
        new RegExp(`Default ${JSON.stringify(value).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[.,]`),
        `${iface}.${name}: Default ${JSON.stringify(value)}`,
      );
    }
  }
});
