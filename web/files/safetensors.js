// .safetensors (huggingface/safetensors): an unsigned 64-bit little-endian header length N, N
// bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__"?:
// {string: string}}, then the tensors' bytes, offsets relative to the end of the header.
// One attention tensor of F32, F16, BF16 or F64 is read; tokens are in the metadata as
// {"tokens": "<a JSON list of strings>"} (metadata values are strings by the format's rules).
import { ITEM_BYTES, bad, checkedSize, decode, normalizeShape } from "./tensor.js";

/** The format caps the header at 100 MB; attention files need a few hundred bytes. */
const MAX_HEADER = 100 * 1024 * 1024;
const DTYPES = { F32: "f32", F16: "f16", BF16: "bf16", F64: "f64" };

/** The header length if `bytes` starts like a safetensors file (a length that fits, then "{"), else -1. */
export function safetensorsHeaderLength(bytes) {
  if (bytes.length < 10) return -1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const high = view.getUint32(4, true);
  const n = view.getUint32(0, true);
  return high === 0 && n >= 2 && n <= MAX_HEADER && 8 + n <= bytes.length && bytes[8] === 0x7b ? n : -1;
}

/** The attention tensor and metadata of a .safetensors file: { data, shape, dtype, metadata }. */
export function readSafetensors(bytes, file) {
  const n = safetensorsHeaderLength(bytes);
  if (n < 0) throw bad(`${file} is not a .safetensors file (it does not start with a header length and a JSON header)`);
  let header;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (error) {
    throw bad(`${file}: the .safetensors header is not JSON (${error.message})`);
  }
  if (!header || typeof header !== "object" || Array.isArray(header)) throw bad(`${file}: the .safetensors header is not a JSON object`);
  const metadata = header.__metadata__ ?? {};
  const names = Object.keys(header).filter((k) => k !== "__metadata__");
  if (names.length !== 1)
    throw bad(
      `${file}: ${names.length} tensors (${names.slice(0, 5).join(", ")}); an attention file holds exactly one ([layers, heads, L, L])`,
    );
  const [name] = names;
  const { dtype: stored, shape, data_offsets: offsets } = header[name] ?? {};
  const dtype = DTYPES[stored];
  if (!dtype) throw bad(`${file}: tensor "${name}" is ${JSON.stringify(stored)}; F32, F16, BF16 or F64 is read`);
  if (!Array.isArray(shape)) throw bad(`${file}: tensor "${name}" has no shape`);
  const count = checkedSize(file, shape);
  normalizeShape(file, shape);
  const body = 8 + n;
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  )
    throw bad(`${file}: tensor "${name}" has data_offsets ${JSON.stringify(offsets)}; expected [begin, end]`);
  const [begin, end] = offsets;
  if (end - begin !== count * ITEM_BYTES[dtype])
    throw bad(
      `${file}: tensor "${name}" of shape [${shape.join(", ")}] ${stored} needs ${count * ITEM_BYTES[dtype]} bytes; its offsets span ${end - begin}`,
    );
  if (body + end > bytes.length) throw bad(`${file}: tensor "${name}" ends at byte ${body + end}; the file has ${bytes.length}`);
  return { data: decode(bytes, body + begin, count, dtype), shape, dtype, metadata, name };
}
