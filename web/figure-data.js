// What the views draw from: a generic description of attention, not an explain() result, so
// weights from other sources (a trained model's layers, a file) plug into the same views.
// The adapters from explain() to this description are the only code here that knows explain().
//
// FigureData {
//   tokens:   { text, start?, end? }[]                  L tokens
//   weights:  { data: Float32Array, shape: [layers, heads, L, L] }   rows are queries; or
//             CausalRows (below), which makes `data` when it is read
//   mean?:    { data: Float32Array, shape: [layers, L, L] }          mean over heads, if known
//   causal:   boolean                                   keys after the query are masked
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
  const [, H, L] = data.weights.shape;
  const size = L * L;
  const headMatrix = (h) =>
    data.weights instanceof CausalRows
      ? data.weights.head(layer * H + h)
      : data.weights.data.subarray((layer * H + h) * size, (layer * H + h + 1) * size);
  if (head !== "mean") return headMatrix(head);
  if (data.mean) return data.mean.data.subarray(layer * size, (layer + 1) * size);
  data._means ??= [];
  if (!data._means[layer]) {
    const mean = new Float32Array(size);
    for (let h = 0; h < H; h++) {
      if (data.weights instanceof CausalRows) {
        // Row by row: the weights after each diagonal are 0 and add nothing.
        data.weights.rowsOf(layer * H + h).forEach((row, i) => {
          for (let j = 0; j < row.length; j++) mean[i * L + j] += row[j] / H;
        });
        continue;
      }
      const w = headMatrix(h);
      for (let k = 0; k < size; k++) mean[k] += w[k] / H;
    }
    data._means[layer] = mean;
  }
  return data._means[layer];
}

/**
 * The weights of `head` of `layer` (or the mean of the layer's heads, as matrixOf() makes it) at
 * queries `rows` × keys `cols` (Int32Arrays), as a [rows, cols] Float32Array, read without making
 * the [L, L] matrix: a thumbnail samples 96 × 96 cells of it.
 */
export function sampledCells(data, layer, head, rows, cols) {
  const [, H, L] = data.weights.shape;
  const w = data.weights;
  const n = cols.length;
  const out = new Float32Array(rows.length * n);
  if (head === "mean" && (data.mean || data._means?.[layer])) {
    const m = matrixOf(data, layer, "mean");
    rows.forEach((i, r) => cols.forEach((j, c) => (out[r * n + c] = m[i * L + j])));
    return out;
  }
  const mean = head === "mean";
  const first = mean ? layer * H : layer * H + head;
  const count = mean ? H : 1;
  const causal = w instanceof CausalRows;
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r];
    const base = r * n;
    for (let g = first; g < first + count; g++) {
      const row = causal ? w.row(g, i) : w.data.subarray((g * L + i) * L, (g * L + i + 1) * L);
      // Keys after a causal row's diagonal are 0: only the columns up to it are read.
      let end = 0;
      while (end < n && cols[end] < row.length) end++;
      if (mean) {
        // (In matrixOf()'s order and float32 steps: the same numbers as its mean.)
        for (let c = 0; c < end; c++) out[base + c] += row[cols[c]] / H;
      } else {
        for (let c = 0; c < end; c++) out[base + c] = row[cols[c]];
      }
    }
  }
  return out;
}

/**
 * Causal attention [layers, heads, L, L] kept row by row: row i of head g (layer · heads + head)
 * is its i + 1 weights (the keys after it are masked, 0). A trained model's figure after an edit
 * shares the rows before the edit with the figure it follows instead of copying them (a causal
 * row depends on the tokens up to it only): an append to a 308-token GPT-2 small figure makes
 * 144 rows, not a 55 MB array. A head's [L, L] matrix is made when a view draws it (`head(g)`;
 * the grid paints the thumbnails near the screen first); `data`, the whole array, when something
 * reads it all (an export, a test).
 */
export class CausalRows {
  /** From a whole causal attention { data, shape } (its rows are views of `data`). */
  constructor({ data, shape }) {
    this.shape = shape;
    this._data = data;
    this._rows = [];
    this._heads = [];
  }

  /**
   * These weights for a text that shares its first `from` tokens with this one, and `rows`
   * ({ data, shape: [layers, heads, L - from, L] }: the query rows from `from` on) for the rest.
   */
  withRows(from, rows) {
    const [layers, heads, R, L] = rows.shape;
    const next = new CausalRows({ data: null, shape: [layers, heads, L, L] });
    for (let g = 0; g < layers * heads; g++) {
      const kept = this.rowsOf(g).slice(0, from);
      for (let i = from; i < L; i++) kept.push(rows.data.subarray((g * R + i - from) * L, (g * R + i - from) * L + i + 1));
      next._rows[g] = kept;
    }
    return next;
  }

  /** Head g's rows: row i its i + 1 weights. */
  rowsOf(g) {
    if (!this._rows[g]) {
      const L = this.shape[2];
      this._rows[g] = Array.from({ length: L }, (_, i) => this._data.subarray((g * L + i) * L, (g * L + i) * L + i + 1));
    }
    return this._rows[g];
  }

  /** Row i of head g: its weights over keys 0 .. i. */
  row(g, i) {
    return this._rows[g] ? this._rows[g][i] : this.rowsOf(g)[i];
  }

  /** Head g's [L, L] matrix, zeros after each row's diagonal. */
  head(g) {
    const L = this.shape[2];
    if (this._data) return this._data.subarray(g * L * L, (g + 1) * L * L);
    if (!this._heads[g]) {
      const m = new Float32Array(L * L);
      this.rowsOf(g).forEach((row, i) => m.set(row, i * L));
      this._heads[g] = m;
    }
    return this._heads[g];
  }

  /** The whole [layers, heads, L, L] array. */
  get data() {
    if (!this._data) {
      const [layers, heads, L] = this.shape;
      const data = new Float32Array(layers * heads * L * L);
      for (let g = 0; g < layers * heads; g++) data.set(this.head(g), g * L * L);
      this._data = data;
      this._heads = [];
    }
    return this._data;
  }
}

/** Whether key j is masked for query i. */
export const isMasked = (data, i, j) => data.causal && j > i;
