// The JS facade over the model module (attnlens_model.wasm, model_bindings.cpp): GPT-2 models,
// their tokenizer and checkpoints. api.js imports this file on the first loadModel(),
// createModel() or loadTokenizer(), so a page that only draws figures never fetches it.
// As in api.js, this file checks what only JS can see (JS types, typed-array kinds, option
// names, nested-array shapes); every other rule is the library's.
import { AttnLensError, checkOptions, describe, fail, readTyped, typedKind, typedOptions, unwrap } from "./boundary.js";

const FILE_NAMES = ["model.safetensors", "config.json", "vocab.json", "merges.txt"];
// model.safetensors is copied into the wasm heap in chunks of this many bytes, with a progress
// report and a turn of the event loop after each (a page stays responsive while 500 MB load).
const CHUNK_BYTES = 16 << 20;
const INT_KINDS = ["Int32Array", "Int16Array", "Int8Array", "Uint16Array", "Uint8Array", "Uint8ClampedArray", "Uint32Array"];
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// ignoreBOM: a leading U+FEFF is text (decode(encode(text)) gives it back), not a byte-order mark.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// A text file's contents (`label` names the argument): a string without lone surrogates (which
// have no UTF-8 form: the bindings' encoder would swallow the next character), or its UTF-8
// bytes in a Uint8Array or an ArrayBuffer, as a plain view (readTyped).
function fileText(label, value) {
  if (typeof value === "string") {
    const lone = value.search(LONE_SURROGATE);
    if (lone >= 0) fail("INVALID_UTF8", `${label} holds a lone UTF-16 surrogate at index ${lone}, which has no UTF-8 encoding`);
    return value;
  }
  return fileBytes(label, value, "a string or a Uint8Array of UTF-8 text");
}

// A file's bytes (a Uint8Array or an ArrayBuffer) as a plain Uint8Array view of them.
function fileBytes(label, value, what = "the file's bytes (a Uint8Array or an ArrayBuffer)") {
  const typed = readTyped(label, value instanceof ArrayBuffer ? new Uint8Array(value) : value, ["Uint8Array"]);
  if (typed === undefined) fail("BAD_ARGUMENT", `${label} must be ${what}; got ${describe(value)}`);
  return typed.view;
}

/** Checks a text argument: a string without lone surrogates, within the tokenizer's limit. */
function checkText(name, text, limits) {
  if (typeof text !== "string") fail("BAD_ARGUMENT", `${name} must be a string; got ${describe(text)}`);
  if (text.length > limits.maxTextBytes) {
    fail(
      "TOO_LARGE",
      `${name} has ${text.length} UTF-16 code units, so at least ${text.length} bytes of UTF-8, over the limit of ${limits.maxTextBytes} bytes`,
    );
  }
  const lone = text.search(LONE_SURROGATE);
  if (lone >= 0) fail("INVALID_UTF8", `${name} holds a lone UTF-16 surrogate at index ${lone}, which has no UTF-8 encoding`);
  return text;
}

// One id: an integer that fits int32 (the library checks it against the vocabulary).
function id(name, at, x, present) {
  if (!present) fail("BAD_ARGUMENT", `${name}${at} must be a token id; got an empty slot (a hole in a sparse array)`);
  if (!Number.isInteger(x) || x < INT32_MIN || x > INT32_MAX)
    fail("BAD_ARGUMENT", `${name}${at} must be an integer token id; got ${describe(x)}`);
  return x;
}

/**
 * Token ids as { data: Int32Array, batch, length, batched }: an Int32Array (or another integer
 * typed array, or an array of integers) for one sequence, nested arrays [B][T] or
 * { data, shape: [B, T] } for a batch.
 */
function toIds(name, value) {
  if (typedKind(value) !== undefined) {
    // The boundary rule (api.js readTyped): the ids are the array's own elements, however it
    // iterates or whatever length it reports; one copy, made here.
    const typed = readTyped(name, value, INT_KINDS);
    if (typed === undefined)
      fail("BAD_ARGUMENT", `${name} must be an Int32Array (or another integer typed array) of token ids; got ${describe(value)}`);
    const { kind, length, view } = typed;
    const data = new Int32Array(view);
    if (kind === "Uint32Array") data.forEach((x, i) => x !== view[i] && id(name, `[${i}]`, view[i], true));
    return { data, batch: 1, length, batched: false };
  }
  if (Array.isArray(value)) {
    if (value.length > 0 && Array.isArray(value[0])) {
      const batch = value.length;
      const length = value[0].length;
      const data = new Int32Array(batch * length);
      for (let b = 0; b < batch; b++) {
        const row = value[b];
        if (!Array.isArray(row) || row.length !== length) {
          fail(
            "SHAPE_MISMATCH",
            `${name} is a ragged nested array: ${name}[${b}] has ${Array.isArray(row) ? `${row.length} entries` : describe(row)} but ${length} were expected from ${name}[0]`,
          );
        }
        for (let t = 0; t < length; t++) data[b * length + t] = id(name, `[${b}][${t}]`, row[t], t in row);
      }
      return { data, batch, length, batched: true };
    }
    const data = Int32Array.from(value, (x, i) => id(name, `[${i}]`, x, i in value));
    return { data, batch: 1, length: data.length, batched: false };
  }
  if (value !== null && typeof value === "object" && "data" in value && "shape" in value) {
    const shape = value.shape;
    if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      fail("BAD_ARGUMENT", `${name}.shape must be [batch, length] (two non-negative integers); got ${describe(shape)}`);
    }
    const flat = toIds(`${name}.data`, value.data);
    if (flat.batched) fail("BAD_ARGUMENT", `${name}.data must be flat (an Int32Array or an array of integers)`);
    if (flat.length !== shape[0] * shape[1]) {
      fail("SHAPE_MISMATCH", `${name} has ${flat.length} ids but its shape [${shape.join(", ")}] needs ${shape[0] * shape[1]}`);
    }
    return { data: flat.data, batch: shape[0], length: shape[1], batched: true };
  }
  return fail(
    "BAD_ARGUMENT",
    `${name} must be an Int32Array or an array of token ids, nested arrays [batch][length], or { data, shape: [batch, length] }; got ${describe(value)}`,
  );
}

// UTF-16 index of each UTF-8 byte offset of `text` that starts a character (and of the end), in
// one pass: a Uint32Array of bytes + 1 entries, with NOT_A_START where a byte lies inside a
// character. 4 bytes per byte of text, where a token list costs far more.
const NOT_A_START = 0xffffffff;
function utf16AtByte(text, byteCount) {
  const at = new Uint32Array(byteCount + 1).fill(NOT_A_START);
  let byte = 0;
  for (let index = 0; index < text.length;) {
    const cp = text.codePointAt(index);
    at[byte] = index;
    byte += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    index += cp > 0xffff ? 2 : 1;
  }
  at[byte] = text.length;
  return at;
}

/** The tokenizer's methods over a handle. */
function tokenizerMethods(core, handle, limits, live) {
  // The first `limit` tokens of `text` as objects, and the count of all: the tokenizer's ids and
  // byte offsets (typed arrays from wasm) are read for every token, objects made for `limit`.
  const tokenList = (text, limit) => {
    live();
    checkText("text", text, limits);
    const r = unwrap(core._tokens(handle, text));
    const count = r.ids.length;
    const n = Math.min(count, limit);
    if (n === 0) return { tokens: [], count };
    const bytes = encoder.encode(text);
    const at = utf16AtByte(text, bytes.length);
    // A byte offset inside a character (a byte-level token may cut one): begin maps to the
    // character's start, end past its end.
    const begin = (b) => {
      while (at[b] === NOT_A_START) b--;
      return at[b];
    };
    const end = (b) => {
      while (at[b] === NOT_A_START) b++;
      return at[b];
    };
    const tokens = new Array(n);
    for (let i = 0; i < n; i++) {
      const byteBegin = r.begins[i];
      const byteEnd = r.ends[i];
      const whole = at[byteBegin] !== NOT_A_START && at[byteEnd] !== NOT_A_START;
      tokens[i] = {
        id: r.ids[i],
        // A cut character decodes to U+FFFD, as decode() gives it.
        text: whole ? text.slice(at[byteBegin], at[byteEnd]) : decoder.decode(bytes.subarray(byteBegin, byteEnd)),
        begin: begin(byteBegin),
        end: end(byteEnd),
        byteBegin,
        byteEnd,
      };
    }
    return { tokens, count };
  };
  return {
    encode(text) {
      live();
      return unwrap(core._encode(handle, checkText("text", text, limits))).ids;
    },
    decode(ids) {
      live();
      const t = toIds("ids", ids);
      if (t.batched) fail("BAD_ARGUMENT", "ids must be one sequence (an Int32Array or an array of ids), not a batch");
      return decoder.decode(unwrap(core._decode(handle, t.data)).bytes);
    },
    tokens: (text) => tokenList(text, Infinity).tokens,
    tokenList,
  };
}

const FORWARD_OPTIONS = { attention: "boolean", residuals: "boolean" };
const PREDICT_OPTIONS = { k: "number" };
const ANALYZE_OPTIONS = { k: "number", attention: "boolean", maxTokens: "number" };

// predict()/analyze() list the k likeliest tokens per position; the whole distribution is
// forward()'s logits.
const MAX_K = 256;
function checkK(k = 5) {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) fail("BAD_ARGUMENT", `k must be an integer from 1 to ${MAX_K}; got ${describe(k)}`);
  return k;
}
const TRAIN_OPTIONS = { lr: "number" };
const SAVE_OPTIONS = { dtype: "string" };
const ADAMW_OPTIONS = { beta1: "number", beta2: "number", eps: "number", weightDecay: "number", maxGradNorm: "number", schedule: "any" };
const SCHEDULE_OPTIONS = { maxLr: "number", minLr: "number", warmupSteps: "number", totalSteps: "number" };

// The shapes of one sequence drop the batch dimension: logits [L, V], attention
// [layers, heads, L, L], residuals [layers + 1, L, d].
function unbatch(result) {
  result.logits.shape.splice(0, 1);
  if (result.attention) result.attention.shape.splice(1, 1);
  if (result.residuals) result.residuals.shape.splice(1, 1);
  return result;
}

/** Builds the model API around an instantiated model module. */
export function createModelApi(core) {
  const { limits, defaults } = core._description();

  function wrap(info) {
    const { handle } = info;
    let disposed = false;
    const live = () => {
      if (disposed) fail("BAD_ARGUMENT", "this model was disposed (model.dispose()); load or create it again");
    };
    const hasTokenizer = info.tokenizerSize > 0;
    const tokenizer = tokenizerMethods(core, handle, limits, live);
    const needTokenizer = (what) => {
      if (!hasTokenizer) fail("BAD_ARGUMENT", `${what} needs a tokenizer: give vocab.json and merges.txt when loading the model`);
    };
    // Per row of logits [L, V]: the k likeliest next tokens (softmax probabilities), ties to the
    // smaller id. A model may have more embedding rows than its tokenizer has tokens (padded
    // vocabularies): such an id has no text.
    const topTokens = ({ data, shape }, k) => {
      const [L, V] = shape;
      const top = Math.min(k, V);
      const text = (v) => (v < info.tokenizerSize ? tokenizer.decode([v]) : "");
      const out = [];
      for (let t = 0; t < L; t++) {
        const row = data.subarray(t * V, (t + 1) * V);
        let max = -Infinity;
        for (let v = 0; v < V; v++) if (row[v] > max) max = row[v];
        let sum = 0;
        for (let v = 0; v < V; v++) sum += Math.exp(row[v] - max);
        // The k largest in a min-heap of k (O(V log k)): its root is the weakest kept, ordered
        // by logit, then by the larger id (so ties keep the smaller id).
        const weaker = (a, b) => row[a] < row[b] || (row[a] === row[b] && a > b);
        const heap = [];
        const down = (i) => {
          for (;;) {
            const l = 2 * i + 1;
            const r = l + 1;
            let m = i;
            if (l < heap.length && weaker(heap[l], heap[m])) m = l;
            if (r < heap.length && weaker(heap[r], heap[m])) m = r;
            if (m === i) return;
            [heap[i], heap[m]] = [heap[m], heap[i]];
            i = m;
          }
        };
        for (let v = 0; v < V; v++) {
          if (heap.length < top) {
            heap.push(v);
            for (let i = heap.length - 1; i > 0;) {
              const parent = (i - 1) >> 1;
              if (!weaker(heap[i], heap[parent])) break;
              [heap[i], heap[parent]] = [heap[parent], heap[i]];
              i = parent;
            }
          } else if (weaker(heap[0], v)) {
            heap[0] = v;
            down(0);
          }
        }
        const best = heap.sort((a, b) => (weaker(a, b) ? 1 : weaker(b, a) ? -1 : 0));
        out.push(best.map((v) => ({ id: v, text: text(v), p: Math.exp(row[v] - max) / sum })));
      }
      return out;
    };
    const model = {
      config: Object.freeze(info.config),
      parameters: info.parameters,
      hasTokenizer,
      encode: (text) => (needTokenizer("encode()"), tokenizer.encode(text)),
      decode: (ids) => (needTokenizer("decode()"), tokenizer.decode(ids)),
      tokens: (text) => (needTokenizer("tokens()"), tokenizer.tokens(text)),
      forward(ids, options) {
        live();
        const o = typedOptions("options", options, FORWARD_OPTIONS);
        const t = toIds("ids", ids);
        const r = unwrap(core._forward(handle, t.data, t.batch, t.length, o.attention ?? false, o.residuals ?? false));
        return t.batched ? r : unbatch(r);
      },
      predict(text, options) {
        live();
        needTokenizer("predict()");
        const o = typedOptions("options", options, PREDICT_OPTIONS);
        const k = checkK(o.k);
        const ids = tokenizer.encode(text);
        if (ids.length === 0) return [];
        return topTokens(model.forward(ids).logits, k);
      },
      analyze(text, options) {
        live();
        needTokenizer("analyze()");
        const o = typedOptions("options", options, ANALYZE_OPTIONS);
        const k = checkK(o.k);
        const context = info.config.context;
        const maxTokens = o.maxTokens ?? context;
        if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > context) {
          fail("BAD_ARGUMENT", `maxTokens must be an integer from 1 to the model's context (${context}); got ${describe(maxTokens)}`);
        }
        const { tokens, count } = tokenizer.tokenList(text, maxTokens);
        if (tokens.length === 0) return { tokens, totalTokens: 0, predictions: [], attention: null };
        const r = model.forward(
          Int32Array.from(tokens, (t) => t.id),
          { attention: o.attention ?? false },
        );
        return { tokens, totalTokens: count, predictions: topTokens(r.logits, k), attention: r.attention ?? null };
      },
      gradients(ids, targets) {
        live();
        const x = toIds("ids", ids);
        const y = toIds("targets", targets);
        if (x.batch !== y.batch || x.length !== y.length) {
          fail("SHAPE_MISMATCH", `targets has shape [${y.batch}, ${y.length}] but ids has [${x.batch}, ${x.length}]; they must match`);
        }
        return unwrap(core._gradients(handle, x.data, y.data, x.batch, x.length));
      },
      trainStep(batch, options) {
        live();
        const o = typedOptions("options", options, TRAIN_OPTIONS);
        const t = toIds("batch", batch);
        return unwrap(core._trainStep(handle, t.data, t.batch, t.length, o.lr ?? null)).loss;
      },
      /** Like trainStep, with the rate used, the step count after it and the gradient norm. */
      trainStepDetails(batch, options) {
        live();
        const o = typedOptions("options", options, TRAIN_OPTIONS);
        const t = toIds("batch", batch);
        return unwrap(core._trainStep(handle, t.data, t.batch, t.length, o.lr ?? null));
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
      save(options) {
        live();
        const o = typedOptions("options", options, SAVE_OPTIONS);
        return unwrap(core._save(handle, o.dtype ?? "F32"));
      },
      dispose() {
        if (disposed) return;
        disposed = true;
        core._dispose(handle);
      },
    };
    return Object.freeze(model);
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
    for (const name of Object.keys(files)) {
      if (!FILE_NAMES.includes(name)) fail("UNKNOWN_OPTION", `files has an unknown file "${name}"; known files: ${FILE_NAMES.join(", ")}`);
    }
    for (const name of ["model.safetensors", "config.json"]) {
      if (files[name] === undefined) fail("BAD_FILE", `${name}: missing; a checkpoint needs model.safetensors and config.json`);
    }
    // Each file is read from `files` once (a getter runs once), into plain views or strings.
    const given = Object.fromEntries(FILE_NAMES.map((name) => [name, files[name]]));
    const label = (name) => `files["${name}"]`;
    const weights = fileBytes(label("model.safetensors"), given["model.safetensors"]);
    // Text files are copied now: the caller's buffers may change while the weights load.
    const text = (name) => {
      const t = fileText(label(name), given[name]);
      return typeof t === "string" ? t : new Uint8Array(t);
    };
    const config = text("config.json");
    const hasVocab = given["vocab.json"] !== undefined;
    if (hasVocab !== (given["merges.txt"] !== undefined)) {
      fail("BAD_FILE", `${hasVocab ? "merges.txt" : "vocab.json"}: missing; the tokenizer needs both vocab.json and merges.txt`);
    }
    const vocab = hasVocab ? text("vocab.json") : null;
    const merges = hasVocab ? text("merges.txt") : null;

    const totalBytes = weights.length;
    const progress = (phase, bytes) => o.onProgress?.({ phase, bytes, totalBytes });
    // This load's own staging buffer in the wasm heap (loads in flight never share one).
    const stage = core._stageFile(totalBytes);
    if (stage === null) fail("OUT_OF_MEMORY", `the WebAssembly heap could not grow to hold model.safetensors (${totalBytes} bytes)`);
    let model;
    try {
      for (let at = 0; at < totalBytes; at += CHUNK_BYTES) {
        const end = Math.min(at + CHUNK_BYTES, totalBytes);
        let chunk;
        try {
          chunk = new Uint8Array(weights.buffer, weights.byteOffset + at, end - at);
        } catch {
          fail(
            "BAD_ARGUMENT",
            `${label("model.safetensors")}'s ArrayBuffer was detached or shrunk while it was being read; keep it unchanged until loadModel resolves`,
          );
        }
        // The heap may have been replaced by growth while we awaited: take its view afresh.
        core.HEAPU8.set(chunk, stage.address + at);
        progress("copy", end);
        if (end < totalBytes) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      progress("parse", totalBytes);
      // _loadModel frees the staged copy whatever happens.
      model = wrap(unwrap(core._loadModel(stage.id, config, vocab, merges)));
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
    const { tokenList, ...methods } = tokenizerMethods(core, handle, limits, live);
    return Object.freeze({
      ...methods,
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
    /** Diagnostics: the model module's heap size and the bytes malloc holds there. */
    memory: () => ({ heapBytes: core.HEAPU8.length, usedBytes: core._heapUsed() }),
  };
}

export { AttnLensError };
