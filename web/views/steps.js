// Every stage of one head's forward pass as labelled matrices with their numbers, straight from
// the trace: X = E + P, Q/K/V = X·W, QKᵀ, ÷√d, + mask, softmax, ·V, concat, ·W_O, + X.
import { svg } from "lit";
import { signedColor, textOn, weightColor } from "../theme.js";
import { cellText, figureSvg, fmt2, maxAbs, shorten } from "./common.js";

const CELL_W = 42;
const CELL_H = 20;
const MAX_ROWS = 10;
const MAX_COLS = 8;
const LABEL_W = 64;

/** Rows [r0, r1) and columns [c0, c1) of a row-major matrix with `cols` columns. */
function slice(data, cols, rows, c0, c1) {
  const out = new Float32Array(rows * (c1 - c0));
  for (let r = 0; r < rows; r++) out.set(data.subarray(r * cols + c0, r * cols + c1), r * (c1 - c0));
  return out;
}

/**
 * A matrix block: title above, optional row labels, at most MAX_ROWS x MAX_COLS cells shown
 * (an ellipsis marks the rest). kind: "signed" (diverging colours), "weights" (viridis),
 * "mask" (0 or −∞).
 */
function block({ title, data, rows, cols, kind, rowLabels, id }) {
  const shownRows = Math.min(rows, MAX_ROWS);
  const shownCols = Math.min(cols, MAX_COLS);
  const labelW = rowLabels ? LABEL_W : 0;
  const width = labelW + shownCols * CELL_W + (cols > shownCols ? 16 : 0);
  const height = 34 + shownRows * CELL_H + (rows > shownRows ? 14 : 0);
  const extent = kind === "signed" ? maxAbs(data) : 1;
  const render = (x, y, palette) => {
    const cells = [];
    for (let r = 0; r < shownRows; r++) {
      for (let c = 0; c < shownCols; c++) {
        const v = data[r * cols + c];
        const masked = v === -Infinity;
        const fill = masked
          ? palette.maskedBackground
          : kind === "weights"
            ? weightColor(v)
            : kind === "mask"
              ? palette.background
              : signedColor(v, extent);
        const cx = x + labelW + c * CELL_W;
        const cy = y + 30 + r * CELL_H;
        cells.push(svg`<rect x=${cx} y=${cy} width=${CELL_W - 1} height=${CELL_H - 1} fill=${fill}
            data-stage=${id} data-r=${r} data-c=${c} data-v=${String(v)}></rect>
          <text x=${cx + CELL_W / 2} y=${cy + 14} font-size="10" text-anchor="middle"
            fill=${masked || kind === "mask" ? palette.muted : textOn(fill)}>${cellText(v)}</text>`);
      }
    }
    return svg`<g class="stage" data-stage=${id}>
      <text x=${x} y=${y + 12} font-size="12" font-weight="600" fill=${palette.foreground}>${title}</text>
      <text x=${x} y=${y + 25} font-size="10" fill=${palette.muted}>[${rows} × ${cols}]${rows > shownRows || cols > shownCols ? ` showing ${shownRows} × ${shownCols}` : ""}</text>
      ${
        rowLabels
          ? rowLabels.slice(0, shownRows).map(
              (t, r) => svg`<text x=${x + labelW - 6} y=${y + 30 + r * CELL_H + 14}
        font-size="10" text-anchor="end" fill=${palette.foreground}>${shorten(t, 9)}</text>`,
            )
          : ""
      }
      ${cells}
      ${cols > shownCols ? svg`<text x=${x + width - 12} y=${y + 30 + (shownRows * CELL_H) / 2} font-size="12" fill=${palette.muted}>…</text>` : ""}
      ${rows > shownRows ? svg`<text x=${x + labelW + (shownCols * CELL_W) / 2} y=${y + height - 2} font-size="12" text-anchor="middle" fill=${palette.muted}>⋮</text>` : ""}
    </g>`;
  };
  return { width, height, render };
}

function operator(symbol) {
  return {
    width: 28,
    height: 34 + CELL_H,
    render: (x, y, palette) =>
      svg`<text x=${x + 14} y=${y + 30 + CELL_H} font-size="18" text-anchor="middle" fill=${palette.muted}>${symbol}</text>`,
  };
}

/**
 * @param {object} p
 * @param {object} p.ex       an Explanation (explain() result)
 * @param {number} p.head     which head's stages to show
 * @param {object} p.palette
 * @param {string} p.title
 */
export function stepsView({ ex, head, palette, title }) {
  const tokens = ex.tokens.map((t) => t.text);
  const L = tokens.length;
  const E = ex.embeddings.shape[1];
  const H = ex.weights.shape[0];
  const d = E / H;
  const t = ex.trace;
  const h = Math.min(head, H - 1);
  const per = (tensor, size) => tensor.data.subarray(h * size, (h + 1) * size);
  const headCols = (w) => slice(w.data, E, E, h * d, (h + 1) * d);
  const masked = Float32Array.from(per(t.scaled, L * L), (v, i) => (t.mask.data[i] === -Infinity ? -Infinity : v));
  const raw = ex.stats.rawScoreVariance[h];
  const scaled = ex.stats.scaledScoreVariance[h];
  const hl = H > 1 ? ` (head ${h + 1})` : "";

  const rows = [
    {
      caption: `1. Embed each token and add its position: X = E + P`,
      items: [
        block({
          title: "E token embeddings",
          data: ex.tokenEmbeddings.data,
          rows: L,
          cols: E,
          kind: "signed",
          rowLabels: tokens,
          id: "embeddings",
        }),
        operator("+"),
        block({ title: "P positions", data: ex.positions.data, rows: L, cols: E, kind: "signed", id: "positions" }),
        operator("="),
        block({ title: "X", data: t.x.data, rows: L, cols: E, kind: "signed", id: "x" }),
      ],
    },
    ...[
      ["Q", "wq", t.q],
      ["K", "wk", t.k],
      ["V", "wv", t.v],
    ].map(([name, w, out], n) => ({
      caption: `${2 + n}. Project: ${name} = X · W_${name}${hl}, columns ${h * d + 1}–${(h + 1) * d} of W_${name}`,
      items: [
        block({ title: "X", data: t.x.data, rows: L, cols: E, kind: "signed", rowLabels: tokens, id: `x-${name}` }),
        operator("·"),
        block({
          title: `W_${name}${hl}`,
          data: headCols(ex.projections[w]),
          rows: E,
          cols: d,
          kind: "signed",
          id: `w${name.toLowerCase()}`,
        }),
        operator("="),
        block({ title: `${name}${hl}`, data: per(out, L * d), rows: L, cols: d, kind: "signed", id: name.toLowerCase() }),
      ],
    })),
    {
      caption: `5. Score every query against every key: Q · Kᵀ${hl}`,
      items: [
        block({ title: "QKᵀ scores", data: per(t.scores, L * L), rows: L, cols: L, kind: "signed", rowLabels: tokens, id: "scores" }),
      ],
    },
    {
      caption: `6. Scale by 1/√d = 1/√${d} = ${fmt2(t.scale)}: the variance of the scores drops from ${fmt2(raw)} to ${fmt2(scaled)}, so softmax does not saturate`,
      items: [block({ title: "QKᵀ / √d", data: per(t.scaled, L * L), rows: L, cols: L, kind: "signed", rowLabels: tokens, id: "scaled" })],
    },
    {
      caption: `7. Mask: ${ex.options.causal ? "causal, a query may not see later keys (−∞ above the diagonal)" : "full attention, nothing is masked"}`,
      items: [
        block({ title: "mask", data: t.mask.data, rows: L, cols: L, kind: "mask", rowLabels: tokens, id: "mask" }),
        operator("+"),
        block({ title: "scaled + mask", data: masked, rows: L, cols: L, kind: "signed", id: "masked" }),
      ],
    },
    {
      caption: `8. Softmax each row: weights are positive and sum to 1; −∞ becomes exactly 0`,
      items: [
        block({ title: `weights${hl}`, data: per(t.weights, L * L), rows: L, cols: L, kind: "weights", rowLabels: tokens, id: "weights" }),
      ],
    },
    {
      caption: `9. Mix the values: head output = weights · V${hl}`,
      items: [
        block({ title: "weights", data: per(t.weights, L * L), rows: L, cols: L, kind: "weights", rowLabels: tokens, id: "weights-v" }),
        operator("·"),
        block({ title: "V", data: per(t.v, L * d), rows: L, cols: d, kind: "signed", id: "v-mix" }),
        operator("="),
        block({ title: `output${hl}`, data: per(t.headOutputs, L * d), rows: L, cols: d, kind: "signed", id: "head-output" }),
      ],
    },
    {
      caption: `10. Concatenate the ${H} head${H > 1 ? "s" : ""} and project: output = concat · W_O`,
      items: [
        block({ title: "concat", data: t.concat.data, rows: L, cols: E, kind: "signed", rowLabels: tokens, id: "concat" }),
        operator("·"),
        block({ title: "W_O", data: ex.projections.wo.data, rows: E, cols: E, kind: "signed", id: "wo" }),
        operator("="),
        block({ title: "output", data: t.output.data, rows: L, cols: E, kind: "signed", id: "output" }),
      ],
    },
    {
      caption: `11. Add back the input (residual): the contextual embedding = X + output`,
      items: [
        block({ title: "X + output", data: ex.contextual.data, rows: L, cols: E, kind: "signed", rowLabels: tokens, id: "contextual" }),
      ],
    },
  ];

  const gap = 10;
  let y = 36;
  const placed = rows.map((row) => {
    const top = y + 18;
    const height = Math.max(...row.items.map((i) => i.height));
    y = top + height + 22;
    return { ...row, top, height };
  });
  const width = Math.max(560, ...rows.map((r) => r.items.reduce((s, i) => s + i.width + gap, 0)));
  const height = y;

  return figureSvg({
    view: "steps",
    width,
    height,
    label: `${title}: every step of self-attention with its numbers`,
    palette,
    title,
    titleX: 4,
    titleY: 20,
    content: svg`
    ${placed.map((row) => {
      let x = 4;
      return svg`<g class="step">
        <text x="4" y=${row.top - 6} font-size="12" fill=${palette.accent}>${row.caption}</text>
        ${row.items.map((item) => {
          const out = item.render(x, row.top, palette);
          x += item.width + gap;
          return out;
        })}
      </g>`;
    })}
    `,
  });
}
