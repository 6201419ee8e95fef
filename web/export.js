// Export a figure as SVG or PNG, and its matrices as JSON or CSV.

/** A copy of an element without comment nodes (Lit's markers carry random numbers). */
function withoutComments(element) {
  const copy = element.cloneNode(true);
  const walker = document.createTreeWalker(copy, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walker.nextNode()) comments.push(walker.currentNode);
  for (const c of comments) c.remove();
  return copy;
}

/** One standalone SVG document from the figure's <svg> elements, laid side by side. */
export function figureToSvg(elements) {
  const serializer = new XMLSerializer();
  const svgs = elements.map(withoutComments);
  const sizes = svgs.map((s) => [Number(s.getAttribute("width")), Number(s.getAttribute("height"))]);
  if (svgs.length === 1) return serializer.serializeToString(svgs[0]);
  const gap = 16;
  const width = sizes.reduce((w, [sw]) => w + sw, 0) + gap * (svgs.length - 1);
  const height = Math.max(...sizes.map(([, sh]) => sh));
  let x = 0;
  const parts = svgs.map((s, i) => {
    s.setAttribute("x", String(x));
    s.setAttribute("y", "0");
    x += sizes[i][0] + gap;
    return serializer.serializeToString(s);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${parts.join("")}</svg>`;
}

/** Renders SVG text to a PNG Blob at `scale` times its size. */
export async function svgToPng(svgText, scale = 2) {
  const blob = new Blob([svgText], { type: "image/svg+xml" });
  const url = URL.createObjectURL(blob);
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = Math.ceil(image.naturalWidth * scale);
    canvas.height = Math.ceil(image.naturalHeight * scale);
    const context = canvas.getContext("2d");
    context.scale(scale, scale);
    context.drawImage(image, 0, 0);
    return await new Promise((done, fail) =>
      canvas.toBlob((png) => (png ? done(png) : fail(new Error("PNG encoding failed"))), "image/png"),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

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

const csvCell = (text) => (/[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/** The weights as CSV: one row per (head, query, key). */
export function weightsToCsv(ex) {
  const tokens = ex.tokens.map((t) => t.text);
  const [H, L] = ex.weights.shape;
  const lines = ["head,query_index,query,key_index,key,weight"];
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < L; i++) {
      for (let j = 0; j < L; j++) {
        lines.push([h, i, csvCell(tokens[i]), j, csvCell(tokens[j]), ex.weights.data[(h * L + i) * L + j]].join(","));
      }
    }
  }
  return `${lines.join("\n")}\n`;
}
