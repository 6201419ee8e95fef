// The JS facade over the model module (attnlens_model.wasm, model_bindings.cpp): models of every
// family the library's registry knows (GPT-2, BERT, DistilBERT), their tokenizers and
// checkpoints. api.js imports this file on the first loadModel(), createModel() or
// loadTokenizer(), so a page that only draws figures never fetches it. Nothing here names a
// family: which files a folder needs, whether a model is causal and what it predicts come from
// the library (its description and each model's config).
// As in api.js, this file checks what only JS can see (JS types, typed-array kinds, option
// names, nested-array shapes); every other rule is the library's.
import { AttnLensError, checkOptions, describe, fail, typedOptions, unwrap } from "./boundary.js";
import {
  FILE_BYTES_OR_BLOB,
  NOT_A_START,
  blobChunk,
  bytesChunk,
  checkText,
  decoder,
  encoder,
  fileBytes,
  fileText,
  isBlob,
  unreadWeights,
  probabilities,
  toIds,
  topIds,
  utf16AtByte,
} from "./model-input.js";
import { DEFAULT_NEW_TOKENS, GENERATE_OPTIONS, drawToken, generateSettings, seededRandom } from "./generate.js";

// model.safetensors is copied into the wasm heap in chunks of this many bytes, with a progress
// report and a turn of the event loop after each (a page stays responsive while 500 MB load).
const CHUNK_BYTES = 16 << 20;

const FORWARD_OPTIONS = {
  attention: "boolean",
  residuals: "boolean",
  logits: "boolean",
  tokenTypes: "any",
  attentionMask: "any",
  cache: "any",
  attentionFrom: "number",
  ablate: "any",
  ablation: "string",
  valueWeighted: "boolean",
  headOutputRows: "any",
};
const LENS_OPTIONS = { positions: "any", k: "number", ablate: "any", ablation: "string" };
const ATTRIBUTE_OPTIONS = { position: "number", token: "number", ablate: "any", ablation: "string" };
const PREDICT_OPTIONS = { k: "number" };
const ANALYZE_OPTIONS = {
  k: "number",
  attention: "boolean",
  maxTokens: "number",
  cache: "any",
  predictionRows: "any",
  attentionFrom: "number",
  ablate: "any",
  ablation: "string",
};

// Each cache createCache() made: its native handle (0 when the family has nothing to reuse),
// the model it belongs to, and whether it was disposed.
const caches = new WeakMap();
const INPUT_OPTIONS = { tokenTypes: "any", attentionMask: "any" };
const TRAIN_OPTIONS = { lr: "number" };
const SAVE_OPTIONS = { dtype: "string" };
const ADAMW_OPTIONS = { beta1: "number", beta2: "number", eps: "number", weightDecay: "number", maxGradNorm: "number", schedule: "any" };
const SCHEDULE_OPTIONS = { maxLr: "number", minLr: "number", warmupSteps: "number", totalSteps: "number" };

/** What a stopped generate() throws: the signal's reason, or an AbortError. */
const abortReason = (signal) => signal.reason ?? new DOMException("generate() was stopped", "AbortError");

// predict(), fillMask() and analyze() list the k likeliest tokens per position; the whole
// distribution is forward()'s logits.
const MAX_K = 256;
function checkK(k = 5) {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) fail("BAD_ARGUMENT", `k must be an integer from 1 to ${MAX_K}; got ${describe(k)}`);
  return k;
}

// The shapes of one sequence drop the batch dimension: logits [L, V], attention
// [layers, heads, L, L], residuals [layers + 1, L, d].
function unbatch(result) {
  if (result.logits && result.logits.shape.length === 3) result.logits.shape.splice(0, 1);
  if (result.attention) result.attention.shape.splice(1, 1);
  if (result.residuals) result.residuals.shape.splice(1, 1);
  if (result.valueNorms) result.valueNorms.shape.splice(1, 1);
  if (result.valueWeighted) result.valueWeighted.shape.splice(1, 1);
  return result;
}

// A text argument: one string, or a sentence pair [a, b].
function textArgument(name, text, limits) {
  if (Array.isArray(text)) {
    if (text.length !== 2) fail("BAD_ARGUMENT", `${name} must be a string or a pair [textA, textB]; got an array of ${text.length}`);
    return [checkText(`${name}[0]`, text[0], limits), checkText(`${name}[1]`, text[1], limits)];
  }
  return [checkText(name, text, limits), null];
}

/**
 * The indices of an encoding's tokens that fit in `limit`, as a BERT tokenizer truncates: the
 * special tokens ([CLS], [SEP]) stay, and text tokens go from the end of the longer sentence,
 * one at a time ("longest first"). Without special tokens, the first `limit` tokens. A limit
 * that leaves no room beside the special tokens is BAD_ARGUMENT (`textsOf(ids)` names them).
 */
function kept(encoding, limit, textsOf) {
  const count = encoding.ids.length;
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  const { special, segments } = encoding;
  const specials = special.reduce((s, v) => s + (v === 1 ? 1 : 0), 0);
  const text = [0, 0];
  for (let i = 0; i < count; i++) if (special[i] !== 1) text[segments[i]]++;
  // Drop text tokens, from the longer sentence first, until the rest fit. The specials always
  // stay: a limit that leaves no text beside them is refused (keeping the first `limit` tokens
  // would drop a [SEP] the model reads as the end of a sentence).
  if (specials > 0 && specials >= limit) {
    const names = textsOf(encoding.ids.filter((_, i) => special[i] === 1));
    fail(
      "BAD_ARGUMENT",
      `maxTokens is ${limit}, but the special tokens alone (${names.join(", ")}) take ${specials}: ` +
        `keeping a token of the text needs maxTokens of at least ${specials + 1}`,
    );
  }
  // One at a time from the longer (from the first on a tie), in closed form: the longer down to
  // the shorter, then the rest split between them.
  let excess = count - limit;
  const left = [...text];
  const longer = left[1] > left[0] ? 1 : 0;
  const gap = Math.min(excess, left[longer] - left[1 - longer]);
  left[longer] -= gap;
  excess -= gap;
  left[0] -= Math.ceil(excess / 2);
  left[1] -= Math.floor(excess / 2);
  const seen = [0, 0];
  const keep = [];
  for (let i = 0; i < count; i++) {
    if (special[i] === 1 || seen[segments[i]]++ < left[segments[i]]) keep.push(i);
  }
  return keep;
}
/** The tokenizer's methods over a handle. */
function tokenizerMethods(core, handle, limits, live) {
  // The tokens of a text (or pair), the first `limit` as objects and the count of all: ids and
  // byte offsets come from wasm as typed arrays, objects are made for `limit` only.
  const tokenList = (text, limit = Infinity) => {
    live();
    const [a, b] = textArgument("text", text, limits);
    const r = unwrap(core._encode(handle, a, b));
    const count = r.ids.length;
    const keep = kept(r, limit, tokenText);
    const n = keep.length;
    const texts = b === null ? [a] : [a, b];
    const maps = texts.map((t) => {
      const bytes = encoder.encode(t);
      return { text: t, bytes, at: utf16AtByte(t, bytes.length) };
    });
    const tokens = new Array(n);
    for (let k = 0; k < n; k++) {
      const i = keep[k];
      const { text: source, bytes, at } = maps[r.segments[i]];
      const byteBegin = r.begins[i];
      const byteEnd = r.ends[i];
      // A byte offset inside a character (a byte-level token may cut one): begin maps to the
      // character's start, end past its end; a cut character decodes to U+FFFD.
      let begin = byteBegin;
      while (at[begin] === NOT_A_START) begin--;
      let end = byteEnd;
      while (at[end] === NOT_A_START) end++;
      const whole = at[byteBegin] !== NOT_A_START && at[byteEnd] !== NOT_A_START;
      const special = r.special[i] === 1;
      tokens[k] = {
        id: r.ids[i],
        text: special
          ? tokenText([r.ids[i]])[0]
          : whole
            ? source.slice(at[byteBegin], at[byteEnd])
            : decoder.decode(bytes.subarray(byteBegin, byteEnd)),
        begin: at[begin],
        end: at[end],
        byteBegin,
        byteEnd,
        type: r.types[i],
        segment: r.segments[i],
        special,
      };
    }
    const pick = (all) => (n === count ? all : Int32Array.from(keep, (i) => all[i]));
    return { tokens, count, ids: pick(r.ids), types: pick(r.types) };
  };
  // How each token reads on its own (" the", "##ing", "[MASK]").
  const tokenText = (ids) => unwrap(core._tokenTexts(handle, Int32Array.from(ids))).texts.map((bytes) => decoder.decode(bytes));
  return {
    encode(text) {
      live();
      const [a, b] = textArgument("text", text, limits);
      return unwrap(core._encode(handle, a, b)).ids;
    },
    decode(ids) {
      live();
      const t = toIds("ids", ids);
      if (t.batched) fail("BAD_ARGUMENT", "ids must be one sequence (an Int32Array or an array of ids), not a batch");
      return decoder.decode(unwrap(core._decode(handle, t.data)).bytes);
    },
    tokens: (text) => tokenList(text).tokens,
    tokenList,
    tokenText,
  };
}

// An optional per-token input of forward()/gradients()/trainStep() (token types, the attention
// mask): ids-like, shaped as the ids.
function perToken(name, value, ids) {
  if (value === undefined || value === null) return null;
  const t = toIds(name, value);
  if (t.data.length !== ids.data.length) {
    fail(
      "SHAPE_MISMATCH",
      `${name} has ${t.data.length} entries but the ids have ${ids.data.length} (${ids.batch} x ${ids.length}); they must match`,
    );
  }
  return t.data;
}

// analyze()'s predictionRows: token positions (integers from 0 to tokens - 1), or null for all.
// Positions of one sequence (logitLens's positions) or rows b · T + t of a batch (forward's
// headOutputRows): a non-empty list of integers from 0 to count - 1.
function positionsOf(name, rows, count) {
  if (!Array.isArray(rows) && !ArrayBuffer.isView(rows))
    fail("BAD_ARGUMENT", `${name} must be an array of token positions; got ${describe(rows)}`);
  const out = Array.from(rows);
  if (out.length === 0) fail("BAD_ARGUMENT", `${name} must name at least one token position; got an empty list`);
  out.forEach((row, i) => {
    if (!Number.isInteger(row) || row < 0 || row >= count)
      fail("BAD_ARGUMENT", `${name}[${i}] must be an integer from 0 to ${count - 1} (there are ${count} tokens); got ${describe(row)}`);
  });
  return out;
}

function predictionRowsOf(rows, tokens) {
  if (rows === undefined || rows === null) return null;
  if (!Array.isArray(rows) && !ArrayBuffer.isView(rows))
    fail("BAD_ARGUMENT", `predictionRows must be an array of token positions; got ${describe(rows)}`);
  const out = Array.from(rows);
  out.forEach((row, i) => {
    if (!Number.isInteger(row) || row < 0 || row >= tokens)
      fail(
        "BAD_ARGUMENT",
        tokens === 0
          ? `the text has no tokens, so predictionRows must be empty; predictionRows[${i}] is ${describe(row)}`
          : `predictionRows[${i}] must be a token position, an integer from 0 to ${tokens - 1} (the text has ${tokens} tokens); got ${describe(row)}`,
      );
  });
  return out;
}

// options.attentionFrom: the first query row of the attention returned (0 to the tokens T; T: none).
function attentionFromOf(from = 0, tokens) {
  if (!Number.isInteger(from) || from < 0 || from > tokens)
    fail(
      "BAD_ARGUMENT",
      `attentionFrom must be an integer from 0 to the ${tokens} tokens (the first query row of the attention returned); got ${describe(from)}`,
    );
  return from;
}

// options.ablate and options.ablation: the heads to switch off as flat [layer, head] pairs (null
// for none) and how. The library checks each head against the model (ablate[i] named).
function ablationOf(ablate, ablation) {
  if (ablate === undefined || ablate === null) {
    if (ablation !== undefined)
      fail("BAD_ARGUMENT", `ablation ("${ablation}") needs options.ablate, the heads to switch off as [layer, head] pairs`);
    return { ablate: null, ablation: "zero" };
  }
  if (!Array.isArray(ablate) || ablate.length === 0)
    fail("BAD_ARGUMENT", `ablate must be a non-empty array of [layer, head] pairs, e.g. [[0, 1]]; got ${describe(ablate)}`);
  const pairs = new Int32Array(2 * ablate.length);
  ablate.forEach((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((n) => Number.isInteger(n) && n >= 0 && n < 2 ** 31))
      fail("BAD_ARGUMENT", `ablate[${i}] must be a [layer, head] pair of integers from 0; got ${describe(pair)}`);
    pairs.set(pair, 2 * i);
  });
  if (ablation !== undefined && ablation !== "zero" && ablation !== "mean")
    fail("BAD_ARGUMENT", `ablation must be "zero" or "mean"; got ${describe(ablation)}`);
  return { ablate: pairs, ablation: ablation ?? "zero" };
}

/** Builds the model API around an instantiated model module. */
export function createModelApi(core) {
  const { limits, defaults, families } = core._description();
  // The heap as bytes. In the threaded module (shared memory) another thread may have grown the
  // heap since this thread's view was made, which leaves core.HEAPU8 short: a view of the memory
  // as it is now, then.
  const heapBytes = () =>
    core.wasmMemory && core.HEAPU8.buffer !== core.wasmMemory.buffer ? new Uint8Array(core.wasmMemory.buffer) : core.HEAPU8;
  // Every file a folder of some family may hold.
  const knownFiles = [
    ...new Set(["model.safetensors", "config.json", ...families.flatMap((f) => [...f.tokenizerFiles.flat(), ...f.optionalFiles])]),
  ];

  function wrap(info, ignored = []) {
    const { handle } = info;
    let disposed = false;
    const live = () => {
      if (disposed) fail("BAD_ARGUMENT", "this model was disposed (model.dispose()); load or create it again");
    };
    const config = Object.freeze(info.config);
    const ownCaches = new Set();
    const hasTokenizer = info.tokenizer !== null;
    const tokenizer = tokenizerMethods(core, handle, limits, live);
    const needTokenizer = (what) => {
      if (!hasTokenizer) fail("BAD_ARGUMENT", `${what} needs a tokenizer: give the tokenizer's files when loading the model`);
    };
    const needHead = (what) => {
      if (!config.hasHead) fail("BAD_ARGUMENT", `${what} needs the model's prediction head, which this checkpoint does not have`);
    };
    // The k likeliest tokens of each row of logits [R, V], with softmax probabilities. A model
    // may have more embedding rows than its tokenizer has tokens (padded vocabularies): such an
    // id has no text.
    const topTokens = ({ data, shape }, k) => {
      const V = shape.at(-1);
      const size = info.tokenizer?.size ?? 0;
      const out = [];
      for (let r = 0; r < data.length / V; r++) {
        const row = data.subarray(r * V, (r + 1) * V);
        const ids = topIds(row, k);
        // (Without a tokenizer, no texts: generate() of token ids.)
        const texts = size > 0 ? tokenizer.tokenText(ids.map((v) => (v < size ? v : 0))) : [];
        const p = probabilities(row, ids);
        out.push(ids.map((v, i) => ({ id: v, text: v < size ? texts[i] : "", p: p[i] })));
      }
      return out;
    };
    // The state of options.cache (null for none), after the checks only JS can make.
    const cacheState = (cache) => {
      if (cache === undefined || cache === null) return null;
      const c = caches.get(cache);
      if (!c) fail("BAD_ARGUMENT", `options.cache must be a cache made by model.createCache(); got ${describe(cache)}`);
      if (c.owner !== model) fail("BAD_ARGUMENT", "options.cache belongs to another model; each model makes its own with createCache()");
      if (c.disposed) fail("BAD_ARGUMENT", "options.cache was disposed (cache.dispose()); make another with createCache()");
      return c;
    };
    const run = (ids, o, rows = null) => {
      const state = cacheState(o.cache);
      const ablation = ablationOf(o.ablate, o.ablation);
      // A run with heads switched off, value weighting or heads' writes computes without the cache
      // and leaves it as it was (it holds the model as trained, and neither of those).
      const uncached = ablation.ablate || o.valueWeighted || (o.headOutputRows !== undefined && o.headOutputRows !== null);
      const handleOfCache = state && !uncached ? state.handle : 0;
      // The predictions analyze() kept with the cache describe the rows of its last run: any
      // other run with the cache replaces those rows (predictionsFor keeps them afresh).
      if (handleOfCache) state.predictions = null;
      // Logits asked for by name from a model without its head: an error, not an empty tensor.
      if (o.logits === true) needHead("forward(ids, { logits: true })");
      const t = toIds("ids", ids);
      const types = perToken("tokenTypes", o.tokenTypes, t);
      const mask = perToken("attentionMask", o.attentionMask, t);
      const options = {
        attention: o.attention ?? false,
        hiddenStates: o.residuals ?? false,
        logits: o.logits ?? config.hasHead,
        logitRows: rows === null ? null : Float64Array.from(rows),
        attentionFrom: attentionFromOf(o.attentionFrom, t.length),
        ...ablation,
        valueWeighted: o.valueWeighted ?? false,
        headOutputRows:
          o.headOutputRows === undefined || o.headOutputRows === null
            ? null
            : Float64Array.from(positionsOf("headOutputRows", o.headOutputRows, t.batch * t.length)),
      };
      const r = unwrap(core._forward(handle, t.data, t.batch, t.length, types, mask, options, handleOfCache));
      const result = { logits: r.logits ?? null };
      if (r.attention) result.attention = r.attention;
      if (r.hiddenStates) result.residuals = r.hiddenStates;
      if (r.valueWeighted) Object.assign(result, { valueNorms: r.valueNorms, valueWeighted: r.valueWeighted });
      if (r.headOutputs) result.headOutputs = r.headOutputs;
      return t.batched ? result : unbatch(result);
    };
    // The predictions a figure shows: for a next-token model, after every token; for a
    // masked-token model, at each [MASK] only (logits of those rows alone). `only` (analyze's
    // predictionRows) narrows them to those token positions; the others are null.
    // With a cache, a next-token model's rows before the first changed token have the same
    // logits as in the cache's last run, so their predictions, kept with the cache by the last
    // analyze() (with the ids they were made for), are reused: the forward computes the logits of
    // the other rows only (the model keeps each row's final LayerNorm output, so a row asked for
    // later costs its unembedding alone), and an append ranks one row (GPT-2 small: one row of
    // 50 257 logits instead of 33).
    const predictionsFor = (list, k, attention, cache, only = null, attentionFrom = 0, ablation = {}) => {
      const masked = config.prediction === "masked-token";
      // (With heads switched off the cache's rows and predictions are not this run's: unused.)
      if (ablation.ablate) cacheState(cache);
      const state = masked || ablation.ablate ? null : cacheState(cache);
      // (A family with nothing to reuse has no native cache: its runs compute every row.)
      const last = state?.handle && state.predictions?.k === k ? state.predictions : null;
      const ids = list.ids.subarray(0, list.tokens.length);
      const types = list.types.subarray(0, list.tokens.length);
      const n = ids.length;
      const asked = only === null ? null : new Set(only);
      const wanted = masked
        ? list.tokens.flatMap((t, i) => (t.id === info.tokenizer.maskId && (asked === null || asked.has(i)) ? [i] : []))
        : asked === null
          ? Array.from({ length: n }, (_, i) => i)
          : [...asked].sort((a, b) => a - b);
      // The rows the last run shares with this one (before the first changed token: a causal
      // model's row depends on the tokens up to it only), whose predictions it kept.
      let from = 0;
      if (last) while (from < Math.min(n, last.rows.length) && last.ids[from] === ids[from]) from++;
      const kept = (i) => i < from && last.rows[i] !== null;
      const fresh = wanted.filter((i) => !kept(i));
      const wantLogits = config.hasHead && fresh.length > 0;
      const options = {
        attention,
        cache: ablation.ablate ? null : cache,
        logits: wantLogits,
        tokenTypes: config.typeVocabSize > 0 ? types : undefined,
        attentionFrom,
        ...ablation,
      };
      // Every row asked: no rows given (the library's "every row").
      const all = (rows) => rows.length === n && !masked;
      const r = run(ids, options, wantLogits && !all(fresh) ? fresh : null);
      const rows = Array.from({ length: n }, () => null);
      if (wantLogits) topTokens(r.logits, k).forEach((row, j) => (rows[fresh[j]] = row));
      // The cache kept fewer rows than the ids share (the model changed since its last run, or
      // it ran without attention): the rows before `from` are ranked again, from a second run
      // that reuses every row this one computed.
      const reuse = wanted.filter(kept);
      const stale = from > 0 && core._cacheInfo(state.handle).reused < from;
      if (reuse.length > 0 && stale) {
        const again = run(ids, { ...options, attention: false, logits: true }, reuse);
        topTokens(again.logits, k).forEach((row, j) => (rows[reuse[j]] = row));
      } else {
        // Copies of the kept objects: a caller may change what it was given.
        for (const i of reuse) rows[i] = last.rows[i].map((p) => ({ ...p }));
      }
      // Kept: what this run ranked, and the shared rows' predictions it was not asked for.
      const keep = (row, i) => row ?? (i < from && !stale ? last.rows[i] : null);
      if (state && config.hasHead)
        state.predictions = { k, ids: Int32Array.from(ids), rows: rows.map((row, i) => keep(row, i)?.map((p) => ({ ...p })) ?? null) };
      return { predictions: rows, attention: r.attention ?? null };
    };
    const model = {
      config,
      parameters: info.parameters,
      /** The files loadModel() was given and did not read (README.md, generation_config.json, ...). */
      ignored: Object.freeze([...ignored]),
      hasTokenizer,
      /** The tokenizer's kind and size, its [MASK] id (-1 without one) and a note for readers. */
      tokenizer: info.tokenizer === null ? null : Object.freeze({ ...info.tokenizer }),
      encode: (text) => (needTokenizer("encode()"), tokenizer.encode(text)),
      decode: (ids) => (needTokenizer("decode()"), tokenizer.decode(ids)),
      tokens: (text) => (needTokenizer("tokens()"), tokenizer.tokens(text)),
      forward(ids, options) {
        live();
        return run(ids, typedOptions("options", options, FORWARD_OPTIONS));
      },
      unembed(rows) {
        live();
        needHead("unembed()");
        const d = config.dModel;
        const data = rows instanceof Float32Array ? rows : rows?.data;
        if (!(data instanceof Float32Array))
          fail(
            "BAD_ARGUMENT",
            `rows must be a Float32Array of R · ${d} values of the residual stream (as forward()'s residuals hold them), or { data, shape: [R, ${d}] }; got ${describe(rows)}`,
          );
        // (One copy, by the typed array's own length, whatever the object reports.)
        const copy = new Float32Array(data);
        if (copy.length === 0 || copy.length % d !== 0)
          fail("SHAPE_MISMATCH", `rows has ${copy.length} values, not a positive multiple of the model's width (${d})`);
        if (
          rows !== data &&
          !(
            Array.isArray(rows.shape) &&
            rows.shape.length === 2 &&
            Number.isInteger(rows.shape[0]) &&
            rows.shape[1] === d &&
            rows.shape[0] * d === copy.length
          )
        )
          fail(
            "SHAPE_MISMATCH",
            `rows.shape must be [${copy.length / d}, ${d}] for its ${copy.length} values; got ${describe(rows.shape)}`,
          );
        return unwrap(core._unembed(handle, copy, copy.length / d));
      },
      logitLens(ids, options) {
        live();
        needHead("logitLens()");
        const o = typedOptions("options", options, LENS_OPTIONS);
        const k = checkK(o.k);
        const t = toIds("ids", ids);
        if (t.batched) fail("BAD_ARGUMENT", "logitLens() takes one sequence of ids, not a batch");
        const positions = o.positions === undefined ? [Math.max(0, t.length - 1)] : positionsOf("positions", o.positions, t.length);
        const r = run(t.data, { residuals: true, logits: false, ablate: o.ablate, ablation: o.ablation });
        const [layers, , d] = r.residuals.shape;
        const P = positions.length;
        const out = {
          positions,
          k,
          shape: [layers, P, k],
          ids: new Int32Array(layers * P * k),
          p: new Float32Array(layers * P * k),
          texts: [],
        };
        // One layer's rows at a time, in groups of at most the library's element limit of logits
        // (a group of positions × vocabSize): never (layers + 1) · P · V at once.
        const group = Math.max(1, Math.floor(limits.maxElements / config.vocabSize));
        for (let l = 0; l < layers; l++)
          for (let from = 0; from < P; from += group) {
            const some = positions.slice(from, from + group);
            const rows = new Float32Array(some.length * d);
            some.forEach((t0, i) => rows.set(r.residuals.data.subarray((l * t.length + t0) * d, (l * t.length + t0 + 1) * d), i * d));
            const logits = unwrap(core._unembed(handle, rows, some.length));
            topTokens(logits, k).forEach((top, i) =>
              top.forEach((x, j) => {
                const at = (l * P + from + i) * k + j;
                out.ids[at] = x.id;
                out.p[at] = x.p;
                out.texts[at] = x.text;
              }),
            );
          }
        return out;
      },
      attribute(ids, options) {
        live();
        needHead("attribute()");
        const o = typedOptions("options", options, ATTRIBUTE_OPTIONS);
        const t = toIds("ids", ids);
        if (t.batched) fail("BAD_ARGUMENT", "attribute() takes one sequence of ids, not a batch");
        const position = o.position ?? Math.max(0, t.length - 1);
        if (!Number.isInteger(position) || position < 0 || (t.length > 0 && position >= t.length))
          fail("BAD_ARGUMENT", `position must be a token position, an integer from 0 to ${t.length - 1}; got ${describe(position)}`);
        if (o.token !== undefined && (!Number.isInteger(o.token) || o.token < 0 || o.token >= config.vocabSize))
          fail("BAD_ARGUMENT", `token must be a token id, an integer from 0 to ${config.vocabSize - 1}; got ${describe(o.token)}`);
        const r = unwrap(core._attribute(handle, t.data, 1, t.length, position, o.token ?? -1, ablationOf(o.ablate, o.ablation)));
        const size = info.tokenizer?.size ?? 0;
        const text = size > 0 && r.token < size ? tokenizer.tokenText([r.token])[0] : "";
        return {
          position,
          token: r.token,
          text,
          logit: r.logit,
          scale: r.scale,
          embeddings: r.embeddings,
          heads: r.heads,
          attentionBias: r.attentionBias,
          mlps: r.mlps,
          constant: r.constant,
          total: r.total,
        };
      },
      predict(text, options) {
        live();
        needTokenizer("predict()");
        needHead("predict()");
        const k = checkK(typedOptions("options", options, PREDICT_OPTIONS).k);
        const list = tokenizer.tokenList(text);
        if (list.tokens.length === 0) return [];
        const r = run(list.ids, { tokenTypes: config.typeVocabSize > 0 ? list.types : undefined });
        return topTokens(r.logits, k);
      },
      fillMask(text, options) {
        live();
        if (config.prediction !== "masked-token")
          fail(
            "BAD_ARGUMENT",
            `fillMask() needs a masked-token model; this ${config.family} model predicts the next token (use predict())`,
          );
        needTokenizer("fillMask()");
        needHead("fillMask()");
        const k = checkK(typedOptions("options", options, PREDICT_OPTIONS).k);
        // Cut to the model's context as analyze() cuts by default (its [CLS] and [SEP] kept).
        const list = tokenizer.tokenList(text, config.context);
        const { predictions } = predictionsFor(list, k, false);
        return list.tokens.flatMap((t, i) => (predictions[i] ? [{ position: i, token: t, predictions: predictions[i] }] : []));
      },
      analyze(text, options) {
        live();
        needTokenizer("analyze()");
        const o = typedOptions("options", options, ANALYZE_OPTIONS);
        const k = checkK(o.k);
        const maxTokens = o.maxTokens ?? config.context;
        if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > config.context) {
          fail(
            "BAD_ARGUMENT",
            `maxTokens must be an integer from 1 to the model's context (${config.context}); got ${describe(maxTokens)}`,
          );
        }
        const list = tokenizer.tokenList(text, maxTokens);
        const only = predictionRowsOf(o.predictionRows, list.tokens.length);
        const from = attentionFromOf(o.attentionFrom, list.tokens.length);
        ablationOf(o.ablate, o.ablation);
        if (list.tokens.length === 0) return { tokens: [], totalTokens: 0, predictions: [], attention: null };
        const { predictions, attention } = predictionsFor(list, k, o.attention ?? false, o.cache, only, from, {
          ablate: o.ablate,
          ablation: o.ablation,
        });
        return { tokens: list.tokens, totalTokens: list.count, predictions, attention };
      },
      /**
       * Writes the continuation of `prompt` (a text, or token ids) token by token through a prefix
       * cache: an async iterator of { id, text, written, p, top, special, attention } per new token, whose
       * return value says why it ended ({ reason: "maxTokens" | "stop" | "special" | "context",
       * ids }). The options are checked here, before anything runs.
       */
      generate(prompt, options) {
        live();
        if (config.prediction !== "next-token")
          fail("BAD_ARGUMENT", `generate() needs a next-token model; this ${config.family} model fills masks (use fillMask())`);
        needHead("generate()");
        const o = typedOptions("options", options, GENERATE_OPTIONS);
        const k = checkK(o.k);
        let ids;
        if (typeof prompt === "string") {
          needTokenizer("generate() of a text");
          ids = tokenizer.tokenList(prompt).ids;
        } else {
          const t = toIds("prompt", prompt);
          if (t.batched) fail("BAD_ARGUMENT", `prompt must be one sequence of token ids (or a text); got a batch of ${t.batch}`);
          ids = t.data;
        }
        if (ids.length === 0) fail("EMPTY_INPUT", "prompt has no tokens: a next-token model needs at least one to continue");
        if (ids.length > config.context)
          fail("TOO_LARGE", `prompt has ${ids.length} tokens, more than the model's context of ${config.context}`);
        const room = config.context - ids.length;
        const s = generateSettings(o, room);
        if (s.stop.length > 0) needTokenizer("generate() with stop texts");
        if (s.signal?.aborted) throw abortReason(s.signal);
        const special = new Set(info.tokenizer?.specialIds ?? []);
        const promptLength = ids.length;
        return (async function* steps() {
          // (Made when the first token is asked for: an iterator dropped unstarted holds nothing.)
          const cache = model.createCache();
          const random = seededRandom(s.seed);
          try {
            for (let step = 0; step < (s.maxTokens ?? DEFAULT_NEW_TOKENS); step++) {
              if (s.signal?.aborted) throw abortReason(s.signal);
              if (ids.length >= config.context) return { reason: "context", ids };
              const n = ids.length;
              // One new row through the cache: its logits, and its attention over the n tokens.
              const r = run(ids, { cache, logits: true, attention: o.attention ?? false, attentionFrom: o.attention ? n - 1 : undefined }, [
                n - 1,
              ]);
              const row = r.logits.data;
              const id = drawToken(row, s, random);
              // (A padded vocabulary's extra ids have no text.)
              const text = hasTokenizer && id < info.tokenizer.size ? tokenizer.tokenText([id])[0] : "";
              const next = new Int32Array(n + 1);
              next.set(ids);
              next[n] = id;
              ids = next;
              const [layers, heads] = r.attention ? r.attention.shape : [0, 0];
              // Every token written so far decoded together: a character written over several
              // byte-level or byte-fallback tokens is whole here once its last byte is written
              // (until then it is left out), where each token's own text has U+FFFD.
              const written = hasTokenizer ? tokenizer.decode(ids.subarray(promptLength)).replace(/\uFFFD+$/u, "") : "";
              yield {
                id,
                text,
                written,
                p: probabilities(row, [id])[0],
                top: topTokens(r.logits, k)[0],
                special: special.has(id),
                // [layers, heads, n]: where the token before it looked when the model chose it.
                attention: r.attention ? { data: r.attention.data, shape: [layers, heads, n] } : null,
              };
              // (The reader may have stopped it while the token was out.)
              if (s.signal?.aborted) throw abortReason(s.signal);
              if (special.has(id)) return { reason: "special", ids };
              // Stop texts are looked for in the written tokens decoded together: a character
              // split over byte-level or byte-fallback tokens reads whole only there.
              if (s.stop.some((stop) => written.includes(stop))) return { reason: "stop", ids };
            }
            return { reason: s.maxTokens === null && ids.length >= config.context ? "context" : "maxTokens", ids };
          } finally {
            cache.dispose();
          }
        })();
      },
      gradients(ids, targets, options) {
        live();
        const o = typedOptions("options", options, INPUT_OPTIONS);
        const x = toIds("ids", ids);
        const y = toIds("targets", targets);
        if (x.batch !== y.batch || x.length !== y.length) {
          fail("SHAPE_MISMATCH", `targets has shape [${y.batch}, ${y.length}] but ids has [${x.batch}, ${x.length}]; they must match`);
        }
        const types = perToken("tokenTypes", o.tokenTypes, x);
        const mask = perToken("attentionMask", o.attentionMask, x);
        return unwrap(core._gradients(handle, x.data, y.data, x.batch, x.length, types, mask));
      },
      trainStep: (batch, options) => model.trainStepDetails(batch, options).loss,
      /**
       * Like trainStep, with the rate used, the step count after it and the gradient norm. A
       * next-token model takes ids [B, T + 1] (inputs [:, :T], targets [:, 1:]); a masked-token
       * model { ids, labels, tokenTypes?, attentionMask? }, labels -1 where nothing is predicted.
       */
      trainStepDetails(batch, options) {
        live();
        const o = typedOptions("options", options, TRAIN_OPTIONS);
        let x;
        let y;
        let types = null;
        let mask = null;
        if (config.prediction === "next-token") {
          const t = toIds("batch", batch);
          if (t.length < 2)
            fail(
              "BAD_ARGUMENT",
              `batch has ${t.length} token per sequence; trainStep needs T + 1 >= 2 (inputs are batch[:, :T], targets batch[:, 1:])`,
            );
          const T = t.length - 1;
          const inputs = new Int32Array(t.batch * T);
          const targets = new Int32Array(t.batch * T);
          for (let b = 0; b < t.batch; b++) {
            inputs.set(t.data.subarray(b * (T + 1), b * (T + 1) + T), b * T);
            targets.set(t.data.subarray(b * (T + 1) + 1, (b + 1) * (T + 1)), b * T);
          }
          x = { data: inputs, batch: t.batch, length: T };
          y = { data: targets };
        } else {
          const b = checkOptions("batch", batch, ["ids", "labels", "tokenTypes", "attentionMask"]);
          x = toIds("batch.ids", b.ids);
          y = toIds("batch.labels", b.labels);
          if (y.data.length !== x.data.length)
            fail("SHAPE_MISMATCH", `batch.labels has ${y.data.length} entries but batch.ids has ${x.data.length}; they must match`);
          types = perToken("batch.tokenTypes", b.tokenTypes, x);
          mask = perToken("batch.attentionMask", b.attentionMask, x);
        }
        return unwrap(core._trainStep(handle, x.data, y.data, x.batch, x.length, types, mask, o.lr ?? null));
      },
      setOptimizer(options) {
        live();
        const { schedule, ...rest } = typedOptions("options", options, ADAMW_OPTIONS);
        const o = { ...rest };
        if (schedule === null) o.schedule = null;
        else if (schedule !== undefined) o.schedule = typedOptions("schedule", schedule, SCHEDULE_OPTIONS);
        return unwrap(core._setOptimizer(handle, o));
      },
      get optimizer() {
        live();
        return unwrap(core._optimizer(handle));
      },
      /**
       * A cache for forward() and analyze() on edits of one sentence: a causal model keeps the
       * keys, values and results of the prefix that did not change, and computes from the first
       * token that did (the same results). An encoder has nothing to reuse: its cache is
       * accepted and changes nothing. Dispose it when done (the model's dispose() frees it too).
       */
      createCache() {
        live();
        const native = unwrap(core._createCache(handle)).cache;
        const state = { handle: native, owner: model, disposed: false };
        ownCaches.add(state);
        const cache = Object.freeze({
          get tokens() {
            return state.handle && !state.disposed ? core._cacheInfo(state.handle).tokens : 0;
          },
          get reused() {
            return state.handle && !state.disposed ? core._cacheInfo(state.handle).reused : 0;
          },
          dispose() {
            if (state.disposed) return;
            state.disposed = true;
            ownCaches.delete(state);
            if (state.handle && !disposed) core._dispose(state.handle);
          },
        });
        caches.set(cache, state);
        return cache;
      },
      save(options) {
        live();
        const o = typedOptions("options", options, SAVE_OPTIONS);
        return unwrap(core._save(handle, o.dtype ?? "F32"));
      },
      dispose() {
        if (disposed) return;
        disposed = true;
        // The module frees the model's caches with it.
        for (const state of ownCaches) state.disposed = true;
        core._dispose(handle);
      },
    };
    return Object.freeze(model);
  }

  // The folder's files checked against its family (named by config.json) before any copy: a
  // tokenizer set given in part, or an optional file without a tokenizer. Returns the files the
  // family reads; the others are ignored (a folder as downloaded holds README.md, .gitattributes,
  // generation_config.json, another family's tokenizer files...).
  function checkFolder(names, family) {
    const allowed = new Set(["model.safetensors", "config.json", ...family.tokenizerFiles.flat(), ...family.optionalFiles]);
    names = names.filter((name) => allowed.has(name));
    const complete = family.tokenizerFiles.find((set) => set.every((f) => names.includes(f)));
    if (!complete) {
      const partial = family.tokenizerFiles.find((set) => set.some((f) => names.includes(f)));
      if (partial) fail("BAD_FILE", `${partial.find((f) => !names.includes(f))}: missing; the tokenizer needs ${partial.join(" and ")}`);
      const extra = family.optionalFiles.find((f) => names.includes(f));
      if (extra)
        fail(
          "BAD_FILE",
          `${extra} was given without the tokenizer's files (${family.tokenizerFiles.map((s) => s.join(" + ")).join(" or ")})`,
        );
    }
    return names;
  }

  // Files a folder may hold that attnlens cannot read but must not ignore: the model would be
  // read wrong, or not at all, without them. Checked before anything is read.
  function refuseMisread(names, files) {
    const unread = names.includes("model.safetensors") ? null : unreadWeights(names);
    if (unread) fail("BAD_FILE", unread);
    // Tokens added to the vocabulary (transformers' add_tokens): a tokenizer without them would
    // split those words into pieces the model was not trained on.
    if (names.includes("added_tokens.json")) {
      const text = fileText('files["added_tokens.json"]', files["added_tokens.json"]);
      let added = null;
      try {
        added = JSON.parse(typeof text === "string" ? text : new TextDecoder().decode(text));
      } catch {
        // Not JSON: refused below like a file that adds tokens (its tokens cannot be known).
      }
      if (added === null || typeof added !== "object" || Object.keys(added).length > 0)
        fail(
          "BAD_FILE",
          "added_tokens.json: the folder adds tokens to the tokenizer's vocabulary, which attnlens does not read; " +
            "without them the added words would be split into other tokens",
        );
    }
  }

  async function loadModel(options) {
    const o = checkOptions("options", options, ["files", "onProgress"]);
    if (o.onProgress !== undefined && typeof o.onProgress !== "function") {
      fail("BAD_ARGUMENT", `onProgress must be a function; got ${describe(o.onProgress)}`);
    }
    const files = o.files;
    if (files === null || typeof files !== "object" || Array.isArray(files)) {
      fail("BAD_ARGUMENT", `files must be an object of file name -> contents; got ${describe(files)}`);
    }
    const names = Object.keys(files);
    // Each file is read from `files` once (a getter runs once), into plain views or strings.
    const all = Object.fromEntries(names.map((name) => [name, files[name]]).filter(([, v]) => v !== undefined));
    refuseMisread(Object.keys(all), all);
    for (const name of ["model.safetensors", "config.json"]) {
      if (all[name] === undefined) fail("BAD_FILE", `${name}: missing; a checkpoint needs model.safetensors and config.json`);
    }
    // Files no family reads are ignored, unread (model.ignored lists them).
    const given = Object.fromEntries(Object.entries(all).filter(([name]) => knownFiles.includes(name)));
    const label = (name) => `files["${name}"]`;
    // A Blob (a File a reader picked) is read chunk by chunk straight into the heap: no copy of
    // the whole file in JS (500 MB for GPT-2 small), and the progress reports count the reading.
    const blob = isBlob(given["model.safetensors"]) ? given["model.safetensors"] : null;
    const weights = blob ? null : fileBytes(label("model.safetensors"), given["model.safetensors"], FILE_BYTES_OR_BLOB);
    // Text files are copied now: the caller's buffers may change while the weights load.
    const texts = {};
    for (const name of Object.keys(given)) {
      if (name === "model.safetensors") continue;
      const t = fileText(label(name), given[name]);
      texts[name] = typeof t === "string" ? t : new Uint8Array(t);
    }
    const used = checkFolder(Object.keys(given), unwrap(core._familyOf(texts["config.json"])));
    for (const name of Object.keys(texts)) if (!used.includes(name)) delete texts[name];
    const ignored = Object.keys(all).filter((name) => name !== "model.safetensors" && !used.includes(name));

    const totalBytes = blob ? blob.size : weights.length;
    const progress = (phase, bytes) => o.onProgress?.({ phase, bytes, totalBytes });
    // This load's own staging buffer in the wasm heap (loads in flight never share one).
    const stage = core._stageFile(totalBytes);
    if (stage === null) fail("OUT_OF_MEMORY", `the WebAssembly heap could not grow to hold model.safetensors (${totalBytes} bytes)`);
    let model;
    try {
      for (let at = 0; at < totalBytes; at += CHUNK_BYTES) {
        const end = Math.min(at + CHUNK_BYTES, totalBytes);
        const chunk = blob
          ? await blobChunk(blob, at, end, label("model.safetensors"))
          : bytesChunk(weights, at, end, label("model.safetensors"));
        // The heap may have been replaced by growth while we awaited: take its view afresh.
        heapBytes().set(chunk, stage.address + at);
        progress("copy", end);
        if (!blob && end < totalBytes) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      progress("parse", totalBytes);
      // _loadModel frees the staged copy whatever happens.
      model = wrap(unwrap(core._loadModel(stage.id, texts)), ignored);
      progress("done", totalBytes);
      return model;
    } catch (error) {
      core._unstage(stage.id);
      model?.dispose();
      throw error;
    }
  }

  function createModel(options) {
    const o = checkOptions("options", options, ["config", "seed", "tokenizer"]);
    const config = typedOptions("config", o.config, {
      layers: "number",
      heads: "number",
      dModel: "number",
      context: "number",
      vocabSize: "number",
      attentionNorm: "boolean",
    });
    const seed = o.seed ?? 0;
    if (typeof seed !== "number") fail("BAD_ARGUMENT", `seed must be a number; got ${describe(seed)}`);
    let vocab = null;
    let merges = null;
    if (o.tokenizer !== undefined) {
      const t = checkOptions("tokenizer", o.tokenizer, ["vocab", "merges"]);
      vocab = fileText("tokenizer.vocab", t.vocab);
      merges = fileText("tokenizer.merges", t.merges);
    }
    return wrap(unwrap(core._createModel(config, seed, vocab, merges)));
  }

  function loadTokenizer(options) {
    const o = checkOptions("options", options, ["vocab", "merges"]);
    const vocab = fileText("vocab", o.vocab);
    const merges = fileText("merges", o.merges);
    const { handle } = unwrap(core._loadTokenizer(vocab, merges));
    let disposed = false;
    const live = () => {
      if (disposed) fail("BAD_ARGUMENT", "this tokenizer was disposed (tokenizer.dispose()); load it again");
    };
    const { encode, decode, tokens } = tokenizerMethods(core, handle, limits, live);
    return Object.freeze({
      encode,
      decode,
      tokens,
      dispose() {
        if (disposed) return;
        disposed = true;
        core._dispose(handle);
      },
    });
  }

  return {
    loadModel,
    createModel,
    loadTokenizer,
    defaults,
    /** The families the library loads: name, causal, prediction kind and tokenizer files. */
    families,
    /** Diagnostics: the model module's heap size and the bytes malloc holds there. */
    memory: () => ({ heapBytes: heapBytes().length, usedBytes: core._heapUsed(), threads: core._computeThreads() }),
  };
}

export { AttnLensError };
