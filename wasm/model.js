// The JS facade over the model module (attnlens_model.wasm, model_bindings.cpp): GPT-2 models,
// their tokenizer and checkpoints. api.js imports this file on the first loadModel(),
// createModel() or loadTokenizer(), so a page that only draws figures never fetches it.
// As in api.js, this file checks what only JS can see (JS types, typed-array kinds, option
// names, nested-array shapes); every other rule is the library's.
import { AttnLensError, checkOptions, describe, fail, typedKind, typedLength, typedOptions, unwrap } from "./api.js";

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

// A text file's contents (`label` names the argument): a string, or its UTF-8 bytes in a
// Uint8Array or an ArrayBuffer.
function fileText(label, value) {
  if (typeof value === "string") return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typedLength(label, value, ["Uint8Array"]) !== undefined) {
    return Object.getPrototypeOf(value) === Uint8Array.prototype ? value : new Uint8Array(value);
  }
  return fail("BAD_ARGUMENT", `${label} must be a string or a Uint8Array of UTF-8 text; got ${describe(value)}`);
}

function fileBytes(label, value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typedLength(label, value, ["Uint8Array"]) !== undefined) return value;
  return fail("BAD_ARGUMENT", `${label} must be the file's bytes (a Uint8Array or an ArrayBuffer); got ${describe(value)}`);
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
  const lone = text.search(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
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
  const kind = typedKind(value);
  if (kind !== undefined) {
    const n = typedLength(name, value, INT_KINDS);
    if (n === undefined)
      fail("BAD_ARGUMENT", `${name} must be an Int32Array (or another integer typed array) of token ids; got ${describe(value)}`);
    const data = Int32Array.from(value);
    if (kind === "Uint32Array") data.forEach((x, i) => x !== value[i] && id(name, `[${i}]`, value[i], true));
    return { data, batch: 1, length: n, batched: false };
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

// Maps UTF-8 byte offsets of `text` to UTF-16 indices: a byte inside a character maps to the
// start of that character (begin) or past its end (end).
function offsetMaps(text) {
  const starts = [];
  let index = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    const bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (let i = 0; i < bytes; i++) starts.push([index, i === 0]);
    index += ch.length;
  }
  const end = index;
  return {
    begin: (byte) => (byte >= starts.length ? end : starts[byte][0]),
    end: (byte) => {
      if (byte >= starts.length) return end;
      const [at, first] = starts[byte];
      if (first) return at;
      let b = byte;
      while (b < starts.length && !starts[b][1]) b++;
      return b >= starts.length ? end : starts[b][0];
    },
  };
}

/** The tokenizer's methods over a handle. */
function tokenizerMethods(core, handle, limits, live) {
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
    tokens(text) {
      live();
      checkText("text", text, limits);
      const r = unwrap(core._tokens(handle, text));
      const bytes = encoder.encode(text);
      const map = offsetMaps(text);
      return Array.from(r.ids, (tokenId, i) => {
        const byteBegin = r.begins[i];
        const byteEnd = r.ends[i];
        return {
          id: tokenId,
          text: decoder.decode(bytes.subarray(byteBegin, byteEnd)),
          begin: map.begin(byteBegin),
          end: map.end(byteEnd),
          byteBegin,
          byteEnd,
        };
      });
    },
  };
}

const FORWARD_OPTIONS = { attention: "boolean", residuals: "boolean" };
const PREDICT_OPTIONS = { k: "number" };
const ANALYZE_OPTIONS = { k: "number", attention: "boolean", maxTokens: "number" };

function checkK(k = 5) {
  if (!Number.isInteger(k) || k < 1) fail("BAD_ARGUMENT", `k must be an integer of at least 1; got ${describe(k)}`);
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
        // The k largest by a partial selection.
        const best = [];
        for (let v = 0; v < V; v++) {
          if (best.length === top && row[v] <= row[best[top - 1]]) continue;
          let at = best.length < top ? best.length : top - 1;
          best[at] = v;
          while (at > 0 && row[best[at - 1]] < row[v]) {
            best[at] = best[at - 1];
            best[--at] = v;
          }
        }
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
        const all = tokenizer.tokens(text);
        const tokens = all.slice(0, maxTokens);
        if (tokens.length === 0) return { tokens, totalTokens: 0, predictions: [], attention: null };
        const r = model.forward(
          Int32Array.from(tokens, (t) => t.id),
          { attention: o.attention ?? false },
        );
        return { tokens, totalTokens: all.length, predictions: topTokens(r.logits, k), attention: r.attention ?? null };
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
    const weights = fileBytes('files["model.safetensors"]', files["model.safetensors"]);
    const config = fileText('files["config.json"]', files["config.json"]);
    const hasVocab = files["vocab.json"] !== undefined;
    if (hasVocab !== (files["merges.txt"] !== undefined)) {
      fail("BAD_FILE", `${hasVocab ? "merges.txt" : "vocab.json"}: missing; the tokenizer needs both vocab.json and merges.txt`);
    }
    const vocab = hasVocab ? fileText('files["vocab.json"]', files["vocab.json"]) : null;
    const merges = hasVocab ? fileText('files["merges.txt"]', files["merges.txt"]) : null;

    const totalBytes = typedLength('files["model.safetensors"]', weights, ["Uint8Array"]);
    const progress = (phase, bytes) => o.onProgress?.({ phase, bytes, totalBytes });
    const address = core._stageFile(totalBytes);
    if (address === 0 && totalBytes > 0) {
      fail("OUT_OF_MEMORY", `the WebAssembly heap could not grow to hold model.safetensors (${totalBytes} bytes)`);
    }
    try {
      for (let at = 0; at < totalBytes; at += CHUNK_BYTES) {
        const end = Math.min(at + CHUNK_BYTES, totalBytes);
        // The heap may have been replaced by growth while we awaited: take its view afresh.
        core.HEAPU8.set(weights.subarray(at, end), address + at);
        progress("copy", end);
        if (end < totalBytes) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      progress("parse", totalBytes);
    } catch (error) {
      core._stageFile(0);
      throw error;
    }
    // _loadModel frees the staged copy whatever happens.
    const model = wrap(unwrap(core._loadModel(config, vocab, merges)));
    progress("done", totalBytes);
    return model;
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
    return Object.freeze({
      ...tokenizerMethods(core, handle, limits, live),
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
