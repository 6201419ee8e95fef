// <attn-lens>'s toolbar: the readout (what is hovered or focused, else the view's hint) with its
// tooltip, the zoom buttons, SVG and PNG export, and the "Open in demo" link.
import { html, nothing } from "lit";
import { stateToParams } from "../state.js";
import { viewNamed } from "../views/index.js";
import { download } from "./figure-export.js";

const ZOOMS = [1, 2, 4, 8, 16, 32];
const hoverNone = typeof matchMedia === "function" && matchMedia("(hover: none)").matches;

/** The "Open in demo" link of demo-href with the figure's state, or the problem with demo-href. */
export function demoLink(element) {
  try {
    const url = new URL(element.demoHref, document.baseURI);
    url.search = stateToParams(element._state.state).params.toString();
    return { href: url.href };
  } catch {
    return { problem: `demo-href "${element.demoHref}" is not a valid URL, so the "Open in demo" link is left out` };
  }
}

export function toolbarTemplate(element, state, link) {
  const ready = element._figure && !element._figure.empty;
  const canZoom = viewNamed(state.view).zoom && ready;
  return html`<div class="toolbar" part="toolbar">
    <span class="readout" part="readout" role="status" aria-live="polite"></span>
    ${
      element.noToolbar
        ? nothing
        : html`${
              canZoom
                ? html`<button aria-label="Zoom out" title="Zoom out" ?disabled=${element._zoom <= 1} @click=${() => zoomBy(element, -1)}>
                      −
                    </button>
                    <button class="zoom-in" aria-label="Zoom in" title="Zoom in (then scroll)" @click=${() => zoomBy(element, 1)}>
                      +
                    </button>`
                : nothing
            }
            <button @click=${() => download(element, "svg")} ?disabled=${!ready}>SVG</button>
            <button @click=${() => download(element, "png")} ?disabled=${!ready}>PNG</button>
            ${link?.href ? html`<a class="button" href=${link.href} target="_blank" rel="noopener">Open in demo</a>` : nothing}`
    }
  </div>`;
}

function zoomBy(element, step) {
  const k = Math.max(0, Math.min(ZOOMS.length - 1, ZOOMS.indexOf(element._zoom) + step));
  element._zoomChanged = ZOOMS[k] !== element._zoom;
  element._zoom = ZOOMS[k];
}

/** Zooming in stays possible while cells (or rows) are under 40 px; known once the frames are laid out. */
export function updateZoomButton(element) {
  const button = element.renderRoot.querySelector("button.zoom-in");
  if (!button) return;
  const frame = element._liveFrames().find((f) => f.group === "panels" && f.lay);
  const size = frame ? (frame.lay.cell ?? frame.lay.row) : Infinity;
  const disabled = !(element._zoom < ZOOMS.at(-1) && size < 40);
  if (button.disabled !== disabled) button.disabled = disabled;
}

/** What the readout says while nothing is focused: how to read the view. */
export function hint(element) {
  if (!element._figure || element._figure.empty || element._error) return "";
  return viewNamed(element._state.state.view).hint(hoverNone ? "Tap" : "Hover");
}

/** Shows the focused frames' readout (both panels side by side), and a tip at `pointer`. */
export function showReadout(element, pointer) {
  const readout = element.renderRoot.querySelector(".readout");
  const tip = element.renderRoot.querySelector(".tip");
  if (!readout) return;
  const focused = element._liveFrames().filter((f) => f.focus);
  const text =
    focused.length > 1
      ? focused.map((f) => `${f.lay.data?.mode === "full" ? "full" : "causal"}: ${f.readout()}`).join(" · ")
      : (focused[0]?.readout() ?? "");
  const shown = text || hint(element);
  if (readout.textContent !== shown) readout.textContent = shown;
  if (!tip) return;
  if (text && pointer) {
    tip.hidden = false;
    if (tip.textContent !== text) tip.textContent = text;
    const x = Math.min(pointer.x + 14, innerWidth - 20 - Math.min(tip.offsetWidth, innerWidth * 0.9));
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${pointer.y + 18}px`;
  } else if (!text && !tip.hidden) tip.hidden = true;
}
