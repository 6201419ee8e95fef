// The page's modules (web/) in Node. web/theme.js imports the colour tables the site build makes
// (virtual:attnlens-colormaps, scripts/build-web.mjs); here a stand-in without colours answers for
// it, enough for modules that only name colours. Import web modules with importWeb(), after the
// stand-in is registered (a static import would be resolved before it).
import { register } from "node:module";

const HOOK = `export async function resolve(specifier, context, next) {
  if (specifier !== "virtual:attnlens-colormaps") return next(specifier, context);
  return { shortCircuit: true, url: "data:text/javascript,export const MAPS = {}; export const TABLEAU10 = [];" };
}`;
register(`data:text/javascript,${encodeURIComponent(HOOK)}`);

/** Imports web/<path>. */
export const importWeb = (path) => import(new URL(`../../web/${path}`, import.meta.url));
