// What <attn-lens-train> (train.js) draws from its reports: the status line, the curve, its text
// alternative and the scores table. A chunk of its own, fetched with the worker when a training
// figure starts, so that element.js (what every plain figure fetches) stays small; D3's scale
// comes with it (shared with the PCA view).
import { html, nothing } from "lit";
import { scaleLinear } from "d3-scale";
import { copies, formed } from "../train/criteria.js";

export { copies, formed };

/** The status line after report r; `skipped` is the snapshot's step, or null. */
export function describe(history, r, skipped) {
  const formedAt = history.find(formed);
  const copiedAt = history.find(copies);
  const end = r.totalSteps > 0 ? ` to the run's last step (${r.totalSteps})` : " to the end of the run";
  const eta = Number.isFinite(r.eta) && r.eta > 0 ? `, about ${formatSeconds(r.eta)}${end} at this speed` : "";
  const speed = r.tokensPerSecond > 0 ? `, ${Math.round(r.tokensPerSecond)} tokens/s${eta}` : "";
  const from =
    skipped === null
      ? ""
      : `Skipped ahead to a snapshot of this run at step ${skipped} (trained in Node by scripts/train-induction.mjs with these settings; Start goes on from it). `;
  return (
    `${from}Step ${r.step}, ${(r.tokens / 1e6).toFixed(2)} M tokens, ${r.seconds.toFixed(1)} s of training${speed}. ` +
    (formedAt
      ? `The induction head formed at step ${formedAt.step} (${formedAt.seconds.toFixed(1)} s).`
      : copiedAt
        ? `The second copy has cost under a third of the first since step ${copiedAt.step} (${copiedAt.seconds.toFixed(1)} s); no head scores 0.4 as an induction head yet.`
        : "No induction head yet (induction ≥ 0.4 and second-copy loss under a third of the first's).")
  );
}

/** 457 → "7 min 37 s", 42.4 → "42 s". */
export function formatSeconds(seconds) {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** The loss on each copy (left axis) and the best heads' scores (right axis), per step. */
export function drawCurve(canvas, history, color) {
  const dpr = devicePixelRatio || 1;
  const width = canvas.clientWidth || 600;
  const height = canvas.clientHeight || 260;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  ctx.clearRect(0, 0, width, height);
  if (!history.length) return;
  const margin = { left: 52, right: 44, top: 10, bottom: 44 };
  const x = scaleLinear([0, Math.max(1, history.at(-1).step)], [margin.left, width - margin.right]);
  const maxLoss = Math.max(...history.map((r) => Math.max(r.first, r.second)));
  const y = scaleLinear([0, maxLoss], [height - margin.bottom, margin.top]);
  const y2 = scaleLinear([0, 1], [height - margin.bottom, margin.top]);
  ctx.font = "12px system-ui";
  ctx.fillStyle = color;
  // As many step labels as fit with a gap between them (at 360 px, six collided): D3 picks
  // round numbers, and a label that would still touch the previous one is skipped.
  const plotWidth = width - margin.left - margin.right;
  const widest = ctx.measureText(String(x.domain()[1])).width;
  let right = -Infinity;
  ctx.textAlign = "center";
  for (const t of x.ticks(Math.max(2, Math.min(6, Math.floor(plotWidth / (widest + 24)))))) {
    const label = String(t);
    const half = ctx.measureText(label).width / 2;
    if (x(t) - half < right + 8) continue;
    ctx.fillText(label, x(t), height - margin.bottom + 16);
    right = x(t) + half;
  }
  ctx.fillText("training step", margin.left + plotWidth / 2, height - 6);
  ctx.textAlign = "end";
  for (const t of y.ticks(4)) ctx.fillText(t.toFixed(1), margin.left - 6, y(t) + 4);
  ctx.textAlign = "start";
  for (const t of y2.ticks(4)) ctx.fillText(t.toFixed(1), width - margin.right + 6, y2(t) + 4);
  // Axis titles, turned to run along the axes.
  const title = (text, at, angle) => {
    ctx.save();
    ctx.translate(at, margin.top + (height - margin.top - margin.bottom) / 2);
    ctx.rotate(angle);
    ctx.textAlign = "center";
    ctx.fillText(text, 0, 0);
    ctx.restore();
  };
  title("loss, nats", 12, -Math.PI / 2);
  title("head score", width - 8, Math.PI / 2);
  const line = (key, scale, stroke) => {
    ctx.strokeStyle = stroke;
    ctx.lineWidth = 2;
    ctx.beginPath();
    history.forEach((r, i) => (i ? ctx.lineTo : ctx.moveTo).call(ctx, x(r.step), scale(r[key])));
    ctx.stroke();
  };
  line("first", y, "#e8590c");
  line("second", y, "#3b5bdb");
  line("bestInduction", y2, "#2f9e44");
  line("bestPrevious", y2, "#ae3ec9");
}

const swatch = (color) => html`<span class="swatch" style="background: ${color}"></span>`;

/** The curve's key and text alternative: what each line is, and the last report's values. */
export function curveText(history) {
  const r = history.at(-1);
  if (!r) return "";
  return html`${swatch("#e8590c")}Orange: loss on the first copy (left axis, nats; chance is ln ${r.vocab} =
  ${Math.log(r.vocab).toFixed(2)}). ${swatch("#3b5bdb")}Blue: loss on the second copy. ${swatch("#2f9e44")}Green: the best head's induction
  score (right axis). ${swatch("#ae3ec9")}Purple: the best previous-token score. Step ${r.step}: first ${r.first.toFixed(3)}, second
  ${r.second.toFixed(3)}, induction ${r.bestInduction.toFixed(2)}, previous-token ${r.bestPrevious.toFixed(2)}.`;
}

/** Every head's induction and previous-token score after report r, the best of each in bold. */
export function scoresTable(r) {
  if (!r) return nothing;
  const heads = r.induction[0].length;
  const rows = (name, m) => {
    const best = Math.max(...m.flat());
    return m.map(
      (row, l) =>
        html`<tr>
          <th scope="row">${name}, layer ${l + 1}</th>
          ${row.map((v) => html`<td class=${v === best && v > 0 ? "strong" : ""}>${v.toFixed(2)}</td>`)}
        </tr>`,
    );
  };
  return html`<table class="scores">
    <caption>
      Each head's scores at step ${r.step} (on the probe; the best in bold)
    </caption>
    <thead>
      <tr>
        <th scope="col"></th>
        ${Array.from({ length: heads }, (_, h) => html`<th scope="col">head ${h + 1}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows("induction", r.induction)} ${rows("previous-token", r.previous)}
    </tbody>
  </table>`;
}
