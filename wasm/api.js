// The JS facade over the Embind module: validates arguments, converts tensors, turns error
// results into AttnLensError. Shared by the browser entry (attnlens.js) and the Node entry
// (attnlens.node.js), which differ only in how they obtain the .wasm bytes.

/** An error from attnlens: `code` is one of the library's error codes. */
export class AttnLensError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "AttnLensError";
    this.code = code;
  }
}

const fail = (code, message) => {
  throw new AttnLensError(code, message);
};

const describe = (value) => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
};

const shapeText = (shape) => `[${shape.join(", ")}]`;

function checkOptions(name, options, known) {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    fail("BAD_ARGUMENT", `${name} must be an object; got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      fail("UNKNOWN_OPTION", `${name} has an unknown option "${key}"; known options: ${known.join(", ")}`);
    }
  }
  return options;
}

function optionalBoolean(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") fail("BAD_ARGUMENT", `${name} must be true or false; got ${describe(value)}`);
  return value;
}

function optionalInteger(name, value, fallback, min, max) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    fail("BAD_ARGUMENT", `${name} must be an integer from ${min} to ${max}; got ${describe(value)}`);
  }
  return value;
}

function optionalChoice(name, value, fallback, choices) {
  if (value === undefined) return fallback;
  if (!choices.includes(value)) {
    fail("BAD_ARGUMENT", `${name} must be ${choices.map((c) => `"${c}"`).join(" or ")}; got ${describe(value)}`);
  }
  return value;
}

// Walks a nested array, returning its shape and flat values; `leaf` checks each value.
function flattenNested(name, nested, leaf) {
  const shape = [];
  for (let level = nested; Array.isArray(level); level = level[0]) {
    shape.push(level.length);
    if (level.length === 0) break;
  }
  const values = [];
  const walk = (node, depth, path) => {
    if (depth === shape.length) {
      values.push(leaf(node, path));
      return;
    }
    if (!Array.isArray(node) || node.length !== shape[depth]) {
      const got = Array.isArray(node) ? `${node.length} entries` : describe(node);
      fail(
        "SHAPE_MISMATCH",
        `${name} is a ragged nested array: ${name}${path} has ${got} but ${shape[depth]} were expected from ${name}${"[0]".repeat(depth)}`,
      );
    }
    node.forEach((child, i) => walk(child, depth + 1, `${path}[${i}]`));
  };
  walk(nested, 0, "");
  return { shape, values };
}

function checkShape(name, shape, length) {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    fail("BAD_ARGUMENT", `${name}.shape must be an array of non-negative integers; got ${describe(shape)}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== length) {
    fail("SHAPE_MISMATCH", `${name} has ${length} values but its shape ${shapeText(shape)} needs ${count}`);
  }
}

/** A tensor argument as { data: Float32Array, shape } (converting numbers and nested arrays). */
function toTensor(name, value) {
  if (Array.isArray(value)) {
    const { shape, values } = flattenNested(name, value, (x, path) => {
      if (typeof x !== "number") fail("BAD_ARGUMENT", `${name}${path} must be a number; got ${describe(x)}`);
      return x;
    });
    return { data: Float32Array.from(values), shape };
  }
  if (value && typeof value === "object" && "data" in value && "shape" in value) {
    const { data, shape } = value;
    let array = data;
    if (!(data instanceof Float32Array)) {
      if (!(Array.isArray(data) || ArrayBuffer.isView(data)) || data instanceof BigInt64Array || data instanceof BigUint64Array) {
        fail("BAD_ARGUMENT", `${name}.data must be a Float32Array (or an array of numbers); got ${describe(data)}`);
      }
      array = Float32Array.from(data);
    }
    checkShape(name, shape, array.length);
    return { data: array, shape: [...shape] };
  }
  return fail(
    "BAD_ARGUMENT",
    `${name} must be { data: Float32Array, shape: number[] } or a nested array of numbers; got ${describe(value)}`,
  );
}

/** A mask: boolean (Uint8Array or nested booleans) or additive (Float32Array or nested numbers). */
function toMask(value) {
  if (Array.isArray(value)) {
    let kind;
    const { shape, values } = flattenNested("mask", value, (x, path) => {
      const k = typeof x === "boolean" ? "bool" : typeof x === "number" ? "float" : undefined;
      if (!k) fail("BAD_ARGUMENT", `mask${path} must be a boolean or a number; got ${describe(x)}`);
      if (kind && k !== kind) fail("BAD_ARGUMENT", `mask mixes booleans and numbers (at mask${path})`);
      kind = k;
      return x;
    });
    return kind === "bool"
      ? { kind, data: Uint8Array.from(values, (b) => (b ? 1 : 0)), shape }
      : { kind: "float", data: Float32Array.from(values), shape };
  }
  if (value && typeof value === "object" && "data" in value && "shape" in value) {
    const { data, shape } = value;
    if (data instanceof Uint8Array) {
      checkShape("mask", shape, data.length);
      return { kind: "bool", data, shape: [...shape] };
    }
    if (data instanceof Float32Array) {
      checkShape("mask", shape, data.length);
      return { kind: "float", data, shape: [...shape] };
    }
    fail("BAD_ARGUMENT", `mask.data must be a Uint8Array (1 = may attend) or a Float32Array (added to the scores); got ${describe(data)}`);
  }
  return fail("BAD_ARGUMENT", `mask must be { data: Uint8Array | Float32Array, shape } or a nested array; got ${describe(value)}`);
}

function checkAttentionShapes(q, k, v) {
  const r = q.shape.length;
  if (r < 2 || r > 4) fail("SHAPE_MISMATCH", `q must have rank 2 [L, E], 3 [B, L, E] or 4 [B, H, L, E]; got shape ${shapeText(q.shape)}`);
  if (k.shape.length !== r || v.shape.length !== r) {
    fail(
      "SHAPE_MISMATCH",
      `q, k and v must have the same rank; got q ${shapeText(q.shape)}, k ${shapeText(k.shape)}, v ${shapeText(v.shape)}`,
    );
  }
  if (k.shape[r - 1] !== q.shape[r - 1]) {
    fail(
      "SHAPE_MISMATCH",
      `k has last dimension ${k.shape[r - 1]} but q has ${q.shape[r - 1]} (q ${shapeText(q.shape)}, k ${shapeText(k.shape)})`,
    );
  }
  if (v.shape[r - 2] !== k.shape[r - 2]) {
    fail(
      "SHAPE_MISMATCH",
      `v has ${v.shape[r - 2]} rows (keys) but k has ${k.shape[r - 2]} (k ${shapeText(k.shape)}, v ${shapeText(v.shape)})`,
    );
  }
  if (r >= 3 && (k.shape[0] !== q.shape[0] || v.shape[0] !== q.shape[0])) {
    fail("SHAPE_MISMATCH", `batch sizes differ: q ${shapeText(q.shape)}, k ${shapeText(k.shape)}, v ${shapeText(v.shape)}`);
  }
  if (r === 4) {
    if (v.shape[1] !== k.shape[1]) fail("SHAPE_MISMATCH", `k has ${k.shape[1]} heads but v has ${v.shape[1]}`);
    if (k.shape[1] === 0 || q.shape[1] % k.shape[1] !== 0) {
      fail(
        "SHAPE_MISMATCH",
        `q has ${q.shape[1]} heads, which is not a multiple of the ${k.shape[1]} heads of k and v (grouped-query attention needs Hq % Hkv == 0)`,
      );
    }
  }
  for (const [name, t] of [
    ["q", q],
    ["k", k],
    ["v", v],
  ]) {
    if (t.shape.includes(0)) fail("EMPTY_INPUT", `${name} has shape ${shapeText(t.shape)}; every dimension must be at least 1`);
  }
}

// Turns an error result of the raw bindings into an AttnLensError.
function unwrap(result) {
  if (result && result.errorCode !== undefined) throw new AttnLensError(result.errorCode, result.message);
  return result;
}

// UTF-16 offsets of tokens whose UTF-8 byte offsets are known, in one pass over the text.
function utf16Offsets(text, tokens) {
  const byteToIndex = new Map();
  let byte = 0;
  let index = 0;
  for (const ch of text) {
    byteToIndex.set(byte, index);
    const cp = ch.codePointAt(0);
    byte += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    index += ch.length;
  }
  byteToIndex.set(byte, index);
  for (const t of tokens) {
    t.start = byteToIndex.get(t.byteStart);
    t.end = byteToIndex.get(t.byteEnd);
  }
}

const ATTENTION_OPTIONS = ["causal", "causalAlign", "mask", "scale", "returnWeights", "maxElements", "streaming"];
const SELF_ATTENTION_CONFIG = ["modelDim", "numHeads", "seed", "init", "weights", "bias"];
const FORWARD_OPTIONS = ["causal", "trace"];
const EXPLAIN_OPTIONS = ["causal", "modelDim", "numHeads", "seed", "init", "positional", "maxTokens", "truncate"];
const WEIGHT_NAMES = ["wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"];
const MAX_SEED = Number.MAX_SAFE_INTEGER;

/** Builds the public API object around an instantiated Embind module. */
export function createLens(core) {
  const limits = core._limits();
  const errorCodes = core._errorCodes();
  const traceStages = core._traceStages().map((stage) => Object.freeze(stage));

  function runAttention(q, k, v, options, reference) {
    const o = checkOptions("options", options, ATTENTION_OPTIONS);
    const qt = toTensor("q", q);
    const kt = toTensor("k", k);
    const vt = toTensor("v", v);
    checkAttentionShapes(qt, kt, vt);
    if (o.scale !== undefined && (typeof o.scale !== "number" || !Number.isFinite(o.scale))) {
      fail(typeof o.scale === "number" ? "NON_FINITE" : "BAD_ARGUMENT", `scale must be a finite number; got ${describe(o.scale)}`);
    }
    const mask = o.mask === undefined || o.mask === null ? undefined : toMask(o.mask);
    const causal = optionalBoolean("causal", o.causal, false);
    const align = optionalChoice("causalAlign", o.causalAlign, "top-left", ["top-left", "bottom-right"]);
    const returnWeights = optionalBoolean("returnWeights", o.returnWeights, false);
    const maxElements = optionalInteger("maxElements", o.maxElements, limits.maxElements, 1, Number.MAX_SAFE_INTEGER);
    const streaming = optionalBoolean("streaming", o.streaming, false);

    // Stage the inputs in the wasm heap (bindings.cpp describes the layout): one copy in.
    const shapes = [qt.shape, kt.shape, vt.shape, mask ? mask.shape : []];
    const headerSlots = shapes.reduce((n, s) => n + 1 + s.length, 0);
    const floats = qt.data.length + kt.data.length + vt.data.length + (mask?.kind === "float" ? mask.data.length : 0);
    const base = core._attentionStage(headerSlots, floats, mask?.kind === "bool" ? mask.data.length : 0);
    if (base === 0) fail("OUT_OF_MEMORY", `the WebAssembly heap could not grow to hold the inputs (${floats} floats)`);
    const heap32 = core.HEAP32;
    const heapF32 = core.HEAPF32;
    let slot = base >> 2;
    for (const shape of shapes) {
      heap32[slot++] = shape.length;
      for (const d of shape) heap32[slot++] = d;
    }
    for (const data of [qt.data, kt.data, vt.data, mask?.kind === "float" ? mask.data : undefined]) {
      if (!data) continue;
      heapF32.set(data, slot);
      slot += data.length;
    }
    if (mask?.kind === "bool") core.HEAPU8.set(mask.data, slot << 2);

    const maskKind = mask ? (mask.kind === "bool" ? 1 : 2) : 0;
    const scale = o.scale === undefined ? NaN : o.scale;
    const code = core._attentionRun(causal, align === "bottom-right", scale, returnWeights, maxElements, streaming, maskKind, reference);
    try {
      if (code >= 0) throw new AttnLensError(errorCodes[code].name, core._attentionError());
      // One copy out; the heap may have grown during the call, so its views are taken afresh.
      const copyOut = (which, shape) => {
        const at = core._attentionResult(which) >> 2;
        return { data: core.HEAPF32.slice(at, at + shape.reduce((a, b) => a * b, 1)), shape };
      };
      const r = qt.shape.length;
      const result = { output: copyOut(0, [...qt.shape.slice(0, r - 1), vt.shape[r - 1]]) };
      if (returnWeights) result.weights = copyOut(1, [...qt.shape.slice(0, r - 1), kt.shape[r - 2]]);
      return result;
    } finally {
      core._attentionRelease();
    }
  }
  const attention = (q, k, v, options) => runAttention(q, k, v, options, false);
  const attentionReference = (q, k, v, options) => runAttention(q, k, v, options, true);

  function selfAttention(config) {
    const c = checkOptions("config", config, SELF_ATTENTION_CONFIG);
    const modelDim = optionalInteger("modelDim", c.modelDim, 64, 1, limits.maxModelDim);
    const numHeads = optionalInteger("numHeads", c.numHeads, 4, 1, limits.maxHeads);
    if (modelDim % numHeads !== 0) {
      fail("BAD_ARGUMENT", `modelDim ${modelDim} is not divisible by numHeads ${numHeads}; each head needs modelDim / numHeads columns`);
    }
    const seed = optionalInteger("seed", c.seed, 0, 0, MAX_SEED);
    const init = optionalChoice("init", c.init, "xavier", ["xavier", "normal", "identity"]);
    const bias = optionalBoolean("bias", c.bias, false);
    let weights;
    if (c.weights !== undefined) {
      const given = checkOptions("weights", c.weights, WEIGHT_NAMES);
      weights = {};
      for (const name of WEIGHT_NAMES) {
        if (given[name] === undefined) {
          if (name.startsWith("w")) fail("BAD_ARGUMENT", `weights.${name} is missing; give all of wq, wk, wv, wo`);
          continue;
        }
        const t = toTensor(`weights.${name}`, given[name]);
        const want = name.startsWith("w") ? [modelDim, modelDim] : [modelDim];
        if (t.shape.length !== want.length || t.shape.some((d, i) => d !== want[i])) {
          fail("SHAPE_MISMATCH", `weights.${name} has shape ${shapeText(t.shape)} but must be ${shapeText(want)} (modelDim = ${modelDim})`);
        }
        weights[name] = t;
      }
    } else {
      weights = unwrap(core._selfAttentionInit(modelDim, numHeads, seed, init, bias));
    }
    const rawWeights = Object.fromEntries(Object.entries(weights).map(([name, t]) => [name, t.data]));
    return {
      modelDim,
      numHeads,
      headDim: modelDim / numHeads,
      weights,
      forward(x, options) {
        const o = checkOptions("options", options, FORWARD_OPTIONS);
        const xt = toTensor("x", x);
        const r = xt.shape.length;
        if (r !== 2 && r !== 3) fail("SHAPE_MISMATCH", `x must be [L, E] or [B, L, E]; got shape ${shapeText(xt.shape)}`);
        if (xt.shape[r - 1] !== modelDim) {
          fail(
            "SHAPE_MISMATCH",
            `x has last dimension ${xt.shape[r - 1]} but the model dimension is ${modelDim} (x ${shapeText(xt.shape)})`,
          );
        }
        if (xt.shape.includes(0)) fail("EMPTY_INPUT", `x has shape ${shapeText(xt.shape)}; it needs at least one token`);
        const causal = optionalBoolean("causal", o.causal, false);
        const trace = optionalBoolean("trace", o.trace, false);
        return unwrap(core._selfAttentionForward(modelDim, numHeads, rawWeights, xt.data, xt.shape, causal, trace));
      },
    };
  }

  function explain(sentence, options) {
    const o = checkOptions("options", options, EXPLAIN_OPTIONS);
    if (typeof sentence !== "string" && !(sentence instanceof Uint8Array)) {
      fail("BAD_ARGUMENT", `sentence must be a string (or UTF-8 bytes in a Uint8Array); got ${describe(sentence)}`);
    }
    if (typeof sentence === "string") {
      const lone = sentence.search(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      if (lone >= 0) {
        fail("INVALID_UTF8", `sentence holds a lone UTF-16 surrogate at index ${lone}, which has no UTF-8 encoding`);
      }
    }
    const raw = {
      causal: optionalBoolean("causal", o.causal, true),
      modelDim: optionalInteger("modelDim", o.modelDim, 64, 1, limits.maxModelDim),
      numHeads: optionalInteger("numHeads", o.numHeads, 4, 1, limits.maxHeads),
      seed: optionalInteger("seed", o.seed, 7, 0, MAX_SEED),
      init: optionalChoice("init", o.init, "xavier", ["xavier", "normal", "identity"]),
      positional: optionalChoice("positional", o.positional, "sinusoidal", ["sinusoidal", "none"]),
      maxTokens: optionalInteger("maxTokens", o.maxTokens, limits.defaultMaxTokens, 1, limits.maxTokens),
      truncate: optionalBoolean("truncate", o.truncate, false),
    };
    if (raw.modelDim % raw.numHeads !== 0) {
      fail(
        "BAD_ARGUMENT",
        `modelDim ${raw.modelDim} is not divisible by numHeads ${raw.numHeads}; each head needs modelDim / numHeads columns`,
      );
    }
    const ex = unwrap(core._explain(sentence, raw));
    if (typeof sentence === "string") utf16Offsets(sentence, ex.tokens);
    ex.options = raw;
    return ex;
  }

  return Object.freeze({
    version: core._version,
    limits: Object.freeze(limits),
    errorCodes: Object.freeze(errorCodes),
    traceStages: Object.freeze(traceStages),
    attention,
    attentionReference,
    selfAttention,
    explain,
    /** Diagnostics: the wasm heap's size and the bytes malloc holds (for leak checks). */
    memory: () => ({ heapBytes: core.HEAPU8.length, usedBytes: core._heapUsed() }),
  });
}

function checkLoadOptions(options) {
  const o = checkOptions("options", options, ["wasmBinary", "wasmUrl"]);
  if (o.wasmBinary !== undefined && !(o.wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(o.wasmBinary))) {
    fail("BAD_ARGUMENT", `wasmBinary must be an ArrayBuffer or a Uint8Array; got ${describe(o.wasmBinary)}`);
  }
  if (o.wasmUrl !== undefined && typeof o.wasmUrl !== "string" && !(o.wasmUrl instanceof URL)) {
    fail("BAD_ARGUMENT", `wasmUrl must be a string or a URL; got ${describe(o.wasmUrl)}`);
  }
  return o;
}

/**
 * Makes loadAttnLens() for one environment. `readWasm(url)` returns the module's bytes;
 * `defaultUrl` is where the .wasm sits beside the entry. Without options the instance is
 * created once and shared by every caller; a failed load is not cached, so it can be retried.
 */
export function makeLoader(createCore, readWasm, defaultUrl) {
  let shared;
  const instantiate = async ({ wasmBinary, wasmUrl }) => {
    const bytes = wasmBinary ?? (await readWasm(wasmUrl ?? defaultUrl));
    return createLens(await createCore({ wasmBinary: bytes }));
  };
  return function loadAttnLens(options) {
    let o;
    try {
      o = checkLoadOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    if (o.wasmBinary || o.wasmUrl) return instantiate(o);
    if (!shared) {
      shared = instantiate(o);
      shared.catch(() => {
        shared = undefined;
      });
    }
    return shared;
  };
}
