// A trained causal model's figure keeps its attention row by row (trained.js): FigureData weights
// (web/figure-data.js) that matrixOf() reads by head() and rowsOf(), a thumbnail by cells()
// (web/views/heatmap.js), head scores by row(). In the chunk loaded with the models: a figure of
// random weights or of a file never needs it (and the element's first bundle stays in budget).

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

  /**
   * matrixOf()'s matrix: `head`'s of `layer`, or the mean of the layer's heads (made row by row,
   * in matrixOf()'s order and float32 steps: the same numbers as from the whole array).
   */
  matrix(layer, head) {
    const [, H, L] = this.shape;
    if (head !== "mean") return this.head(layer * H + head);
    this._means ??= [];
    if (!this._means[layer]) {
      const mean = new Float32Array(L * L);
      for (let h = 0; h < H; h++)
        this.rowsOf(layer * H + h).forEach((row, i) => {
          for (let j = 0; j < row.length; j++) mean[i * L + j] += row[j] / H;
        });
      this._means[layer] = mean;
    }
    return this._means[layer];
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

  /**
   * The weights of `head` of `layer` (or the mean of the layer's heads, in matrixOf()'s order and
   * float32 steps: the same numbers) at queries `rows` × keys `cols` (ascending Int32Arrays), as
   * a [rows, cols] Float32Array, read where they are: a thumbnail samples 96 × 96 cells, and a
   * layer's mean thumbnail of GPT-2 small at 308 tokens made the mean of twelve 308 × 308
   * matrices for them.
   */
  cells(layer, head, rows, cols) {
    const H = this.shape[1];
    const n = cols.length;
    const out = new Float32Array(rows.length * n);
    const mean = head === "mean";
    const first = mean ? layer * H : layer * H + head;
    for (let r = 0; r < rows.length; r++) {
      const base = r * n;
      for (let g = first; g < first + (mean ? H : 1); g++) {
        const row = this.row(g, rows[r]);
        // The keys after the row's diagonal are 0: only the columns up to it are read.
        let end = 0;
        while (end < n && cols[end] < row.length) end++;
        for (let c = 0; c < end; c++) out[base + c] = mean ? out[base + c] + row[cols[c]] / H : row[cols[c]];
      }
    }
    return out;
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
