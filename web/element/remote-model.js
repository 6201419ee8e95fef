// A model loaded in the element's model worker (model-worker.js): the properties a figure reads
// (config, parameters, hasTokenizer, tokenizer) as the model has them, and its calls (analyze,
// forward, encode, …) as promises of what the model returns. One worker per page, started at
// the first checkpoint a reader picks and kept for the next ones (a checkpoint put away stays in
// it for a second open). Handles are numbered here, so a call may name a model or cache whose
// creation is still on its way: the worker takes messages in order.
import { chunkError } from "./chunks.js";

// The worker, beside the module that holds this one (dist/element-model-worker.js beside the
// element's chunks; the page's bundles sit beside it too). A variable, so that Vite leaves it as
// a file to find rather than a module to bundle.
const WORKER_FILE = "./element-model-worker.js";

let worker = null;
let nextId = 1;
const pending = new Map();

function rejectAll(error) {
  for (const { reject } of pending.values()) reject(error);
  pending.clear();
}

function ensureWorker() {
  if (worker) return worker;
  worker = new Worker(new URL(WORKER_FILE, import.meta.url), { type: "module" });
  worker.onmessage = ({ data }) => {
    const call = pending.get(data.id);
    if (!call) return;
    if (data.progress) return call.onProgress?.(data.progress);
    pending.delete(data.id);
    if (data.error) call.reject(Object.assign(new Error(data.error.message), { code: data.error.code, name: data.error.name }));
    else call.resolve(data.result);
  };
  worker.onerror = (event) => {
    event.preventDefault?.();
    // The script did not load (offline, a file missing beside the element): said in words, and
    // the next checkpoint starts another worker.
    worker = null;
    rejectAll(chunkError(new Error(event.message || "its script failed to load"), "the model worker"));
  };
  return worker;
}

/** Posts `message` with a new id; resolves with the worker's result. */
function request(message, onProgress) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    ensureWorker().postMessage({ ...message, id });
  });
}

/** Whether this page can run models in a worker. */
export const workersAvailable = () => typeof Worker === "function";

/** The model families the library loads (lens.modelFamilies()), as the worker's module has them. */
export const remoteFamilies = () => request({ op: "families" });

/**
 * Loads a checkpoint's files (name -> text, bytes or File, as lens.loadModel takes them) in the
 * worker; resolves to the model's stand-in. `onProgress` gets loadModel's progress reports.
 */
export async function loadRemoteModel(files, { onProgress } = {}) {
  const handle = nextId++;
  const info = await request({ op: "open", model: handle, files }, onProgress);
  let disposed = false;
  const call =
    (method) =>
    (...args) => {
      if (disposed)
        return Promise.reject(
          Object.assign(new Error("this model was disposed (model.dispose()); load or create it again"), { code: "BAD_ARGUMENT" }),
        );
      // A cache travels as its handle.
      const [first, options, ...rest] = args;
      const sent = options?.cache?.remoteCache ? { ...options, cache: { remoteCache: options.cache.remoteCache } } : options;
      return request({ op: "call", model: handle, method, args: [first, sent, ...rest] });
    };
  return Object.freeze({
    remote: true,
    config: Object.freeze(info.config),
    parameters: info.parameters,
    hasTokenizer: info.hasTokenizer,
    tokenizer: info.tokenizer && Object.freeze(info.tokenizer),
    analyze: call("analyze"),
    forward: call("forward"),
    encode: call("encode"),
    decode: call("decode"),
    tokens: call("tokens"),
    /** A prefix cache kept in the worker, named by its handle. */
    createCache() {
      const cache = nextId++;
      request({ op: "cache", model: handle, cache }).catch(() => {});
      return Object.freeze({ remoteCache: cache, dispose: () => worker?.postMessage({ op: "dispose", handle: cache }) });
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      worker?.postMessage({ op: "dispose", handle });
    },
  });
}
