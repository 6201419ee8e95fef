// Entry of dist/element.js: the element classes, registered as <attn-lens> and <attn-lens-train>.
export { AttnLensElement, AttnLensTrainElement, defineAttnLens, defineAttnLensTrain, preloadViews } from "./define.js";
