// The threaded model module's fallback (web/element/threaded-model.js through wasm/api.js's makeLoader): where it may load but fails to
// (its .wasm missing or corrupt), or never starts (Emscripten waits for every helper thread's
// script: a missing worker script hangs it for good), the relaxed single-threaded module loads
// instead and modelMemory() says why. Driven in Node with the package's real modules and
// stand-ins for the threaded one's loader.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import createAttnLensCore from "../../dist/attnlens_core.js";
import { makeLoader, relaxedSimdSupported } from "../../dist/api.js";
import { makeThreadedModel } from "../../web/element/threaded-model.js";

const dist = new URL("../../dist/", import.meta.url);
const urls = { baseline: new URL("attnlens.wasm", dist), relaxed: new URL("attnlens-relaxed.wasm", dist) };
const modelModule = {
  createCore: () => import("../../dist/attnlens_model_core.js").then((m) => m.default),
  urls: { baseline: new URL("attnlens-model.wasm", dist), relaxed: new URL("attnlens-model-relaxed.wasm", dist) },
};
const files = async () => {
  const dir = new URL("../../models/attnlens/", import.meta.url);
  const out = {};
  for (const name of ["config.json", "vocab.json", "merges.txt"]) out[name] = await readFile(new URL(name, dir), "utf8");
  out["model.safetensors"] = new Uint8Array(await readFile(new URL("model.safetensors", dir)));
  return out;
};

// The threaded module is built with relaxed SIMD: it is tried only where that runs (Node 22; CI
// runs the JS tests on Node 20 and 22).
const skip = relaxedSimdSupported() ? false : "needs relaxed SIMD (Node 22)";

const never = async () => () => new Promise(() => {});
const threadsWasm = new URL("attnlens-model-threads.wasm", dist);
for (const [what, createCore, wasm, reason] of [
  ["never starts", never, threadsWasm, /did not load \(it had not started after 0\.3 s\); the single-threaded one runs instead/],
  [
    "fails to compile",
    async () => async () => {
      throw new Error("Aborted(CompileError: WebAssembly.instantiate(): expected magic word). Build with -s ASSERTIONS=1 for more info.");
    },
    threadsWasm,
    /did not load \(Aborted\(CompileError: .*\); the single-threaded one runs instead/,
  ],
  ["has no .wasm", never, new URL("missing-threads.wasm", dist), /did not load \(ENOENT/],
])
  test(`a threaded model module that ${what}: the single-threaded one computes, and modelMemory() says why`, { skip }, async () => {
    const read = (url) => readFile(url);
    const threads = makeThreadedModel({ usable: () => true, createCore, wasm, timeoutMs: 300 });
    const lens = await makeLoader(createAttnLensCore, read, urls, { ...modelModule, threads })({ simd: "relaxed" });
    const plain = await makeLoader(createAttnLensCore, read, urls, modelModule)({ simd: "relaxed" });
    const model = await lens.loadModel({ files: await files() });
    const reference = await plain.loadModel({ files: await files() });
    const text = "The cat sat on the mat.";
    assert.deepEqual(model.analyze(text, { k: 3 }).predictions, reference.analyze(text, { k: 3 }).predictions);
    const memory = await lens.modelMemory();
    assert.equal(memory.threads, 1);
    assert.match(memory.threadsUnavailable, reason);
    // Where the threaded module is not tried, nothing is said.
    assert.equal((await plain.modelMemory()).threadsUnavailable, undefined);
    model.dispose();
    reference.dispose();
  });
