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

/** How long the threaded module may take to start before the single-threaded one is loaded instead. */
export const THREADS_TIMEOUT_MS = 30000;

/**
 * A threaded module for makeLoader (wasm/api.js): `usable`, `createCore` and `wasm` as given, and
 * the fallback policy. When the threaded module fails to load (its JS or .wasm missing or
 * corrupt: Emscripten's abort text is not for a reader) or has not started within `timeoutMs`
 * (Emscripten waits for every helper thread's script, so a missing .worker.js would hang it for
 * good), the single-threaded module loads instead, and `said.threadsUnavailable` says why
 * (lens.modelMemory() passes it on).
 */
export function makeThreadedModel({ usable, createCore, wasm, timeoutMs = THREADS_TIMEOUT_MS }) {
  const threads = {
    usable,
    createCore,
    wasm,
    said: {},
    async load(threaded, single) {
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`it had not started after ${timeoutMs / 1000} s`)), timeoutMs);
      });
      try {
        return await Promise.race([threaded(), late]);
      } catch (error) {
        const why = String(error?.message ?? error).slice(0, 200);
        threads.said = { threadsUnavailable: `the threaded model module did not load (${why}); the single-threaded one runs instead` };
        return single();
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return threads;
}

export const threadedModel = makeThreadedModel({
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
});
