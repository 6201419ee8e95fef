// A reader's checkpoint in a Web Worker: a real-size model's forward takes hundreds of
// milliseconds (GPT-2 small, an edit at the start of 32 tokens), which on the page's thread would
// hold every keystroke, scroll and paint for as long. The worker loads the model module and the
// checkpoint's files into its own heap and answers the calls of remote-model.js, in the order
// they were posted. Messages in:
//   { id, op: "families" }                lens.modelFamilies() (the page's thread need not load the model module)
//   { id, op: "open", model, files }      loadModel({ files }) as handle `model` (the reply: its
//                                         config, and the threads its products split over)
//   { id, op: "call", model, method, args } rank-rows.js's callModel(model, method, args);
//                                         an argument's { cache: { remoteCache: n } } is cache n
//   { id, op: "cache", model, cache }     model.createCache() as handle `cache`
//   { id, op: "generate", model, generator, prompt, options }
//                                         model.generate(prompt, options) as handle `generator`
//   { id, op: "next", generator }         its next token ({ done, value } as the iterator gives it)
//   { op: "return", generator }           ends it (its cache is freed)
//   { op: "dispose", handle }             frees a model (and its caches) or a cache; one posted
//                                         while the model opens frees it once it has opened
// Out: { id, progress } while opening, then { id, result } or { id, error: { message, code, name } }.
// A message of another shape (not an object, an unknown op, a handle already in use) is answered
// with an error when it has an id, and otherwise changes nothing.
// Typed arrays in a result are transferred, not copied.
import createAttnLensCore from "../../dist/attnlens_core.js";
import { fetchWasm, makeLoader } from "../../wasm/api.js";
import { modelModule, wasmUrl } from "../lens.js";
import { callModel } from "./rank-rows.js";
import { threadedModel } from "./threaded-model.js";

// The worker's own library: the page's model module, or where the page is cross-origin isolated
// the threaded one (threaded-model.js).
const loadLens = makeLoader(createAttnLensCore, fetchWasm, wasmUrl, { ...modelModule, threads: threadedModel });

/** The buffers of the typed arrays in `value` (plain objects and arrays, any depth), once each. */
function buffers(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (Array.isArray(value)) {
    for (const v of value) if (v && typeof v === "object") buffers(v, out);
  } else if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) if (v && typeof v === "object") buffers(v, out);
  }
  return out;
}

// What the page's stand-in (remote-model.js) calls.
const METHODS = new Set(["analyze", "forward", "analyzeFigure", "logitLens", "attribute", "unembed"]);
const badArgument = (message) => Object.assign(new Error(message), { code: "BAD_ARGUMENT" });

/**
 * The worker's side: a function that handles one message, given `getLens()` (the library) and
 * `post(message, transfer)`. Exported so that Node can drive it without a worker
 * (tests/js/remote-model.test.mjs).
 */
export function modelServer(getLens, post) {
  const handles = new Map();
  // The caches of each model handle (freed with it), and the model of each cache handle.
  const cachesOf = new Map();
  const ownerOf = new Map();
  // The generate() iterators under way, and the model of each (ended with it).
  const generators = new Map();
  const end = (handle) => {
    generators.get(handle)?.it.return();
    generators.delete(handle);
  };
  // Model handles being opened, and those of them disposed meanwhile.
  const opening = new Set();
  const disposedWhileOpening = new Set();
  // A new handle: a positive integer no model or cache holds (one that did would be orphaned,
  // never freed).
  const fresh = (handle, what) => {
    if (!Number.isSafeInteger(handle) || handle <= 0) throw badArgument(`${what} must be a positive integer handle; got ${String(handle)}`);
    if (handles.has(handle) || opening.has(handle) || generators.has(handle)) throw badArgument(`${what} ${handle} is already in use`);
    return handle;
  };
  const reply = (id, result) => {
    const transfer = [...buffers(result)];
    try {
      post({ id, result }, transfer);
    } catch {
      // A buffer that cannot be moved (a view of the module's memory): copied instead.
      post({ id, result });
    }
  };
  // (Only the library's codes, which are strings: a DOMException's is a number.)
  const failed = (id, error) =>
    post({
      id,
      error: {
        message: error?.message ?? String(error),
        code: typeof error?.code === "string" ? error.code : "",
        name: error?.name ?? "Error",
      },
    });
  const model = (handle) => {
    const m = ownerOf.has(handle) ? null : handles.get(handle);
    if (!m)
      throw badArgument(
        ownerOf.has(handle)
          ? `handle ${handle} is a cache, not a model`
          : "this model was disposed (model.dispose()); load or create it again",
      );
    return m;
  };

  // A call's options with the cache handle replaced by the cache it names.
  const withCache = (options) => {
    if (!options || typeof options !== "object" || !options.cache?.remoteCache) return options;
    const h = options.cache.remoteCache;
    const cache = ownerOf.has(h) ? handles.get(h) : null;
    if (!cache) throw badArgument("options.cache was disposed; make another with createCache()");
    return { ...options, cache };
  };
  return async (message) => {
    const id = message !== null && typeof message === "object" ? message.id : undefined;
    try {
      if (message === null || typeof message !== "object") throw badArgument(`a message must be an object; got ${String(message)}`);
      const { op } = message;
      if (op === "families") {
        reply(id, await (await getLens()).modelFamilies());
      } else if (op === "open") {
        const handle = fresh(message.model, "model");
        opening.add(handle);
        let lens;
        let m;
        try {
          lens = await getLens();
          m = await lens.loadModel({ files: message.files, onProgress: (progress) => post({ id, progress }) });
        } catch (error) {
          disposedWhileOpening.delete(handle);
          throw error;
        } finally {
          opening.delete(handle);
        }
        if (disposedWhileOpening.delete(handle)) {
          m.dispose();
          throw badArgument("this model was disposed while it opened");
        }
        handles.set(handle, m);
        reply(id, {
          config: { ...m.config },
          parameters: m.parameters,
          ignored: [...m.ignored],
          hasTokenizer: m.hasTokenizer,
          // (A copy of its typed arrays: the reply's are transferred away.)
          tokenizer: m.tokenizer
            ? {
                ...m.tokenizer,
                specialIds: Int32Array.from(m.tokenizer.specialIds ?? []),
                byteIds: Int32Array.from(m.tokenizer.byteIds ?? []),
              }
            : null,
          // The threads its products split over (more than 1: the threaded module).
          ...(({ threads, threadsUnavailable }) => ({ threads, threadsUnavailable }))(await lens.modelMemory()),
        });
      } else if (op === "call") {
        if (!METHODS.has(message.method)) throw new Error(`the model worker has no method ${message.method}`);
        const [first, options, ...rest] = message.args;
        reply(id, callModel(model(message.model), message.method, [first, withCache(options), ...rest]));
      } else if (op === "cache") {
        const handle = fresh(message.cache, "cache");
        handles.set(handle, model(message.model).createCache());
        cachesOf.set(message.model, [...(cachesOf.get(message.model) ?? []), handle]);
        ownerOf.set(handle, message.model);
        reply(id, null);
      } else if (op === "generate") {
        const handle = fresh(message.generator, "generator");
        // (The options are checked here, as generate() checks them: a bad one is this reply's error.)
        generators.set(handle, { it: model(message.model).generate(message.prompt, message.options), model: message.model });
        reply(id, null);
      } else if (op === "next") {
        const g = generators.get(message.generator);
        if (!g) throw badArgument(`generator ${String(message.generator)} has ended or was never made`);
        let r;
        try {
          r = await g.it.next();
        } catch (error) {
          generators.delete(message.generator);
          throw error;
        }
        if (r.done) generators.delete(message.generator);
        reply(id, r);
      } else if (op === "return") {
        end(message.generator);
      } else if (op === "dispose") {
        const h = message.handle;
        if (opening.has(h)) disposedWhileOpening.add(h);
        // (Its generators first: each frees its cache as it ends.)
        for (const [g, { model: owner }] of generators) if (owner === h) end(g);
        handles.get(h)?.dispose();
        handles.delete(h);
        // A cache leaves its model's list; a model takes its caches with it (the module frees them).
        if (ownerOf.has(h)) {
          const owner = ownerOf.get(h);
          cachesOf.set(
            owner,
            (cachesOf.get(owner) ?? []).filter((c) => c !== h),
          );
          ownerOf.delete(h);
        }
        for (const cache of cachesOf.get(h) ?? []) {
          handles.delete(cache);
          ownerOf.delete(cache);
        }
        cachesOf.delete(h);
      } else {
        throw badArgument(`the model worker has no op ${JSON.stringify(op)}`);
      }
    } catch (error) {
      if (id !== undefined) failed(id, error);
    }
  };
}

// In a worker (not when Node imports this module): answer the page.
if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) {
  const serve = modelServer(loadLens, (message, transfer) => postMessage(message, transfer));
  onmessage = ({ data }) => serve(data);
}
