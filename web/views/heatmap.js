// Heatmap of attention weights: query rows x key columns, viridis colours, hatched masked cells,
// a legend, and each cell's exact value in data attributes and a tooltip.
import { nothing, svg } from "lit";
import { weightColor, textOn } from "../theme.js";
import { cellText, figureSvg, labelWidth, shorten } from "./common.js";

/**
 * @param {object} p
 * @param {string[]} p.tokens      token texts (L)
 * @param {Float32Array} p.matrix  weights [L, L]
 * @param {Float32Array} p.mask    additive mask [L, L]: -Infinity where masked
 * @param {object} p.palette       theme colours
 * @param {string} p.title         caption drawn above the grid
 */
export function heatmapView({ tokens, matrix, mask, palette, title }) {
  const L = tokens.length;
  const cell = Math.max(7, Math.min(36, Math.floor(480 / L)));
  const labels = tokens.map((t) => shorten(t, 12));
  const margin = Math.min(110, Math.max(36, ...labels.map(labelWidth)));
  const left = margin;
  const top = 28 + margin;
  const grid = cell * L;
  const legendTop = top + grid + 18;
  const width = Math.max(left + grid + 16, left + 340);
  const height = legendTop + 46;
  const showNumbers = cell >= 30;
  const withTooltips = L <= 24;
  const fontSize = Math.min(12, Math.max(8, cell - 2));
  const stops = Array.from({ length: 11 }, (_, i) => i / 10);

  const cells = [];
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < L; j++) {
      const w = matrix[i * L + j];
      const masked = mask[i * L + j] === -Infinity;
      const fill = masked ? "url(#hatch)" : weightColor(w);
      // Each cell carries its exact weight; small grids also get a native tooltip (for large
      // ones the element's readout shows the hovered value, and 4 096 tooltips cost a redraw).
      const tooltip = withTooltips
        ? svg`<title>${tokens[i]} → ${tokens[j]}: ${masked ? "masked (weight 0)" : w.toFixed(4)}</title>`
        : nothing;
      cells.push(svg`<rect class="cell" x=${left + j * cell} y=${top + i * cell} width=${cell} height=${cell}
        fill=${fill} data-i=${i} data-j=${j} data-w=${String(w)} data-masked=${masked ? "true" : "false"}>${tooltip}</rect>`);
      if (showNumbers && !masked) {
        cells.push(svg`<text x=${left + j * cell + cell / 2} y=${top + i * cell + cell / 2 + 4} text-anchor="middle"
          font-size="10" fill=${textOn(fill)} pointer-events="none">${cellText(w)}</text>`);
      }
    }
  }

  return figureSvg({
    view: "heatmap",
    width,
    height,
    label: `${title}: attention weights of ${L} tokens`,
    palette,
    title,
    titleX: left,
    titleY: 18,
    tokens: L,
    defs: svg`
      <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <rect width="6" height="6" fill=${palette.maskedBackground}></rect>
        <line x1="0" y1="0" x2="0" y2="6" stroke=${palette.masked} stroke-width="2"></line>
      </pattern>
      <linearGradient id="legend-gradient">
        ${stops.map((s) => svg`<stop offset=${`${s * 100}%`} stop-color=${weightColor(s)}></stop>`)}
      </linearGradient>
    `,
    content: svg`
    ${labels.map(
      (t, i) => svg`<text class="row-label" x=${left - 6} y=${top + i * cell + cell / 2 + fontSize / 3}
      text-anchor="end" font-size=${fontSize} fill=${palette.foreground}><title>${tokens[i]}</title>${t}</text>`,
    )}
    ${labels.map(
      (t, j) => svg`<text class="col-label" transform=${`translate(${left + j * cell + cell / 2 + fontSize / 3},${top - 6}) rotate(-60)`}
      font-size=${fontSize} fill=${palette.foreground}><title>${tokens[j]}</title>${t}</text>`,
    )}
    <g class="cells">${cells}</g>
    <g class="legend" transform=${`translate(${left},${legendTop})`}>
      <rect width=${Math.min(grid, 240)} height="10" fill="url(#legend-gradient)"></rect>
      ${[0, 0.25, 0.5, 0.75, 1].map(
        (t) => svg`<text x=${t * Math.min(grid, 240)} y="24" font-size="10" text-anchor="middle"
        fill=${palette.muted}>${t}</text>`,
      )}
      <rect x=${Math.min(grid, 240) + 16} width="10" height="10" fill="url(#hatch)"></rect>
      <text x=${Math.min(grid, 240) + 30} y="9" font-size="10" fill=${palette.muted}>masked (−∞)</text>
      <text x="0" y="38" font-size="10" fill=${palette.muted}>rows: queries (who attends) · columns: keys · each row sums to 1</text>
    </g>
    `,
  });
}
