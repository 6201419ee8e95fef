// Every stage of one head's forward pass, straight from the trace: X = E + P, Q/K/V = X·W,
// QKᵀ, ÷√d_head, + mask, softmax, ·V, concat, ·W_O, + X. Each matrix is a scrollable pane
// (views/matrix.js) so every number is readable at any length. Side by side (compare), the stages
// both modes share (1–6) are shown once, the ones that differ (7–11) once per mode.
// Loaded on demand: a plain figure never fetches this module.
import { html, nothing } from "lit";
import { matrixPane, layout as matrixLayout, draw as drawMatrix, CELL_W, CELL_H, HEADER_HEIGHT } from "./matrix.js";
import { font, wrapText } from "../text.js";

export * as matrixView from "./matrix.js";

const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3));

/** Rows [0, rows) and columns [c0, c1) of a row-major matrix with `cols` columns. */
function columns(data, cols, rows, c0, c1) {
  const out = new Float32Array(rows * (c1 - c0));
  for (let r = 0; r < rows; r++) out.set(data.subarray(r * cols + c0, r * cols + c1), r * (c1 - c0));
  return out;
}

const op = (symbol) => ({ op: symbol });

/**
 * The steps to show for the panels (FigureData with explanations) and a head. Returns
 * { title, steps: [{ n, caption, variants: [{ label, items: [pane | { op }] }] }], panes }.
 */
export function stepsModel(panels, head) {
  const first = panels[0].explanation;
  const tokens = first.tokens.map((t) => t.text);
  const L = tokens.length;
  const E = first.embeddings.shape[1];
  const H = first.weights.shape[0];
  const d = E / H;
  const h = Math.min(head, H - 1);
  const headLabel = H > 1 ? `, head ${h + 1}` : "";
  const dimLabels = (from, n) => Array.from({ length: n }, (_, k) => String(from + k + 1));
  const per = (tensor, size) => tensor.data.subarray(h * size, (h + 1) * size);
  // The score stages (and their variances) hold only the head shown when the explanation was
  // traced for it (explain's traceHead), else every head.
  const scoreSlot = (ex) => {
    const traced = ex.options.traceHead;
    if (traced === undefined) return h;
    if (traced !== h) throw new Error(`the every-step view shows head ${h + 1} but the trace holds head ${traced + 1}'s scores`);
    return 0;
  };
  const scoresOf = (ex, stage) => ex.trace[stage].data.subarray(scoreSlot(ex) * L * L, (scoreSlot(ex) + 1) * L * L);
  const panes = [];
  const pane = (spec) => {
    const p = matrixPane(spec);
    p.index = panes.length;
    panes.push(p);
    return p;
  };
  const tokenRows = { rowLabels: tokens, rowAxis: "token" };
  const lxl = (prefix, id, name, data, kind) =>
    pane({
      id: `${prefix}${id}`,
      name,
      data,
      rows: L,
      cols: L,
      kind,
      rowLabels: tokens,
      colLabels: tokens,
      rowAxis: "query",
      colAxis: "key",
    });
  const lxe = (id, name, data, cols, colLabels, kind = "signed") =>
    pane({ id, name, data, rows: L, cols, kind, ...tokenRows, colLabels, colAxis: "dimension" });

  const steps = [];
  steps.push({
    n: 1,
    caption: `Embed each token (a vector of d_model = ${E} numbers) and add its position: X = E + P`,
    variants: [
      {
        items: [
          lxe("embeddings", "Token embeddings E", first.tokenEmbeddings.data, E, null),
          op("+"),
          lxe("positions", "Positions P", first.positions.data, E, null),
          op("="),
          lxe("x", "Input X = E + P", first.trace.x.data, E, null),
        ],
      },
    ],
  });
  for (const [n, name, w, out] of [
    [2, "Q", "wq", "q"],
    [3, "K", "wk", "k"],
    [4, "V", "wv", "v"],
  ]) {
    const plain = { Q: "Queries", K: "Keys", V: "Values" }[name];
    steps.push({
      n,
      caption: `Project: ${name} = X · W_${name}${headLabel}: columns ${h * d + 1}–${(h + 1) * d} of W_${name}, d_head = ${d} per head`,
      variants: [
        {
          items: [
            lxe(`x-${out}`, "Input X", first.trace.x.data, E, null),
            op("·"),
            pane({
              id: w,
              name: `${plain} weights W_${name}${headLabel}`,
              data: columns(first.projections[w].data, E, E, h * d, (h + 1) * d),
              rows: E,
              cols: d,
              kind: "signed",
              rowAxis: "input dimension",
              colAxis: "output dimension",
              colLabels: dimLabels(h * d, d),
            }),
            op("="),
            lxe(out, `${plain} ${name}${headLabel}`, per(first.trace[out], L * d), d, null),
          ],
        },
      ],
    });
  }
  steps.push({
    n: 5,
    caption: `Score every query against every key: Q · Kᵀ${headLabel}`,
    variants: [{ items: [lxl("", "scores", `Scores Q · Kᵀ${headLabel}`, scoresOf(first, "scores"), "signed")] }],
  });
  const raw = first.stats.rawScoreVariance[scoreSlot(first)];
  const scaled = first.stats.scaledScoreVariance[scoreSlot(first)];
  steps.push({
    n: 6,
    caption:
      `Scale by 1/√d_head = 1/√${d} = ${fmt(first.trace.scale)} (d_head = d_model / heads = ${E} / ${H}): the variance of the scores ` +
      `drops from ${fmt(raw)} to ${fmt(scaled)}, so the softmax does not saturate`,
    variants: [{ items: [lxl("", "scaled", `Scaled scores Q · Kᵀ / √d_head${headLabel}`, scoresOf(first, "scaled"), "signed")] }],
  });

  const compare = panels.length > 1;
  const variants = (make) =>
    panels.map((data) => ({
      label: compare ? (data.causal ? "Causal" : "Full") : null,
      items: make(data.explanation, compare ? `${data.mode}-` : ""),
    }));
  steps.push({
    n: 7,
    caption: compare
      ? "Mask: causal attention hides later keys (−∞ above the diagonal); full attention hides nothing"
      : `Mask: ${first.options.causal ? "causal, a query may not see later keys (−∞ above the diagonal)" : "full attention, nothing is masked"}`,
    variants: variants((ex, prefix) => [
      lxl(prefix, "mask", "Mask (0 or −∞)", ex.trace.mask.data, "mask"),
      op("+"),
      lxl(prefix, "masked", `Masked scores (scaled + mask)${headLabel}`, scoresOf(ex, "masked"), "signed"),
    ]),
  });
  steps.push({
    n: 8,
    caption: "Softmax each row: the weights are positive and sum to 1; −∞ becomes exactly 0",
    variants: variants((ex, prefix) => [lxl(prefix, "weights", `Attention weights${headLabel}`, per(ex.trace.weights, L * L), "weights")]),
  });
  steps.push({
    n: 9,
    caption: `Mix the values: head output = weights · V${headLabel}`,
    variants: variants((ex, prefix) => [
      lxl(prefix, "weights-v", `Attention weights${headLabel}`, per(ex.trace.weights, L * L), "weights"),
      op("·"),
      lxe(`${prefix}v-mix`, `Values V${headLabel}`, per(ex.trace.v, L * d), d, null),
      op("="),
      lxe(`${prefix}head-output`, `Head output${headLabel}`, per(ex.trace.headOutputs, L * d), d, null),
    ]),
  });
  steps.push({
    n: 10,
    caption: `Concatenate the ${H} head${H > 1 ? "s" : ""} (${H} × ${d} = ${E} columns) and project: output = concat · W_O`,
    variants: variants((ex, prefix) => [
      lxe(`${prefix}concat`, "Concatenated heads", ex.trace.concat.data, E, null),
      op("·"),
      pane({
        id: `${prefix}wo`,
        name: "Output weights W_O",
        data: ex.projections.wo.data,
        rows: E,
        cols: E,
        kind: "signed",
        rowAxis: "input dimension",
        colAxis: "output dimension",
      }),
      op("="),
      lxe(`${prefix}output`, "Attention output", ex.trace.output.data, E, null),
    ]),
  });
  steps.push({
    n: 11,
    caption: "Add back the input (the residual connection): contextual embedding = X + output",
    variants: variants((ex, prefix) => [lxe(`${prefix}contextual`, "Contextual embeddings X + output", ex.contextual.data, E, null)]),
  });

  const modeName = compare ? "Causal and full attention" : panels[0].title;
  const pick = H > 1 && head === "mean" ? " (head 1; pick a head to see another)" : "";
  return { title: `${modeName}, every step${headLabel}${pick}`, steps, panes, L, E, H, d };
}

/**
 * The steps as DOM: captions are text (they wrap), each matrix is a frame made by
 * `frame(id, label)` (the element's scrollable canvas).
 */
export function stepsTemplate(model, frame) {
  return html`<div class="steps">
    <p class="steps-title">${model.title}</p>
    ${model.steps.map(
      (step) =>
        html`<section class="step">
          <h3 class="caption">${step.n}. ${step.caption}</h3>
          ${step.variants.map(
            (v) =>
              html`<div class="step-row">
                ${v.label ? html`<span class="variant">${v.label}</span>` : nothing}
                ${v.items.map((item) =>
                  item.op
                    ? html`<span class="op" aria-hidden="true">${item.op}</span>`
                    : html`<figure class="pane">
                        <figcaption>${item.name} <span class="shape">[${item.rows} × ${item.cols}]</span></figcaption>
                        ${frame(`pane-${item.index}`, `${item.name}, ${item.rows} by ${item.cols}`)}
                      </figure>`,
                )}
              </div>`,
          )}
        </section>`,
    )}
  </div>`;
}

/** Matrices larger than this are exported as colours without numbers, in smaller cells. */
const EXPORT_NUMBERS = { rows: 24, cols: 16 };

/**
 * The whole every-step figure for export, `width` px wide: returns { width, height, title, draw(p) }.
 * Captions wrap at measured widths; every matrix is drawn whole.
 */
export function stepsExport(model, palette, scale, width) {
  const captionFont = font(12);
  let y = 34;
  const place = [];
  for (const step of model.steps) {
    const lines = wrapText(`${step.n}. ${step.caption}`, width - 16, captionFont);
    place.push({ kind: "caption", lines, y });
    y += lines.length * 16 + 6;
    for (const v of step.variants) {
      let x = 8;
      let rowH = 0;
      if (v.label) {
        place.push({ kind: "label", text: v.label, x, y: y + 14 });
        y += 20;
      }
      for (const item of v.items) {
        if (item.op) {
          place.push({ kind: "op", symbol: item.op, x: x + 10, y: y + 18 + HEADER_HEIGHT + 14 });
          x += 26;
          continue;
        }
        const small = item.rows <= EXPORT_NUMBERS.rows && item.cols <= EXPORT_NUMBERS.cols;
        // A large matrix fits about 360 px on each side; a side of at most 32 tokens keeps a
        // cell per token tall or wide enough for its label.
        const fit = (n, tokens) => (tokens && n <= 32 ? 14 : Math.max(2, Math.min(14, Math.floor(360 / n))));
        const cellW = small ? CELL_W : fit(item.cols, item.colLabels);
        const cellH = small ? CELL_H : fit(item.rows, item.rowLabels);
        const lay = matrixLayout({ pane: item, palette, scale, width, cellW, cellH, whole: true });
        const w = lay.fullW;
        const h = lay.fullH + 18;
        if (x > 8 && x + w > width) {
          x = 8;
          y += rowH + 10;
          rowH = 0;
        }
        place.push({ kind: "matrix", lay, item, x, y });
        x += w + 12;
        rowH = Math.max(rowH, h);
      }
      y += rowH + 14;
    }
  }
  const height = y + 4;
  const contentWidth = Math.max(width, ...place.filter((p) => p.kind === "matrix").map((p) => p.x + p.lay.fullW + 8));
  return {
    width: contentWidth,
    height,
    title: model.title,
    draw(p) {
      p.rect(0, 0, contentWidth, height, palette.background);
      p.text(model.title, 8, 20, { size: 13, weight: 600, fill: palette.foreground });
      for (const it of place) {
        if (it.kind === "caption") it.lines.forEach((line, k) => p.text(line, 8, it.y + 12 + 16 * k, { size: 12, fill: palette.accent }));
        else if (it.kind === "label") p.text(it.text, it.x, it.y, { size: 12, weight: 600, fill: palette.foreground });
        else if (it.kind === "op") p.text(it.symbol, it.x, it.y, { size: 18, fill: palette.muted, anchor: "middle" });
        else {
          p.text(`${it.item.name} [${it.item.rows} × ${it.item.cols}]`, it.x, it.y + 12, {
            size: 11,
            weight: 600,
            fill: palette.foreground,
          });
          p.save();
          p.translate(it.x, it.y + 18);
          drawMatrix(p, it.lay);
          p.restore();
        }
      }
    },
  };
}
