// The training page: controls drive the worker; its reports draw the curves and the grid.
import "../element/define.js";
import { scaleLinear } from "d3-scale";

const $ = (selector) => document.querySelector(selector);
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
const history = [];
// For tests and the console: every report so far.
window.trainHistory = history;
let running = false;
let lastFormed = null;
let lastCopied = null;
// null, or true while a snapshot loads, then the snapshot's step.
let skipped = null;

function options() {
  const seed = Number($("#train-seed").value.trim());
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 31 - 1)
    throw new Error(`Seed must be a whole number from 0 to 2147483647; got "${$("#train-seed").value}"`);
  return { seed, dModel: Number($("#train-size").value), lr: Number($("#train-lr").value) };
}

function reset() {
  try {
    history.length = 0;
    lastFormed = null;
    lastCopied = null;
    skipped = null;
    running = false;
    worker.postMessage({ type: "reset", options: options() });
    $("#train-status").textContent = "Creating the model…";
  } catch (error) {
    $("#train-status").textContent = error.message;
  }
  buttons();
}

function buttons() {
  $("#start").disabled = running;
  $("#pause").disabled = !running;
}

function drawCurve() {
  const canvas = $("#curve");
  const dpr = devicePixelRatio || 1;
  const width = canvas.clientWidth || 900;
  const height = 260;
  canvas.width = width * dpr;
  canvas.height = height * dpr;
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  const style = getComputedStyle(document.body);
  ctx.clearRect(0, 0, width, height);
  if (!history.length) return;
  const margin = { left: 44, right: 44, top: 10, bottom: 28 };
  const x = scaleLinear([0, Math.max(1, history.at(-1).step)], [margin.left, width - margin.right]);
  const maxLoss = Math.max(...history.map((r) => Math.max(r.first, r.second)));
  const y = scaleLinear([0, maxLoss], [height - margin.bottom, margin.top]);
  const y2 = scaleLinear([0, 1], [height - margin.bottom, margin.top]);
  ctx.font = "12px system-ui";
  ctx.fillStyle = style.color;
  for (const t of x.ticks(6)) ctx.fillText(String(t), x(t) - 8, height - 8);
  for (const t of y.ticks(4)) ctx.fillText(t.toFixed(1), 4, y(t) + 4);
  for (const t of y2.ticks(4)) ctx.fillText(t.toFixed(1), width - margin.right + 6, y2(t) + 4);
  const line = (key, scale, color) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    history.forEach((r, i) => (i ? ctx.lineTo : ctx.moveTo).call(ctx, x(r.step), scale(r[key])));
    ctx.stroke();
  };
  line("first", y, "#e8590c");
  line("second", y, "#3b5bdb");
  line("bestInduction", y2, "#2f9e44");
  line("bestPrevious", y2, "#ae3ec9");
  const r = history.at(-1);
  $("#curve-text").textContent =
    `Orange: loss on the first copy (left axis, nats; chance is ln ${r.vocab} = ${Math.log(r.vocab).toFixed(2)}). Blue: loss on the second copy. ` +
    `Green: the best head's induction score (right axis). Purple: the best previous-token score. Step ${r.step}: first ${r.first.toFixed(3)}, ` +
    `second ${r.second.toFixed(3)}, induction ${r.bestInduction.toFixed(2)}, previous-token ${r.bestPrevious.toFixed(2)}.`;
}

function skipAhead() {
  history.length = 0;
  lastFormed = null;
  lastCopied = null;
  running = false;
  skipped = true;
  worker.postMessage({ type: "skip", base: new URL("train-snapshot/", document.baseURI).href });
  $("#train-status").textContent = "Loading the snapshot…";
  buttons();
}

worker.onmessage = ({ data }) => {
  if (data.type === "history") {
    // A snapshot's curve: its settings shown in the controls, its reports drawn.
    $("#train-seed").value = String(data.options.seed);
    $("#train-size").value = String(data.options.dModel);
    $("#train-lr").value = String(data.options.lr);
    history.length = 0;
    for (const r of data.reports) history.push({ ...r, vocab: data.options.vocab });
    lastFormed = history.find((r) => r.bestInduction >= 0.4 && r.second < r.first / 3) ?? null;
    lastCopied = history.find((r) => r.second < r.first / 3) ?? null;
    return;
  }
  if (data.type === "error") {
    running = false;
    $("#train-status").textContent = data.message;
    buttons();
    return;
  }
  const r = { ...data.report, vocab: data.vocab };
  history.push(r);
  running = data.running;
  if (data.formed && !lastFormed) lastFormed = r;
  if (!lastCopied && r.second < r.first / 3) lastCopied = r;
  if (skipped === true) skipped = r.step;
  const eta = Number.isFinite(r.eta) ? `, ETA ${r.eta.toFixed(0)} s` : "";
  const speed = r.tokensPerSecond > 0 ? `, ${Math.round(r.tokensPerSecond)} tokens/s${eta}` : "";
  const from =
    skipped === null
      ? ""
      : `Skipped ahead to a snapshot of this run at step ${skipped} (trained in Node by scripts/train-induction.mjs with these settings; Start goes on from it). `;
  $("#train-status").textContent =
    `${from}Step ${r.step}, ${(r.tokens / 1e6).toFixed(2)} M tokens, ${r.seconds.toFixed(1)} s of training${speed}. ` +
    (lastFormed
      ? `The induction head formed at step ${lastFormed.step} (${lastFormed.seconds.toFixed(1)} s).`
      : lastCopied
        ? `The second copy has cost under a third of the first since step ${lastCopied.step} (${lastCopied.seconds.toFixed(1)} s); no head scores 0.4 as an induction head yet.`
        : "No induction head yet (induction ≥ 0.4 and second-copy loss under a third of the first's).");
  document.body.dataset.step = String(r.step);
  drawCurve();
  // The grid every 100 steps (and the first): redrawing it is the page's main-thread work.
  if (r.step % 100 !== 0) return buttons();
  const grid = $("#train-grid");
  grid.data = {
    tokens: data.probe.map((id) => `t${id}`),
    weights: data.grid,
    causal: true,
    title: `Step ${r.step}`,
    layerNames: r.induction.map((_, l) => `layer ${l + 1}`),
    headNames: r.induction[0].map((_, h) => `head ${h + 1}`),
  };
  buttons();
};

$("#start").addEventListener("click", () => {
  running = true;
  worker.postMessage({ type: "run" });
  buttons();
});
$("#pause").addEventListener("click", () => {
  running = false;
  worker.postMessage({ type: "pause" });
  buttons();
});
$("#reset").addEventListener("click", reset);
$("#skip").addEventListener("click", skipAhead);
for (const id of ["#train-seed", "#train-size", "#train-lr"]) $(id).addEventListener("change", reset);
addEventListener("resize", drawCurve);
reset();
