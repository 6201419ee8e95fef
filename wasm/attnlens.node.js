// attnlens for Node (>= 20): the .wasm is read from beside this file with fs, because the
// loader Emscripten 3.1.6 generates would try to fetch() a file path
// (docs/toolchain.md, "Node 20's fetch").
import { readFile } from "node:fs/promises";
import createAttnLensCore from "./attnlens_core.js";
import { makeLoader } from "./api.js";

export { AttnLensError, relaxedSimdSupported } from "./api.js";
export { rollout, sinkRates, valueWeightedHeads } from "./flow.js";

export const loadAttnLens = makeLoader(
  createAttnLensCore,
  (url) => readFile(url),
  {
    baseline: new URL("./attnlens.wasm", import.meta.url),
    relaxed: new URL("./attnlens-relaxed.wasm", import.meta.url),
  },
  {
    // The model module: fetched on the first loadModel / createModel / loadTokenizer only.
    createCore: () => import("./attnlens_model_core.js").then((m) => m.default),
    urls: {
      baseline: new URL("./attnlens-model.wasm", import.meta.url),
      relaxed: new URL("./attnlens-model-relaxed.wasm", import.meta.url),
    },
  },
);
