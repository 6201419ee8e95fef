// The one attnlens instance of a page, shared by every <attn-lens> element and the demo.
// The .wasm is read from beside the bundle that contains this module (dist/element.js ->
// dist/attnlens.wasm; the demo site copies it beside its own bundle). The URL is built from a
// variable on purpose: a literal would make Vite inline the module into the bundle as base64.
// The JS API comes from its source (an edit to wasm/api.js shows at the next page build); only
// the Emscripten loaders, which the wasm build makes, come from dist/.
import createAttnLensCore from "../dist/attnlens_core.js";
import { fetchWasm, isExplanation, makeLoader } from "../wasm/api.js";

const WASM_FILE = "./attnlens.wasm";
const MODEL_FILES = { baseline: "./attnlens-model.wasm", relaxed: "./attnlens-model-relaxed.wasm" };

export const wasmUrl = new URL(WASM_FILE, import.meta.url);

/** The model module for makeLoader (trained mode): its loader, code and .wasm are fetched on first use only. */
export const modelModule = {
  createCore: () => import("../dist/attnlens_model_core.js").then((m) => m.default),
  urls: { baseline: new URL(MODEL_FILES.baseline, import.meta.url), relaxed: new URL(MODEL_FILES.relaxed, import.meta.url) },
};

export const loadLens = makeLoader(createAttnLensCore, fetchWasm, wasmUrl, modelModule);

/**
 * Explains `state.sentence` for the modes the figure needs, up to the library's token limit
 * (lens.limits.maxTokens; longer text shows its first tokens). `trace`: record every stage (the
 * every-step view and the matrices export need it; the other views do not, and a long text is
 * explained many times faster without). `traceHead`: with trace, the [H, L, L] score stages of
 * that head only (the every-step view shows one head; at 512 tokens this is several times
 * cheaper). `into`: an earlier figure whose explanations' arrays the new ones are written into
 * (explain's `into`; that figure must no longer be read). Returns { causal?, full?, totalTokens,
 * truncated } or { empty: true } for text without tokens; each explanation's trace (null without
 * one) and options.traceHead say what was traced.
 */
export function computeFigure(lens, state, { trace = true, traceHead, into } = {}) {
  const options = {
    modelDim: state.dim,
    numHeads: state.heads,
    seed: state.seed,
    positional: state.positional,
    init: state.init,
    maxTokens: lens.limits.maxTokens,
    truncate: true,
    trace,
    ...(trace && traceHead !== undefined ? { traceHead } : {}),
  };
  const modes = state.mode === "compare" ? ["causal", "full"] : [state.mode];
  const result = {};
  try {
    for (const mode of modes) {
      // An earlier figure's explanation of this mode lends its arrays (a file's or a model's has none).
      const earlier = isExplanation(into?.[mode]) ? { into: into[mode] } : {};
      result[mode] = lens.explain(state.sentence, { ...options, ...earlier, causal: mode === "causal" });
    }
  } catch (error) {
    if (error.code === "EMPTY_INPUT") return { empty: true };
    throw error;
  }
  const any = result[modes[0]];
  result.totalTokens = any.stats.totalTokens;
  result.truncated = any.stats.truncated;
  return result;
}
