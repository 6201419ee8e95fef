// The figure computed by a trained model: model="attnlens" (the checkpoint shipped beside the
// element, or the one at `model-src`) or a checkpoint a reader gave openModel(). trained.js, the
// model module and the layers × heads grid are loaded when a figure first shows a model.
import { nothing } from "lit";
import { loadLens } from "../lens.js";
import { loadView } from "../views/index.js";
import { fileMode } from "./file-source.js";

let trainedModule;
let trained;
const loadTrained = () => (trainedModule ??= Promise.all([import("./trained.js"), loadView("grid")]).then(([m]) => (trained = m)));

/** Whether a model computes the figure (model="attnlens", or a checkpoint given to openModel). */
export const modelMode = (element) =>
  !fileMode(element) && (element.model === "attnlens" || (element.model === "custom" && Boolean(element._picked)));

/** Where the model comes from: { url } or { files }, and a key that changes with it. */
function modelSource(element) {
  if (element.model === "custom") return { files: element._picked, key: element._picked };
  const url = new URL(element.modelSrc || trained.shippedModelUrl(), document.baseURI).href;
  return { url: url.endsWith("/") ? url : `${url}/`, key: url };
}

/** Shows the checkpoint `files` (openModel); resolves when it is shown. */
export function openModel(element, files, options) {
  element._picked = files;
  element._pickedProgress = options.onProgress;
  element.model = "custom";
  element._modelLoad = null;
  return startModel(element);
}

/** Frees a checkpoint given to openModel() and returns to random weights. */
export function closeModel(element) {
  if (element._picked) element._openedModel?.model.dispose();
  element._picked = null;
  element._openedModel = null;
  element._modelLoad = null;
  element.model = "random";
  element._figure = null;
  element._computedKey = null;
}

/** Loads the model of `model`/`model-src` (once per source); a newer source cancels an older one. */
function startModel(element) {
  if (element._modelLoad) return element._modelLoad;
  const generation = ++element._loadGeneration;
  element._abort?.abort();
  const controller = (element._abort = new AbortController());
  element._figure = null;
  element._panels = [];
  element._error = null;
  element._openedModel = null;
  const name = () => (element.model === "custom" ? "your checkpoint" : "the trained model");
  element._loading = name();
  element.requestUpdate();
  const onProgress = (progress) => {
    if (generation !== element._loadGeneration) return;
    element._loading = trained.progressText(name(), progress);
    (element._pickedProgress && element.model === "custom" ? element._pickedProgress : null)?.(progress);
    element.dispatchEvent(new CustomEvent("attn-lens-model-progress", { bubbles: true, composed: true, detail: progress }));
  };
  const event = (detail) => element.dispatchEvent(new CustomEvent("attn-lens-model", { bubbles: true, composed: true, detail }));
  element._modelLoad = Promise.all([loadTrained(), element._lens ?? loadLens()])
    .then(([, lens]) => {
      element._lens = lens;
      const source = modelSource(element);
      element._modelKey = source.key;
      return trained.openModel(lens, source, { signal: controller.signal, onProgress });
    })
    .then(
      (opened) => {
        if (generation !== element._loadGeneration) return;
        element._openedModel = opened;
        element._loading = null;
        element._computedKey = null;
        element.requestUpdate();
        event({ name: opened.name, config: opened.model.config, error: null });
      },
      (error) => {
        if (generation !== element._loadGeneration || error.name === "AbortError") return;
        element._loading = null;
        element._error = error.message;
        element.requestUpdate();
        event({ name: null, config: null, error });
        throw error;
      },
    );
  return element._modelLoad;
}

/** A new `model` or `model-src` (not openModel's "custom") drops the model shown. */
export function modelChanged(element, changed) {
  if (element._picked) closeModel(element);
  element._modelLoad = null;
  element._openedModel = null;
  if (!modelMode(element) && changed.get("model") && changed.get("model") !== "random") {
    // Back to random weights: drop the model's figure and compute again.
    ++element._loadGeneration;
    element._loading = null;
    element._figure = null;
    element._panels = [];
    element._error = null;
    element._computedKey = null;
  }
}

/** Loads the model, or computes the figure of a sentence it has not shown yet. */
export function showModel(element, { sentence }) {
  if (!element._modelLoad) startModel(element).catch(() => {});
  else if (element._openedModel && sentence !== element._computedKey) {
    element._computedKey = sentence;
    element._computeWith((state) => {
      const data = trained.modelFigure(element._openedModel, state.sentence);
      element._panels = data ? [data] : [];
      element._figure = data
        ? { file: true, model: true, state, totalTokens: data.totalTokens, truncated: data.totalTokens > data.tokens.length }
        : { empty: true };
    });
    element._state = element.figureState;
  }
}

/** Under a model's figure: the likeliest next tokens after each token. */
export const predictions = (data) => (trained ? trained.predictionsTemplate(data) : nothing);
