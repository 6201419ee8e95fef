// The JS facade over the Embind module: checks what only JS can see (JS types, typed-array
// kinds, data lengths against shapes, option names), converts tensors, and turns error results
// into AttnLensError. Every other rule (shapes, ranges, limits, defaults, choice lists) is the
// C++ library's: it checks them, and _description() tells this file what it needs to know.
// Shared by the browser entry (attnlens.js) and the Node entry (attnlens.node.js), which differ
// only in how they obtain the .wasm bytes.

import {
  AttnLensError,
  checkOptions,
  describe,
  fail,
  isPlainFloat32,
  readTyped,
  typedKind,
  typedLength,
  typedOptions,
  unwrap,
} from "./boundary.js";

export { AttnLensError };

const FLOAT32_MAX = 3.4028234663852886e38; // for messages; Math.fround() decides

const shapeText = (shape) => `[${shape.join(", ")}]`;

/** True for an explain() result (what explain's `into` accepts): its weights and tokens. */
export const isExplanation = (x) => x?.weights?.data instanceof Float32Array && Array.isArray(x.tokens);

// One element of a tensor as a float32 value: a JS number, finite in float32 unless it is NaN
// or an infinity already (the library reports those, naming the flat index).
function element(name, where, x, present) {
  if (!present) fail("BAD_ARGUMENT", `${name}${where} must be a number; got an empty slot (a hole in a sparse array)`);
  if (typeof x !== "number") fail("BAD_ARGUMENT", `${name}${where} must be a number; got ${describe(x)}`);
  if (Number.isFinite(x) && !Number.isFinite(Math.fround(x))) {
    fail("NON_FINITE", `${name}${where} is ${x}: finite in JS, but beyond float32's range (largest ${FLOAT32_MAX})`);
  }
  return x;
}

// A copy of a shape: a real array of non-negative safe integers, read once.
function readShape(name, shape) {
  if (!Array.isArray(shape)) fail("BAD_ARGUMENT", `${name}.shape must be an array of non-negative integers; got ${describe(shape)}`);
  const out = [];
  for (let i = 0, n = shape.length; i < n; i++) {
    const d = shape[i];
    if (!Number.isSafeInteger(d) || d < 0) {
      fail("BAD_ARGUMENT", `${name}.shape[${i}] must be a non-negative integer; got ${describe(d)}`);
    }
    out.push(d);
  }
  return out;
}

// Walks a nested array of `leaf` values: returns its shape and flat values. Holes, ragged rows
// and anything else are errors naming the path, e.g. q[0][1].
function flattenNested(name, nested, leaf) {
  const shape = [];
  for (let level = nested; Array.isArray(level); level = level[0]) {
    shape.push(level.length);
    if (level.length === 0) break;
  }
  const values = [];
  const walk = (node, depth, path) => {
    if (!Array.isArray(node) || node.length !== shape[depth]) {
      const got = Array.isArray(node) ? `${node.length} entries` : describe(node);
      fail(
        "SHAPE_MISMATCH",
        `${name} is a ragged nested array: ${name}${path} has ${got} but ${shape[depth]} were expected from ${name}${"[0]".repeat(depth)}`,
      );
    }
    for (let i = 0; i < shape[depth]; i++) {
      const at = `${path}[${i}]`;
      if (depth + 1 < shape.length) walk(node[i], depth + 1, at);
      else values.push(leaf(node[i], at, i in node));
    }
  };
  walk(nested, 0, "");
  return { shape, values };
}

// Checks that `length` values fill `shape`.
function checkLength(name, shape, length) {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== length) fail("SHAPE_MISMATCH", `${name} has ${length} values but its shape ${shapeText(shape)} needs ${count}`);
}

const NUMBER_KINDS = [
  "Float32Array",
  "Float64Array",
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
];

/**
 * A tensor argument as { data: Float32Array, shape } (the caller's Float32Array itself when it
 * is a plain one; a copy otherwise). Accepts { data, shape } with data a typed array of numbers
 * or an array of numbers, or nested arrays of numbers.
 */
function toTensor(name, value) {
  if (Array.isArray(value)) {
    const { shape, values } = flattenNested(name, value, (x, at, present) => element(name, at, x, present));
    return { data: Float32Array.from(values), shape };
  }
  if (value === null || typeof value !== "object" || !("data" in value) || !("shape" in value)) {
    fail("BAD_ARGUMENT", `${name} must be { data: Float32Array, shape: number[] } or a nested array of numbers; got ${describe(value)}`);
  }
  const data = value.data;
  const shape = readShape(name, value.shape);
  const typed = readTyped(`${name}.data`, data, NUMBER_KINDS);
  if (typed !== undefined) {
    const { kind, length, view } = typed;
    checkLength(name, shape, length);
    if (kind === "Float32Array") return { data: view, shape };
    // Another kind converts element by element (the typed-array constructor reads a typed array
    // by its slots, never by iterating it).
    const copy = new Float32Array(view);
    for (let i = 0; i < length; i++) {
      if (!Number.isFinite(copy[i]) && Number.isFinite(Number(view[i]))) element(`${name}.data`, `[${i}]`, Number(view[i]), true);
    }
    return { data: copy, shape };
  }
  if (Array.isArray(data)) {
    const length = data.length;
    checkLength(name, shape, length);
    const copy = new Float32Array(length);
    for (let i = 0; i < length; i++) copy[i] = element(`${name}.data`, `[${i}]`, data[i], i in data);
    return { data: copy, shape };
  }
  return fail(
    "BAD_ARGUMENT",
    `${name}.data must be a Float32Array (or another typed array of numbers, or an array of numbers); got ${describe(data)}`,
  );
}

/** A mask: boolean (Uint8Array or nested booleans) or additive (Float32Array or nested numbers). */
function toMask(value) {
  if (Array.isArray(value)) {
    let kind;
    const { shape, values } = flattenNested("mask", value, (x, at, present) => {
      const k = !present ? undefined : typeof x === "boolean" ? "boolean" : typeof x === "number" ? "additive" : undefined;
      if (!k)
        fail(
          "BAD_ARGUMENT",
          `mask${at} must be a boolean or a number; got ${present ? describe(x) : "an empty slot (a hole in a sparse array)"}`,
        );
      if (kind && k !== kind) fail("BAD_ARGUMENT", `mask mixes booleans and numbers (at mask${at})`);
      kind = k;
      return k === "additive" ? element("mask", at, x, true) : x;
    });
    return kind === "boolean"
      ? { kind, data: Uint8Array.from(values, (b) => (b ? 1 : 0)), shape }
      : { kind: "additive", data: Float32Array.from(values), shape };
  }
  if (value !== null && typeof value === "object" && "data" in value && "shape" in value) {
    const shape = readShape("mask", value.shape);
    const typed = readTyped("mask.data", value.data, ["Uint8Array", "Float32Array"]);
    if (typed !== undefined) {
      checkLength("mask", shape, typed.length);
      return { kind: typed.kind === "Uint8Array" ? "boolean" : "additive", data: typed.view, shape };
    }
    const data = value.data;
    fail("BAD_ARGUMENT", `mask.data must be a Uint8Array (1 = may attend) or a Float32Array (added to the scores); got ${describe(data)}`);
  }
  return fail("BAD_ARGUMENT", `mask must be { data: Uint8Array | Float32Array, shape } or a nested array; got ${describe(value)}`);
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

// Option names and their JS types; values, ranges and defaults are the library's.
const ATTENTION_OPTIONS = {
  mask: "any",
  causal: "boolean",
  causalAlign: "string",
  scale: "number",
  returnWeights: "boolean",
  maxElements: "number",
  maxWork: "number",
  streaming: "boolean",
  into: "object",
};
const SELF_ATTENTION_CONFIG = { modelDim: "number", numHeads: "number", seed: "number", init: "string", bias: "boolean" };
const FORWARD_OPTIONS = { causal: "boolean", trace: "boolean" };
const EXPLAIN_OPTIONS = {
  causal: "boolean",
  modelDim: "number",
  numHeads: "number",
  seed: "number",
  init: "string",
  positional: "string",
  maxTokens: "number",
  truncate: "boolean",
  trace: "boolean",
  traceHead: "number",
  into: "object",
};
const WEIGHT_NAMES = ["wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"];

const copyTensor = (t) => ({ data: t.data.slice(), shape: [...t.shape] });
const deepFreeze = (object) => {
  for (const value of Object.values(object)) if (value && typeof value === "object") deepFreeze(value);
  return Object.freeze(object);
};

/** Builds the public API object around an instantiated Embind module. */
export function createLens(core) {
  const described = JSON.parse(core._description());
  const { limits, defaults, choices, errorCodes, traceStages, stage } = deepFreeze(described);
  const slots = stage.slots;

  // Each tensor's slots in the staging header: rank, shape (maxRank slots) and data offset (or,
  // for results, heap address).
  const slotsOf = (name, at) => ({ rank: slots[`${name}Rank`], shape: slots[`${name}Shape`], at: slots[`${name}${at}`] });
  const staged = { q: slotsOf("q", "At"), k: slotsOf("k", "At"), v: slotsOf("v", "At"), mask: slotsOf("mask", "At") };
  const results = { output: slotsOf("output", "Address"), weights: slotsOf("weights", "Address") };
  const checkRank = (name, shape) => {
    if (shape.length > stage.maxRank) {
      fail(
        "SHAPE_MISMATCH",
        `${name} has shape ${shapeText(shape)}, more than the ${stage.maxRank} dimensions the WebAssembly interface passes`,
      );
    }
  };
  const stageShape = (heap, base, at, shape) => {
    heap[base + at.rank] = shape.length;
    for (let i = 0; i < shape.length; i++) heap[base + at.shape + i] = shape[i];
  };
  const resultShape = (heap, base, at) => {
    const shape = [];
    for (let i = 0, rank = heap[base + at.rank]; i < rank; i++) shape.push(heap[base + at.shape + i]);
    return shape;
  };

  function runAttention(q, k, v, options, reference) {
    const o = typedOptions("options", options, ATTENTION_OPTIONS);
    // Caller-provided result arrays: the results are copied into them (memory the caller has
    // already touched, where a fresh 32 MB array costs its page faults).
    const into = o.into === undefined ? {} : typedOptions("into", o.into, { output: "object", weights: "object" });
    // Each given array is written through a plain view of its memory (the boundary rule).
    const intoViews = {};
    for (const key in into) {
      intoViews[key] = readTyped(`into.${key}`, into[key], ["Float32Array"]);
      if (!intoViews[key]) fail("BAD_ARGUMENT", `into.${key} must be a Float32Array; got ${describe(into[key])}`);
    }
    const returnWeights = o.returnWeights ?? defaults.attention.returnWeights;
    if (into.weights && !returnWeights) fail("BAD_ARGUMENT", "into.weights is given but returnWeights is false; set returnWeights: true");
    const qt = toTensor("q", q);
    const kt = toTensor("k", k);
    const vt = toTensor("v", v);
    const mask = o.mask === undefined || o.mask === null ? undefined : toMask(o.mask);
    // Reading k, v and the mask may have run the caller's code (getters), which could have
    // detached q's buffer: check every array still holds what its shape needs.
    for (const [name, t] of [
      ["q", qt],
      ["k", kt],
      ["v", vt],
      ["mask", mask],
    ]) {
      if (t) {
        checkLength(name, t.shape, typedLength(`${name}.data`, t.data, [typedKind(t.data)]));
        checkRank(name, t.shape);
      }
    }
    const align = o.causalAlign ?? defaults.attention.causalAlign;
    const alignIndex = choices.causalAlign.indexOf(align);
    if (alignIndex < 0)
      fail("BAD_ARGUMENT", `causalAlign must be ${choices.causalAlign.map((c) => `"${c}"`).join(" or ")}; got ${describe(align)}`);

    // Stage the call in the wasm heap (bindings.cpp describes the layout): one copy in.
    const floats = [qt.data, kt.data, vt.data];
    if (mask?.kind === "additive") floats.push(mask.data);
    const floatBytes = floats.reduce((n, a) => n + 4 * a.length, 0);
    const dataBytes = floatBytes + (mask?.kind === "boolean" ? mask.data.length : 0);
    const address = core._attentionStage(dataBytes);
    if (address === 0) fail("OUT_OF_MEMORY", `the WebAssembly heap could not grow to hold the inputs (${dataBytes} bytes)`);
    const header = core.HEAPF64;
    const base = address / 8;
    header[base + slots.causal] = (o.causal ?? defaults.attention.causal) ? 1 : 0;
    header[base + slots.causalAlign] = alignIndex;
    header[base + slots.returnWeights] = returnWeights ? 1 : 0;
    header[base + slots.streaming] = (o.streaming ?? defaults.attention.streaming) ? 1 : 0;
    header[base + slots.reference] = reference ? 1 : 0;
    header[base + slots.scale] = o.scale ?? NaN;
    header[base + slots.maxElements] = o.maxElements ?? defaults.attention.maxElements;
    header[base + slots.maxWork] = o.maxWork ?? defaults.attention.maxWork;
    header[base + slots.maskKind] = stage.maskKinds[mask ? mask.kind : "none"];
    stageShape(header, base, staged.q, qt.shape);
    stageShape(header, base, staged.k, kt.shape);
    stageShape(header, base, staged.v, vt.shape);
    stageShape(header, base, staged.mask, mask ? mask.shape : []);
    let at = stage.headerBytes;
    for (const [name, data] of [
      ["q", qt.data],
      ["k", kt.data],
      ["v", vt.data],
      ["mask", mask?.kind === "additive" ? mask.data : undefined],
    ]) {
      if (!data) continue;
      header[base + staged[name].at] = at;
      core.HEAPF32.set(data, (address + at) / 4);
      at += 4 * data.length;
    }
    if (mask?.kind === "boolean") {
      header[base + slots.maskAt] = at;
      core.HEAPU8.set(mask.data, address + at);
    }

    const code = core._attentionRun();
    try {
      if (code >= 0) throw new AttnLensError(errorCodes[code].name, core._attentionError());
      // One copy out; the heap may have grown during the call, so its views are taken afresh.
      const heap = core.HEAPF64;
      const copyOut = (key) => {
        const at = results[key];
        const shape = resultShape(heap, base, at);
        const from = heap[base + at.at] / 4;
        const n = shape.reduce((a, b) => a * b, 1);
        const given = intoViews[key];
        if (!given) return { data: core.HEAPF32.slice(from, from + n), shape };
        if (given.length !== n) fail("BAD_ARGUMENT", `into.${key} has ${given.length} elements; the ${key} ${shapeText(shape)} need ${n}`);
        given.view.set(core.HEAPF32.subarray(from, from + n));
        return { data: into[key], shape };
      };
      const result = { output: copyOut("output") };
      if (heap[base + results.weights.rank] > 0) result.weights = copyOut("weights");
      return result;
    } finally {
      core._attentionRelease();
    }
  }
  const attention = (q, k, v, options) => runAttention(q, k, v, options, false);
  const attentionReference = (q, k, v, options) => runAttention(q, k, v, options, true);

  function selfAttention(config) {
    const { weights: givenWeights, ...given } = checkOptions("config", config, [...Object.keys(SELF_ATTENTION_CONFIG), "weights"]);
    const c = typedOptions("config", given, SELF_ATTENTION_CONFIG);
    if (givenWeights !== undefined) {
      const w = checkOptions("weights", givenWeights, WEIGHT_NAMES);
      c.weights = {};
      for (const name of WEIGHT_NAMES) {
        if (w[name] === undefined) {
          if (name.startsWith("w")) fail("BAD_ARGUMENT", `weights.${name} is missing; give all of wq, wk, wv, wo`);
          continue;
        }
        c.weights[name] = toTensor(`weights.${name}`, w[name]);
      }
    }
    // The library validates and copies the weights; the layer keeps that copy, never the
    // caller's arrays, and hands out copies of it.
    const layer = unwrap(core._selfAttentionCreate(c));
    const { modelDim, numHeads } = layer;
    const weights = layer.weights;
    return Object.freeze({
      modelDim,
      numHeads,
      headDim: modelDim / numHeads,
      /** A copy of the layer's weights: changing it does not change the layer. */
      get weights() {
        return Object.fromEntries(Object.entries(weights).map(([name, t]) => [name, copyTensor(t)]));
      },
      forward(x, options) {
        const o = typedOptions("options", options, FORWARD_OPTIONS);
        const xt = toTensor("x", x);
        return unwrap(core._selfAttentionForward(modelDim, numHeads, weights, xt, o));
      },
    });
  }

  // The arrays of an earlier explanation that the bindings may write into: only plain
  // Float32Arrays (isPlainFloat32), read once here into a structure of plain objects, so no
  // getter of the caller's runs once wasm is entered. Any other array is not reused.
  const reusable = (t) => (t !== null && typeof t === "object" && isPlainFloat32(t.data) ? { data: t.data } : undefined);
  function reusableArrays(into) {
    const out = { weights: reusable(into.weights), output: reusable(into.output), meanWeights: reusable(into.meanWeights) };
    const trace = into.trace;
    if (trace !== null && typeof trace === "object") {
      out.trace = {};
      for (const { name } of traceStages) out.trace[name] = reusable(trace[name]);
    }
    return out;
  }

  function explain(sentence, options) {
    const o = typedOptions("options", options, EXPLAIN_OPTIONS);
    const isText = typeof sentence === "string";
    const bytes = isText ? undefined : readTyped("sentence", sentence, ["Uint8Array"]);
    const byteLength = bytes?.length;
    if (!isText && byteLength === undefined) {
      fail("BAD_ARGUMENT", `sentence must be a string (or UTF-8 bytes in a Uint8Array); got ${describe(sentence)}`);
    }
    // Every UTF-16 unit takes at least one UTF-8 byte: a longer text is over the library's limit
    // before it is encoded into (and grows) the wasm heap.
    const units = isText ? sentence.length : byteLength;
    if (units > limits.maxTextBytes) {
      fail(
        "TOO_LARGE",
        `sentence has ${isText ? `${units} UTF-16 code units, so at least ${units} bytes of UTF-8` : `${units} bytes`}, over the limit of ${limits.maxTextBytes} bytes`,
      );
    }
    if (isText) {
      const lone = sentence.search(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      if (lone >= 0) {
        fail("INVALID_UTF8", `sentence holds a lone UTF-16 surrogate at index ${lone}, which has no UTF-8 encoding`);
      }
    }
    if (o.into !== undefined) {
      if (!isExplanation(o.into)) {
        fail("BAD_ARGUMENT", `into must be an earlier explain() result, whose arrays this call reuses; got ${describe(o.into)}`);
      }
      o.into = reusableArrays(o.into);
    }
    const ex = unwrap(core._explain(isText ? sentence : bytes.view, o));
    if (isText) utf16Offsets(sentence, ex.tokens);
    return ex;
  }

  return Object.freeze({
    version: core._version,
    limits,
    defaults,
    choices,
    errorCodes,
    traceStages,
    attention,
    attentionReference,
    selfAttention,
    explain,
    /** Diagnostics: the wasm heap's size and the bytes malloc holds (for leak checks). */
    memory: () => ({ heapBytes: core.HEAPU8.length, usedBytes: core._heapUsed() }),
  });
}

// The smallest module that uses relaxed SIMD: (func (param v128 v128 v128) (result v128)
// (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2))). WebAssembly.validate()
// accepts it only where relaxed SIMD runs: Chromium >= 114, Node >= 22, or Node 20 with
// --experimental-wasm-relaxed-simd.
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, 0x03, 0x02, 0x01, 0x00, 0x0a,
  0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);

/** True when this JS engine runs relaxed SIMD (so attnlens-relaxed.wasm can load). */
export function relaxedSimdSupported() {
  return WebAssembly.validate(RELAXED_SIMD_PROBE);
}

const SIMD_CHOICES = ["auto", "relaxed", "baseline"];

function checkLoadOptions(options) {
  const o = checkOptions("options", options, ["wasmBinary", "wasmUrl", "simd"]);
  if (o.wasmBinary !== undefined && !(o.wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(o.wasmBinary))) {
    fail("BAD_ARGUMENT", `wasmBinary must be an ArrayBuffer or a Uint8Array; got ${describe(o.wasmBinary)}`);
  }
  if (o.wasmUrl !== undefined && typeof o.wasmUrl !== "string" && !(o.wasmUrl instanceof URL)) {
    fail("BAD_ARGUMENT", `wasmUrl must be a string or a URL; got ${describe(o.wasmUrl)}`);
  }
  // simd is the JS loader's own option (which file to fetch): its choices live here.
  const simd = o.simd ?? "auto";
  if (!SIMD_CHOICES.includes(simd)) {
    fail("BAD_ARGUMENT", `simd must be ${SIMD_CHOICES.map((c) => `"${c}"`).join(" or ")}; got ${describe(o.simd)}`);
  }
  if (o.simd !== undefined && (o.wasmBinary !== undefined || o.wasmUrl !== undefined)) {
    fail("BAD_ARGUMENT", "simd picks one of the package's modules; it cannot be combined with wasmBinary or wasmUrl");
  }
  if (simd === "relaxed" && !relaxedSimdSupported()) {
    fail(
      "BAD_ARGUMENT",
      'simd is "relaxed" but this JS engine does not run relaxed SIMD (it needs Chromium >= 114, ' +
        'Node >= 22, or Node 20 with --experimental-wasm-relaxed-simd); use "auto" to fall back',
    );
  }
  return { ...o, simd };
}

/**
 * Reads a .wasm over HTTP(S) with fetch(): the browser entry's and the web page's way to obtain
 * the module's bytes.
 */
export async function fetchWasm(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnlens: could not load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

/**
 * Makes loadAttnLens() for one environment. `readWasm(url)` returns a module's bytes. `urls`
 * says where the package's two modules sit: `{ baseline, relaxed }` (SIMD128, and relaxed SIMD
 * with fused multiply-adds), or one URL for the baseline with attnlens-relaxed.wasm beside it.
 * `simd: "auto"` (the default) loads the relaxed module where the engine validates the probe
 * above, else the baseline; "relaxed" and "baseline" force one. Without wasmBinary or wasmUrl,
 * one instance per module is created and shared by every caller; a failed load is not cached,
 * so it can be retried. The lens says which module it runs: `simd` is "relaxed" or "baseline",
 * or null when the caller supplied the module.
 *
 * `model` (optional) gives the model module: `{ createCore: () => Promise<factory>, urls:
 * { baseline, relaxed } }`. Its code, its loader and model.js are fetched on the first
 * lens.loadModel(), createModel() or loadTokenizer(), and instantiated once per SIMD variant
 * (the lens's own, or "auto" for a lens built from wasmBinary / wasmUrl). Without it those
 * methods reject: this build has no model module. `model.threads` (optional) is a threaded
 * model module, `{ usable(), createCore, wasm, load(threaded, single), said }`, loaded instead of
 * the relaxed one where usable() says it may: load() gets the two loads as functions and decides
 * (falling back to the single-threaded one when the threaded one fails), and `said` is merged
 * into modelMemory()'s answer (web/element/threaded-model.js).
 */
export function makeLoader(createCore, readWasm, urls, model) {
  const modules = urls instanceof URL ? { baseline: urls, relaxed: new URL("attnlens-relaxed.wasm", urls) } : urls;
  const shared = new Map();
  const models = new Map();
  const modelApi = (simd, mayThread = true) => {
    let variant = simd ?? (relaxedSimdSupported() ? "relaxed" : "baseline");
    if (!model) {
      return Promise.reject(new AttnLensError("BAD_ARGUMENT", "this build of attnlens has no model module (makeLoader was given none)"));
    }
    if (variant === "relaxed" && mayThread && model.threads?.usable()) variant = "threads";
    if (!models.has(variant)) {
      const threads = variant === "threads" ? model.threads : null;
      const load = async () => {
        const [{ createModelApi }, createModelCore, bytes] = await Promise.all([
          import("./model.js"),
          (threads ?? model).createCore(),
          readWasm(threads ? threads.wasm : model.urls[variant]),
        ]);
        return createModelApi(await createModelCore({ wasmBinary: bytes }));
      };
      const loading = threads ? threads.load(load, () => modelApi("relaxed", false)) : load();
      models.set(variant, loading);
      loading.catch(() => models.delete(variant));
    }
    return models.get(variant);
  };
  const instantiate = async (bytes, simd) => {
    const lens = createLens(await createCore({ wasmBinary: bytes }));
    return Object.freeze({
      ...lens,
      simd,
      /** Loads a GPT-2 checkpoint from its files (see attnlens.d.ts). */
      loadModel: async (options) => (await modelApi(simd)).loadModel(options),
      /** A GPT-2 model with GPT-2's random initialisation, for training. */
      createModel: async (options) => (await modelApi(simd)).createModel(options),
      /** A GPT-2 byte-level BPE tokenizer alone. */
      loadTokenizer: async (options) => (await modelApi(simd)).loadTokenizer(options),
      /** The model families loadModel reads (loads the model module). */
      modelFamilies: async () => (await modelApi(simd)).families,
      /** Diagnostics of the model module (loads it): its heap size and the bytes malloc holds. */
      modelMemory: async () => ({ ...(await modelApi(simd)).memory(), ...model?.threads?.said }),
    });
  };
  return function loadAttnLens(options) {
    let o;
    try {
      o = checkLoadOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    if (o.wasmBinary !== undefined || o.wasmUrl !== undefined) {
      return (async () => instantiate(o.wasmBinary ?? (await readWasm(o.wasmUrl)), null))();
    }
    const simd = o.simd === "auto" ? (relaxedSimdSupported() ? "relaxed" : "baseline") : o.simd;
    if (!shared.has(simd)) {
      const loading = (async () => instantiate(await readWasm(modules[simd]), simd))();
      shared.set(simd, loading);
      loading.catch(() => shared.delete(simd));
    }
    return shared.get(simd);
  };
}
