// The model module's argument readers (wasm/model.js): files, texts and token ids as they
// cross into wasm (the boundary rule of boundary.js, readTyped), byte-to-UTF-16 offset maps
// for token lists, and top-k selection over logits. No state; nothing here calls wasm.
import { describe, fail, readTyped, typedKind } from "./boundary.js";

const INT_KINDS = ["Int32Array", "Int16Array", "Int8Array", "Uint16Array", "Uint8Array", "Uint8ClampedArray", "Uint32Array"];
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// ignoreBOM: a leading U+FEFF is text (decode(encode(text)) gives it back), not a byte-order mark.
export const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
export const encoder = new TextEncoder();

/**
 * Why a folder without model.safetensors cannot load, when its names say: a sharded checkpoint
 * (an index and model-0000N-of-0000M.safetensors) or weights in a format attnlens does not read.
 * Null when they say nothing. Shared by loadModel() and the element's folder picker.
 */
export function unreadWeights(names) {
  const sharded = names.find((n) => /^model\.safetensors\.index\.json$|^model-\d+-of-\d+\.safetensors$/.test(n));
  if (sharded)
    return (
      `${sharded}: sharded checkpoints (the weights split over model-0000N-of-0000M.safetensors and an index) are not loaded yet; ` +
      `save the model as one model.safetensors (docs/files.md, "A folder as downloaded")`
    );
  const other = names.find((n) => /^(pytorch_model.*\.bin|tf_model\.h5|flax_model\.msgpack|model\.onnx|.*\.gguf)$/.test(n));
  if (other)
    return (
      `model.safetensors: missing; the folder's weights are in ${other}, a format attnlens does not read: ` +
      `save them as model.safetensors (docs/files.md, "A folder as downloaded")`
    );
  return null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// A text file's contents (`label` names the argument): a string without lone surrogates (which
// have no UTF-8 form: the bindings' encoder would swallow the next character), or its UTF-8
// bytes in a Uint8Array or an ArrayBuffer, as a plain view (readTyped).
export function fileText(label, value) {
  if (typeof value === "string") {
    const lone = value.search(LONE_SURROGATE);
    if (lone >= 0) fail("INVALID_UTF8", `${label} holds a lone UTF-16 surrogate at index ${lone}, which has no UTF-8 encoding`);
    return value;
  }
  return fileBytes(label, value, "a string or a Uint8Array of UTF-8 text");
}

// A file's bytes (a Uint8Array or an ArrayBuffer) as a plain Uint8Array view of them.
export function fileBytes(label, value, what = "the file's bytes (a Uint8Array or an ArrayBuffer)") {
  const typed = readTyped(label, value instanceof ArrayBuffer ? new Uint8Array(value) : value, ["Uint8Array"]);
  if (typed === undefined) fail("BAD_ARGUMENT", `${label} must be ${what}; got ${describe(value)}`);
  return typed.view;
}

export const FILE_BYTES_OR_BLOB = "the file's bytes (a Uint8Array or an ArrayBuffer) or a Blob (a File)";

/** A Blob or File (by its methods: one from another window is not an instance of this one's Blob). */
export const isBlob = (value) =>
  value !== null &&
  typeof value === "object" &&
  typeof value.arrayBuffer === "function" &&
  typeof value.slice === "function" &&
  Number.isSafeInteger(value.size);

/** Bytes [at, end) of a file's bytes, named if the caller's buffer was detached or shrunk meanwhile. */
export function bytesChunk(bytes, at, end, label) {
  try {
    return new Uint8Array(bytes.buffer, bytes.byteOffset + at, end - at);
  } catch {
    fail(
      "BAD_ARGUMENT",
      `${label}'s ArrayBuffer was detached or shrunk while it was being read; keep it unchanged until loadModel resolves`,
    );
  }
}

/** Bytes [at, end) of a Blob, named if the file cannot be read or changed meanwhile. */
export async function blobChunk(blob, at, end, label) {
  let chunk;
  try {
    chunk = new Uint8Array(await blob.slice(at, end).arrayBuffer());
  } catch (error) {
    fail(
      "BAD_FILE",
      `${label}: bytes ${at} to ${end} of the file could not be read (${error?.message ?? error}); was it changed or removed while loading?`,
    );
  }
  if (chunk.length !== end - at)
    fail("BAD_FILE", `${label}: the file changed while it was read (${chunk.length} bytes at ${at} where ${end - at} were expected)`);
  return chunk;
}

/** Checks a text argument: a string without lone surrogates, within the tokenizer's limit. */
export function checkText(name, text, limits) {
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
export function toIds(name, value) {
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
export const NOT_A_START = 0xffffffff;
export function utf16AtByte(text, byteCount) {
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

/**
 * The k largest entries of `row` (a Float32Array of logits) as ids, largest first, ties to the
 * smaller id: a min-heap of k (O(V log k)) whose root is the weakest kept.
 */
export function topIds(row, k) {
  const top = Math.min(k, row.length);
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
  for (let v = 0; v < row.length; v++) {
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
  return heap.sort((a, b) => (weaker(a, b) ? 1 : weaker(b, a) ? -1 : 0));
}

/** Softmax probabilities of `ids` within `row`: exp(x - max) / sum, in float64. */
export function probabilities(row, ids) {
  let max = -Infinity;
  for (let v = 0; v < row.length; v++) if (row[v] > max) max = row[v];
  let sum = 0;
  for (let v = 0; v < row.length; v++) sum += Math.exp(row[v] - max);
  return ids.map((v) => Math.exp(row[v] - max) / sum);
}
