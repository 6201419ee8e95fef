// Registers <attn-lens> and <attn-lens-train>. Importing this twice (or alongside another copy)
// is harmless.
import { AttnLensElement, preloadViews } from "./attn-lens.js";
import { AttnLensTrainElement } from "./train.js";

export function defineAttnLens(tagName = "attn-lens", registry = customElements) {
  if (!registry.get(tagName)) registry.define(tagName, class extends AttnLensElement {});
  return registry.get(tagName);
}

/** Registers the training element (it draws its grid with <attn-lens>, registered by defineAttnLens). */
export function defineAttnLensTrain(tagName = "attn-lens-train", registry = customElements) {
  if (!registry.get(tagName)) registry.define(tagName, class extends AttnLensTrainElement {});
  return registry.get(tagName);
}

defineAttnLens();
defineAttnLensTrain();

export { AttnLensElement, AttnLensTrainElement, preloadViews };
