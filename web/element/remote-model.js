// A model loaded in the element's model worker (model-worker.js): the properties a figure reads
// (config, parameters, hasTokenizer, tokenizer) as the model has them, and the calls trained.js
// makes (analyze, forward, and rank-rows.js's analyzeFigure) as promises of what the model
// returns, and generate() as an async iterator of its tokens. One worker per page, started at the first checkpoint a reader picks and kept for the
// next ones (a checkpoint put away stays in it for a second open). Handles are numbered here, so
// a call may name a model or cache whose creation is still on its way: the worker takes messages
// in order.

// The worker, beside the module that holds this one (dist/element-model-worker.js beside the
// element's chunks; the page's bundles sit beside it too). A variable, so that Vite leaves it as
// a file to find rather than a module to bundle.
const WORKER_FILE = "./element-model-worker.js";

let worker = null; // { w: Worker, started, dead }: the page's model worker
let nextId = 1;
const pending = new Map();

const failure = (message, code) => Object.assign(new Error(message), { code });

/** Rejects the calls waiting on `instance` with `error`. */
function rejectAll(instance, error) {
  for (const [id, call] of pending)
    if (call.instance === instance) {
      pending.delete(id);
      call.reject(error);
    }
}

function ensureWorker() {
  if (worker) return worker;
  let w;
  try {
    w = new Worker(new URL(WORKER_FILE, import.meta.url), { type: "module" });
  } catch (error) {
    // Not allowed here (the element served from another origin than the page, a policy).
    throw failure(`the model worker could not start (${error.message})`, "NO_WORKER");
  }
  const instance = { w, started: false, dead: false };
  w.onmessage = ({ data }) => {
    instance.started = true;
    const call = pending.get(data.id);
    if (!call) return;
    if (data.progress) return call.onProgress?.(data.progress);
    pending.delete(data.id);
    if (data.error) call.reject(Object.assign(new Error(data.error.message), { code: data.error.code, name: data.error.name }));
    else call.resolve(data.result);
  };
  const stop = (error) => {
    instance.dead = true;
    w.terminate();
    if (worker === instance) worker = null;
    rejectAll(instance, error);
  };
  // A message that could not be read back: the calls waiting would wait for ever.
  w.onmessageerror = () => stop(failure("the model worker's answer could not be read; pick the checkpoint again", "WORKER_FAILED"));
  w.onerror = (event) => {
    event.preventDefault?.();
    // Before its first answer: the script did not load (offline, a file missing beside the
    // element), and the checkpoint computes on the page's thread instead. After: it failed, and
    // the models in it are gone; the next checkpoint starts another worker.
    stop(
      instance.started
        ? failure(`the model worker stopped (${event.message || "an error"}); pick the checkpoint again`, "WORKER_FAILED")
        : failure(`the model worker could not start (${event.message || "its script failed to load"})`, "NO_WORKER"),
    );
  };
  worker = instance;
  return instance;
}

/** Posts `message` with a new id to `instance` (else the page's worker); resolves with the worker's result. */
function request(message, { onProgress, instance } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    try {
      instance ??= ensureWorker();
      if (instance.dead) throw failure("the model worker stopped; pick the checkpoint again", "WORKER_FAILED");
      pending.set(id, { resolve, reject, onProgress, instance });
      instance.w.postMessage({ ...message, id });
    } catch (error) {
      pending.delete(id);
      reject(error);
    }
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
  const instance = ensureWorker();
  const info = await request({ op: "open", model: handle, files }, { onProgress, instance });
  let disposed = false;
  const call =
    (method) =>
    (...args) => {
      if (disposed) return Promise.reject(failure("this model was disposed (model.dispose()); load or create it again", "BAD_ARGUMENT"));
      // A cache travels as its handle.
      const [first, options, ...rest] = args;
      const sent = options?.cache?.remoteCache ? { ...options, cache: { remoteCache: options.cache.remoteCache } } : options;
      return request({ op: "call", model: handle, method, args: [first, sent, ...rest] }, { instance });
    };
  const post = (message) => instance.dead || instance.w.postMessage(message);
  return Object.freeze({
    remote: true,
    config: Object.freeze(info.config),
    parameters: info.parameters,
    ignored: Object.freeze(info.ignored ?? []),
    hasTokenizer: info.hasTokenizer,
    tokenizer: info.tokenizer && Object.freeze(info.tokenizer),
    /** The threads the worker's products split over: more than 1 in a cross-origin-isolated page. */
    threads: info.threads,
    /** Why the threaded module did not load where the page is isolated (undefined: it did, or was not tried). */
    threadsUnavailable: info.threadsUnavailable,
    analyze: call("analyze"),
    /** rank-rows.js's analyzeFigure(model, text, options, before), in the worker. */
    analyzeFigure: call("analyzeFigure"),
    forward: call("forward"),
    logitLens: call("logitLens"),
    attribute: call("attribute"),
    unembed: call("unembed"),
    /**
     * model.generate(prompt, options) in the worker: an async iterator whose next() asks the
     * worker for one token. The options are checked there: a bad one rejects the first next().
     * `options.signal` stays here (a signal cannot be posted): it is looked at before and after
     * each token, as generate() does.
     */
    generate(prompt, options) {
      if (disposed) throw failure("this model was disposed (model.dispose()); load or create it again", "BAD_ARGUMENT");
      const { signal = null, ...rest } = options ?? {};
      const generator = nextId++;
      const made = request({ op: "generate", model: handle, generator, prompt, options: rest }, { instance });
      made.catch(() => {});
      let ended = false;
      const end = () => {
        if (!ended) post({ op: "return", generator });
        ended = true;
      };
      const stopped = () => {
        end();
        return signal.reason ?? new DOMException("generate() was stopped", "AbortError");
      };
      const it = {
        [Symbol.asyncIterator]: () => it,
        async next() {
          if (ended) return { done: true, value: undefined };
          if (disposed) throw failure("this model was disposed (model.dispose()); load or create it again", "BAD_ARGUMENT");
          if (signal?.aborted) throw stopped();
          try {
            await made;
            const r = await request({ op: "next", generator }, { instance });
            if (r.done) ended = true;
            else if (signal?.aborted) throw stopped();
            return r;
          } catch (error) {
            ended = true;
            throw error;
          }
        },
        async return(value) {
          end();
          return { done: true, value };
        },
      };
      return it;
    },
    /** A prefix cache kept in the worker, named by its handle. */
    createCache() {
      const cache = nextId++;
      request({ op: "cache", model: handle, cache }, { instance }).catch(() => {});
      return Object.freeze({ remoteCache: cache, dispose: () => post({ op: "dispose", handle: cache }) });
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      post({ op: "dispose", handle });
    },
  });
}
