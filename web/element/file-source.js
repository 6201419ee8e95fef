// Attention weights given to the figure instead of computed: a file at `src` (and `tokens-src`),
// the `data` property, or files a reader opened (openFiles). The parsers and the layers × heads
// grid are loaded when a figure first shows one.
import { loadView } from "../views/index.js";
import { once } from "./chunks.js";

const loadFiles = once(() => Promise.all([import("../files/index.js"), loadView("grid")]).then(([files]) => files), "the file reader");

/** Whether the figure shows given weights (src, data or opened files) rather than computing them. */
export const fileMode = (element) =>
  Boolean(element.src) || (element.data !== undefined && element.data !== null) || Boolean(element._opened);

/** Starts reading src, data or the opened files; a newer call cancels an older one. */
export function startLoad(element) {
  element._abort?.abort();
  const generation = ++element._loadGeneration;
  element._figure = null;
  element._panels = [];
  element._error = null;
  element.requestUpdate();
  if (!fileMode(element)) {
    element._loading = null;
    element._computedKey = null;
    return Promise.resolve();
  }
  const controller = (element._abort = new AbortController());
  const { signal } = controller;
  const given = element.data !== undefined && element.data !== null;
  const opened = element._opened;
  element._loading = `Loading ${given ? "data" : opened ? opened.map((f) => f.name).join(", ") : element.src}…`;
  const read = async (files) => {
    if (given) return files.fromObject(element.data, "data");
    if (opened) return files.parsePicked(opened);
    const base = document.baseURI;
    const [main, side] = await Promise.all([
      files.fetchBytes(new URL(element.src, base), { signal }),
      element.tokensSrc ? files.fetchBytes(new URL(element.tokensSrc, base), { signal }) : null,
    ]);
    return files.parseAttentionFile(main.bytes, { name: main.name, tokens: side ? files.parseTokens(side.bytes, side.name) : undefined });
  };
  return loadFiles()
    .then(read)
    .then(
      (data) => {
        if (generation === element._loadGeneration) showData(element, data);
      },
      (error) => {
        if (generation !== element._loadGeneration || error.name === "AbortError") return;
        element._loading = null;
        element._error = error.message;
        loaded(element, null, error.message);
        throw error;
      },
    );
}

function showData(element, data) {
  element._loading = null;
  element._panels = [data];
  element._figure = { file: true, state: element._state?.state, totalTokens: data.tokens.length, truncated: false };
  element._generation++;
  element._computeMs = 0;
  element._computedSinceRender = true;
  element._error = null;
  loaded(element, data, null);
}

function loaded(element, data, error) {
  element.requestUpdate();
  element.dispatchEvent(new CustomEvent("attn-lens-load", { bubbles: true, composed: true, detail: { data, error } }));
}
