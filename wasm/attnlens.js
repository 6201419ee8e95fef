// attnlens for browsers and bundlers. The two .wasm modules (SIMD128, and relaxed SIMD) are
// located with new URL(..., import.meta.url), which Vite and webpack recognise and bundle as
// assets without configuration; only the one makeLoader picks is fetched.
import createAttnLensCore from "./attnlens_core.js";
import { fetchWasm, makeLoader } from "./api.js";

export { AttnLensError, relaxedSimdSupported } from "./api.js";
export { rollout, sinkRates, valueWeightedHeads } from "./flow.js";

export const loadAttnLens = makeLoader(
  createAttnLensCore,
  fetchWasm,
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
