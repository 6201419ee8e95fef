// The demo page: controls and a sentence drive one <attn-lens>; the whole state lives in the URL.
// An attention file the reader opens or drops is read in the browser and shown by the same
// element; it is never uploaded and never put in the URL (a link holds a sentence and settings).
import { preloadViews } from "./element/define.js";
import { CHOICES, DEFAULTS, MAX_HEADS, MAX_SEED, dimsFor, normalizeState, paramsToRaw, stateToParams, MAX_LINK_SENTENCE } from "./state.js";
import { VIEWS } from "./views/index.js";
import { attentionToCsv, attentionToJson, download, explanationToJson, weightsToCsv } from "./export.js";
import { RANDOM_MODE_EXAMPLES, TRAINED_MODE_EXAMPLES } from "./examples.js";
import { computeFigure, loadLens } from "./lens.js";
import { setUpWriter } from "./write.js";
import { windowText } from "./figure-data.js";

const $ = (selector) => document.querySelector(selector);
const figure = $("#figure");
const sentenceInput = $("#sentence");
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
/** How the page's messages name each setting (the labels a reader sees). */
const NAMES = {
  sentence: "The sentence",
  mode: "Attention",
  view: "View",
  heads: "Heads",
  head: "Head",
  hide: "Hidden heads",
  dim: "d_model",
  seed: "Seed",
  positional: "Positional encoding",
  init: "Weights",
  theme: "Theme",
  colormap: "Colours",
  model: "Model",
};
/** Views that show the computation of random weights (not offered for the trained model). */
const RANDOM_ONLY_VIEWS = VIEWS.filter((view) => view.randomOnly).map((view) => view.name);
/** Token chips shown under the sentence (the figure shows them all). */
const MAX_CHIPS = 80;

const params = new URLSearchParams(location.search);
const embed = params.get("embed") === "1";
if (embed) document.body.classList.add("embed");
/**
 * The bare page opens on what is real: the trained models, on a sentence of their own corpus (the
 * element's defaults stay random weights and the cat, for posts that show how attention
 * computes). A link that holds any state reads what it leaves out as the library's defaults, as
 * links always have: one made before the page opened on the trained models shows what it did.
 */
const PAGE_DEFAULTS = Object.freeze({
  ...DEFAULTS,
  model: "attnlens",
  sentence: "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
});
const STATE_KEYS = new Set([...Object.keys(DEFAULTS), "h", "head", "hide", "layer"]);
const linkHoldsState = [...params.keys()].some((key) => STATE_KEYS.has(key));
const isPageDefault = (s) =>
  Object.keys(DEFAULTS).every((key) => key === "head" || key === "hide" || s[key] === PAGE_DEFAULTS[key]) &&
  s.head === "mean" &&
  !s.hide?.length;
let { state, problems } = normalizeState(paramsToRaw(params), {
  fallback: linkHoldsState ? DEFAULTS : PAGE_DEFAULTS,
  names: NAMES,
  headBase: 1,
});
/**
 * The trained model's picked layer and head (0-based; the element checks them against the model).
 * In the link as 1-based `layer` and `h`, like the random mode's head.
 */
const picked = { layer: "0", head: "mean" };
/** A preset's head category waiting for its figure (examples.js TRAINED_MODE_EXAMPLES). */
let pendingCategory = null;

/** The (layer, head) with the highest score in `category` over a model figure's heads, or null. */
function strongestHead(data, category) {
  const table = category === "induction" ? data.scores?.induction : data.categories?.map((row) => row.map((s) => s[category]));
  let best = null;
  table?.forEach((row, l) =>
    row.forEach((v, h) => {
      if (Number.isFinite(v) && (!best || v > best.v)) best = { l, h, v };
    }),
  );
  return best;
}
// A link to a view the trained models do not have falls back as the page's own switch does.
if (state.model === "attnlens" && RANDOM_ONLY_VIEWS.includes(state.view)) {
  problems.push(`The trained models have no "${state.view}" view (it shows one layer of random weights); showing all heads`);
  state.view = "grid";
}
if (state.model === "attnlens") {
  const n = (text) => (/^\d+$/.test(text ?? "") && Number(text) >= 1 ? String(Number(text) - 1) : null);
  picked.layer = n(params.get("layer")) ?? "0";
  picked.head = n(params.get("h")) ?? "mean";
  state.head = "mean";
}
let linkCut = false;
let urlTimer;
let link = location.href;
/** When the input that the next figure answers arrived (event time), for the timing line. */
let inputAt = null;
/** The training card's thumbnail, once drawn: redraw(state) follows the theme and colour map. */
const trainCard = {};
/** The render waiting for its painted frame: { inputAt, shown }. */
let paintedFrom = null;

function fillSelect(select, values, label = String) {
  // Called on every keystroke (showState): options already as wanted are left alone, since new
  // ones would be styled and laid out again before the figure's frame.
  const same =
    select.options.length === values.length &&
    values.every((v, i) => select.options[i].value === String(v) && select.options[i].textContent === label(v));
  if (same) return;
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
fillSelect($("#init"), CHOICES.init, (init) => init[0].toUpperCase() + init.slice(1));
// A button per view of the registry; those of random weights only are hidden for a model (data-for).
$("#views").append(
  ...VIEWS.map((view) => {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "radio";
    input.name = "view";
    input.value = view.name;
    label.append(input, ` ${view.label}`);
    if (view.randomOnly) label.dataset.for = "random";
    return label;
  }),
);
for (const [model, examples] of [
  ["random", RANDOM_MODE_EXAMPLES],
  ["attnlens", TRAINED_MODE_EXAMPLES],
]) {
  for (const example of examples) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.for = model;
    button.textContent = example.label;
    button.addEventListener("click", (e) => {
      // A preset of the trained models opens the head strongest in its category on its
      // sentence, once the figure is computed (render listener below).
      pendingCategory = example.category ?? null;
      if (model === "attnlens") Object.assign(picked, { layer: "0", head: "mean" });
      update(
        { sentence: example.sentence, ...(example.view ? { view: example.view } : {}), ...(example.mode ? { mode: example.mode } : {}) },
        e,
      );
    });
    $("#example-buttons").append(button);
  }
}

/** Shows the state in the controls (never the other way round, except through events). */
function showState() {
  if (sentenceInput.value !== state.sentence) sentenceInput.value = state.sentence;
  document.body.dataset.model = state.model;
  for (const input of document.querySelectorAll('input[name="mode"], input[name="view"], input[name="model"]'))
    input.checked = (input.name === "mode" && checkpointShown() ? "causal" : state[input.name]) === input.value;
  $("#specials").checked = state.specials === "hide";
  $("#heads").value = String(state.heads);
  // Only d_model values the heads divide evenly are offered, each with its size per head.
  const dims = dimsFor(state.heads);
  if (!dims.includes(state.dim)) dims.push(state.dim);
  fillSelect(
    $("#dim"),
    dims.sort((a, b) => a - b),
    (d) => `${d} (${state.heads} × ${d / state.heads})`,
  );
  $("#dim").value = String(state.dim);
  fillSelect($("#head"), ["mean", ...Array.from({ length: state.heads }, (_, h) => h)], (h) =>
    h === "mean" ? "Mean of heads" : `Head ${h + 1}`,
  );
  $("#head").value = String(state.head);
  $("#seed").value = String(state.seed);
  $("#init").value = state.init;
  $("#positional").checked = state.positional === "sinusoidal";
  $("#theme").value = state.theme;
  $("#colormap").value = state.colormap;
}

/** Whether the figure shows weights from a file (the element validates head and layer against it). */
const fileShown = () => document.body.classList.contains("file-mode");
/** Whether a reader's checkpoint computes the figure (openModel). */
const checkpointShown = () => document.body.classList.contains("checkpoint-mode");
/** Whether a trained model computes the figure (its heads and layers are the element's too). */
const trainedShown = () => state.model === "attnlens" || checkpointShown();
const FILE_OWNED = ["head", "hide"];

/** Pushes the state to the figure and the URL. */
function apply() {
  if (trainedShown() && !fileShown() && !checkpointShown()) {
    figure.layer = picked.layer;
    figure.head = picked.head;
  }
  for (const key of Object.keys(DEFAULTS)) {
    if ((fileShown() || trainedShown()) && FILE_OWNED.includes(key)) continue;
    if (key === "model" && checkpointShown()) continue;
    let value = key === "hide" ? state.hide.map((h) => h + 1).join(",") : String(state[key]);
    // With the trained models, mode picks the model: causal, the encoder (full) or both; a
    // reader's checkpoint is causal or not as it was trained.
    if (key === "mode" && checkpointShown()) value = "causal";
    if (figure.getAttribute(key) !== value) figure.setAttribute(key, value);
  }
  document.documentElement.dataset.theme = state.theme;
  trainCard.redraw?.(state);
  // The address bar and the link follow a moment later: building a URL for a long text and
  // replaceState cost milliseconds the figure needs.
  clearTimeout(urlTimer);
  urlTimer = setTimeout(updateLink, 120);
}

function updateLink() {
  // The bare page's state is the bare address; any other state is written against the
  // library's defaults, which is how a link is read (linkHoldsState).
  const bare = isPageDefault(state) && picked.layer === "0" && picked.head === "mean";
  const { params: query, cut } = bare ? { params: new URLSearchParams(), cut: false } : stateToParams(state, DEFAULTS);
  // A link always names its model: an empty query would be the bare page's.
  if (!bare && !query.has("model")) query.set("model", state.model);
  linkCut = cut;
  if (trainedShown()) {
    if (picked.layer !== "0") query.set("layer", String(Number(picked.layer) + 1));
    if (picked.head !== "mean") query.set("h", String(Number(picked.head) + 1));
  }
  writer.linkParams(query);
  if (embed) query.set("embed", "1");
  const search = query.toString();
  link = new URL(search ? `?${search}` : location.pathname, location.href).href;
  history.replaceState(null, "", link);
  $("#link-note").textContent = cut ? `The link holds the first ${MAX_LINK_SENTENCE.toLocaleString("en")} characters of the text.` : "";
}

/** Applies `changes` from a control; `event` dates the input for the timing line. */
function update(changes, event) {
  inputAt ??= event?.timeStamp ?? performance.now();
  const previous = state;
  const next = { ...state, ...changes };
  if (next.model === "attnlens" && RANDOM_ONLY_VIEWS.includes(next.view)) next.view = "grid";
  if (changes.model) {
    // Each model has its own heads and layers: start from the mean of the first layer.
    next.head = "mean";
    next.hide = [];
    picked.layer = "0";
    picked.head = "mean";
  }
  if (changes.heads !== undefined && changes.dim === undefined) {
    // Keep each head's size (d_head) when the number of heads changes, within the d_model limit.
    const perHead = state.dim / state.heads;
    const dims = dimsFor(next.heads);
    next.dim = dims.includes(next.heads * perHead) ? next.heads * perHead : dims.at(-1);
  }
  ({ state, problems } = normalizeState(next, { fallback: state, names: NAMES, headBase: 1 }));
  // A sentence the writer did not write itself stops its run and is not marked as written.
  if (changes.sentence !== undefined) writer.sentenceSet(changes.sentence);
  // Another model computes the figure: a run writing with the one before stops.
  if (state.model !== previous.model || state.mode !== previous.mode) writer.stop();
  showState();
  apply();
  showMessage();
}

sentenceInput.addEventListener("input", (e) => update({ sentence: sentenceInput.value }, e));
// The "Continue" controls (write.js); the link follows what they change.
const writer = setUpWriter({
  figure,
  sentenceInput,
  params,
  text: state.sentence,
  changed: () => {
    // (The chips' marks: what was written may be the reader's now.)
    if (lastRender) chipsOf(lastRender);
    clearTimeout(urlTimer);
    urlTimer = setTimeout(updateLink, 120);
  },
});
for (const input of document.querySelectorAll('input[name="mode"], input[name="view"], input[name="model"]')) {
  input.addEventListener("change", (e) => {
    if (input.name === "model" && checkpointShown()) $("#close-checkpoint").click();
    update({ [input.name]: input.value }, e);
  });
}
$("#heads").addEventListener("change", (e) => update({ heads: Number(e.target.value) }, e));
$("#head").addEventListener("change", (e) => update({ head: e.target.value === "mean" ? "mean" : Number(e.target.value) }, e));
$("#dim").addEventListener("change", (e) => update({ dim: Number(e.target.value) }, e));
$("#seed").addEventListener("change", (e) => {
  const text = e.target.value.trim();
  if (/^\d+$/.test(text) && Number(text) <= MAX_SEED) {
    update({ seed: Number(text) }, e);
    return;
  }
  // An empty or out-of-range seed keeps the last one and says so (it is not silently 0 or 7).
  problems = [`Seed must be a whole number from 0 to ${MAX_SEED}; got "${text}", kept ${state.seed}.`];
  e.target.value = String(state.seed);
  showMessage();
});
$("#init").addEventListener("change", (e) => update({ init: e.target.value }, e));
$("#positional").addEventListener("change", (e) => update({ positional: e.target.checked ? "sinusoidal" : "none" }, e));
$("#theme").addEventListener("change", (e) => update({ theme: e.target.value }, e));
$("#colormap").addEventListener("change", (e) => update({ colormap: e.target.value }, e));
$("#worked-example").addEventListener("click", (e) => update({ ...WORKED_EXAMPLE, hide: [] }, e));
$("#specials").addEventListener("change", (e) => update({ specials: e.target.checked ? "hide" : "show" }, e));

figure.addEventListener("attn-lens-change", (e) => {
  if (fileShown() || trainedShown()) {
    if (!fileShown()) Object.assign(picked, { layer: e.detail.layer, head: e.detail.head });
    update({ view: e.detail.view }, e);
    return;
  }
  const hide = e.detail.hide ? e.detail.hide.split(",").map((h) => Number(h) - 1) : [];
  update({ head: e.detail.head === "mean" ? "mean" : Number(e.detail.head), hide, view: e.detail.view }, e);
});

let lastRender = null;

function showMessage() {
  const result = lastRender?.figure;
  const ex = result && !result.empty ? (result.causal ?? result.full) : null;
  const message = $("#message");
  if (lastRender?.error) message.textContent = lastRender.error;
  else if (lastRender && (!result || result.empty))
    message.textContent = "Type a sentence above to see how its words attend to each other.";
  else if (result?.truncated)
    message.textContent = `That is ${result.totalTokens} tokens; the figure shows the first ${(ex ?? figure.attention).tokens.length}.`;
  // One sentence per problem.
  else message.textContent = problems.map((p) => (/[.!?]$/.test(p) ? p : `${p}.`)).join(" ");
}

/**
 * The token chips under the sentence: one per token (up to MAX_CHIPS, then "… n more"). A
 * keystroke changes a few tokens, so the chips are updated in place (their text, title and
 * class written only where they changed) instead of made again: at 117 tokens, 80 new list
 * items a keystroke were restyled, laid out and painted.
 */
function showChips(tokens, maskable = false, total = tokens.length) {
  chipTokens = tokens;
  const wanted = tokens.slice(0, MAX_CHIPS).map((t, i) => {
    // A sub-word piece that continues the word before it (no space between): drawn joined to it.
    const before = tokens[i - 1];
    const piece =
      before &&
      !t.special &&
      !before.special &&
      before.end === t.start &&
      /^[\p{L}\p{N}]/u.test(t.text) &&
      /[\p{L}\p{N}]$/u.test(before.text);
    const mask = maskable && canMask(t);
    // Written by the model ("Continue", write.js): from where its writing began.
    const written = writer.from !== null && !t.special && t.start >= writer.from;
    return {
      text: t.text,
      title: `token ${i + 1}${piece ? " (part of the word before)" : ""}${mask ? ": click to mask it" : ""}${written ? " (written by the model)" : ""}`,
      className: [piece ? "piece" : "", mask ? "maskable" : "", written ? "written" : ""].filter(Boolean).join(" "),
      mask,
    };
  });
  // The count is the text's, not the figure's: a paste past the model's context has more tokens
  // than the figure shows (the message above says so).
  if (total > MAX_CHIPS) wanted.push({ text: `… ${total - MAX_CHIPS} more`, title: "", className: "more" });
  const list = $("#tokens");
  while (list.children.length > wanted.length) list.lastElementChild.remove();
  wanted.forEach((w, i) => {
    const chip = list.children[i] ?? list.appendChild(document.createElement("li"));
    if (chip.textContent !== w.text) chip.textContent = w.text;
    if (chip.title !== w.title) chip.title = w.title;
    if (chip.className !== w.className) chip.className = w.className;
    // A maskable chip is a button a keyboard reaches too (Enter or Space masks it).
    if (w.mask !== chip.hasAttribute("tabindex")) {
      if (w.mask) {
        chip.tabIndex = 0;
        chip.setAttribute("role", "button");
      } else {
        chip.removeAttribute("tabindex");
        chip.removeAttribute("role");
      }
    }
  });
}

// The tokens the chips show, the mask as the figure's model writes it (its maskToken: BERT's
// [MASK], RoBERTa's <mask>), and whether a token can be masked: a word piece of the sentence (not
// [CLS], [SEP] or a mask already).
let chipTokens = [];
let chipMask = "[MASK]";
const canMask = (t) => !t.special && t.end > t.start && !/^\s*(\[MASK\]|<mask>)\s*$/.test(t.text) && /\S/.test(t.text);

/**
 * Masks token `i` of the chips in the sentence: its text (less the space a byte-level token
 * carries before its word) becomes the mask token, and the figure shows what the encoder would put there.
 */
function maskChip(i) {
  const t = chipTokens[i];
  if (!t || !canMask(t)) return;
  const sentence = sentenceInput.value;
  const text = sentence.slice(t.start, t.end);
  const start = t.start + (text.length - text.trimStart().length);
  const end = t.end - (text.length - text.trimEnd().length);
  sentenceInput.value = `${sentence.slice(0, start)}${chipMask}${sentence.slice(end)}`;
  sentenceInput.dispatchEvent(new Event("input", { bubbles: true }));
}
const chipIndex = (e) => {
  const chip = e.target.closest?.("#tokens li.maskable");
  return chip ? [...chip.parentElement.children].indexOf(chip) : -1;
};
$("#tokens").addEventListener("click", (e) => {
  const i = chipIndex(e);
  if (i >= 0) maskChip(i);
});
$("#tokens").addEventListener("keydown", (e) => {
  const i = chipIndex(e);
  if (i < 0 || (e.key !== "Enter" && e.key !== " ")) return;
  e.preventDefault();
  maskChip(i);
  sentenceInput.focus();
});

/** Shows the chips of a render's figure (its detail); returns what it explains (null: nothing). */
function chipsOf(detail) {
  const result = detail.figure;
  const ex = result && !result.empty ? (result.causal ?? result.full ?? figure.attention) : null;
  const tokens = ex ? ex.tokens : [];
  chipMask = ex?.maskToken ?? "[MASK]";
  // An encoder's figure: a click on a word's chip masks it (the quickest way to ask the model).
  showChips(
    tokens,
    (detail.panels ?? []).some((p) => p.prediction === "masked-token"),
    Math.max(tokens.length, result?.totalTokens ?? 0),
  );
  return ex;
}

figure.addEventListener("attn-lens-render", (e) => {
  lastRender = e.detail;
  const result = e.detail.figure;
  const ex = chipsOf(e.detail);
  writer.show((e.detail.panels ?? []).some((p) => p.prediction === "next-token"));
  if (pendingCategory && result?.model && e.detail.panels?.length) {
    const panels = e.detail.panels;
    const data = pendingCategory === "next" ? (panels.find((p) => !p.causal) ?? panels[0]) : (panels.find((p) => p.causal) ?? panels[0]);
    const best = strongestHead(data, pendingCategory);
    pendingCategory = null;
    if (best) {
      Object.assign(picked, { layer: String(best.l), head: String(best.h) });
      apply();
    }
  }
  showMessage();
  // The timing line waits for the painted frame (attn-lens-painted), counted from this input.
  paintedFrom = { inputAt, shown: Boolean(ex) };
  inputAt = null;
  if (!ex) $("#timing").textContent = "";
  // Time from navigation to the first figure, for the browser tests' report.
  document.body.dataset.firstFigureMs ??= performance.now().toFixed(1);
});

// From the reader's input (its event time) to the painted frame that shows the figure,
// scheduling, drawing and painting included.
figure.addEventListener("attn-lens-painted", (e) => {
  if (!paintedFrom?.shown) return;
  const ms = paintedFrom.inputAt !== null ? performance.now() - paintedFrom.inputAt : e.detail.ms;
  paintedFrom = null;
  $("#timing").textContent = `computed and drawn in ${ms.toFixed(1)} ms`;
});

$("#copy-link").addEventListener("click", async () => {
  clearTimeout(urlTimer);
  updateLink();
  try {
    await navigator.clipboard.writeText(link);
    $("#copy-link").textContent = linkCut ? "Link copied (text cut)" : "Link copied";
  } catch {
    $("#copy-link").textContent = "Copy the address bar";
  }
  setTimeout(() => ($("#copy-link").textContent = "Copy link"), 1500);
});

const current = () => {
  const result = figure.explanation;
  return result && !result.empty ? result : null;
};
$("#export-json").addEventListener("click", async () => {
  if (figure.attention) {
    download(JSON.stringify(attentionToJson(figure.attention)), "attention.attnlens.json", "application/json");
    return;
  }
  let result = current();
  if (!result) return;
  // The figure skips the stages its view does not draw (and the every-step view traces the scores
  // of the head it shows); the export has every one of them, for every head.
  const shown = result.causal ?? result.full;
  if (!shown.trace || shown.options.traceHead !== undefined) result = computeFigure(await loadLens(), result.state, { trace: true });
  const json = Object.fromEntries(["causal", "full"].filter((m) => result[m]).map((m) => [m, explanationToJson(result[m])]));
  download(JSON.stringify(json, null, 1), "attnlens-matrices.json", "application/json");
});
$("#export-csv").addEventListener("click", () => {
  if (figure.attention) {
    download(attentionToCsv(figure.attention), "attention-weights.csv", "text/csv");
    return;
  }
  const result = current();
  if (!result) return;
  download(weightsToCsv(result), `attnlens-weights-${state.mode}.csv`, "text/csv");
});

// ---- attention files: a picker and drag-and-drop; nothing leaves the browser ---------------------

const fileStatus = $("#file-status");
async function openFiles(files) {
  if (!files.length) return;
  fileStatus.textContent = `Reading ${[...files].map((f) => f.name).join(", ")}…`;
  if (checkpointShown()) $("#close-checkpoint").click();
  document.body.classList.add("file-mode");
  $("#close-file").hidden = false;
  try {
    await figure.openFiles(files);
    figure.scrollIntoView({ block: "nearest" });
  } catch {
    // The element shows the message; the load event below repeats it here.
  }
}

figure.addEventListener("attn-lens-load", (e) => {
  const { data, error } = e.detail;
  if (error) {
    fileStatus.textContent = error;
    return;
  }
  const [layers, heads, L] = data.weights.shape;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  fileStatus.textContent =
    `Showing ${data.source.file} (${data.source.format}, ${data.source.storage}): ${plural(layers, "layer")} × ${plural(heads, "head")}, ` +
    `${plural(L, "token")}, ${data.causal ? "causal" : "full"} attention. The sentence and model settings are not used for it.`;
});

$("#open-file").addEventListener("change", (e) => {
  openFiles(e.target.files);
  e.target.value = "";
});
$("#close-file").addEventListener("click", () => {
  document.body.classList.remove("file-mode");
  $("#close-file").hidden = true;
  fileStatus.textContent = "";
  figure.data = null;
  apply();
});
let dragDepth = 0;
addEventListener("dragenter", (e) => {
  if (!e.dataTransfer?.types.includes("Files")) return;
  dragDepth++;
  document.body.classList.add("dragging");
});
addEventListener("dragleave", () => {
  if (--dragDepth <= 0) document.body.classList.remove("dragging");
});
addEventListener("dragover", (e) => {
  if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
});
/** The files of a dropped folder (its top level: a checkpoint folder holds no subfolders it needs). */
function folderFiles(entry) {
  const reader = entry.createReader();
  const files = [];
  // readEntries answers in batches until an empty one.
  const more = () =>
    new Promise((done, failed) => reader.readEntries(done, failed)).then((entries) =>
      entries.length
        ? Promise.all(entries.filter((e) => e.isFile).map((e) => new Promise((done, failed) => e.file(done, failed)))).then((batch) => {
            files.push(...batch);
            return more();
          })
        : files,
    );
  return more();
}

/**
 * A drop: a checkpoint (a folder, or files among which config.json or a .safetensors) opens as
 * a checkpoint; anything else as an attention file. A checkpoint's files never reach the
 * attention-file reader, which would replace the figure with an error about them.
 */
async function dropped(transfer) {
  // Entries must be taken during the event: the transfer is emptied after it.
  const entries = [...(transfer.items ?? [])].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  const loose = [...transfer.files];
  const folders = entries.filter((e) => e.isDirectory);
  const files = folders.length
    ? [...loose.filter((f) => !folders.some((d) => d.name === f.name)), ...(await Promise.all(folders.map(folderFiles))).flat()]
    : loose;
  const checkpoint = folders.length > 0 || files.some((f) => f.name === "config.json" || f.name.endsWith(".safetensors"));
  return checkpoint ? openCheckpoint(files) : openFiles(files);
}

addEventListener("drop", (e) => {
  if (!e.dataTransfer?.files.length) return;
  e.preventDefault();
  dragDepth = 0;
  document.body.classList.remove("dragging");
  dropped(e.dataTransfer).catch((error) => {
    fileStatus.textContent = `The dropped files could not be read: ${error.message}`;
  });
});

// The settings beyond attention and view: open beside the figure on a wide screen, folded on a
// phone (and a tablet), where the figure follows the sentence and these would push it down.
const wide = matchMedia("(min-width: 980px)");
const unfold = () => ($("#more-settings").open = wide.matches);
wide.addEventListener("change", unfold);
unfold();

showState();
apply();
showMessage();
// The page offers every view: fetch the ones loaded on demand once the first figure is up.
figure.addEventListener("attn-lens-render", () => (window.requestIdleCallback ?? setTimeout)(preloadViews), { once: true });

// ---- the training page's card: its thumbnail is made once the card comes near the screen -------
figure.addEventListener(
  "attn-lens-painted",
  () => {
    const card = $("#train-card");
    const observer = new IntersectionObserver(
      async (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        observer.disconnect();
        let drawThumbnail, fillTrainCard;
        try {
          ({ drawThumbnail, fillTrainCard } = await import("./train-card.js"));
        } catch {
          // Offline or a failed fetch: the card keeps its text and link.
          card.querySelector("canvas").hidden = true;
          card.querySelector(".train-card-caption").textContent =
            "The thumbnail could not be loaded; the training page shows the run itself.";
          return;
        }
        const base = new URL("./train-snapshot/", location.href);
        const thumb = await fillTrainCard(card, loadLens, { base, theme: state.theme, colormap: state.colormap });
        if (!thumb) return;
        // Drawn again only when the theme or the colour map changes, not on every keystroke.
        let drawn = `${state.theme}/${state.colormap}`;
        trainCard.redraw = (s) => {
          if (`${s.theme}/${s.colormap}` === drawn) return;
          drawn = `${s.theme}/${s.colormap}`;
          drawThumbnail(card.querySelector("canvas"), thumb, s);
        };
      },
      { rootMargin: "200px" },
    );
    observer.observe(card);
  },
  { once: true },
);

// ---- a checkpoint from disk (any family the library loads); nothing leaves the browser ----------

const checkpointStatus = $("#checkpoint-status");

/**
 * Which layers attend within a sliding window (Gemma 3: five of every six), as "a sliding window
 * of 512 tokens in layers 1–5, 7–11, 13–17, " (an encoder's: "a window of ±64 tokens in layers
 * 2–3, 5–6, "), or "" when every layer sees every token its attention allows.
 */
function windowsText(windows = [], causal = true) {
  const by = new Map();
  windows.forEach((w, l) => w && by.set(w, [...(by.get(w) ?? []), l + 1]));
  const width = (w) => windowText({ windows: [w], causal }, 0).width;
  const runs = (layers) =>
    layers
      .reduce((out, l) => (out.length && out.at(-1)[1] === l - 1 ? (out.at(-1)[1] = l) : out.push([l, l]), out), [])
      .map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`))
      .join(", ");
  return [...by]
    .map(
      ([w, layers]) =>
        `a ${causal ? "sliding " : ""}window of ${width(w)} tokens in layer${layers.length > 1 ? "s" : ""} ${runs(layers)}, `,
    )
    .join("");
}

/** The checkpoint line: progress and success as a status, a refused folder as an alert. */
function checkpointSays(text, { error = false } = {}) {
  checkpointStatus.classList.toggle("error", error);
  checkpointStatus.setAttribute("role", error ? "alert" : "status");
  if (!error) {
    checkpointStatus.textContent = text;
    return;
  }
  // What went wrong, what attnlens opens, and where a model it cannot load yet can go instead.
  const recipe = Object.assign(document.createElement("a"), { href: "docs/files.md", textContent: "docs/files.md" });
  checkpointStatus.replaceChildren(
    `${text} `,
    "attnlens opens GPT-2, BERT, DistilBERT, Llama, Mistral, Qwen2 and Qwen3 checkpoints as Hugging Face saves them: model.safetensors, config.json and the " +
      "tokenizer's files. For a model it cannot load yet, export its attention from PyTorch and open the file above (",
    recipe,
    ', "Exporting attention from PyTorch").',
  );
}
const MB = (bytes) => (bytes / 1e6).toFixed(0);
async function openCheckpoint(picked) {
  if (!picked.length) return;
  const files = [...picked];
  const has = (name) => files.some((f) => f.name === name);
  // A GPT-2 folder without its tokenizer is read with GPT-2's own; other families name theirs.
  let gpt2 = false;
  try {
    const config = JSON.parse((await files.find((f) => f.name === "config.json")?.text()) ?? "{}");
    gpt2 = config.model_type === "gpt2" || (config.model_type === undefined && config.n_embd !== undefined);
  } catch {
    // A config.json that is not JSON: the library names it when the model loads.
  }
  const ownTokenizer = !gpt2 || (has("vocab.json") && has("merges.txt"));
  const started = performance.now();
  checkpointSays(`Reading ${files.map((f) => f.name).join(", ")}…`);
  writer.stop();
  document.body.classList.remove("file-mode");
  document.body.classList.add("checkpoint-mode");
  $("#close-checkpoint").hidden = false;
  try {
    if (!ownTokenizer) {
      // GPT-2's own tokenizer, served beside the page (scripts/build-web.mjs copies it).
      const [vocab, merges] = await Promise.all(
        ["vocab.json", "merges.txt"].map((name) =>
          fetch(`gpt2-tokenizer/${name}`).then((r) => {
            if (!r.ok) throw new Error(`GPT-2's ${name} could not be fetched (HTTP ${r.status})`);
            return r.text();
          }),
        ),
      );
      // A fixed time: the same folder picked again is the same files (the element reuses its model).
      files.push(new File([vocab], "vocab.json", { lastModified: 0 }), new File([merges], "merges.txt", { lastModified: 0 }));
    }
    const ready = new Promise((done) => figure.addEventListener("attn-lens-model", (e) => done(e.detail), { once: true }));
    await figure.openModel(files, { keepOnError: true });
    const { config: c, ignored } = await ready;
    // An encoder's tokenizer adds [CLS] and [SEP], which the reader may hide; GPT-2's adds none.
    document.body.classList.toggle("with-specials", !c.causal);
    const kind = c.causal ? "causal attention, next-token predictions" : "full attention, masked-token predictions";
    checkpointSays(
      `Showing your checkpoint (${c.family}, ${kind}): ${c.layers} layers × ${c.heads} heads, d_model ${c.dModel}, a context of ${c.context} tokens, ` +
        // Grouped-query attention: a reader sees which heads share their keys and values.
        (c.kvHeads < c.heads ? `${c.kvHeads} key/value heads (each shared by ${c.heads / c.kvHeads} query heads), ` : "") +
        windowsText(c.windows, c.causal) +
        // Gemma 2 squashes its scores and logits through c · tanh(x / c).
        (c.scoreSoftcap ? `scores soft-capped at ${c.scoreSoftcap}, ` : "") +
        (c.logitSoftcap ? `logits soft-capped at ${c.logitSoftcap}, ` : "") +
        `${c.vocabSize} tokens in its vocabulary${ownTokenizer ? "" : " (GPT-2's tokenizer)"}; loaded in ${((performance.now() - started) / 1000).toFixed(1)} s.` +
        (ignored.length ? ` Not used: ${ignored.join(", ")}.` : ""),
    );
    figure.scrollIntoView({ block: "nearest" });
  } catch (error) {
    // The figure keeps what it showed before (openModel restores it): the random weights or the
    // trained models again, or the checkpoint picked before this one.
    checkpointSays(error.message, { error: true });
    if (figure.model !== "custom") {
      document.body.classList.remove("checkpoint-mode");
      $("#close-checkpoint").hidden = true;
    }
  }
}
figure.addEventListener("attn-lens-model-progress", (e) => {
  if (!checkpointShown()) return;
  const { phase, bytes, totalBytes } = e.detail;
  checkpointSays(
    phase === "parse"
      ? "Checking the tensors…"
      : phase === "done"
        ? "Starting the model…"
        : `Reading model.safetensors: ${MB(bytes)} of ${MB(totalBytes)} MB`,
  );
});
for (const id of ["#open-checkpoint", "#open-checkpoint-folder"]) {
  $(id).addEventListener("change", (e) => {
    openCheckpoint(e.target.files);
    e.target.value = "";
  });
}
$("#close-checkpoint").addEventListener("click", () => {
  // (A run writing with the checkpoint stops with it.)
  writer.stop();
  document.body.classList.remove("checkpoint-mode");
  $("#close-checkpoint").hidden = true;
  checkpointSays("");
  figure.closeModel();
  apply();
});
