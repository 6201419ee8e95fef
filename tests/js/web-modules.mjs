// The page's modules (web/) in Node. web/theme.js and web/views/matrix.js import the colour tables
// the site build makes (virtual:attnlens-*, scripts/build-web.mjs); here stand-ins without colours
// answer for them, enough for modules that only name colours. Import web modules with
// importWeb(), after the stand-ins are registered (a static import would be resolved before).
import { register } from "node:module";

const HOOK = `const STAND_INS = {
  "virtual:attnlens-colormaps": "export const MAPS = {}; export const TABLEAU10 = [];",
  "virtual:attnlens-diverging": "export const RDBU = '';",
};
export async function resolve(specifier, context, next) {
  if (!(specifier in STAND_INS)) return next(specifier, context);
  return { shortCircuit: true, url: "data:text/javascript," + encodeURIComponent(STAND_INS[specifier]) };
}`;
register(`data:text/javascript,${encodeURIComponent(HOOK)}`);

/** Imports web/<path>. */
export const importWeb = (path) => import(new URL(`../../web/${path}`, import.meta.url));
