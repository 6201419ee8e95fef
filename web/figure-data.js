// What the views draw from: a generic description of attention, not an explain() result, so
// weights from other sources (a trained model's layers, a file) plug into the same views.
// The adapters from explain() to this description are the only code here that knows explain().
//
// FigureData {
//   tokens:   { text, start?, end? }[]                  L tokens
//   weights:  { data: Float32Array, shape: [layers, heads, L, L] }   rows are queries; or
//             weights kept row by row (web/element/causal-rows.js), which make `data` when it
//             is read, and matrix(layer, head) and cells(...) for the views
//   mean?:    { data: Float32Array, shape: [layers, L, L] }          mean over heads, if known
//   causal:   boolean                                   keys after the query are masked
//   windows?: number[]                                  per layer, 0 or W: a causal query sees
//             itself and the W - 1 keys before it (a sliding window: Gemma 3's local layers)
//   title:    string                                    "Causal attention", a layer's name…
//   layerNames?, headNames?: string[]                   default "layer n" / "head n" (1-based)
//   explanation?: the explain() result it came from (the steps and PCA views need its trace)
// }

/** FigureData for one explain() result (one layer). */
export function fromExplanation(ex, title) {
  const [H, L] = ex.weights.shape;
  return {
    tokens: ex.tokens.map((t) => ({ text: t.text, start: t.start, end: t.end })),
    weights: { data: ex.weights.data, shape: [1, H, L, L] },
    mean: { data: ex.meanWeights.data, shape: [1, L, L] },
    causal: ex.options.causal,
    title,
    explanation: ex,
  };
}

/** The panels a figure shows for computeFigure()'s result: one per mode, causal first. */
export function panelsOf(figure) {
  const titles = { causal: "Causal attention", full: "Full attention" };
  return ["causal", "full"].filter((m) => figure[m]).map((m) => ({ mode: m, ...fromExplanation(figure[m], titles[m]) }));
}

export const headName = (data, h) => data.headNames?.[h] ?? `head ${h + 1}`;

/**
 * The [L, L] matrix a heatmap shows: one head of one layer, or the mean of the layer's heads
 * ("mean"). The mean is taken from the data when it has one, else averaged here (once).
 */
export function matrixOf(data, layer, head) {
  // (Weights kept row by row make their own: web/element/causal-rows.js.)
  if (data.weights.matrix) return data.weights.matrix(layer, head);
  const [, H, L] = data.weights.shape;
  const size = L * L;
  if (head !== "mean") return data.weights.data.subarray((layer * H + head) * size, (layer * H + head + 1) * size);
  if (data.mean) return data.mean.data.subarray(layer * size, (layer + 1) * size);
  data._means ??= [];
  if (!data._means[layer]) {
    const mean = new Float32Array(size);
    for (let h = 0; h < H; h++) {
      const w = data.weights.data.subarray((layer * H + h) * size, (layer * H + h + 1) * size);
      for (let k = 0; k < size; k++) mean[k] += w[k] / H;
    }
    data._means[layer] = mean;
  }
  return data._means[layer];
}

/**
 * Whether key j is hidden from query i in `layer`: a later key of a causal model, or one outside
 * the layer's window (a causal window reaches back windows[layer] − 1 keys, an encoder's as far
 * on each side).
 */
export const isMasked = (data, i, j, layer) => {
  const win = data.windows?.[layer] || Infinity;
  return data.causal ? j > i || i - j >= win : Math.abs(i - j) >= win;
};

/** What a hidden cell (isMasked) is called: a later key of a causal model is "masked", any other "outside the window". */
export const hiddenWord = (data, i, j) => (data.causal && j > i ? "masked" : "outside the window");

/**
 * How a layer's reach is said, in one place for the grid, the heatmap, the description and the
 * page: `label` "sliding 512" (a causal window: the key itself and 511 before it), "local ±64"
 * (an encoder's: 64 on each side) or "global"; `width` "512" or "±64" ("" when global); `reach`
 * "the 511 tokens before it" / "the 64 tokens on each side" / "every earlier token" / "every token".
 */
export function windowText(data, layer) {
  const w = data.windows?.[layer];
  const causal = data.causal;
  if (!w) return { label: "global", width: "", reach: `every ${causal ? "earlier " : ""}token` };
  return {
    label: causal ? `sliding ${w}` : `local ±${w - 1}`,
    width: causal ? `${w}` : `±${w - 1}`,
    reach: `the ${w - 1} tokens ${causal ? "before it" : "on each side"}`,
  };
}
