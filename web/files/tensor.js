// From a decoded attention tensor to FigureData (figure-data.js): the checks every file format
// shares. A problem that makes the weights meaningless (NaN, a negative weight, a shape that is
// not attention, a token count that does not match) is a BadFileError; rows that do not sum to 1
// are a warning in data.warnings, and the figure is still drawn (a file may hold a pruned or
// renormalised head on purpose, and the reader sees the message next to it).

/** Largest file read (bytes): checked from the file's size or Content-Length before reading. */
export const MAX_FILE_BYTES = 128 * 1024 * 1024;
/** Largest JSON text parsed: nested numbers cost ~10–20 bytes and several objects each. */
export const MAX_JSON_BYTES = 32 * 1024 * 1024;
/** Most weights in one file (layers × heads × L × L), 128 MB as Float32Array; checked from headers before decoding. */
export const MAX_WEIGHTS = 2 ** 25;
/** Most tokens (L), the library's own limit. */
export const MAX_TOKENS = 1024;

/** A file that cannot be shown, with a message that names the file and what is wrong. */
export class BadFileError extends Error {
  constructor(message) {
    super(message);
    this.name = "BadFileError";
    this.code = "BAD_FILE";
  }
}

export const bad = (message) => new BadFileError(message);

/** A shape must be a list of whole sizes: ["1,1", 2, 2] joins like [1, 1, 2, 2] but is not one. */
export function requireSizes(file, shape, what = "shape") {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
    throw bad(`${file}: ${what} ${JSON.stringify(shape)?.slice(0, 80)} is not a list of sizes (whole numbers, 0 or more)`);
}

/** Product of a shape, refusing (before any allocation) one over MAX_WEIGHTS. */
export function checkedSize(file, shape) {
  requireSizes(file, shape);
  const n = shape.reduce((a, b) => a * b, 1);
  if (n > MAX_WEIGHTS)
    throw bad(
      `${file}: shape [${shape.join(", ")}] holds ${n.toLocaleString("en")} weights; at most ${MAX_WEIGHTS.toLocaleString("en")} are shown (fewer layers or tokens fit)`,
    );
  return n;
}

const f16Table = (() => {
  // Every half-precision bit pattern as a float (65 536 entries, built once).
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    t[h] = exp === 0 ? sign * frac * 2 ** -24 : exp === 31 ? (frac ? NaN : sign * Infinity) : sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return t;
})();

/**
 * Decodes `count` little-endian values of `dtype` ("f32", "f64", "f16", "bf16", "u8") starting at
 * byte `offset` of `bytes` (a Uint8Array) into a Float32Array. u8 means weight = byte / 255.
 */
export function decode(bytes, offset, count, dtype) {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
  const out = new Float32Array(count);
  if (dtype === "f32") for (let k = 0; k < count; k++) out[k] = view.getFloat32(4 * k, true);
  else if (dtype === "f64") for (let k = 0; k < count; k++) out[k] = view.getFloat64(8 * k, true);
  else if (dtype === "f16") for (let k = 0; k < count; k++) out[k] = f16Table[view.getUint16(2 * k, true)];
  else if (dtype === "bf16") {
    // bfloat16 is the upper half of a float32.
    const word = new DataView(new ArrayBuffer(4));
    for (let k = 0; k < count; k++) {
      word.setUint32(0, view.getUint16(2 * k, true) << 16);
      out[k] = word.getFloat32(0);
    }
  } else if (dtype === "u8") for (let k = 0; k < count; k++) out[k] = bytes[offset + k] / 255;
  else throw new Error(`decode: unknown dtype ${dtype}`);
  return out;
}

export const ITEM_BYTES = { f32: 4, f64: 8, f16: 2, bf16: 2, u8: 1 };

/**
 * How far a stored row of L weights may sum from 1, from how the weights were stored:
 * - the producer's float32 softmax: a row sum of L rounded terms and a division, (L + 1)·u with
 *   u = 2^-24 (recursive summation bound), in every case below;
 * - f32/f64 storage adds nothing more (f64 is exact for a float32, f32 is where it came from);
 * - f16 storage rounds each weight to 11 significant bits: relative 2^-11 of a row summing to 1,
 *   plus, below 2^-14 (subnormals), an absolute 2^-25 per weight;
 * - bf16 storage: 8 significant bits, relative 2^-8 (no subnormal floor worth counting: its
 *   range is float32's);
 * - u8 storage (weight = byte / 255): each weight within 0.5 / 255, so L · 0.5 / 255;
 * - JSON numbers written with d >= 1 decimals: each within h = 0.5·10^-d, so min(L · h, 1) (below);
 *   whole numbers only are hard attention written exactly.
 */
export function rowTolerance(storage, L, decimals = Infinity) {
  const producer = (L + 1) * 2 ** -24;
  if (storage === "f16") return producer + 2 ** -11 + L * 2 ** -25;
  if (storage === "bf16") return producer + 2 ** -8;
  if (storage === "u8") return producer + (L * 0.5) / 255;
  // Whole numbers only (decimals 0): attention weights lie in [0, 1], so a file of 0s and 1s is
  // hard attention written exactly, not weights rounded to no decimals at all.
  if (storage === "json" && Number.isFinite(decimals) && decimals > 0) {
    // Each rounded weight moves by at most h = 0.5·10^-d. Upwards only a weight that rounds to at
    // least 10^-d can move, i.e. one whose true value is at least h; a row of true sum 1 has at
    // most 1/h of those. Downwards a row loses at most its whole sum of 1 or L·h.
    const h = 0.5 * 10 ** -decimals;
    return producer + Math.min(L, 1 / h) * h;
  }
  return producer;
}

/**
 * The axis of a 5-D shape that is a batch of one: 0 ([1, layers, H, L, L]) or 1 ([layers, 1, H,
 * L, L], as torch.stack(outputs.attentions) saves a model's attentions); -1 for any other shape.
 * Either way the data's order is [layers, H, L, L]'s.
 */
export function batchAxis(shape) {
  if (shape.length !== 5) return -1;
  return shape[0] === 1 ? 0 : shape[1] === 1 ? 1 : -1;
}

/**
 * Drops a batch dimension of size 1 (batchAxis) and brings [L, L] and [H, L, L] to
 * [layers, H, L, L]. Any other shape is an error naming what is accepted.
 */
export function normalizeShape(file, shape) {
  requireSizes(file, shape);
  // [1, H, L, L] reads the same as batch or layer.
  const axis = batchAxis(shape);
  const s = axis >= 0 ? shape.filter((_, i) => i !== axis) : [...shape];
  const accepted = "[L, L], [heads, L, L] or [layers, heads, L, L] (a batch of 1, first or second, is dropped)";
  if (s.length < 2 || s.length > 4) throw bad(`${file}: attention of shape [${shape.join(", ")}]; expected ${accepted}`);
  while (s.length < 4) s.unshift(1);
  const [layers, heads, L, S] = s;
  if (L !== S)
    throw bad(
      `${file}: the last two sizes of [${shape.join(", ")}] differ (${L} queries, ${S} keys); self-attention is L × L, ${accepted}`,
    );
  if (L === 0 || heads === 0 || layers === 0) throw bad(`${file}: attention of shape [${shape.join(", ")}] is empty`);
  if (L > MAX_TOKENS) throw bad(`${file}: ${L} tokens; at most ${MAX_TOKENS} are shown`);
  return [layers, heads, L, L];
}

const names = (given, n, what, file) => {
  if (given === undefined || given === null) return undefined;
  if (!Array.isArray(given) || given.length !== n || !given.every((x) => typeof x === "string"))
    throw bad(`${file}: ${what} must be ${n} strings, one per ${what === "layerNames" ? "layer" : "head"}`);
  return given;
};

/**
 * FigureData from a flat Float32Array of weights and its shape, after every check.
 * @param {object} p
 * @param {string} p.file           the file's name, for messages
 * @param {Float32Array} p.data     the weights, row-major
 * @param {number[]} p.shape        as stored (normalizeShape accepts)
 * @param {string[]|null} p.tokens  token texts, or null for numbered placeholders (with a note)
 * @param {string} p.storage        "f32", "f64", "f16", "bf16", "u8" or "json" (the row-sum tolerance)
 * @param {number} [p.decimals]     for "json": the decimals the numbers were written with
 * @param {boolean} [p.causal]      given by the file; detected when absent
 */
export function toFigureData({ file, data, shape, tokens, storage, decimals, causal, title, layerNames, headNames, format }) {
  const [layers, heads, L] = normalizeShape(file, shape);
  const warnings = [];
  if (batchAxis(shape) === 1)
    warnings.push(
      `${file}: shape [${shape.join(", ")}] read as [layers, batch, heads, L, L]; its batch of 1 (the second axis) was dropped.`,
    );
  if (tokens === null || tokens === undefined) {
    tokens = Array.from({ length: L }, (_, i) => `#${i + 1}`);
    warnings.push(`${file} has no tokens: they are numbered #1 to #${L} (give a tokens file to see the words).`);
  }
  if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === "string")) throw bad(`${file}: tokens must be a list of strings`);
  if (tokens.length !== L) throw bad(`${file}: ${tokens.length} tokens for attention over ${L} positions (shape [${shape.join(", ")}])`);
  let worstRow = null;
  let worstDiff = 0;
  let above = 0;
  const tolerance = rowTolerance(storage, L, decimals);
  for (let m = 0; m < layers * heads; m++) {
    for (let i = 0; i < L; i++) {
      const row = m * L * L + i * L;
      let sum = 0;
      for (let j = 0; j < L; j++) {
        const w = data[row + j];
        if (!Number.isFinite(w)) throw bad(`${file}: weight ${where(m, heads, i, j)} is ${w}; weights must be finite`);
        if (w < 0) throw bad(`${file}: weight ${where(m, heads, i, j)} is ${shortFloat(w)}; attention weights are never negative`);
        if (j > i && w !== 0) above++;
        sum += w;
      }
      const diff = Math.abs(sum - 1);
      if (diff > worstDiff) {
        worstDiff = diff;
        worstRow = { m, i, sum };
      }
    }
  }
  if (worstDiff > tolerance) {
    const { m, i, sum } = worstRow;
    warnings.push(
      `${file}: rows should sum to 1; the row of query ${i + 1} in ${where(m, heads)} sums to ${sum.toPrecision(6)} (allowed ±${tolerance.toPrecision(2)} for ${storage} weights).`,
    );
  }
  if (causal === undefined || causal === null) causal = above === 0;
  else if (typeof causal !== "boolean") throw bad(`${file}: causal must be true or false`);
  else if (causal && above)
    warnings.push(`${file} says causal, but ${above} weights above the diagonal are not 0; they are drawn as masked.`);
  return {
    tokens: tokens.map((text) => ({ text })),
    weights: { data, shape: [layers, heads, L, L] },
    causal,
    title: typeof title === "string" && title ? title : file,
    layerNames: names(layerNames, layers, "layerNames", file),
    headNames: names(headNames, heads, "headNames", file),
    warnings,
    // Whether every row sums to 1 within the storage's rounding (the heatmap's legend says so).
    rowsSumToOne: worstDiff <= tolerance,
    source: { file, format, storage },
  };
}

/** A weight in 7 significant digits, float32's precision (-0.3, not -0.30000001192092896). */
const shortFloat = (w) => String(Number(w.toPrecision(7)));

/** "layer 2, head 3, row 4, column 5" (1-based) for matrix m = layer·H + head. */
function where(m, heads, i, j) {
  const at = `layer ${Math.floor(m / heads) + 1}, head ${(m % heads) + 1}`;
  return i === undefined ? at : `[${at}, query ${i + 1}, key ${j + 1}]`;
}
