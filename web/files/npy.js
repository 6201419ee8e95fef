// NumPy .npy (format versions 1, 2 and 3, as numpy.lib.format writes them): the magic
// "\x93NUMPY", a major and minor version byte, the header length (uint16 LE in v1, uint32 LE in
// v2/v3), then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (…), }
// padded with spaces and "\n" to a multiple of 64 bytes (16 before numpy 1.16), then the data.
// Little-endian float32, float16 and float64 are read; Fortran order is transposed to C order.
import { ITEM_BYTES, bad, checkedSize, decode, normalizeShape } from "./tensor.js";

export const isNpy = (bytes) => bytes.length >= 6 && bytes[0] === 0x93 && String.fromCharCode(...bytes.subarray(1, 6)) === "NUMPY";

const DTYPES = { "<f4": "f32", "<f2": "f16", "<f8": "f64" };
// numpy (>= 1.24) refuses to read a header over 10 000 bytes unless told to: so do we.
const MAX_HEADER_BYTES = 10000;

/**
 * The header's Python dict literal, read in one pass: { key: value } for string keys and values
 * that are strings, True/False or tuples of non-negative integers; undefined for anything else.
 */
function parseHeader(text) {
  let at = 0;
  const space = () => {
    while (at < text.length && /\s/.test(text[at])) at++;
  };
  const take = (ch) => {
    space();
    if (text[at] !== ch) return false;
    at++;
    return true;
  };
  const string = () => {
    space();
    const quote = text[at];
    if (quote !== "'" && quote !== '"') return undefined;
    const end = text.indexOf(quote, at + 1);
    if (end < 0) return undefined;
    const value = text.slice(at + 1, end);
    at = end + 1;
    return value;
  };
  const value = () => {
    space();
    if (text.startsWith("True", at) || text.startsWith("False", at)) {
      const v = text[at] === "T";
      at += v ? 4 : 5;
      return v;
    }
    if (text[at] === "(") {
      at++;
      const sizes = [];
      for (;;) {
        if (take(")")) return sizes;
        space();
        const digits = /^\d+/.exec(text.slice(at, at + 24))?.[0];
        if (digits === undefined) return undefined;
        at += digits.length;
        sizes.push(Number(digits));
        if (!take(",")) return take(")") ? sizes : undefined;
      }
    }
    return string();
  };
  if (!take("{")) return undefined;
  const out = {};
  for (;;) {
    if (take("}")) break;
    const key = string();
    if (key === undefined || !take(":")) return undefined;
    const v = value();
    if (v === undefined) return undefined;
    out[key] = v;
    if (!take(",")) {
      if (!take("}")) return undefined;
      break;
    }
  }
  space();
  return at === text.length ? out : undefined;
}

/** The same array in C order (last axis fastest) from its Fortran-order data (first axis fastest). */
function fortranToC(data, shape) {
  const n = shape.length;
  const out = new Float32Array(data.length);
  // strides of the Fortran layout: axis 0 varies fastest.
  const strides = shape.map((_, k) => shape.slice(0, k).reduce((a, b) => a * b, 1));
  const index = new Array(n).fill(0);
  for (let c = 0; c < out.length; c++) {
    let f = 0;
    for (let k = 0; k < n; k++) f += index[k] * strides[k];
    out[c] = data[f];
    for (let k = n - 1; k >= 0; k--) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

/** The tensor in a .npy file: { data: Float32Array (C order), shape, dtype }. */
export function readNpy(bytes, file) {
  if (!isNpy(bytes)) throw bad(`${file} is not a .npy file (it does not start with \\x93NUMPY)`);
  if (bytes.length < 10) throw bad(`${file}: the .npy header is cut off`);
  const major = bytes[6];
  if (![1, 2, 3].includes(major)) throw bad(`${file}: .npy format version ${major}.${bytes[7]}; versions 1, 2 and 3 are read`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = major === 1 ? 10 : 12;
  if (bytes.length < start) throw bad(`${file}: the .npy header is cut off`);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (start + headerLength > bytes.length) throw bad(`${file}: the .npy header says ${headerLength} bytes; the file ends before`);
  if (headerLength > MAX_HEADER_BYTES)
    throw bad(`${file}: the .npy header says ${headerLength} bytes; numpy writes a few hundred, and at most ${MAX_HEADER_BYTES} are read`);
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(bytes.subarray(start, start + headerLength));
  const dict = parseHeader(header);
  const descr = dict?.descr;
  const fortran = dict?.fortran_order;
  const shape = dict?.shape;
  if (typeof descr !== "string" || typeof fortran !== "boolean" || !Array.isArray(shape))
    throw bad(`${file}: the .npy header is not a dict with 'descr', 'fortran_order' and 'shape': ${header.slice(0, 80)}`);
  const dtype = DTYPES[descr];
  if (!dtype)
    throw bad(`${file}: .npy dtype '${descr}'; little-endian float32 '<f4', float16 '<f2' or float64 '<f8' is read (np.asarray(a, "<f4"))`);
  const count = checkedSize(file, shape);
  normalizeShape(file, shape);
  const offset = start + headerLength;
  const expected = count * ITEM_BYTES[dtype];
  if (bytes.length - offset !== expected)
    throw bad(`${file}: shape (${shape.join(", ")}) of ${descr} needs ${expected} bytes of data; the file has ${bytes.length - offset}`);
  const data = decode(bytes, offset, count, dtype);
  return { data: fortran ? fortranToC(data, shape) : data, shape, dtype };
}
