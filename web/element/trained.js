// Trained mode of <attn-lens>: a GPT-2-family model computes the figure — the attnlens model
// shipped beside the element, or a checkpoint a reader picks. Loaded on demand (with the grid),
// so a random-weights figure does not pay for it. Text from a model or a file is bound as text.
import { html, nothing } from "lit";

/** The files of a checkpoint; vocab.json and merges.txt (the tokenizer) are needed to read text. */
export const CHECKPOINT_FILES = ["model.safetensors", "config.json", "vocab.json", "merges.txt"];
const TEXT_FILES = new Set(["config.json", "vocab.json", "merges.txt"]);
/** The shipped model's directory, beside the bundle that holds this module (a variable: Vite must not resolve it). */
const SHIPPED_DIR = "./models/attnlens/";
export const shippedModelUrl = () => new URL(SHIPPED_DIR, import.meta.url).href;

const bad = (message) => Object.assign(new Error(message), { code: "BAD_FILE" });
const MB = (bytes) => (bytes / 1e6).toFixed(1);

/** Fetches the four files of `base` (a directory URL), reporting bytes read of model.safetensors. */
async function fetchCheckpoint(base, { signal, onProgress }) {
  const files = {};
  await Promise.all(
    CHECKPOINT_FILES.map(async (name) => {
      const url = new URL(name, base);
      let response;
      try {
        response = await fetch(url, { signal });
      } catch (error) {
        if (error.name === "AbortError") throw error;
        throw bad(`${name} of the model could not be fetched from ${url.href} (${error.message})`);
      }
      if (!response.ok) throw bad(`${name} of the model could not be fetched from ${url.href}: HTTP ${response.status}`);
      if (TEXT_FILES.has(name)) {
        files[name] = await response.text();
        return;
      }
      const total = Number(response.headers.get("content-length")) || 0;
      const reader = response.body.getReader();
      const chunks = [];
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        bytes += value.length;
        onProgress?.({ phase: "fetch", bytes, totalBytes: Math.max(total, bytes) });
      }
      const all = new Uint8Array(bytes);
      let at = 0;
      for (const c of chunks) all.set(c, (at += c.length) - c.length);
      files[name] = all;
    }),
  );
  return files;
}

/**
 * The checkpoint in files a reader picked (a FileList or File[], e.g. a directory) or an object
 * name -> bytes/string. Files are matched by name; others are ignored.
 */
async function readPicked(files) {
  if (files && typeof files === "object" && !(Symbol.iterator in files) && typeof files.length !== "number") return { ...files };
  const list = [...(files ?? [])];
  const out = {};
  for (const file of list) {
    const name = String(file?.name ?? "");
    if (!CHECKPOINT_FILES.includes(name)) continue;
    out[name] = TEXT_FILES.has(name) ? await file.text() : new Uint8Array(await file.arrayBuffer());
  }
  if (!out["model.safetensors"] || !out["config.json"]) {
    const names = list.map((f) => f?.name).filter(Boolean);
    throw bad(
      `a checkpoint needs model.safetensors and config.json (and vocab.json and merges.txt for its tokenizer); ` +
        `got ${names.length ? names.join(", ") : "no files"}`,
    );
  }
  return out;
}

// The induction probe: random ids (never the last id, end-of-text in GPT-2's vocabularies) with
// a span repeated once, as `npm run eval` measures it; a fixed seed, so every reader sees the same.
const PROBE = { trials: 2, length: 32, seed: 12345 };

function probeIds(V, trial) {
  let x = (PROBE.seed + trial * 0x9e3779b9) >>> 0;
  const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
  const n = PROBE.length;
  const ids = new Int32Array(2 * n);
  for (let j = 0; j < n; j++) ids[j] = ids[j + n] = next() % (V - 1);
  return ids;
}

/**
 * Induction score per [layer][head]: mean attention from each token of the second copy to the
 * token after its earlier occurrence, over the probe.
 */
export function inductionScores(model) {
  const { layers, heads, vocabSize, context } = model.config;
  const n = Math.min(PROBE.length, Math.floor(context / 2));
  const scores = Array.from({ length: layers }, () => new Array(heads).fill(0));
  if (n < 2 || vocabSize < 2) return null;
  for (let trial = 0; trial < PROBE.trials; trial++) {
    const ids = probeIds(vocabSize, trial).subarray(0, 2 * n);
    if (n < PROBE.length) ids.copyWithin(n, 0, n);
    const { data } = model.forward(ids, { attention: true }).attention;
    const T = 2 * n;
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) {
        const a = data.subarray((l * heads + h) * T * T, (l * heads + h + 1) * T * T);
        for (let j = 0; j < n; j++) scores[l][h] += a[(n + j) * T + j + 1] / (n * PROBE.trials);
      }
  }
  return scores;
}

/** Previous-token score per [layer][head] on these weights: mean attention from i to i - 1. */
export function previousTokenScores({ data, shape: [layers, heads, L] }) {
  return Array.from({ length: layers }, (_, l) =>
    Array.from({ length: heads }, (_, h) => {
      if (L < 2) return NaN;
      let sum = 0;
      for (let i = 1; i < L; i++) sum += data[(l * heads + h) * L * L + i * L + i - 1];
      return sum / (L - 1);
    }),
  );
}

// Models are cached per URL, so several figures of one post share one download and one instance.
const shipped = new Map();

/**
 * Opens a model: `{ url }` (a directory with the four checkpoint files) or `{ files }` (picked
 * files). Resolves to { model, name, induction, dispose() }.
 */
export function openModel(lens, source, { signal, onProgress } = {}) {
  const load = async () => {
    const files = source.url ? await fetchCheckpoint(source.url, { signal, onProgress }) : await readPicked(source.files);
    const model = await lens.loadModel({ files, onProgress });
    if (!model.hasTokenizer) {
      model.dispose();
      throw bad("this checkpoint has no tokenizer: add its vocab.json and merges.txt to read text with it");
    }
    const name = source.url ? (source.name ?? "attnlens model") : (source.name ?? "your checkpoint");
    return { model, name, induction: inductionScores(model) };
  };
  if (!source.url) return load();
  if (!shipped.has(source.url)) {
    const loading = load();
    shipped.set(source.url, loading);
    loading.catch(() => shipped.delete(source.url));
  }
  return shipped.get(source.url);
}

/**
 * FigureData for `sentence` under the model (its first `context` tokens), with `predictions`
 * (top 5 per token) and `headNotes` (the head scores), or null for a text without tokens.
 */
export function modelFigure(opened, sentence) {
  const { model, name, induction } = opened;
  const r = model.analyze(sentence, { k: 5, attention: true });
  if (!r.tokens.length) return null;
  const previous = previousTokenScores(r.attention);
  const fmt = (x) => (Number.isFinite(x) ? x.toFixed(2).replace(/^0\./, ".") : "–");
  const [layers, heads] = r.attention.shape;
  return {
    tokens: r.tokens.map((t) => ({ text: t.text, start: t.begin, end: t.end })),
    weights: r.attention,
    causal: true,
    title: name,
    warnings: [],
    predictions: r.predictions,
    totalTokens: r.totalTokens,
    scores: { previous, induction },
    headNotes: Array.from({ length: layers }, (_, l) =>
      Array.from({ length: heads }, (_, h) => `prev ${fmt(previous[l][h])}${induction ? `\nind ${fmt(induction[l][h])}` : ""}`),
    ),
    source: { format: "model", config: model.config },
  };
}

/** A token as a reader can see it: spaces and line breaks made visible. */
const visible = (text) => text.replace(/^ /, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥") || "∅";

/** Under each token, the model's five likeliest next tokens with their probabilities. */
export function predictionsTemplate(data, focusIndex) {
  if (!data.predictions) return nothing;
  return html`<details class="predictions" part="predictions" open>
    <summary>Next-token predictions (the model's five likeliest after each token)</summary>
    <div class="prediction-strip" role="list">
      ${data.tokens.map(
        (t, i) =>
          html`<div class="prediction" role="listitem" data-index=${i} aria-current=${i === focusIndex ? "true" : "false"}>
            <div class="prediction-token">${visible(t.text)}</div>
            ${data.predictions[i].map(
              (p) => html`<div class="prediction-row"><span>${visible(p.text)}</span><span>${(p.p * 100).toFixed(1)}%</span></div>`,
            )}
          </div>`,
      )}
    </div>
  </details>`;
}

/** The page's progress line for a load. */
export const progressText = (name, { phase, bytes, totalBytes }) =>
  phase === "fetch" || phase === "copy"
    ? `Loading ${name}: ${MB(bytes)} of ${MB(totalBytes)} MB`
    : phase === "parse"
      ? `Loading ${name}: checking tensors…`
      : `Loading ${name}…`;
