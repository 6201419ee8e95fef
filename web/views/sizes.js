// Sizes some figures take before their data is known, shared by the views and the element's
// reservation (estimate.js) so the space held for a figure is the space it gets.

/** The PCA plot for `width` CSS px available: { w, h }. */
export function pcaSize(width) {
  const w = Math.max(240, Math.min(width, 560));
  return { w, h: Math.round(w * 0.72) + 52 };
}
