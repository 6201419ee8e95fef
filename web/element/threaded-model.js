// The threaded model module, for the model worker (model-worker.js): the library built with
// threads (scripts/build.sh: attnlens_model_threads.js, its .worker.js, attnlens-model-threads.wasm
// beside the bundle), whose matrix products split their columns over helper threads, one per
// core but this one, at most 3 (wasm/threads_pre.js). It needs shared memory, so a
// cross-origin-isolated page (scripts/serve.mjs sends the headers; docs/api.md, "Threads"), and
// a thread that may block while its helpers compute: a Web Worker, never the page's thread.
// Elsewhere makeLoader loads the single-threaded module, as before. The results are the same
// bits either way (each output is summed on one thread, in the same order).
import { relaxedSimdSupported } from "../../wasm/api.js";

// Built from variables, as web/lens.js's: the JS is not bundled (the helpers import it by URL).
const FILES = {
  script: "./attnlens_model_threads.js",
  worker: "./attnlens_model_threads.worker.js",
  wasm: "./attnlens-model-threads.wasm",
};
const script = new URL(FILES.script, import.meta.url);
const worker = new URL(FILES.worker, import.meta.url);

export const threadedModel = {
  /** Whether it may load here (the threaded module is built with relaxed SIMD too). */
  usable: () =>
    globalThis.crossOriginIsolated === true &&
    typeof SharedArrayBuffer === "function" &&
    typeof WorkerGlobalScope !== "undefined" &&
    globalThis instanceof WorkerGlobalScope &&
    relaxedSimdSupported(),
  /** Its factory, which makes the helpers (Web Workers that import the module's JS and its worker script) and sets the threads. */
  createCore: async () => {
    const create = (await import(/* @vite-ignore */ script.href)).default;
    return async (options) => {
      const core = await create({
        ...options,
        mainScriptUrlOrBlob: script.href,
        locateFile: (path) => (path.endsWith(".worker.js") ? worker.href : path),
      });
      core._setComputeThreads(1 + core.PThread.unusedWorkers.length);
      return core;
    };
  },
  wasm: new URL(FILES.wasm, import.meta.url),
};
