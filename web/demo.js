// The demo page: controls and a sentence drive one <attn-lens>; the whole state lives in the URL.
import "./element/define.js";
import { DEFAULTS, MAX_HEADS, normalizeState, paramsToRaw, stateToParams } from "./state.js";
import { download, explanationToJson, weightsToCsv } from "./export.js";

const $ = (selector) => document.querySelector(selector);
const figure = $("#figure");
const sentenceInput = $("#sentence");
const DIMS = [4, 8, 16, 32, 64, 128, 256];
const WORKED_EXAMPLE = {
  sentence: "the cat sat",
  dim: 4,
  heads: 1,
  head: "mean",
  view: "steps",
  mode: "causal",
  seed: 7,
  positional: "sinusoidal",
  init: "xavier",
};

const params = new URLSearchParams(location.search);
if (params.get("embed") === "1") document.body.classList.add("embed");
let { state, problems } = normalizeState(paramsToRaw(params));

function fillSelect(select, values, label = String) {
  select.replaceChildren(
    ...values.map((v) => {
      const option = document.createElement("option");
      option.value = String(v);
      option.textContent = label(v);
      return option;
    }),
  );
}

fillSelect(
  $("#heads"),
  Array.from({ length: MAX_HEADS }, (_, i) => i + 1),
);
fillSelect($("#dim"), DIMS);

/** Shows the state in the controls (never the other way round, except through events). */
function showState() {
  if (sentenceInput.value !== state.sentence) sentenceInput.value = state.sentence;
  for (const input of document.querySelectorAll('input[name="mode"], input[name="view"]'))
    input.checked = state[input.name] === input.value;
  $("#heads").value = String(state.heads);
  fillSelect($("#head"), ["mean", ...Array.from({ length: state.heads }, (_, h) => h)], (h) =>
    h === "mean" ? "Mean of heads" : `Head ${h + 1}`,
  );
  $("#head").value = String(state.head);
  for (const option of $("#dim").options) option.disabled = Number(option.value) % state.heads !== 0;
  if (!DIMS.includes(state.dim))
    fillSelect(
      $("#dim"),
      [...DIMS, state.dim].sort((a, b) => a - b),
    );
  $("#dim").value = String(state.dim);
  $("#seed").value = String(state.seed);
  $("#init").value = state.init;
  $("#positional").checked = state.positional === "sinusoidal";
}

/** Pushes the state to the figure and the URL. */
function apply() {
  for (const key of Object.keys(DEFAULTS)) figure.setAttribute(key, String(state[key]));
  document.documentElement.dataset.theme = state.theme;
  const query = stateToParams(state);
  if (document.body.classList.contains("embed")) query.set("embed", "1");
  const search = query.toString();
  history.replaceState(null, "", search ? `?${search}` : location.pathname);
}

function update(changes) {
  const next = { ...state, ...changes };
  if (changes.heads !== undefined) {
    if (next.head !== "mean" && next.head >= next.heads) next.head = "mean";
    if (next.dim % next.heads !== 0) next.dim = DIMS.find((d) => d % next.heads === 0 && d >= next.dim) ?? next.heads * 16;
  }
  ({ state, problems } = normalizeState(next));
  showState();
  apply();
}

sentenceInput.addEventListener("input", () => update({ sentence: sentenceInput.value }));
for (const input of document.querySelectorAll('input[name="mode"], input[name="view"]')) {
  input.addEventListener("change", () => update({ [input.name]: input.value }));
}
$("#heads").addEventListener("change", (e) => update({ heads: Number(e.target.value) }));
$("#head").addEventListener("change", (e) => update({ head: e.target.value === "mean" ? "mean" : Number(e.target.value) }));
$("#dim").addEventListener("change", (e) => update({ dim: Number(e.target.value) }));
$("#seed").addEventListener("change", (e) => {
  const seed = Number(e.target.value);
  update({ seed: Number.isInteger(seed) && seed >= 0 ? seed : state.seed });
});
$("#init").addEventListener("change", (e) => update({ init: e.target.value }));
$("#positional").addEventListener("change", (e) => update({ positional: e.target.checked ? "sinusoidal" : "none" }));
for (const button of document.querySelectorAll("[data-sentence]")) {
  button.addEventListener("click", () => update({ sentence: button.dataset.sentence }));
}
$("#worked-example").addEventListener("click", () => update(WORKED_EXAMPLE));

figure.addEventListener("attn-lens-change", (e) => update({ head: e.detail.head === "mean" ? "mean" : Number(e.detail.head) }));

figure.addEventListener("attn-lens-render", (e) => {
  const { figure: result, error, ms } = e.detail;
  const tokens = $("#tokens");
  const message = $("#message");
  const ex = result && !result.empty ? (result.causal ?? result.full) : null;
  tokens.replaceChildren(
    ...(ex ? ex.tokens : []).map((t, i) => {
      const chip = document.createElement("li");
      chip.textContent = t.text;
      chip.title = `token ${i}`;
      return chip;
    }),
  );
  if (error) message.textContent = error;
  else if (!result || result.empty) message.textContent = "Type a sentence above to see how its words attend to each other.";
  else if (result.truncated) message.textContent = `That is ${result.totalTokens} tokens; the figure shows the first ${ex.tokens.length}.`;
  else message.textContent = problems.join(" ");
  $("#timing").textContent = ex ? `computed and drawn in ${ms.toFixed(1)} ms` : "";
  // Time from navigation to the first figure in the DOM, for the browser tests' report.
  document.body.dataset.firstFigureMs ??= performance.now().toFixed(1);
});

$("#copy-link").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(location.href);
    $("#copy-link").textContent = "Link copied";
  } catch {
    $("#copy-link").textContent = "Copy the address bar";
  }
  setTimeout(() => ($("#copy-link").textContent = "Copy link"), 1500);
});

const current = () => {
  const result = figure.explanation;
  return result && !result.empty ? result : null;
};
$("#export-json").addEventListener("click", () => {
  const result = current();
  if (!result) return;
  const json = Object.fromEntries(["causal", "full"].filter((m) => result[m]).map((m) => [m, explanationToJson(result[m])]));
  download(JSON.stringify(json, null, 1), "attnlens-matrices.json", "application/json");
});
$("#export-csv").addEventListener("click", () => {
  const result = current();
  if (!result) return;
  const ex = result.causal ?? result.full;
  download(weightsToCsv(ex), `attnlens-weights-${result.causal ? "causal" : "full"}.csv`, "text/csv");
});

showState();
apply();
