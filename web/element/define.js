// Registers <attn-lens>. Importing this twice (or alongside another copy) is harmless.
import { AttnLensElement, preloadViews } from "./attn-lens.js";

export function defineAttnLens(tagName = "attn-lens", registry = customElements) {
  if (!registry.get(tagName)) registry.define(tagName, class extends AttnLensElement {});
  return registry.get(tagName);
}

defineAttnLens();

export { AttnLensElement, preloadViews };
