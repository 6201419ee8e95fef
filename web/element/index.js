// Entry of dist/element.js: the element class, registered as <attn-lens>.
export { AttnLensElement, defineAttnLens, preloadViews } from "./define.js";
