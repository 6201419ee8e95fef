// NumPy .npy (format versions 1, 2 and 3, as numpy.lib.format writes them): the magic
// "\x93NUMPY", a major and minor version byte, the header length (uint16 LE in v1, uint32 LE in
// v2/v3), then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (…), }
// padded with spaces and "\n" to a multiple of 64 bytes (16 before numpy 1.16), then the data.
// Little-endian float32, float16 and float64 are read; Fortran order is transposed to C order.
import { ITEM_BYTES, bad, checkedSize, decode, normalizeShape } from "./tensor.js";

export const isNpy = (bytes) => bytes.length >= 6 && bytes[0] === 0x93 && String.fromCharCode(...bytes.subarray(1, 6)) === "NUMPY";

const DTYPES = { "<f4": "f32", "<f2": "f16", "<f8": "f64" };

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
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(bytes.subarray(start, start + headerLength));
  const descr = header.match(/'descr'\s*:\s*'([^']*)'/)?.[1];
  const fortran = header.match(/'fortran_order'\s*:\s*(True|False)/)?.[1];
  const shapeText = header.match(/'shape'\s*:\s*\(([^)]*)\)/)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined)
    throw bad(`${file}: the .npy header is not a dict with 'descr', 'fortran_order' and 'shape': ${header.slice(0, 80)}`);
  const dtype = DTYPES[descr];
  if (!dtype)
    throw bad(`${file}: .npy dtype '${descr}'; little-endian float32 '<f4', float16 '<f2' or float64 '<f8' is read (np.asarray(a, "<f4"))`);
  const parts = shapeText.split(",").map((s) => s.trim());
  if (parts.at(-1) === "") parts.pop();
  if (!parts.every((p) => /^\d+$/.test(p))) throw bad(`${file}: the .npy shape (${shapeText}) is not a tuple of sizes`);
  const shape = parts.map(Number);
  const count = checkedSize(file, shape);
  normalizeShape(file, shape);
  const offset = start + headerLength;
  const expected = count * ITEM_BYTES[dtype];
  if (bytes.length - offset !== expected)
    throw bad(`${file}: shape (${shape.join(", ")}) of ${descr} needs ${expected} bytes of data; the file has ${bytes.length - offset}`);
  const data = decode(bytes, offset, count, dtype);
  return { data: fortran === "True" ? fortranToC(data, shape) : data, shape, dtype };
}
