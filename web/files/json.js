// Attention as JSON: our versioned format, and what BertViz and CircuitsVis users already have.
//   ours        {"attnlens": 1, "tokens": [...], "shape": [layers, heads, L, L],
//                "weights": nested numbers | {"dtype": "f32"|"f16"|"u8", "base64": "..."},
//                "layerNames"?, "headNames"?, "causal"?, "title"?}   (u8: weight = byte / 255)
//   BertViz     head_view/model_view's parameters {"attention": [{"name", "attn": [layers][heads][L][L],
//                "left_text", "right_text"}, ...]} (the first self-attention entry is shown), the
//                older {"all": {"attn", "left_text", "right_text"}}, or {"tokens", "attention"} as saved
//                from its inputs
//   CircuitsVis attention_heads / attention_patterns props {"tokens", "attention": [heads][dest][src]},
//                attention_pattern's [dest][src], optional "attention_head_names"
import { ITEM_BYTES, MAX_JSON_BYTES, bad, checkedSize, decode, requireSizes, toFigureData } from "./tensor.js";

/** Parses JSON text, with a message that names the file and says why it is not JSON. */
export function parseJsonText(text, file) {
  if (text.length > MAX_JSON_BYTES)
    throw bad(
      `${file}: ${(text.length / 2 ** 20).toFixed(0)} MB of JSON; at most ${MAX_JSON_BYTES / 2 ** 20} MB (use base64 weights, .npy or .safetensors)`,
    );
  try {
    return JSON.parse(text);
  } catch (error) {
    if (/\b(NaN|-?Infinity)\b/.test(text.slice(0, 4 * 2 ** 20)))
      throw bad(`${file} holds NaN or Infinity (Python's json writes them; JSON has no such numbers): weights must be finite`);
    const start = text.trimStart().slice(0, 40);
    throw bad(`${file} is not JSON (${error.message}); it starts with “${start}”`);
  }
}

const MAX_DEPTH = 5;
/** Decimals of a number as JavaScript prints it (shortest round trip): 0.125 -> 3, 1e-7 -> 7. */
function decimalsOf(v) {
  const [mantissa, exponent = "0"] = String(v).split("e");
  const dot = mantissa.indexOf(".");
  return Math.max(0, (dot < 0 ? 0 : mantissa.length - dot - 1) - Number(exponent));
}
/** Numbers looked at for the decimals the writer used (the rounding is the same all through). */
const DECIMAL_SAMPLE = 65536;

/** Nested arrays of numbers to { data, shape, decimals }, checking that every level is regular. */
export function flatten(value, file, what) {
  const shape = [];
  for (let v = value; Array.isArray(v); v = v[0]) {
    if (shape.length === MAX_DEPTH) throw bad(`${file}: ${what} is nested more than ${MAX_DEPTH} deep`);
    shape.push(v.length);
    if (!v.length) break;
  }
  if (!shape.length) throw bad(`${file}: ${what} must be nested lists of numbers`);
  const data = new Float32Array(checkedSize(file, shape));
  let n = 0;
  let decimals = 0;
  const walk = (v, depth, path) => {
    if (depth === shape.length) {
      if (typeof v !== "number") throw bad(`${file}: ${what}${path} is ${JSON.stringify(v)?.slice(0, 30)}, not a number`);
      if (n < DECIMAL_SAMPLE) decimals = Math.max(decimals, decimalsOf(v));
      data[n++] = v;
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[depth])
      throw bad(`${file}: ${what}${path} should be a list of ${shape[depth]}; lists of one level must all have the same length`);
    for (let k = 0; k < v.length; k++) walk(v[k], depth + 1, `${path}[${k}]`);
  };
  walk(value, 0, "");
  // Nine or more decimals: the numbers are floats printed in full, not rounded by the writer.
  return { data, shape, decimals: decimals >= 9 ? Infinity : decimals };
}

function ours(json, file) {
  if (json.attnlens !== 1) throw bad(`${file}: attnlens format version ${JSON.stringify(json.attnlens)}; this reader knows version 1`);
  const { weights, shape } = json;
  requireSizes(file, shape, '"shape" (like [layers, heads, L, L])');
  const common = {
    file,
    tokens: json.tokens ?? null,
    causal: json.causal,
    title: json.title,
    layerNames: json.layerNames,
    headNames: json.headNames,
    format: "attnlens",
  };
  if (Array.isArray(weights)) {
    const flat = flatten(weights, file, "weights");
    if (flat.shape.join() !== shape.join())
      throw bad(`${file}: "shape" says [${shape.join(", ")}] but the weights are nested [${flat.shape.join(", ")}]`);
    return toFigureData({ ...common, data: flat.data, shape, storage: "json", decimals: flat.decimals });
  }
  if (!weights || typeof weights !== "object" || typeof weights.base64 !== "string")
    throw bad(`${file}: "weights" must be nested numbers or {"dtype": "f32" | "f16" | "u8", "base64": "..."}`);
  const dtype = weights.dtype;
  if (!["f32", "f16", "u8"].includes(dtype)) throw bad(`${file}: weights dtype ${JSON.stringify(dtype)}; expected "f32", "f16" or "u8"`);
  const count = checkedSize(file, shape);
  const expected = count * ITEM_BYTES[dtype];
  const text = weights.base64.replace(/\s+/g, "");
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const length = (text.length / 4) * 3 - padding;
  if (text.length % 4 !== 0 || length !== expected)
    throw bad(
      `${file}: the base64 weights hold ${Math.max(0, Math.floor(length))} bytes; shape [${shape.join(", ")}] of ${dtype} needs ${expected}`,
    );
  let binary;
  try {
    binary = atob(text);
  } catch {
    throw bad(`${file}: the weights are not valid base64`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let k = 0; k < binary.length; k++) bytes[k] = binary.charCodeAt(k);
  return toFigureData({ ...common, data: decode(bytes, 0, count, dtype), shape, storage: dtype });
}

/** [L][L][heads] (heads last, as some CircuitsVis users pass) to [heads][L][L]. */
function headsFirst({ data, shape }) {
  const [L, , H] = shape;
  const out = new Float32Array(data.length);
  for (let i = 0; i < L; i++) for (let j = 0; j < L; j++) for (let h = 0; h < H; h++) out[(h * L + i) * L + j] = data[(i * L + j) * H + h];
  return { data: out, shape: [H, L, L] };
}

function tokensAndAttention(json, file, format) {
  const notes = [];
  const tokens = json.tokens;
  const flat = flatten(json.attention, file, "attention");
  let { data, shape } = flat;
  const L = Array.isArray(tokens) ? tokens.length : -1;
  if (shape.length === 3 && shape[0] === L && shape[1] === L && shape[2] !== L) {
    ({ data, shape } = headsFirst(flat));
    notes.push(`${file}: attention was [tokens][tokens][heads]; read as heads first.`);
  }
  const names = json.attention_head_names ?? json.attentionHeadNames ?? json.headNames;
  const result = toFigureData({
    file,
    data,
    shape,
    tokens: tokens ?? null,
    storage: "json",
    decimals: flat.decimals,
    causal: json.causal ?? (json.mask_upper_tri === true ? true : undefined),
    title: json.title,
    layerNames: json.layerNames,
    headNames: names,
    format: format ?? (shape.length === 4 ? "bertviz" : "circuitsvis"),
  });
  result.warnings.push(...notes);
  return result;
}

function bertviz(entries, file) {
  const list = Array.isArray(entries) ? entries : [entries];
  const entry = list.find((e) => e && typeof e === "object" && Array.isArray(e.attn));
  if (!entry) throw bad(`${file}: BertViz "attention" holds no entry with "attn"`);
  const left = entry.left_text;
  const right = entry.right_text;
  if (Array.isArray(left) && Array.isArray(right) && left.length !== right.length)
    throw bad(`${file}: the BertViz entry is cross-attention (${left.length} × ${right.length} tokens); only self-attention is shown`);
  return tokensAndAttention({ tokens: left ?? null, attention: entry.attn, title: entry.name ?? undefined }, file, "bertviz");
}

/** FigureData from parsed JSON of any of the three kinds (detected from its keys). */
export function fromJson(json, file) {
  if (!json || typeof json !== "object" || Array.isArray(json))
    throw bad(`${file}: expected a JSON object with attention weights and tokens; got ${Array.isArray(json) ? "a list" : typeof json}`);
  if ("attnlens" in json) return ours(json, file);
  if (
    Array.isArray(json.attention) &&
    json.attention.length &&
    json.attention[0] &&
    typeof json.attention[0] === "object" &&
    "attn" in json.attention[0]
  )
    return bertviz(json.attention, file);
  if (json.all && typeof json.all === "object" && "attn" in json.all) return bertviz(json.all, file);
  if ("attention" in json) return tokensAndAttention(json, file);
  const keys = Object.keys(json).slice(0, 6).join(", ");
  throw bad(
    `${file}: not an attention file: expected "attnlens" (ours), "attention" + "tokens" (BertViz, CircuitsVis); found keys ${keys || "none"}`,
  );
}
