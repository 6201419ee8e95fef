// The shipped encoder (models/attnlens-encoder/, written by `npm run train -- --encoder`) on the
// fixed held-out sample (tests/fixtures/corpus/heldout_sample.txt), as test_shipped_model.cpp
// holds the causal model: each head's previous- and next-token score comes out as eval.json
// recorded it on 64 held-out windows of the same corpus, and the masked-token loss is far below a
// unigram model. A broken loader, tokenizer, kernel or a model shipped without its record moves
// these numbers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";

const dir = new URL("../../models/attnlens-encoder/", import.meta.url);
const read = (name) => readFileSync(new URL(name, dir), name.endsWith(".safetensors") ? undefined : "utf8");
const W = 126; // stream tokens per window, as the trainer's windows: [CLS] + 126 + [SEP]

test("the shipped encoder: its heads on the held-out sample are the ones eval.json records, and its masked-token loss is far below unigram", async () => {
  const lens = await loadAttnLens();
  const encoder = await lens.loadModel({
    files: Object.fromEntries(["model.safetensors", "config.json", "vocab.json", "merges.txt"].map((n) => [n, read(n)])),
  });
  const record = JSON.parse(read("eval.json"));
  const [CLS, MASK, SEP] = encoder.encode("[MASK]");
  const body = encoder.encode(readFileSync(new URL("../fixtures/corpus/heldout_sample.txt", import.meta.url), "utf8")).slice(1, -1);
  const V = encoder.config.vocabSize;
  const { layers, heads } = encoder.config;
  const previous = Array.from({ length: layers * heads }, () => []);
  const next = Array.from({ length: layers * heads }, () => []);
  let nll = 0;
  let predicted = 0;
  for (let w = 0; w + W <= body.length; w += W) {
    const ids = Int32Array.from([CLS, ...body.subarray(w, w + W), SEP]);
    const { attention } = encoder.forward(ids, { attention: true });
    const L = ids.length;
    for (let m = 0; m < layers * heads; m++) {
      const a = attention.data.subarray(m * L * L, (m + 1) * L * L);
      let p = 0;
      let q = 0;
      // Word tokens only: from token i to i - 1 (i from 2) and to i + 1 (up to the last word).
      for (let i = 2; i < L - 1; i++) p += a[i * L + i - 1];
      for (let i = 1; i < L - 2; i++) q += a[i * L + i + 1];
      previous[m].push(p / (L - 3));
      next[m].push(q / (L - 3));
    }
    // Every 8th word token masked, each offset in turn: every token predicted once.
    for (let offset = 0; offset < 8; offset++) {
      const masked = Int32Array.from(ids);
      for (let i = 1 + offset; i < L - 1; i += 8) masked[i] = MASK;
      const { logits } = encoder.forward(masked);
      for (let i = 1 + offset; i < L - 1; i += 8) {
        const row = logits.data.subarray(i * V, (i + 1) * V);
        let max = -Infinity;
        for (const x of row) max = Math.max(max, x);
        let sum = 0;
        for (const x of row) sum += Math.exp(x - max);
        nll += Math.log(sum) + max - row[ids[i]];
        predicted++;
      }
    }
  }
  encoder.dispose();
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  // The sample is other text than the 64 held-out windows eval.json measured on: a head's mean
  // over about 1 000 positions, whose weights spread with a standard deviation up to about 0.3,
  // moves by about 0.3 / √1000 ≈ 0.01 between samples (more where neighbouring positions are
  // correlated); 0.06 allows several times that. When the model was committed the largest gap was
  // 0.008 (layer 1 head 2, previous token: 0.245 here, 0.237 recorded).
  // The record is [layers][heads], as the model: a size mismatch is a failure, not a skipped head.
  for (const name of ["previous", "next"]) {
    assert.equal(record.heads[name].length, layers, `eval.json's ${name} scores: ${record.heads[name].length} layers, the model ${layers}`);
    for (const row of record.heads[name])
      assert.equal(row.length, heads, `eval.json's ${name} scores: ${row.length} heads, the model ${heads}`);
  }
  const worst = { gap: 0, where: "" };
  for (let m = 0; m < layers * heads; m++) {
    const [l, h] = [Math.floor(m / heads), m % heads];
    for (const [name, measured, recorded] of [
      ["previous", mean(previous[m]), record.heads.previous[l][h]],
      ["next", mean(next[m]), record.heads.next[l][h]],
    ]) {
      assert.ok(Number.isFinite(measured), `layer ${l} head ${h} ${name}: ${measured}`);
      assert.ok(Number.isFinite(recorded), `eval.json has no ${name} score for layer ${l} head ${h}: ${recorded}`);
      const gap = Math.abs(measured - recorded);
      if (gap > worst.gap)
        Object.assign(worst, { gap, where: `layer ${l} head ${h} ${name}: ${measured.toFixed(3)} here, ${recorded} recorded` });
    }
  }
  assert.ok(worst.gap <= 0.06, `the worst head differs by ${worst.gap.toFixed(3)} (${worst.where})`);
  // The card's targets (models/attnlens-encoder/MODEL.md): a previous-token and a next-token head
  // over 0.8 (eval.json records 0.886 and 0.905; 0.893 and 0.913 on this sample when committed).
  assert.ok(Math.max(...previous.map(mean)) > 0.8, `best previous-token head ${Math.max(...previous.map(mean))}`);
  assert.ok(Math.max(...next.map(mean)) > 0.8, `best next-token head ${Math.max(...next.map(mean))}`);
  // Masked-token loss against a unigram model fitted on this same sample (optimistic for the
  // unigram: it has seen the answers' frequencies, so the gap is smaller than eval.json's 3.25
  // nats below the training split's unigram): 2.08 nats below when the model was committed; at
  // least 1.8 (the gap's sampling error over ~1 000 predictions is about 0.1).
  const counts = new Map();
  for (const id of body) counts.set(id, (counts.get(id) ?? 0) + 1);
  let unigram = 0;
  for (const id of body) unigram -= Math.log(counts.get(id) / body.length);
  unigram /= body.length;
  const loss = nll / predicted;
  assert.ok(predicted > 900, `${predicted} tokens predicted`);
  assert.ok(loss <= unigram - 1.8, `masked-token loss ${loss.toFixed(3)} against the sample's unigram ${unigram.toFixed(3)}`);
});

const encoderFiles = () => Object.fromEntries(["model.safetensors", "config.json", "vocab.json", "merges.txt"].map((n) => [n, read(n)]));

test("the shipped encoder's [MASK] takes the space before it: the page's preset fills the same with and without it", async () => {
  const lens = await loadAttnLens();
  const encoder = await lens.loadModel({ files: encoderFiles() });
  try {
    // web/examples.js's preset, as a reader types it (a space before [MASK]) and glued.
    const spaced =
      "It is a truth universally acknowledged, that a single [MASK] in possession of a good fortune, must be in want of a wife.";
    const glued = spaced.replace(" [MASK]", "[MASK]");
    // The byte-level BPE writes a word's space into the word's token, so a bare " " token before
    // the mask is a sequence the model never saw: the mask takes the space (as RoBERTa's <mask>).
    assert.deepEqual([...encoder.encode(spaced)], [...encoder.encode(glued)]);
    const tokens = encoder.tokens(spaced);
    const at = tokens.findIndex((t) => t.id === encoder.tokenizer.maskId);
    assert.ok(at > 0, "the preset has a [MASK]");
    assert.notEqual(tokens[at - 1].text, " ", "no bare-space token before the mask");
    // The mask's span covers the space it took, as Hugging Face's offsets of an lstrip token do.
    assert.equal(spaced.slice(tokens[at].begin, tokens[at].end), " [MASK]");
    const fillers = (text) => encoder.fillMask(text, { k: 5 })[0].predictions.map((p) => p.text);
    assert.deepEqual(fillers(spaced), fillers(glued));
    assert.ok(fillers(spaced).includes(" man"), `the preset's fillers: ${JSON.stringify(fillers(spaced))}`);
    // A space after the mask stays with the next word (" in"), and two masks each take their own.
    assert.deepEqual([...encoder.encode("a [MASK] [MASK] in")], [...encoder.encode("a[MASK][MASK] in")]);
  } finally {
    encoder.dispose();
  }
});

test("the shipped encoder fills words masked after a space in held-out sentences: the word is in the top 10 at least 3 times in 6", async () => {
  // Held-out text (tests/fixtures/corpus/heldout_sample.txt, not trained on). Chosen by a fixed
  // rule, not by the answers: the first six sentences of 8 to 30 words, each with its first word
  // from the fourth on that is four or more lower-case letters masked (function words such as
  // "the" or "of" would make the check easy).
  const sample = readFileSync(new URL("../fixtures/corpus/heldout_sample.txt", import.meta.url), "utf8");
  const sentences = sample
    .split(/(?<=[.!?])["']?\s+/)
    .map((s) => s.trim())
    .filter((s) => {
      const n = s.split(/\s+/).length;
      return n >= 8 && n <= 30;
    })
    .slice(0, 6);
  assert.equal(sentences.length, 6);
  const lens = await loadAttnLens();
  const encoder = await lens.loadModel({ files: encoderFiles() });
  try {
    const results = sentences.map((sentence) => {
      const words = sentence.split(" ");
      const i = words.findIndex((w, j) => j >= 3 && /^[a-z]{4,}$/.test(w));
      assert.ok(i > 0, `a word to mask in "${sentence}"`);
      const masked = [...words.slice(0, i), "[MASK]", ...words.slice(i + 1)].join(" ");
      const top = encoder.fillMask(masked, { k: 10 })[0].predictions.map((p) => p.text);
      return { masked, word: ` ${words[i]}`, top, hit: top.includes(` ${words[i]}`) };
    });
    const hits = results.filter((r) => r.hit).length;
    assert.ok(
      hits >= 3,
      `${hits} of 6 in the top 10:\n${results.map((r) => `${r.hit ? "+" : "-"} ${r.masked} -> ${r.word}: ${r.top.join("|")}`).join("\n")}`,
    );
  } finally {
    encoder.dispose();
  }
});
