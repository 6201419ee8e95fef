// attnlens for browsers and bundlers. The .wasm is located with new URL(..., import.meta.url),
// which Vite and webpack recognise and bundle as an asset without configuration.
import createAttnLensCore from "./attnlens_core.js";
import { makeLoader } from "./api.js";

export { AttnLensError } from "./api.js";

async function fetchWasm(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnlens: could not load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

export const loadAttnLens = makeLoader(createAttnLensCore, fetchWasm, new URL("./attnlens.wasm", import.meta.url));
