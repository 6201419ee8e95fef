// Lazily loaded parts of the element (views, file readers, the model code): each is loaded once
// and shared, but a failed load is forgotten, so the next use tries again — a network blip or a
// moment offline must not need a reload — and the reader sees a sentence, not the browser's
// "Failed to fetch dynamically imported module: URL".

/** An error a reader understands for a part (`what`, e.g. "the grid view") that did not load. */
export function chunkError(error, what) {
  if (error?.code) return error; // the library's own errors already say what is wrong
  const offline = typeof navigator !== "undefined" && navigator.onLine === false;
  const message = `${what[0].toUpperCase()}${what.slice(1)} could not be loaded (${offline ? "the browser is offline" : "a network error"}); it is tried again at the next change.`;
  return Object.assign(new Error(message, { cause: error }), { code: "LOAD_FAILED" });
}

/** `load()` once, shared by every caller; after a failure the next call loads again. */
export function once(load, what) {
  let pending = null;
  return () =>
    (pending ??= load().catch((error) => {
      pending = null;
      throw chunkError(error, what);
    }));
}
