// Token-to-token lines, the way BertViz's head view draws attention: queries on the left, keys
// on the right, one line per (query, key, head) whose opacity is the weight, a colour per head.
import { svg } from "lit";
import { headColor } from "../theme.js";
import { figureSvg, labelWidth, shorten } from "./common.js";

/** Lines lighter than this are not drawn (they would be invisible anyway). */
const MIN_WEIGHT = 0.01;

/**
 * @param {object} p
 * @param {string[]} p.tokens
 * @param {Float32Array} p.weights   [H, L, L]
 * @param {boolean[]} p.visible      which heads to draw
 * @param {number|null} p.focus      a query token whose row alone is drawn, or null
 * @param {object} p.palette
 * @param {string} p.title
 */
export function linesView({ tokens, weights, visible, focus, palette, title }) {
  const L = tokens.length;
  const H = visible.length;
  const row = Math.max(12, Math.min(22, Math.floor(560 / L)));
  const fontSize = Math.min(13, row - 3);
  const labels = tokens.map((t) => shorten(t, 14));
  const labelW = Math.min(120, Math.max(40, ...labels.map(labelWidth)));
  const leftX = labelW + 4;
  const rightX = leftX + 240;
  const top = 48;
  const width = rightX + labelW + 8;
  const height = top + L * row + 20;
  const y = (i) => top + i * row + row / 2;

  const lines = [];
  for (let h = 0; h < H; h++) {
    if (!visible[h]) continue;
    const color = headColor(h);
    for (let i = 0; i < L; i++) {
      if (focus !== null && focus !== i) continue;
      for (let j = 0; j < L; j++) {
        const w = weights[(h * L + i) * L + j];
        if (w < MIN_WEIGHT) continue;
        lines.push(svg`<line x1=${leftX + 6} y1=${y(i)} x2=${rightX - 6} y2=${y(j)} stroke=${color}
          stroke-opacity=${Math.min(1, w).toFixed(3)} stroke-width="2" data-h=${h} data-i=${i} data-j=${j}
          data-w=${String(w)}></line>`);
      }
    }
  }
  const visibleCount = visible.filter(Boolean).length;

  return figureSvg({
    view: "lines",
    width,
    height,
    label: `${title}: attention lines between ${L} tokens for ${visibleCount} heads`,
    palette,
    title,
    titleX: 8,
    titleY: 18,
    content: svg`
    <text x=${leftX} y="38" font-size="10" text-anchor="end" fill=${palette.muted}>query</text>
    <text x=${rightX} y="38" font-size="10" fill=${palette.muted}>key</text>
    ${visible.map(
      (on, h) => svg`<g transform=${`translate(${leftX + 40 + h * 22},28)`} opacity=${on ? 1 : 0.25}>
      <rect width="14" height="14" rx="2" fill=${headColor(h)}></rect><title>head ${h + 1}</title></g>`,
    )}
    <g class="links">${lines}</g>
    ${labels.map(
      (t, i) => svg`<text class="query" data-i=${i} x=${leftX} y=${y(i) + fontSize / 3} text-anchor="end"
      font-size=${fontSize} font-weight=${focus === i ? 700 : 400} fill=${palette.foreground}
      ><title>${tokens[i]}</title>${t}</text>`,
    )}
    ${labels.map(
      (t, j) => svg`<text class="key" data-j=${j} x=${rightX} y=${y(j) + fontSize / 3}
      font-size=${fontSize} fill=${palette.foreground}><title>${tokens[j]}</title>${t}</text>`,
    )}
    `,
  });
}
