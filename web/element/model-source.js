// The figure computed by trained models: model="attnlens" (the shipped causal model; with
// mode="full" the shipped encoder, with mode="compare" both side by side), model="attnlens-
// encoder", a folder at `model-src`, or a checkpoint a reader gave openModel(). Whether a panel
// is causal and what it predicts come from its model. trained.js, the model module and the
// layers × heads grid are loaded when a figure first shows a model.
import { nothing } from "lit";
import { loadLens } from "../lens.js";
import { loadView } from "../views/index.js";
import { once } from "./chunks.js";
import { fileMode } from "./file-source.js";

let trained;
const loadTrained = once(() => Promise.all([import("./trained.js"), loadView("grid")]).then(([m]) => (trained = m)), "the model code");

const SHIPPED = ["attnlens", "attnlens-encoder"];
// (Which files a figure's models come from, and how its panels are shown, are trained.js's
// modelSources and showPanels: they run once it is loaded.)

/** Whether models compute the figure (a shipped model, or a checkpoint given to openModel). */
export const modelMode = (element) =>
  !fileMode(element) && (SHIPPED.includes(element.model) || (element.model === "custom" && Boolean(element._picked)));

/** Shows the checkpoint `files` (openModel); resolves when it is shown. */
export function openModel(element, files, options) {
  // The files shown now, picked again: nothing to load.
  if (element._picked && element._openedModels && trained?.sameFiles(element._picked, files)) {
    element._pickedProgress = options.onProgress;
    modelEvent(element, element._openedModels);
    return Promise.resolve();
  }
  // What the figure shows now, kept until the new checkpoint is in: with keepOnError, a checkpoint
  // that fails to load leaves the previous figure (and model) as they were (else the figure shows
  // the error); one that loads frees a checkpoint picked before it.
  const previous = {
    picked: element._picked,
    progress: element._pickedProgress,
    model: element.model,
    opened: element._openedModels,
    load: element._modelLoad,
    key: element._modelKey,
    figure: element._figure,
    panels: element._panels,
    computedKey: element._computedKey,
  };
  element._picked = files;
  element._pickedProgress = options.onProgress;
  element.model = "custom";
  element._modelLoad = null;
  const generation = element._loadGeneration + 1;
  return startModel(element).then(
    (result) => {
      if (previous.picked && previous.opened && previous.opened !== element._openedModels)
        for (const opened of previous.opened) if (!element._openedModels?.includes(opened)) trained.release(opened);
      return result;
    },
    (error) => {
      // (A checkpoint whose first figure is still being computed has no figure yet but a model:
      // it is kept too, and its figure made.)
      if (
        options.keepOnError &&
        generation === element._loadGeneration &&
        error.name !== "AbortError" &&
        (previous.figure || previous.opened)
      ) {
        Object.assign(element, {
          _picked: previous.picked,
          _pickedProgress: previous.progress,
          model: previous.model,
          _openedModels: previous.opened,
          _modelLoad: previous.load,
          _modelKey: previous.key,
          _figure: previous.figure,
          _panels: previous.panels,
          // Predictions still to rank when the load began, or a checkpoint in the model worker (whose
          // figure under way then may have been dropped, leaving the key of a figure never shown):
          // the figure is made again (from the cache).
          _computedKey:
            !previous.figure || previous.panels.some((p) => p.pendingPredictions?.length) || previous.opened?.some((o) => o.model.remote)
              ? null
              : previous.computedKey,
          _error: null,
          _restored: true,
        });
        element.requestUpdate();
      } else if (previous.picked && previous.opened && previous.opened !== element._openedModels) {
        // The figure shows the error: the checkpoint picked before is put away.
        for (const opened of previous.opened) trained.release(opened);
      }
      throw error;
    },
  );
}

/** Puts away a checkpoint given to openModel() (trained.js keeps it for a second open) and returns to random weights. */
export function closeModel(element) {
  if (element._picked) for (const opened of element._openedModels ?? []) trained.release(opened);
  element._picked = null;
  element._openedModels = null;
  element._modelLoad = null;
  element.model = "random";
  element._figure = null;
  element._computedKey = null;
}

/** Says which models are shown (attn-lens-model): `opened` as trained.openModel() gave them, or none and the error. */
function modelEvent(element, opened, error = null) {
  const detail = opened.length
    ? {
        name: opened[0].name,
        config: opened[0].model.config,
        models: opened.map((o) => ({ name: o.name, config: o.model.config })),
        // The files of a picked folder that were not read (README.md, MODEL.md, ...).
        ignored: opened.flatMap((o) => o.ignored ?? []),
        error,
      }
    : { name: null, config: null, models: [], ignored: [], error };
  element.dispatchEvent(new CustomEvent("attn-lens-model", { bubbles: true, composed: true, detail }));
}

/** Loads the models of `model`/`model-src`/`mode` (each once per page); a newer choice cancels an older one. */
function startModel(element) {
  if (element._modelLoad) return element._modelLoad;
  const generation = ++element._loadGeneration;
  element._abort?.abort();
  const controller = (element._abort = new AbortController());
  element._figure = null;
  element._panels = [];
  element._error = null;
  element._openedModels = null;
  let label = element.model === "custom" ? "your checkpoint" : "the trained model";
  element._loading = `Loading ${label}…`;
  element.requestUpdate();
  const onProgress = (progress) => {
    if (generation !== element._loadGeneration) return;
    element._loading = trained.progressText(label, progress);
    (element._pickedProgress && element.model === "custom" ? element._pickedProgress : null)?.(progress);
    element.dispatchEvent(new CustomEvent("attn-lens-model-progress", { bubbles: true, composed: true, detail: progress }));
  };
  element._modelLoad = Promise.all([loadTrained(), element._lens ?? loadLens()])
    .then(([, lens]) => {
      element._lens = lens;
      const { sources, key } = trained.modelSources(element);
      element._modelKey = key;
      return Promise.all(
        sources.map((source) => {
          label = source.name;
          return trained.openModel(lens, source, { signal: controller.signal, onProgress });
        }),
      );
    })
    .then(
      (opened) => {
        if (generation !== element._loadGeneration) {
          // Superseded (another checkpoint, or closed) while it loaded: a reader's checkpoint is
          // put away like one closed (kept for a second open); the shipped models stay shared.
          for (const o of opened) if (o.signature && !element._openedModels?.includes(o)) trained.release(o);
          return;
        }
        element._openedModels = opened;
        element._loading = null;
        element._computedKey = null;
        element.requestUpdate();
        if (opened.some((o) => o.probeLater)) trained.probeAfterFirstFigure(element, opened);
        modelEvent(element, opened);
      },
      (error) => {
        if (generation !== element._loadGeneration || error.name === "AbortError") return;
        element._loading = null;
        element._error = error.message;
        // The model code or a model's files that did not arrive are fetched again at the next change.
        if (error.code === "LOAD_FAILED") {
          element._loadFailed = error.message;
          element._modelLoadFailed = true;
        }
        element.requestUpdate();
        modelEvent(element, [], error);
        throw error;
      },
    );
  return element._modelLoad;
}

/** A new `model`, `model-src` or (for the shipped models) `mode` (not openModel's "custom") drops the models shown. */
export function modelChanged(element, changed) {
  if (element._picked) closeModel(element);
  element._modelLoad = null;
  element._openedModels = null;
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

/** Loads the models, or computes the figure of a sentence (and special-token choice) not shown yet. */
export function showModel(element, { sentence, specials }) {
  const key = `${specials}\u0000${sentence}`;
  if (!element._modelLoad) startModel(element).catch(() => {});
  else if (element._openedModels && key !== element._computedKey) {
    element._computedKey = key;
    if (element._openedModels.some((opened) => opened.model.remote)) trained.computeInWorker(element, key);
    else
      element._computeWith((state) =>
        trained.showPanels(
          element,
          state,
          element._openedModels.map((opened) => trained.modelFigure(opened, state.sentence, { hideSpecial: state.specials === "hide" })),
        ),
      );
    element._state = element.figureState;
  }
}

/** Under a model's figure: its predictions (the next tokens, or each [MASK]'s fillers), one strip per model. */
export const predictions = (panels) => (trained ? panels.map((data) => trained.predictionsTemplate(data)) : nothing);
