// A ModernBERT folder through the package, as the hub publishes one (ModernBertForMaskedLM's
// tensors, config.json in either transformers dialect, tokenizer.json), written by
// scripts/modernbert-checkpoint.mjs. The forward's numbers are compared with a float64 reference of
// modeling_modernbert.py in tests/cpp/test_modernbert.cpp; here the tokenizer is compared with
// Hugging Face's own (@huggingface/tokenizers) on the folder's tokenizer.json (a byte-level BPE,
// NFC, [CLS] … [SEP], [MASK] with lstrip), and the model with what a reader asks of it:
// bidirectional attention within each local layer's window, fillMask at [MASK], a save that reads
// back, and the same numbers from both config dialects.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { loadAttnLens } from "attnlens";
import { MODERNBERT_PRESETS, writeModernbertCheckpoint } from "../../scripts/modernbert-checkpoint.mjs";
import { randomGenerator } from "./helpers.mjs";

const lens = await loadAttnLens();
const root = mkdtempSync(join(tmpdir(), "attnlens-modernbert-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const TINY = MODERNBERT_PRESETS.tiny;
for (const dialect of [4, 5]) writeModernbertCheckpoint(join(root, `tf${dialect}`), TINY, { dialect, seed: 5 });
const read = (dialect, name) => readFileSync(join(root, `tf${dialect}`, name), "utf8");
const folder = (dialect = 4) => ({
  "model.safetensors": new Uint8Array(readFileSync(join(root, `tf${dialect}`, "model.safetensors"))),
  "config.json": read(dialect, "config.json"),
  "tokenizer.json": read(dialect, "tokenizer.json"),
});

const WORDS = [
  "the",
  "cat",
  "sat",
  "on",
  "mat",
  "Hello",
  "world",
  "naïve",
  "café",
  "HTTP",
  "they're",
  "don't",
  "3.14",
  "日本語",
  "😀",
  "e\u0301",
];
const GLUE = [" ", "  ", "\t", "\n", ", ", ". ", "!", "", " [MASK]", "[MASK]", " [MASK] ", "  [MASK]", "\u00a0[MASK]", " [CLS]", "[SEP]"];

test("ModernBERT's tokenizer.json: the ids Hugging Face's gives, on 300 texts with [MASK], [CLS] and [SEP] written in them", async () => {
  const reference = new Tokenizer(JSON.parse(read(4, "tokenizer.json")), {});
  const rand = randomGenerator(46);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = ["", " ", "Hello world", "a [MASK] in possession", "[MASK]", " [MASK]", "It is [MASK].  [MASK]", "cafe\u0301"];
  while (texts.length < 300) {
    let text = "";
    for (let n = 1 + Math.floor(rand() * 12); n > 0; n--) text += pick(WORDS) + pick(GLUE);
    texts.push(text);
  }
  const model = await lens.loadModel({ files: folder() });
  try {
    const problems = [];
    for (const text of texts) {
      const expected = [...reference.encode(text).ids];
      const got = [...model.encode(text)];
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        problems.push(
          `${JSON.stringify(text)}:\n    @huggingface/tokenizers ${JSON.stringify(expected)}\n    attnlens                ${JSON.stringify(got)}`,
        );
      }
    }
    assert.equal(problems.length, 0, `${problems.length} of ${texts.length} texts differ:\n  ${problems.slice(0, 6).join("\n  ")}`);
  } finally {
    model.dispose();
  }
});

test("a ModernBERT folder: what it says of itself, attention within each local layer's window, fillMask at [MASK], a save that reads back", async () => {
  const model = await lens.loadModel({ files: folder() });
  try {
    const c = model.config;
    assert.deepEqual(
      { family: c.family, causal: c.causal, prediction: c.prediction, hasHead: c.hasHead, positions: c.positions, norm: c.norm },
      { family: "modernbert", causal: false, prediction: "masked-token", hasHead: true, positions: "rotary", norm: "layernorm" },
    );
    // Layer 0 global, then local layers reaching local_attention / 2 = 4 tokens each side.
    assert.deepEqual([...c.windows], [0, 5, 5]);
    assert.equal(c.context, TINY.context);
    const tokenizer = JSON.parse(read(4, "tokenizer.json"));
    const mask = tokenizer.added_tokens.find((t) => t.content === "[MASK]").id;
    assert.equal(model.tokenizer.maskId, mask);
    assert.equal(model.tokenizer.maskText, "[MASK]");
    const text = "The cat [MASK] on the mat, and the dog slept by the door all day.";
    const tokens = model.tokens(text);
    assert.deepEqual(
      tokens.slice(0, 5).map((t) => t.text),
      ["[CLS]", "The", " cat", " [MASK]", " on"],
    );
    assert.equal(tokens.at(-1).text, "[SEP]");
    const ids = model.encode(text);
    const T = ids.length;
    assert.ok(T > 10, `${T} tokens: more than a local window`);
    const out = model.forward(ids, { attention: true });
    const [L, H] = [c.layers, c.heads];
    assert.deepEqual([...out.attention.shape], [L, H, T, T]);
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++)
          for (let j = 0; j < T; j++) {
            const w = out.attention.data[((l * H + h) * T + i) * T + j];
            if (c.windows[l] && Math.abs(i - j) >= c.windows[l])
              assert.equal(w, 0, `layer ${l} head ${h} (${i}, ${j}) is outside the window`);
            else assert.ok(w > 0, `layer ${l} head ${h} (${i}, ${j}) = ${w}`);
          }
    const [fill] = model.fillMask(text, { k: 5 });
    assert.equal(fill.position, 3);
    assert.equal(fill.predictions.length, 5);
    for (let i = 1; i < 5; i++) assert.ok(fill.predictions[i - 1].p >= fill.predictions[i].p);
    const saved = model.save();
    const written = JSON.parse(saved["config.json"]);
    assert.deepEqual(
      [written.model_type, written.global_attn_every_n_layers, written.local_attention, written.norm_eps, written.pad_token_id],
      ["modernbert", 3, 8, 1e-5, JSON.parse(read(4, "config.json")).pad_token_id],
    );
    const back = await lens.loadModel({ files: saved });
    try {
      assert.deepEqual([...back.config.windows], [0, 5, 5]);
      assert.deepEqual(
        back.fillMask(text, { k: 5 })[0].predictions.map((p) => p.id),
        fill.predictions.map((p) => p.id),
      );
    } finally {
      back.dispose();
    }
  } finally {
    model.dispose();
  }
});

test("ModernBERT's two config dialects (transformers 4 and 5) give the same model", async () => {
  const [four, five] = await Promise.all([lens.loadModel({ files: folder(4) }), lens.loadModel({ files: folder(5) })]);
  try {
    assert.match(read(5, "config.json"), /"rope_parameters"[^]*"sliding_attention"/);
    assert.deepEqual([...five.config.windows], [...four.config.windows]);
    const ids = four.encode("A sentence long enough to reach past a local window of the model.");
    const a = four.forward(ids, { attention: true });
    const b = five.forward(ids, { attention: true });
    // deepEqual holds NaN equal to NaN: the numbers compared must be numbers.
    for (const [name, data] of [
      ["logits", a.logits.data],
      ["attention", a.attention.data],
    ]) {
      const bad = data.findIndex((x) => !Number.isFinite(x));
      assert.equal(bad, -1, `${name}[${bad}] = ${data[bad]} is not finite`);
    }
    assert.deepEqual(b.logits.data, a.logits.data);
    assert.deepEqual(b.attention.data, a.attention.data);
  } finally {
    four.dispose();
    five.dispose();
  }
});
