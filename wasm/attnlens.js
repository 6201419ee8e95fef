// attnlens for browsers and bundlers. The .wasm is located with new URL(..., import.meta.url),
// which Vite and webpack recognise and bundle as an asset without configuration.
import createAttnLensCore from "./attnlens_core.js";
import { fetchWasm, makeLoader } from "./api.js";

export { AttnLensError } from "./api.js";

export const loadAttnLens = makeLoader(createAttnLensCore, fetchWasm, new URL("./attnlens.wasm", import.meta.url));
