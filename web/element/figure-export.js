// <attn-lens>'s figure as a file: the view's whole figure (not the part a frame shows), with
// the figure's title above it and its caption below, drawn once as SVG or as PNG.
import { colorScale, paletteFor } from "../theme.js";
import { canvasPainter } from "../paint.js";
import { SvgPainter } from "../svg.js";
import { font, wrapText } from "../text.js";
import { loadedView, viewNamed } from "../views/index.js";
import { PANEL_GAP, hasTrace, layoutFor, panelTitle, prepared } from "./layout.js";

/** A short stable hash (FNV-1a) of a string, for export ids. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return (h >>> 0).toString(36);
}

/** The panels side by side at their full size: the export of views drawn as a frame per panel. */
function panelsScene(element, state, palette, scale) {
  const made = element._panels.map((_, k) => layoutFor(element, `panel-${k}`, state, palette, scale));
  const width = made.reduce((w, m) => w + m.lay.fullW, 0) + PANEL_GAP * (made.length - 1);
  const height = Math.max(...made.map((m) => m.lay.fullH));
  return {
    width,
    height,
    draw(p) {
      p.rect(0, 0, width, height, palette.background);
      let x = 0;
      for (const m of made) {
        p.save();
        p.translate(x, 0);
        m.view.draw(p, m.lay);
        p.restore();
        x += m.lay.fullW + PANEL_GAP;
      }
    },
  };
}

/** What the export draws: { width, height, draw(p), title } for the current view. */
function exportScene(element) {
  if (!element._figure || element._figure.empty) throw new Error("attn-lens: there is no figure to export yet");
  const state = element._drawnState();
  const palette = paletteFor(state.theme);
  const scale = colorScale(state.colormap, palette);
  const entry = viewNamed(state.view);
  if (element._figure.file && entry.randomOnly) throw new Error(`attn-lens: the ${entry.title} view has no figure for weights from a file`);
  const m = loadedView(entry.name);
  if (!m || !hasTrace(element, entry, state)) throw new Error(`attn-lens: the ${entry.title} view is still loading`);
  const body = entry.scene
    ? entry.scene(m, { panels: element._panels, model: prepared(element, entry, state), palette, scale, width: element._width })
    : panelsScene(element, state, palette, scale);
  const titleLines = element.figureTitle ? wrapText(element.figureTitle, body.width - 16, font(15, 600)) : [];
  const captionLines = element.caption ? wrapText(element.caption, body.width - 16, font(13)) : [];
  const top = titleLines.length ? titleLines.length * 20 + 8 : 0;
  const height = top + body.height + (captionLines.length ? captionLines.length * 18 + 8 : 0);
  return {
    width: body.width,
    height,
    // A scene names itself when the panels' titles do not say what it shows (every step).
    title: element.label || element.figureTitle || body.title || element._panels.map((d) => panelTitle(d, state)).join("; "),
    draw(p) {
      p.rect(0, 0, body.width, height, palette.background);
      titleLines.forEach((line, k) => p.text(line, 8, 20 + 20 * k, { size: 15, weight: 600, fill: palette.foreground }));
      p.save();
      p.translate(0, top);
      body.draw(p);
      p.restore();
      captionLines.forEach((line, k) => p.text(line, 8, top + body.height + 18 + 18 * k, { size: 13, fill: palette.muted }));
    },
  };
}

/** The figure as a standalone SVG document (text). */
export function toSVG(element) {
  const scene = exportScene(element);
  const state = element._drawnState();
  const painter = new SvgPainter(`attnlens-${hash(JSON.stringify([state, element._zoom, element.caption, element.figureTitle]))}`);
  scene.draw(painter);
  return painter.document(scene.width, scene.height, { title: scene.title });
}

/** The figure as a PNG Blob, `scale` times its CSS size (at most 64 megapixels). */
export function toPNG(element, scale) {
  try {
    const scene = exportScene(element);
    const canvas = document.createElement("canvas");
    scene.draw(canvasPainter(canvas, scene.width, scene.height, { scale, maxPixels: 64e6 }));
    return new Promise((done, fail) =>
      canvas.toBlob((png) => (png ? done(png) : fail(new Error("attn-lens: PNG encoding failed"))), "image/png"),
    );
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Saves the figure as attnlens-<view>.svg or .png (the toolbar's buttons). */
export async function download(element, kind) {
  const { state } = element._state;
  const blob = kind === "svg" ? new Blob([toSVG(element)], { type: "image/svg+xml" }) : await toPNG(element, 2);
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `attnlens-${state.view}.${kind}`;
  element.renderRoot.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
