// Reading attention files: the format is detected from the content first (the .npy magic, a
// safetensors header, JSON), the name's extension second; every problem is a BadFileError
// ({ code: "BAD_FILE", message }) naming the file. Loaded lazily by the element (its own chunk).
import { MAX_FILE_BYTES, BadFileError, bad, toFigureData } from "./tensor.js";
import { fromJson, parseJsonText } from "./json.js";
import { isNpy, readNpy } from "./npy.js";
import { readSafetensors, safetensorsHeaderLength } from "./safetensors.js";

export { BadFileError, MAX_FILE_BYTES };
export { MAX_JSON_BYTES, MAX_TOKENS, MAX_WEIGHTS, rowTolerance } from "./tensor.js";

const extension = (file) => /\.([a-z0-9]+)$/i.exec(file)?.[1]?.toLowerCase() ?? "";
const CLAIMS = { npy: ".npy", safetensors: ".safetensors", json: "JSON" };

/**
 * Tokens from a side file: a JSON list of strings (a .json file, or another that parses as one),
 * or text with one token per line — a .txt file always, so that a BERT export's first line
 * "[CLS]" is a token, not the start of a JSON list.
 */
export function parseTokens(bytes, file) {
  const text = new TextDecoder().decode(bytes);
  const isList = (tokens) => Array.isArray(tokens) && tokens.every((t) => typeof t === "string");
  if (extension(file) === "json") {
    const tokens = parseJsonText(text, file);
    if (!isList(tokens)) throw bad(`${file}: a tokens file holds a JSON list of strings`);
    return tokens;
  }
  if (extension(file) !== "txt" && /^\s*\[/.test(text)) {
    try {
      const tokens = JSON.parse(text);
      if (isList(tokens)) return tokens;
    } catch {
      // Not JSON: lines.
    }
  }
  const lines = text.split("\n").map((line) => line.replace(/\r$/, ""));
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function tensorFile({ data, shape, dtype }, file, tokens, extra = {}) {
  return toFigureData({ file, data, shape, tokens, storage: dtype, ...extra });
}

/** Metadata value `key` of a safetensors file, parsed from its JSON string. */
function metadataJson(metadata, key, file) {
  if (metadata[key] === undefined) return undefined;
  try {
    return JSON.parse(metadata[key]);
  } catch {
    throw bad(`${file}: metadata "${key}" must be a JSON string (e.g. json.dumps(tokens))`);
  }
}

/**
 * FigureData from a file's bytes.
 * @param {Uint8Array} bytes
 * @param {object} [options]
 * @param {string} [options.name]          the file's name (messages, the extension as a hint)
 * @param {string[]} [options.tokens]      tokens from a side file, for .npy and .safetensors
 *                                         (they override tokens inside the file)
 */
export function parseAttentionFile(bytes, { name = "the file", tokens } = {}) {
  if (!(bytes instanceof Uint8Array)) throw bad(`${name}: expected the file's bytes`);
  if (bytes.length > MAX_FILE_BYTES) throw tooLarge(name, bytes.length);
  if (!bytes.length) throw bad(`${name} is empty`);
  if (isNpy(bytes)) return tensorFile(readNpy(bytes, name), name, tokens ?? null, { format: "npy" });
  if (safetensorsHeaderLength(bytes) >= 0) {
    const t = readSafetensors(bytes, name);
    return tensorFile(t, name, tokens ?? metadataJson(t.metadata, "tokens", name) ?? null, {
      format: "safetensors",
      causal: metadataJson(t.metadata, "causal", name),
      title: t.metadata.title,
      layerNames: metadataJson(t.metadata, "layerNames", name),
      headNames: metadataJson(t.metadata, "headNames", name),
    });
  }
  const first = bytes.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf);
  if (first === 0x7b) {
    const data = fromJson(parseJsonText(new TextDecoder().decode(bytes), name), name);
    if (tokens) throw bad(`${name}: a JSON attention file carries its own tokens; a tokens file is only for .npy and .safetensors`);
    return data;
  }
  const claim = CLAIMS[extension(name)];
  const start = Array.from(bytes.subarray(0, 8), (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : "·")).join("");
  if (claim) throw bad(`${name} is not a ${claim} file: it starts with “${start}”`);
  throw bad(`${name} is not an attention file (JSON, .npy or .safetensors): it starts with “${start}”`);
}

/** FigureData from an object: FigureData-like ({ tokens, weights: { data, shape } }) or any format's parsed JSON. */
export function fromObject(value, name = "data") {
  const w = value?.weights;
  if (w && typeof w === "object" && !Array.isArray(w) && (ArrayBuffer.isView(w.data) || Array.isArray(w.data)) && Array.isArray(w.shape)) {
    const tokens = value.tokens?.map?.((t) => (typeof t === "string" ? t : t?.text));
    const data = w.data instanceof Float32Array ? w.data : Float32Array.from(w.data);
    if (data.length !== w.shape.reduce((a, b) => a * b, 1))
      throw bad(
        `${name}: weights.data holds ${data.length} numbers; shape [${w.shape.join(", ")}] needs ${w.shape.reduce((a, b) => a * b, 1)}`,
      );
    return toFigureData({ ...value, file: name, data, shape: w.shape, tokens: tokens ?? null, storage: "f32", format: "object" });
  }
  return fromJson(value, name);
}

const tooLarge = (name, size) =>
  bad(
    `${name} is ${(size / 2 ** 20).toFixed(0)} MB; at most ${MAX_FILE_BYTES / 2 ** 20} MB is read (save fewer layers, fewer tokens, or u8/f16 weights)`,
  );

const isTokensFile = (file) => /\.txt$/i.test(file.name) || /tokens[^/]*\.json$/i.test(file.name);

/**
 * FigureData from files a reader picked or dropped: one attention file, and optionally one tokens
 * file (.txt, or a JSON list whose name contains "tokens").
 */
export async function parsePicked(list) {
  const files = [...list];
  const tokenFiles = files.filter(isTokensFile);
  const main = files.filter((f) => !isTokensFile(f));
  if (main.length !== 1 || tokenFiles.length > 1)
    throw bad(
      `Pick one attention file, and optionally one tokens file (.txt or *tokens*.json); got ${files.map((f) => f.name).join(", ") || "none"}`,
    );
  const tokens = tokenFiles.length ? parseTokens(await readFileBytes(tokenFiles[0]), tokenFiles[0].name) : undefined;
  return parseAttentionFile(await readFileBytes(main[0]), { name: main[0].name, tokens });
}

/** The bytes of a File (the page's picker), refusing a too large one before reading it. */
export async function readFileBytes(file) {
  if (file.size > MAX_FILE_BYTES) throw tooLarge(file.name, file.size);
  return new Uint8Array(await file.arrayBuffer());
}

/**
 * The bytes at `url`, refusing a too large file from its Content-Length before reading it, or
 * as soon as the stream passes the limit. `signal` cancels.
 */
export async function fetchBytes(url, { signal, fetchImpl = fetch } = {}) {
  const name = decodeURIComponent(String(url).split(/[?#]/)[0].split("/").pop() || String(url));
  let response;
  try {
    response = await fetchImpl(url, { signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw bad(`${name} could not be fetched (${error.message})`);
  }
  if (!response.ok) throw bad(`${name} could not be fetched: HTTP ${response.status} ${response.statusText}`.trim());
  const length = Number(response.headers.get("content-length"));
  if (length > MAX_FILE_BYTES) {
    response.body?.cancel();
    throw tooLarge(name, length);
  }
  const chunks = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_FILE_BYTES) {
      reader.cancel();
      throw tooLarge(name, size);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, name };
}
