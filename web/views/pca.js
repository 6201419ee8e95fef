// PCA of each word before (X) and after context (X + attention output), with an arrow between.
import { svg } from "lit";
import { scaleLinear } from "d3-scale";
import { headColor } from "../theme.js";
import { figureSvg, fmt2, pct, shorten } from "./common.js";

/**
 * @param {object} p
 * @param {string[]} p.tokens
 * @param {Float32Array} p.original    [L, 2]
 * @param {Float32Array} p.contextual  [L, 2]
 * @param {number[]} p.explained       variance fraction of each axis
 * @param {object} p.palette
 * @param {string} p.title
 */
export function pcaView({ tokens, original, contextual, explained, palette, title }) {
  const L = tokens.length;
  const width = 560;
  const height = 440;
  const m = { left: 48, right: 24, top: 40, bottom: 56 };
  const xs = [...original.filter((_, i) => i % 2 === 0), ...contextual.filter((_, i) => i % 2 === 0)];
  const ys = [...original.filter((_, i) => i % 2 === 1), ...contextual.filter((_, i) => i % 2 === 1)];
  const pad = (lo, hi) => (hi - lo < 1e-6 ? [lo - 1, hi + 1] : [lo, hi]);
  const x = scaleLinear()
    .domain(pad(Math.min(...xs), Math.max(...xs)))
    .nice()
    .range([m.left, width - m.right]);
  const y = scaleLinear()
    .domain(pad(Math.min(...ys), Math.max(...ys)))
    .nice()
    .range([height - m.bottom, m.top]);
  const color = palette.accent;

  return figureSvg({
    view: "pca",
    width,
    height,
    label: `${title}: how context moves each of ${L} words, first two principal components`,
    palette,
    title,
    titleX: m.left,
    titleY: 20,
    defs: svg`
      <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
        <path d="M 0 0 L 10 5 L 0 10 z" fill=${palette.muted}></path>
      </marker>
    `,
    content: svg`
    ${x.ticks(6).map(
      (t) => svg`<g><line x1=${x(t)} x2=${x(t)} y1=${m.top} y2=${height - m.bottom} stroke=${palette.grid}></line>
      <text x=${x(t)} y=${height - m.bottom + 14} font-size="10" text-anchor="middle" fill=${palette.muted}>${fmt2(t)}</text></g>`,
    )}
    ${y.ticks(6).map(
      (t) => svg`<g><line x1=${m.left} x2=${width - m.right} y1=${y(t)} y2=${y(t)} stroke=${palette.grid}></line>
      <text x=${m.left - 6} y=${y(t) + 3} font-size="10" text-anchor="end" fill=${palette.muted}>${fmt2(t)}</text></g>`,
    )}
    <text x=${(m.left + width - m.right) / 2} y=${height - 24} font-size="11" text-anchor="middle" fill=${palette.muted}>
      PC 1 (${pct(explained[0])} of the variance of X)
    </text>
    <text
      transform=${`translate(14,${(m.top + height - m.bottom) / 2}) rotate(-90)`}
      font-size="11"
      text-anchor="middle"
      fill=${palette.muted}
    >
      PC 2 (${pct(explained[1])})
    </text>
    ${tokens.map((t, i) => {
      const [x0, y0, x1, y1] = [x(original[2 * i]), y(original[2 * i + 1]), x(contextual[2 * i]), y(contextual[2 * i + 1])];
      const moved = Math.hypot(x1 - x0, y1 - y0) > 4;
      return svg`<g class="word" data-i=${i}>
        ${moved ? svg`<line x1=${x0} y1=${y0} x2=${x1} y2=${y1} stroke=${palette.muted} stroke-width="1.2" marker-end="url(#arrow)"></line>` : ""}
        <circle class="original" cx=${x0} cy=${y0} r="4" fill="none" stroke=${color} stroke-width="1.5"
          data-x=${String(original[2 * i])} data-y=${String(original[2 * i + 1])}><title>${t} before context</title></circle>
        <circle class="contextual" cx=${x1} cy=${y1} r="4.5" fill=${headColor(1)}
          data-x=${String(contextual[2 * i])} data-y=${String(contextual[2 * i + 1])}><title>${t} after context</title></circle>
        <text x=${x1 + 7} y=${y1 - 6} font-size="11" fill=${palette.foreground}>${shorten(t, 14)}</text>
      </g>`;
    })}
    <g transform=${`translate(${m.left},${height - 10})`} font-size="10" fill=${palette.muted}>
      <circle cx="4" cy="-3" r="4" fill="none" stroke=${color} stroke-width="1.5"></circle>
      <text x="12" y="0">X = embedding + position</text>
      <circle cx="170" cy="-3" r="4.5" fill=${headColor(1)}></circle>
      <text x="180" y="0">X + attention output (after context)</text>
    </g>
    `,
  });
}
