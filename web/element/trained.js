// Trained mode of <attn-lens>: a trained model computes the figure — a model shipped beside the
// element (the causal attnlens model, the attnlens encoder), or a checkpoint a reader picks, of
// any family the library loads (GPT-2, BERT, DistilBERT, the Llama family). Whether the figure is causal, and
// what the model predicts (the next token, or the token at each [MASK]), come from the loaded
// model. Loaded on demand (with the grid), so a random-weights figure does not pay for it. Text
// from a model or a file is bound as text.
import { html, nothing } from "lit";
import { guard } from "lit/directives/guard.js";
import { categoryNames, headLabel, headScores, rowReader } from "./head-labels.js";
import { CausalRows } from "./causal-rows.js";
import { chunkError } from "./chunks.js";
import { loadRemoteModel, remoteFamilies, workersAvailable } from "./remote-model.js";
import { RANK_BUDGET, callModel } from "./rank-rows.js";
import { unreadWeights } from "../../wasm/model-input.js";

/**
 * The model calls below are written once, as generators that yield [method, ...args] for each
 * call of the model and get its result back: a model on this thread (the shipped ones) runs them
 * at once (run()), a reader's checkpoint in the model worker (remote-model.js) through promises.
 */
function run(model, steps) {
  let step = steps.next();
  while (!step.done) {
    const [method, ...args] = step.value;
    step = steps.next(callModel(model, method, args));
  }
  return step.value;
}

async function runRemote(model, steps) {
  let step = steps.next();
  while (!step.done) {
    const [method, ...args] = step.value;
    step = steps.next(await model[method](...args));
  }
  return step.value;
}

/** `steps` of `model`: their result, or (a model in the worker) a promise of it. */
const drive = (model, steps) => (model.remote ? runRemote(model, steps) : run(model, steps));

/** Every file name a checkpoint folder of some family may hold. */
export const CHECKPOINT_FILES = [
  "model.safetensors",
  "config.json",
  "vocab.json",
  "merges.txt",
  "vocab.txt",
  "tokenizer.json",
  "tokenizer_config.json",
];
/** The shipped models' directories, beside the bundle that holds this module (variables: Vite must not resolve them). */
const SHIPPED_DIRS = { attnlens: "./models/attnlens/", "attnlens-encoder": "./models/attnlens-encoder/" };
export const shippedModelUrl = (name = "attnlens") => new URL(SHIPPED_DIRS[name], import.meta.url).href;

const bad = (message) => Object.assign(new Error(message), { code: "BAD_FILE" });
const MB = (bytes) => (bytes / 1e6).toFixed(1);

/** The family of a config.json's text among the library's families (by model_type; GPT-2's old configs have none). */
function familyOf(families, configText, where) {
  let config;
  try {
    config = JSON.parse(configText);
  } catch (error) {
    throw bad(`config.json of ${where} is not JSON (${error.message})`);
  }
  const type = config?.model_type ?? (config?.n_embd !== undefined ? "gpt2" : undefined);
  const family = families.find((f) => f.modelTypes.includes(type));
  if (!family) {
    throw bad(
      `config.json of ${where} says model_type ${JSON.stringify(type)}; attnlens loads ${families.flatMap((f) => f.modelTypes).join(", ")}`,
    );
  }
  return family;
}

/**
 * Fetches a checkpoint folder (a directory URL): config.json first, then model.safetensors
 * (reporting bytes read) and the first of the family's tokenizer file sets the folder has.
 */
async function fetchCheckpoint(base, families, { signal, onProgress, known }) {
  const get = async (name, { optional = false } = {}) => {
    const url = new URL(name, base);
    let response;
    try {
      response = await fetch(url, { signal });
    } catch (error) {
      if (error.name === "AbortError") throw error;
      // A network error (offline, a blip): said in words, and tried again at the next change.
      throw chunkError(error, `${name} of the model (${url.href})`);
    }
    if (!response.ok) {
      if (optional && response.status === 404) return null;
      throw bad(`${name} of the model could not be fetched from ${url.href}: HTTP ${response.status}`);
    }
    return response;
  };
  const files = { "config.json": await (await get("config.json")).text() };
  const family = familyOf(families, files["config.json"], base);
  const weights = (async () => {
    const response = await get("model.safetensors");
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
    files["model.safetensors"] = all;
  })();
  const tokenizer = (async () => {
    // A folder whose files are known (the shipped models) is not probed for the others.
    for (const set of known ? [known] : family.tokenizerFiles) {
      const texts = await Promise.all(set.map((name) => get(name, { optional: true }).then((r) => r?.text())));
      if (texts.every((t) => t !== undefined)) {
        set.forEach((name, i) => (files[name] = texts[i]));
        for (const name of known ? [] : family.optionalFiles) {
          const r = await get(name, { optional: true });
          if (r) files[name] = await r.text();
        }
        return;
      }
    }
    throw bad(`${base} has none of a ${family.name} tokenizer's files (${family.tokenizerFiles.map((s) => s.join(" + ")).join(", or ")})`);
  })();
  await Promise.all([weights, tokenizer]);
  return files;
}

/**
 * The checkpoint in files a reader picked (a FileList or File[], e.g. a directory) or an object
 * name -> bytes/string. Files are matched by name; others are ignored. A missing file is named
 * with what the folder's family needs.
 */
async function readPicked(files, families) {
  if (files && typeof files === "object" && !(Symbol.iterator in files) && typeof files.length !== "number")
    return { files: { ...files }, ignored: [] };
  const list = [...(files ?? [])];
  const out = {};
  // The files no family reads (README.md, MODEL.md, generation_config.json...): not read, listed.
  const ignored = [];
  for (const file of list) {
    const name = String(file?.name ?? "");
    if (!CHECKPOINT_FILES.includes(name)) {
      if (name) ignored.push(name);
      continue;
    }
    // The weights stay a File: loadModel reads them in chunks straight into the wasm heap.
    out[name] = name === "model.safetensors" ? file : await file.text();
  }
  const names = list.map((f) => String(f?.name ?? "")).filter(Boolean);
  if (!out["model.safetensors"]) {
    const other = names.find((n) => n.endsWith(".safetensors"));
    throw bad(
      unreadWeights(names) ??
        (other
          ? `the weights must be in a file named model.safetensors (as Hugging Face saves them); you picked ${other}: rename it`
          : `a checkpoint folder needs model.safetensors; the files picked were ${names.length ? names.join(", ") : "none"}`),
    );
  }
  if (!out["config.json"]) throw bad(`a checkpoint folder needs config.json beside model.safetensors; it was not among the files picked`);
  const family = familyOf(families, out["config.json"], "the folder picked");
  if (!family.tokenizerFiles.some((set) => set.every((name) => out[name] !== undefined))) {
    throw bad(
      `this ${family.name} checkpoint needs its tokenizer to read text: ${family.tokenizerFiles.map((s) => s.join(" and ")).join(", or ")}; ` +
        `the files picked were ${names.join(", ")}`,
    );
  }
  return { files: out, ignored };
}

// The induction probe: random ids with a span repeated once, as `npm run eval` measures it; a
// fixed seed, so every reader sees the same. The ids are drawn from the tokenizer's own ids
// (a padded embedding's extra rows were never trained) less its special and byte-fallback tokens
// (Llama 3's 256 reserved tokens would be one draw in eight): GPT-2's end-of-text, its last id,
// is the one left out there, as `npm run eval` leaves it out. Without a tokenizer, the last id.
const PROBE = { trials: 2, length: 32, seed: 12345 };

/** The probe's ids: draws from [0, V) less `skip` (ascending, unique, inside [0, V)). */
export function probeIds(V, trial, skip) {
  let x = (PROBE.seed + trial * 0x9e3779b9) >>> 0;
  const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
  const n = PROBE.length;
  const ids = new Int32Array(2 * n);
  for (let j = 0; j < n; j++) {
    // The k-th id that is not skipped.
    let id = next() % (V - skip.length);
    for (const s of skip) {
      if (s > id) break;
      id++;
    }
    ids[j] = ids[j + n] = id;
  }
  return ids;
}

/** The ids the probe draws from: [0, V) and what it skips in it (see above). */
function probeVocabulary(model) {
  const { vocabSize } = model.config;
  const t = model.tokenizer;
  if (!t?.specialIds) return { V: vocabSize, skip: [vocabSize - 1] };
  const V = Math.min(vocabSize, t.size);
  return { V, skip: [...new Set([...t.specialIds, ...(t.byteIds ?? [])])].filter((id) => id >= 0 && id < V).sort((a, b) => a - b) };
}

/**
 * Induction score per [layer][head]: mean attention from each token of the second copy to the
 * token after its earlier occurrence, over the probe (a promise of them for a model in the worker).
 */
export function inductionScores(model) {
  return drive(model, inductionSteps(model));
}

function* inductionSteps(model) {
  const { layers, heads, context } = model.config;
  const n = Math.min(PROBE.length, Math.floor(context / 2));
  const scores = Array.from({ length: layers }, () => new Array(heads).fill(0));
  const { V, skip } = probeVocabulary(model);
  if (n < 2 || V - skip.length < 2) return null;
  for (let trial = 0; trial < PROBE.trials; trial++) {
    const ids = probeIds(V, trial, skip).subarray(0, 2 * n);
    if (n < PROBE.length) ids.copyWithin(n, 0, n);
    // (Attention only: the logits would be 2 × 32 × the unembedding, 2.5 G multiply-adds for GPT-2 small.)
    const { data } = (yield ["forward", ids, { attention: true, logits: false }]).attention;
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
export function previousTokenScores(attention) {
  const [layers, heads, L] = attention.shape;
  const rowAt = rowReader(attention);
  return Array.from({ length: layers }, (_, l) =>
    Array.from({ length: heads }, (_, h) => {
      if (L < 2) return NaN;
      const g = l * heads + h;
      // (Rows kept row by row: read from their list, not one call each.)
      const rows = attention instanceof CausalRows ? attention.rowsOf(g) : null;
      let sum = 0;
      for (let i = 1; i < L; i++) sum += (rows ? rows[i] : rowAt(g, i))[i - 1];
      return sum / (L - 1);
    }),
  );
}

/** Models up to this many parameters are probed for induction heads as they open (~60 ms here). */
const PROBE_NOW_PARAMETERS = 5e6;

/** Runs the induction probe that openModel() left for later; true if it ran (a promise of it for a model in the worker). */
export function probeInduction(opened) {
  if (!opened.probeLater) return false;
  opened.probeLater = false;
  const keep = (scores) => ((opened.induction = scores), true);
  const scores = inductionScores(opened.model);
  return opened.model.remote ? scores.then(keep) : keep(scores);
}

// Models are cached per URL, so several figures of one post share one download and one instance.
const shipped = new Map();

/**
 * Opens a model: `{ url }` (a checkpoint folder) or `{ files }` (picked files). Resolves to
 * { model, name, induction, cache, probeLater }; `induction` (a causal model's probe scores) is
 * null for an encoder, and until probeInduction() for a large causal model (probeLater).
 */
export function openModel(lens, source, { signal, onProgress } = {}) {
  // A reader's checkpoint computes in the model worker, so that the page stays responsive
  // while a real-size model runs (and this thread need not load the model module at all); the
  // shipped models (small) on this thread.
  let remote = Boolean(source.files) && workersAvailable();
  const load = async () => {
    let families = null;
    if (remote) {
      try {
        families = await remoteFamilies();
      } catch (error) {
        // A worker the page may not start (the element served from another origin, a policy):
        // the checkpoint computes on this thread, as the shipped models do.
        if (error.code !== "NO_WORKER") throw error;
        remote = false;
      }
    }
    families ??= await lens.modelFamilies();
    const { files, ignored } = source.url
      ? { files: await fetchCheckpoint(source.url, families, { signal, onProgress, known: source.tokenizerFiles }), ignored: [] }
      : await readPicked(source.files, families);
    const model = remote ? await loadRemoteModel(files, { onProgress }) : await lens.loadModel({ files, onProgress });
    if (!model.hasTokenizer) {
      model.dispose();
      throw bad("this checkpoint has no tokenizer: add its tokenizer's files to read text with it");
    }
    const name = source.name ?? (source.url ? "the trained model" : "your checkpoint");
    const opened = { model, name, induction: null, cache: model.createCache(), probeLater: false, ignored: [...ignored, ...model.ignored] };
    // The induction probe (two forwards of 64 tokens) runs now for a small model; a large one
    // (GPT-2 small: 1.6 s of its 5 s to the first figure) is probed after its first figure is
    // shown (probeInduction()), and its head labels follow.
    if (model.config.causal) {
      if (model.parameters <= PROBE_NOW_PARAMETERS) opened.induction = await inductionScores(model);
      else opened.probeLater = true;
    }
    return opened;
  };
  if (!source.url) {
    const signature = filesSignature(source.files);
    if (signature && parked?.signature === signature) {
      const { opened } = parked;
      parked = null;
      return Promise.resolve(opened);
    }
    // Another checkpoint: the one kept for a second open makes room for it.
    parked?.opened.model.dispose();
    parked = null;
    return load().then((opened) => Object.assign(opened, { signature }));
  }
  if (!shipped.has(source.url)) {
    const loading = load();
    shipped.set(source.url, loading);
    loading.catch(() => shipped.delete(source.url));
  }
  return shipped.get(source.url);
}

// The last checkpoint a reader picked and put away (closed, or replaced by another), kept for a
// second open of the same files (3.7 s for GPT-2 small's shapes the first time). At
// most one: opening other files frees it first. The WebAssembly heap never shrinks, so keeping it
// costs the page no memory that freeing it would give back.
let parked = null;

/** Files picked: their names, sizes and times, or null for an object of contents (never reused). */
function filesSignature(files) {
  if (!files || typeof files !== "object" || typeof files.length !== "number") return null;
  const parts = [...files]
    .filter((f) => CHECKPOINT_FILES.includes(f?.name) && typeof f.size === "number")
    .map((f) => `${f.name}\u0000${f.size}\u0000${f.lastModified}`)
    .sort();
  return parts.length ? parts.join("\u0001") : null;
}

/** Whether two pickings are the same files (names, sizes and times). */
export const sameFiles = (a, b) => {
  const s = filesSignature(a);
  return s !== null && s === filesSignature(b);
};

/**
 * A picked checkpoint the element no longer shows: kept for a second open of the same files (the
 * one kept before it is freed); anything else is freed.
 */
export function release(opened) {
  if (parked?.opened === opened) return;
  parked?.opened.model.dispose();
  parked = opened.signature ? { signature: opened.signature, opened } : null;
  if (!parked) opened.model.dispose();
}

/** The text of a sentence pair typed with "[SEP]" between: [a, b], else the text itself. */
const pairOf = (sentence) => {
  const at = sentence.indexOf("[SEP]");
  return at < 0 ? sentence : [sentence.slice(0, at).trimEnd(), sentence.slice(at + 5).trimStart()];
};

/**
 * Drops the special tokens ([CLS], [SEP]) from attention [layers, heads, L, L] and renormalises
 * each row over the tokens left, as BertViz's "hide special tokens" does.
 */
function withoutSpecials(tokens, attention) {
  const keep = tokens.flatMap((t, i) => (t.special ? [] : [i]));
  const [layers, heads, L] = attention.shape;
  const n = keep.length;
  const data = new Float32Array(layers * heads * n * n);
  for (let m = 0; m < layers * heads; m++) {
    for (let a = 0; a < n; a++) {
      const row = attention.data.subarray((m * L + keep[a]) * L, (m * L + keep[a] + 1) * L);
      let sum = 0;
      for (const j of keep) sum += row[j];
      for (let b = 0; b < n; b++) data[(m * n + a) * n + b] = sum > 0 ? row[keep[b]] / sum : 0;
    }
  }
  return { kept: keep, attention: { data, shape: [layers, heads, n, n] } };
}

/**
 * FigureData for `sentence` under the model (its first `context` tokens): the model's own
 * attention (causal or full, as the model is), `predictions` (a next-token model: the five
 * likeliest after each token; an encoder: the five likeliest fillers of each [MASK]), and per
 * head a label of what it does on this sentence (head-labels.js). `hideSpecial` drops [CLS] and
 * [SEP], renormalising. Null for a text without tokens. A model in the worker (a reader's
 * checkpoint): a promise of the same.
 */
export function modelFigure(opened, sentence, options) {
  return drive(opened.model, figureSteps(opened, sentence, options));
}

function* figureSteps(opened, sentence, { hideSpecial = false } = {}) {
  const { model, name, induction, cache } = opened;
  const causal = model.config.causal;
  const text = causal ? sentence : pairOf(sentence);
  // The attention of this model's last figure, while a figure holds it: its rows before the
  // first changed token are this figure's (rank-rows.js, analyzeFigure).
  const held = causal ? opened.held?.deref() : undefined;
  // (One call: in the model worker the tokenizing and the figure are one message.)
  const before = causal
    ? { ranked: opened.ranked ? { ids: opened.ranked.ids, rows: opened.ranked.rows } : null, held: held?.ids ?? null }
    : null;
  let { r, later, from } = yield ["analyzeFigure", text, { k: 5, attention: true, cache: causal ? cache : undefined }, before];
  if (!r.tokens.length) return null;
  // Kept row by row (causal-rows.js): the rows before `from` are the held figure's.
  if (causal) r.attention = from > 0 ? held.attention.withRows(from, r.attention) : new CausalRows(r.attention);
  // Rows ranked while this figure was computed (in the model worker, rankLater() steps of the
  // figure shown that were posted before this call, and answered before it) are taken from the
  // record instead of being shown as pending again: their predictions depend only on the
  // tokens up to them, the same here. Without this, a figure made again for the same text (the
  // induction probe's head labels) would blank rows the reader had just seen ranked.
  if (causal && later.length) later = takeRanked(opened.ranked, r, later);
  // Hidden special tokens renumber the rows: everything is ranked now (from the cache).
  if (later.length && hideSpecial && r.tokens.some((t) => t.special)) {
    r = yield ["analyze", text, { k: 5, attention: true, cache }];
    r.attention = new CausalRows(r.attention);
    later = [];
    from = 0;
  }
  // The rows before the edit keep their prediction objects (the same predictions: they depend on
  // the tokens up to them), so that the strip's cards of those rows are not rendered again.
  if (causal && opened.ranked?.predictions) sameObjects(opened.ranked, r);
  if (causal)
    opened.ranked = { ids: Int32Array.from(r.tokens, (t) => t.id), rows: r.predictions.map(Boolean), predictions: [...r.predictions] };
  // The previous figure's scores: rows the cache kept unchanged keep their entropy. Held weakly:
  // they hold that figure's whole attention, which a model kept after its figure is gone (the
  // shipped ones, a checkpoint put away) must not keep alive.
  // (The rows before `from` are the held figure's, bit for bit: their entropies are its scores'.
  // Those scores were held with it: opened.categories may be another element's figure's by now.)
  const categories = headScores(r.attention, r.tokens, from > 0 ? held.categories : opened.categories?.deref(), from, causal);
  opened.categories = new WeakRef(categories);
  const names = categoryNames(r.tokens, causal);
  const labels = categories.map((row, l) => row.map((s, h) => headLabel(s, induction?.[l]?.[h], names)));
  let tokens = r.tokens;
  let attention = r.attention;
  let predictions = r.predictions;
  // A window counts positions: drawn over the tokens shown only while they are consecutive ones.
  let windows = model.config.windows;
  if (hideSpecial && tokens.some((t) => t.special)) {
    const hidden = withoutSpecials(tokens, attention);
    if (!hidden.kept.every((k, i) => k === hidden.kept[0] + i)) windows = undefined;
    tokens = hidden.kept.map((i) => tokens[i]);
    attention = hidden.attention;
    predictions = hidden.kept.map((i) => predictions[i]);
  }
  const [layers, heads] = attention.shape;
  const previous = previousTokenScores(attention);
  // How the reader writes a mask, as the model's tokenizer names it: RoBERTa's <mask>, BERT's and
  // ModernBERT's [MASK].
  const maskToken = model.tokenizer?.maskText || "[MASK]";
  const data = {
    tokens: tokens.map((t) => ({ text: t.text, start: t.begin, end: t.end, special: t.special, segment: t.segment })),
    weights: attention,
    causal,
    title: name,
    warnings: model.tokenizer?.note ? [model.tokenizer.note] : [],
    predictions,
    // Tokens whose predictions come after the figure is painted (rankLater()).
    pendingPredictions: later,
    prediction: model.config.prediction,
    maskToken,
    totalTokens: r.totalTokens,
    scores: { previous, induction },
    // Per head: what it does on this sentence (head-labels.js), and its label.
    categories,
    labels,
    headNotes: Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (_, h) => labels[l][h].text)),
    source: { format: "model", config: model.config },
    // Per layer, how far back a query sees (Gemma 3's sliding layers; [] when every layer sees all).
    windows,
  };
  if (causal) {
    rankedBy.set(data, opened.ranked);
    // Held while this figure is (a WeakRef: a model kept after its figure is gone must not keep
    // 55 MB of a 308-token GPT-2 small figure alive).
    const holds = { ids: opened.ranked.ids, attention: r.attention, categories };
    heldBy.set(data, holds);
    opened.held = new WeakRef(holds);
  }
  return data;
}

// Each causal figure's attention (CausalRows) with the ids it was computed for and its head
// scores (opened.held while it is shown).
const heldBy = new WeakMap();

// Each causal figure's record of the rows ranked (opened.ranked when it was made): the text's
// ids, which rows are ranked, and their predictions.
const rankedBy = new WeakMap();

/**
 * `later` (rows of analyze() result `r` left for later) less those that `record` ranked for the
 * same tokens up to the row, whose predictions are copied into `r`.
 */
function takeRanked(record, r, later) {
  if (!record?.predictions) return later;
  let same = 0;
  while (same < r.tokens.length && same < record.ids.length && record.ids[same] === r.tokens[same].id) same++;
  return later.filter((i) => {
    if (i >= same || !record.predictions[i]) return true;
    r.predictions[i] = record.predictions[i];
    return false;
  });
}

/** `r`'s predictions of the rows before its first token that differs from `record`'s: `record`'s objects. */
function sameObjects(record, r) {
  const n = Math.min(r.tokens.length, record.ids.length);
  for (let i = 0; i < n && record.ids[i] === r.tokens[i].id; i++)
    if (record.predictions[i] && r.predictions[i]) r.predictions[i] = record.predictions[i];
}

/**
 * Ranks a budget's worth of `data`'s pending predictions (modelFigure) for `sentence`, from the
 * model's cache (no block runs again: only those rows' unembedding). Returns whether some are
 * still pending (a promise of it for a model in the worker).
 */
export function rankLater(opened, data, sentence) {
  return drive(opened.model, rankSteps(opened, data, sentence));
}

function* rankSteps(opened, data, sentence) {
  const { model, cache } = opened;
  const perRow = model.config.vocabSize * model.config.dModel;
  const rows = data.pendingPredictions.slice(0, Math.max(1, Math.floor(RANK_BUDGET / perRow)));
  const r = yield ["analyze", sentence, { k: 5, cache, predictionRows: rows }];
  const predictions = [...data.predictions];
  for (const i of rows) predictions[i] = r.predictions[i];
  data.predictions = predictions;
  data.pendingPredictions = data.pendingPredictions.slice(rows.length);
  // (Another figure of the same model since, e.g. in a second element: that record is its own.)
  if (opened.ranked && opened.ranked === rankedBy.get(data)) {
    for (const i of rows) {
      opened.ranked.rows[i] = true;
      opened.ranked.predictions[i] = r.predictions[i];
    }
  }
  return data.pendingPredictions.length > 0;
}

/**
 * The figure of a checkpoint in the model worker: computed there while the page goes on (the
 * figure shown stays until the new one comes, and the render event counts from the change). One
 * computation at a time: keys typed meanwhile are answered by one more, of the text as it is
 * when the running one ends; showPanels() below shows what it made.
 */
export function computeInWorker(element, key) {
  if (element._workerBusy) {
    // Asked again meanwhile (the text typed on, or the probe's head labels): once more after it.
    element._workerAgain = true;
    return;
  }
  // (The element's updated() waits for it: the render event counts from the change.)
  element._workerBusy = true;
  element._workerAgain = false;
  const opened = element._openedModels;
  const { state } = element._state;
  const started = performance.now();
  const done = (apply) => {
    element._workerBusy = false;
    if (element._openedModels === opened) {
      apply();
      element._computeMs = performance.now() - started;
      element._generation++;
      element._computedSinceRender = true;
      // Asked again while this one ran: the next update computes the figure as it is wanted now.
      if (element._workerAgain || element._computedKey !== key) element._computedKey = null;
    } else {
      // Another model (or none) shown since: the next update computes its figure.
      element._computedKey = null;
    }
    element.requestUpdate();
  };
  Promise.all(opened.map((o) => modelFigure(o, state.sentence, { hideSpecial: state.specials === "hide" }))).then(
    (panels) =>
      done(() => {
        showPanels(element, state, panels);
        element._error = null;
      }),
    (error) =>
      done(() => {
        element._figure = null;
        element._panels = [];
        element._error = error.message;
      }),
  );
}

// What the element (model-source.js) runs after a model's figure is painted: here, in the chunk
// loaded with the models, not in element.js.

/**
 * A large causal model's induction probe (trained.js), in a task after its first figure is
 * painted; then the figure is made again (from the cache: no row is computed again) with the
 * head labels that name induction heads.
 */
export function probeAfterFirstFigure(element, opened) {
  element.addEventListener(
    "attn-lens-painted",
    () =>
      setTimeout(async () => {
        // Another model shown since: this one may be freed.
        if (element._openedModels !== opened) return;
        let probed = false;
        try {
          // (A checkpoint in the model worker probes there: promises.)
          for (const o of opened) probed = (await probeInduction(o)) || probed;
        } catch {
          return; // the figure stays without the induction labels
        }
        if (!probed || element._openedModels !== opened) return;
        element._computedKey = null;
        element.requestUpdate();
      }),
    { once: true },
  );
}

/** The predictions a figure left for later (rankLater): a task at a time once it is painted, while it is shown. */
export function rankAfterPaint(element, panels, opened, sentence) {
  const step = async () => {
    // A figure under way in the model worker replaces these panels and ranks its own: a step
    // posted now would run after it there, on a cache that holds the new text, and compute this
    // text again from its first token (and then the new one again).
    if (element._panels !== panels || !element.isConnected || element._workerBusy) return;
    let more = false;
    try {
      // (A checkpoint in the model worker ranks there: each panel's a promise.)
      for (const [k, data] of panels.entries()) {
        if (element._panels !== panels) return;
        more = (data.pendingPredictions.length > 0 && (await rankLater(opened[k], data, sentence))) || more;
      }
    } catch (error) {
      // As a failed figure: the error instead of cards that would wait for ever.
      if (element._panels === panels) Object.assign(element, { _figure: null, _panels: [], _error: error.message });
    }
    element.requestUpdate();
    if (more) setTimeout(step);
  };
  requestAnimationFrame(() => setTimeout(step));
}

/** A token as a reader can see it: spaces and line breaks made visible. */
const visible = (text) => text.replace(/^ /, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥") || "∅";

/**
 * Under the figure, the model's predictions: after each token (a next-token model), or for each
 * [MASK] (an encoder; a hint when the sentence has none).
 */
export function predictionsTemplate(data, focusIndex) {
  if (!data.predictions) return nothing;
  const masked = data.prediction === "masked-token";
  const pending = new Set(data.pendingPredictions);
  const shown = data.tokens.flatMap((t, i) => (data.predictions[i] || pending.has(i) ? [i] : []));
  const mask = data.maskToken ?? "[MASK]";
  const title = masked
    ? `Mask predictions (the model's five likeliest tokens for each ${mask})`
    : "Next-token predictions (the model's five likeliest after each token)";
  return html`<details class="predictions" part="predictions" open>
    <summary>${title}</summary>
    ${
      masked && !shown.length
        ? html`<p class="prediction-hint">Type ${mask} in the sentence (or click a word) to see what the model would put there.</p>`
        : html`<div class="prediction-strip" role="list">
            ${shown.map((i) =>
              // A card whose row, token and state are those it showed is not rendered again: a
              // keystroke on a 308-token figure changes one card of 309 (figureSteps keeps the
              // objects of the rows before the edit).
              guard(
                [data.predictions[i], data.tokens[i].text, i, pending.has(i), i === focusIndex],
                () =>
                  html`<div
                    class="prediction"
                    role="listitem"
                    data-index=${i}
                    aria-current=${i === focusIndex ? "true" : "false"}
                    aria-busy=${pending.has(i) ? "true" : "false"}
                  >
                    <div class="prediction-token">${visible(data.tokens[i].text)}</div>
                    ${
                      pending.has(i)
                        ? [0, 1, 2, 3, 4].map(() => html`<div class="prediction-row"><span>…</span><span></span></div>`)
                        : data.predictions[i].map(
                            (p) =>
                              html`<div class="prediction-row">
                                <span>${visible(p.text)}</span><span>${(p.p * 100).toFixed(1)}%</span>
                              </div>`,
                          )
                    }
                  </div>`,
              ),
            )}
          </div>`
    }
    ${writeTemplate(data.write)}
  </details>`;
}

/** The page's progress line for a load. */
export const progressText = (name, { phase, bytes, totalBytes }) =>
  phase === "fetch" || phase === "copy"
    ? `Loading ${name}: ${MB(bytes)} of ${MB(totalBytes)} MB`
    : phase === "parse"
      ? `Loading ${name}: checking tensors…`
      : `Loading ${name}…`;

/**
 * The models of the figure, one per panel: [{ url, name } | { files, name }], and a key that
 * changes with them. model="attnlens": the causal model, the encoder (mode "full") or both
 * (mode "compare"); `model-src` replaces the one model shown.
 */
export function modelSources(element) {
  if (element.model === "custom") return { sources: [{ files: element._picked, name: "your checkpoint" }], key: element._picked };
  const folder = (src) => {
    const url = new URL(src, document.baseURI).href;
    return url.endsWith("/") ? url : `${url}/`;
  };
  // Both shipped models read text with the same byte-level BPE (the encoder with its specials).
  const shipped = (name) => ({
    url: folder(shippedModelUrl(name)),
    name: name === "attnlens" ? "the trained causal model" : "the trained encoder",
    tokenizerFiles: ["vocab.json", "merges.txt"],
  });
  if (element.modelSrc) return { sources: [{ url: folder(element.modelSrc), name: "the model" }], key: folder(element.modelSrc) };
  const mode = element.mode ?? "causal";
  const names =
    element.model === "attnlens-encoder"
      ? ["attnlens-encoder"]
      : mode === "compare"
        ? ["attnlens", "attnlens-encoder"]
        : mode === "full"
          ? ["attnlens-encoder"]
          : ["attnlens"];
  const sources = names.map(shipped);
  return { sources, key: sources.map((s) => s.url).join(" ") };
}

/** Shows the panels modelFigure() made for `state` (none: the text has no tokens). */
export function showPanels(element, state, panels) {
  const data = panels.every(Boolean) ? panels : [];
  element._panels = data;
  // The tokens a model wrote after the text (the page's Continue, or generate below) from where
  // its writing began: the heatmap labels them so.
  // (A text given since that does not begin with the written one's prompt has nothing written.)
  if (element._write && !element.sentence?.startsWith(element._write.prompt)) element._writtenFrom = null;
  const from = element._writtenFrom;
  if (from != null)
    for (const d of data) if (d.prediction === "next-token") for (const t of d.tokens) t.written = !t.special && t.start >= from;
  writeOnShow(element, data);
  if (data.some((d) => d.pendingPredictions?.length)) rankAfterPaint(element, data, element._openedModels, state.sentence);
  element._figure = data.length
    ? {
        file: true,
        model: true,
        state,
        totalTokens: data[0].totalTokens,
        truncated: data.some((d) => d.totalTokens > d.tokens.length),
      }
    : { empty: true };
}

/**
 * { generate(prompt, options), context, model } of the figure's next-token model (on this thread, or in
 * the model worker for a reader's checkpoint), for the page's "Continue" (web/write.js); null
 * when the figure shows none (random weights, a file, the encoder alone).
 */
export function generatorOf(element) {
  const opened = element._openedModels?.find((o) => o.model.config.prediction === "next-token");
  return opened
    ? { generate: (prompt, options) => opened.model.generate(prompt, options), context: opened.model.config.context, model: opened.model }
    : null;
}

/**
 * A text that grows token by token, shown at the pace `figure` draws it: `show(text)` when the
 * figure has painted since the last show and then rested as long as that figure took, else the
 * newest text waits. Tokens are not delayed by drawing: frames are dropped, and a figure that
 * computes where the tokens do (the model worker) takes at most about half of that time (GPT-2
 * small's shapes: a figure of 100 ms per 200 ms). A figure that paints nothing (out of view) is
 * shown the newest text every second. `end(last)` shows the newest text if `last` and stops.
 */
export function pacedText(figure, show) {
  let ready = true;
  let painted = false;
  let pending = null;
  let shownAt = 0;
  let timer = 0;
  const flush = () => {
    if (pending === null) return;
    const text = pending;
    pending = null;
    ready = false;
    painted = false;
    shownAt = performance.now();
    show(text);
  };
  const onPaint = () => {
    if (painted) return;
    painted = true;
    timer = setTimeout(() => {
      ready = true;
      flush();
    }, performance.now() - shownAt);
  };
  figure.addEventListener("attn-lens-painted", onPaint);
  return {
    text(text) {
      pending = text;
      if (ready || (!painted && performance.now() - shownAt > 1000)) flush();
    },
    end(last) {
      figure.removeEventListener("attn-lens-painted", onPaint);
      clearTimeout(timer);
      if (last) flush();
      pending = null;
    },
  };
}

/** The next task (not a timer's: those wait 4 ms once nested): the page draws and takes input meanwhile. */
export const nextTask = () =>
  new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });

/**
 * <attn-lens generate="N">: once a next-token model's figure is shown (model figures are computed
 * when the element comes into view), the model writes N tokens after the sentence, greedy or,
 * with a `temperature` above 0, drawn with the element's `seed`. Each token joins the `sentence`
 * attribute, so the figure grows as the demo page's Continue grows it (web/write.js). Once per
 * text: the figures of the written tokens do not start it again, and the Replay button under the
 * predictions writes the same tokens again from the same sentence.
 */
function writeOnShow(element, panels) {
  const data = panels.find((d) => d.prediction === "next-token");
  const w = element._write;
  if (!data || element.generate == null) return;
  // The line under the predictions: the run's state, and Replay once it has ended.
  if (w) data.write = w;
  if (w?.running || (w && (w.text === element.sentence || w.prompt === element.sentence))) return;
  startWriting(element, element.sentence);
}

function startWriting(element, prompt) {
  const model = generatorOf(element);
  const count = Number(element.generate);
  const temperature = element.temperature == null ? 0 : Number(element.temperature);
  element._writtenFrom = prompt.length;
  const w = { prompt, text: prompt, shown: prompt, running: true, note: "Writing…", error: false, replay: () => replay(element) };
  element._write = w;
  const note = (text, error = false) => {
    Object.assign(w, { note: text, error });
    for (const d of element._panels) if (d.prediction === "next-token") d.write = w;
    element.requestUpdate();
  };
  const tokens = (n) => `${n} ${n === 1 ? "token" : "tokens"}`;
  (async () => {
    let written = 0;
    let last = true;
    // Whether the run still owns the sentence: not when the author's script set another text,
    // another run began, or the element left the page (it then writes nothing more).
    const owned = () => element._write === w && element.sentence === w.shown && element.isConnected;
    const paced = pacedText(element, (text) => {
      if (!owned()) return;
      w.shown = text;
      element.sentence = text;
    });
    try {
      if (!(Number.isInteger(count) && count >= 1))
        throw new Error(`generate must be a whole number of tokens to write, 1 or more; got "${element.generate}"`);
      const it = model.generate(prompt, { maxTokens: count, temperature, seed: Number(element.seed ?? 7) });
      for (;;) {
        const step = await it.next();
        if (step.done) {
          const why = { special: ": the model ended the text", context: ": its context is full" };
          note(`The model wrote ${tokens(written)}${why[step.value.reason] ?? "."}`);
          break;
        }
        if (!owned()) {
          last = false;
          note(`Stopped after ${tokens(written)}: the sentence was changed.`);
          return it.return();
        }
        written++;
        if (!step.value.special) {
          w.text = w.prompt + step.value.written;
          paced.text(w.text);
        }
        note(`The model writes… ${written} of ${count}`);
        await nextTask();
      }
    } catch (error) {
      note(`generate: ${error.message}`, true);
    } finally {
      paced.end(last && owned());
      w.running = false;
      // A text given while it wrote gets its own run: its figure is made again (writeOnShow).
      if (element._write === w && element.sentence !== w.shown && element.isConnected) element._computedKey = null;
      element.requestUpdate();
    }
  })();
}

function replay(element) {
  const w = element._write;
  if (!w || w.running) return;
  element.sentence = w.prompt;
  startWriting(element, w.prompt);
}

/** The line under a written figure's predictions: the run's state, and Replay once it has ended. */
const writeTemplate = (w) =>
  w
    ? html`<p class="prediction-hint write-note" part="write" role=${w.error ? "alert" : "status"}>
        ${w.note} ${w.running ? nothing : html`<button type="button" class="write-replay" @click=${w.replay}>Replay</button>`}
      </p>`
    : nothing;
