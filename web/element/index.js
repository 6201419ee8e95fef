// Entry of dist/element.js: the element class, registered as <attn-lens>.
export { AttnLensElement, defineAttnLens } from "./define.js";
