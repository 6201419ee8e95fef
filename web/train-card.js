// The front page's card for the training page: a thumbnail computed in this page from the run
// that the training page's "Skip ahead" loads (the site's train-snapshot/ folder: the model, its
// options and its curve) by web/train/thumbnail.js, drawn here with the page's theme and colour
// map. The page fills it once, when the card first comes near the screen (after the main figure).
import { describeThumbnail, inductionThumbnail, stripeCells } from "./train/thumbnail.js";
import { colorScale, paletteFor } from "./theme.js";

/** Draws the thumbnail on `canvas` (CSS size `size` px) with the page's theme and colour map. */
export function drawThumbnail(canvas, thumb, { theme = "auto", colormap = "viridis", size = 160 } = {}) {
  const palette = paletteFor(theme);
  const scale = colorScale(colormap, palette);
  const ratio = globalThis.devicePixelRatio || 1;
  canvas.width = Math.round(size * ratio);
  canvas.height = Math.round(size * ratio);
  canvas.style.width = canvas.style.height = `${size}px`;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  const { T, weights } = thumb;
  const cell = size / T;
  // Each row's largest weight is full colour, so that causal rows of many keys still show.
  for (let q = 0; q < T; q++) {
    let top = 0;
    for (let k = 0; k <= q; k++) top = Math.max(top, weights[q * T + k]);
    for (let k = 0; k < T; k++) {
      ctx.fillStyle = k > q ? palette.background : scale.color(top > 0 ? weights[q * T + k] / top : 0);
      ctx.fillRect(k * cell, q * cell, Math.ceil(cell), Math.ceil(cell));
    }
  }
  ctx.strokeStyle = palette.name === "dark" ? "#ffffff" : "#d62728";
  ctx.lineWidth = 1.25;
  for (const [q, k] of stripeCells(thumb.span, T)) ctx.strokeRect(k * cell + 0.6, q * cell + 0.6, cell - 1.2, cell - 1.2);
}

/**
 * Fills the card: fetches the snapshot from `base`, computes and draws the thumbnail, writes its
 * caption. On failure the card keeps its link and text and says the thumbnail could not be made.
 */
export async function fillTrainCard(card, loadLens, { base, theme, colormap } = {}) {
  const canvas = card.querySelector("canvas");
  const caption = card.querySelector(".train-card-caption");
  try {
    const get = async (name) => {
      const response = await fetch(new URL(name, base));
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
      return response;
    };
    const [lens, model, config, state] = await Promise.all([
      loadLens(),
      get("model.safetensors").then((r) => r.arrayBuffer()),
      get("config.json").then((r) => r.text()),
      get("state.json").then((r) => r.json()),
    ]);
    const thumb = await inductionThumbnail(lens, { "model.safetensors": new Uint8Array(model), "config.json": config }, state);
    drawThumbnail(canvas, thumb, { theme, colormap });
    canvas.setAttribute("aria-label", `Attention of the trained induction head: ${describeThumbnail(thumb)}`);
    caption.textContent = describeThumbnail(thumb);
    card.dataset.ready = "true";
    return thumb;
  } catch (error) {
    canvas.hidden = true;
    caption.textContent = `The thumbnail could not be made here (${error.message}); the training page shows the run itself.`;
    card.dataset.ready = "error";
    return null;
  }
}
