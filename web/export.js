// The demo page's exports of the matrices, as JSON or CSV (the figure itself exports as SVG/PNG).

/** Offers a Blob or text as a file download. */
export function download(content, filename, type = "application/octet-stream") {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const tensorJson = (t) => ({ shape: t.shape, data: Array.from(t.data, (x) => (Number.isFinite(x) ? x : String(x))) });

/** Every matrix of an explanation as plain JSON (−∞ written as "-Infinity"). */
export function explanationToJson(ex) {
  const trace = Object.fromEntries(Object.entries(ex.trace).map(([k, v]) => [k, typeof v === "number" ? v : tensorJson(v)]));
  const projections = Object.fromEntries(Object.entries(ex.projections).map(([k, v]) => [k, tensorJson(v)]));
  return {
    tokens: ex.tokens.map((t) => t.text),
    options: ex.options,
    embeddings: tensorJson(ex.embeddings),
    projections,
    trace,
    weights: tensorJson(ex.weights),
    meanWeights: tensorJson(ex.meanWeights),
    contextual: tensorJson(ex.contextual),
    pca: { original: tensorJson(ex.pca.original), contextual: tensorJson(ex.pca.contextual), explained: ex.pca.explained },
    stats: { ...ex.stats, entropy: tensorJson(ex.stats.entropy) },
  };
}

/** Weights from a file (FigureData) as CSV: one row per (layer, head, query, key), 1-based. */
export function attentionToCsv(data) {
  const lines = ["layer,head,query_index,query,key_index,key,weight"];
  const tokens = data.tokens.map((t) => csvCell(t.text));
  const [layers, heads, L] = data.weights.shape;
  const w = data.weights.data;
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < L; i++)
        for (let j = 0; j < L; j++)
          lines.push(`${l + 1},${h + 1},${i + 1},${tokens[i]},${j + 1},${tokens[j]},${w[((l * heads + h) * L + i) * L + j]}`);
  return `${lines.join("\n")}\n`;
}

/** Weights from a file in attnlens JSON version 1 (float32, base64): any format converts to ours. */
export function attentionToJson(data) {
  const bytes = new Uint8Array(data.weights.data.buffer, data.weights.data.byteOffset, data.weights.data.byteLength);
  let binary = "";
  for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return {
    attnlens: 1,
    title: data.title,
    tokens: data.tokens.map((t) => t.text),
    shape: data.weights.shape,
    causal: data.causal,
    ...(data.layerNames ? { layerNames: data.layerNames } : {}),
    ...(data.headNames ? { headNames: data.headNames } : {}),
    weights: { dtype: "f32", base64: btoa(binary) },
  };
}

const csvCell = (text) => (/[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/**
 * The weights as CSV: one row per (mode, head, query, key), with every mode the figure
 * computed (causal and full side by side give both). Head numbers are 1-based, as in the page.
 */
export function weightsToCsv(figure) {
  const lines = ["mode,head,query_index,query,key_index,key,weight"];
  for (const mode of ["causal", "full"]) {
    const ex = figure[mode];
    if (!ex) continue;
    const tokens = ex.tokens.map((t) => csvCell(t.text));
    const [H, L] = ex.weights.shape;
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < L; i++) {
        for (let j = 0; j < L; j++)
          lines.push(`${mode},${h + 1},${i + 1},${tokens[i]},${j + 1},${tokens[j]},${ex.weights.data[(h * L + i) * L + j]}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}
