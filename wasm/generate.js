// How model.generate() (wasm/model.js) picks each next token from its row of logits: greedy at
// temperature 0, else drawn from softmax(logits / temperature) cut to the top k and then to the
// top p, as transformers' sampling applies its warpers (temperature, top-k, top-p), with a seeded
// generator so that a seed gives the same tokens wherever the logits are the same. No state;
// nothing here calls wasm.
import { describe, fail } from "./boundary.js";
import { topIds } from "./model-input.js";

/** generate()'s options and their types (checked by typedOptions). */
export const GENERATE_OPTIONS = {
  maxTokens: "number",
  temperature: "number",
  topK: "number",
  topP: "number",
  seed: "number",
  stop: "any",
  attention: "boolean",
  k: "number",
  signal: "any",
};

/** Tokens generated when maxTokens is not given (fewer when the context ends first). */
export const DEFAULT_NEW_TOKENS = 20;

/**
 * generate()'s options checked, with their defaults: { maxTokens (null: the default, cut by the
 * context), temperature 0, topK 0 (all), topP 1, seed 0, stop [], signal null }. `room` is the
 * context left after the prompt.
 */
export function generateSettings(o, room) {
  const maxTokens = o.maxTokens ?? null;
  if (maxTokens !== null && (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > room))
    fail(
      "BAD_ARGUMENT",
      room < 1
        ? `maxTokens is ${describe(maxTokens)}, but the prompt fills the model's context: no token can follow it`
        : `maxTokens must be an integer from 1 to ${room} (the context left after the prompt); got ${describe(maxTokens)}`,
    );
  const temperature = o.temperature ?? 0;
  if (!Number.isFinite(temperature) || temperature < 0)
    fail("BAD_ARGUMENT", `temperature must be a finite number >= 0 (0 picks the likeliest token); got ${describe(temperature)}`);
  const topK = o.topK ?? 0;
  if (!Number.isInteger(topK) || topK < 0)
    fail("BAD_ARGUMENT", `topK must be an integer >= 0 (0 keeps every token); got ${describe(topK)}`);
  const topP = o.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) fail("BAD_ARGUMENT", `topP must be in (0, 1]; got ${describe(topP)}`);
  const seed = o.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    fail("BAD_ARGUMENT", `seed must be an integer from 0 to 4294967295; got ${describe(seed)}`);
  const stop = o.stop ?? [];
  if (!Array.isArray(stop)) fail("BAD_ARGUMENT", `stop must be an array of strings; got ${describe(stop)}`);
  stop.forEach((s, i) => {
    if (typeof s !== "string" || s.length === 0) fail("BAD_ARGUMENT", `stop[${i}] must be a non-empty string; got ${describe(s)}`);
  });
  const signal = o.signal ?? null;
  if (signal !== null && (typeof signal.aborted !== "boolean" || typeof signal.addEventListener !== "function"))
    fail("BAD_ARGUMENT", `signal must be an AbortSignal; got ${describe(signal)}`);
  return { maxTokens, temperature, topK, topP, seed, stop, signal };
}

/**
 * A generator of uniform numbers in [0, 1) from a 32-bit seed (mulberry32): integer arithmetic
 * only, so every engine gives the same sequence.
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The next token's id from `row` (a Float32Array of logits over the vocabulary), drawn as the
 * settings say: at temperature 0 the largest logit (the smaller id on a tie, as argmax); else
 * the tokens by probability (softmax(row / temperature), in float64), largest first (ties to the
 * smaller id), cut to the first topK (0: all; tokens tied with the k-th stay) and then to the
 * fewest whose probabilities reach topP, and one of those drawn in proportion with `random()`.
 */
export function drawToken(row, { temperature, topK, topP }, random) {
  if (temperature === 0) return topIds(row, 1)[0];
  const V = row.length;
  let order;
  if (topK > 0 && topK < V) {
    // Every token tied with the k-th stays, as transformers' top-k keeps scores >= the k-th.
    order = topIds(row, topK);
    const kth = row[order.at(-1)];
    const kept = new Set(order);
    for (let v = 0; v < V; v++) if (row[v] === kth && !kept.has(v)) order.push(v);
  } else order = Array.from({ length: V }, (_, v) => v).sort((a, b) => row[b] - row[a] || a - b);
  // Probabilities over the whole vocabulary (the cut renormalises what it keeps).
  let max = -Infinity;
  for (let v = 0; v < V; v++) if (row[v] > max) max = row[v];
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp((row[v] - max) / temperature);
  const p = (v) => Math.exp((row[v] - max) / temperature) / sum;
  // topK's share, then the fewest that reach topP of it (as transformers' top-p after top-k).
  let kept = order.length;
  if (topP < 1) {
    let total = 0;
    for (let i = 0; i < order.length; i++) total += p(order[i]);
    let cumulative = 0;
    for (let i = 0; i < order.length; i++) {
      cumulative += p(order[i]) / total;
      if (cumulative >= topP) {
        kept = i + 1;
        break;
      }
    }
  }
  let total = 0;
  for (let i = 0; i < kept; i++) total += p(order[i]);
  let u = random() * total;
  for (let i = 0; i < kept; i++) {
    u -= p(order[i]);
    if (u < 0) return order[i];
  }
  return order[kept - 1];
}
