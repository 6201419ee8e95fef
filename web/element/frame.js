// One drawn figure inside <attn-lens>: a scroll box holding a canvas that stays put (sticky) and
// an overlay canvas above it. The view draws the part of its layout the box shows; scrolling
// redraws (once per frame), hovering and the keyboard only repaint the overlay.
//
// A view module exports layout(), draw(p, lay, view), hit(lay, x, y, view), highlight(p, lay,
// focus, view), readout(lay, focus), move(lay, focus, key) and reveal(lay, focus, view), where
// view = { sx, sy, w, h } is the scroll offset and the visible size in CSS px.
import { NEAR, canvasPainter, whenIdle } from "../paint.js";

// Frames far off screen that still show an older figure: painted one by one while the browser is
// idle, so that a fast scroll or a screenshot finds them up to date. Until
// then each is cleared and marked data-stale, never showing the previous sentence's numbers.
const idleFrames = new Set();
let idleQueued = false;

function paintIdle(deadline) {
  idleQueued = false;
  for (const frame of idleFrames) {
    if (deadline.timeRemaining() < 4) break;
    // A frame of a view not shown now (detached by the view cache) stays queued, still marked
    // stale: it is painted when its view is back, or when it comes near.
    if (!frame.box.isConnected) {
      if (!frame.host.isConnected) idleFrames.delete(frame); // the element itself is gone
      continue;
    }
    idleFrames.delete(frame);
    if (frame.dirty) frame.paint({ force: true });
  }
  if ([...idleFrames].some((frame) => frame.box.isConnected)) queueIdle();
}

/** Queues the idle painting again for frames of a view shown again (the element calls it). */
export function paintStaleFrames() {
  if (idleFrames.size) queueIdle();
}

function queueIdle() {
  if (idleQueued) return;
  idleQueued = true;
  whenIdle(paintIdle);
}

export class Frame {
  /**
   * @param {HTMLElement} box   .frame element: a .sticky div (canvas.figure + canvas.overlay) and a .spacer
   * @param {object} host       { focusChanged(frame, focus, pointer) } — the element
   */
  constructor(box, host) {
    this.box = box;
    this.host = host;
    this.base = box.querySelector("canvas.figure");
    this.top = box.querySelector("canvas.overlay");
    this.sticky = box.querySelector(".sticky");
    this.spacer = box.querySelector(".spacer");
    this.focus = null;
    this.key = null;
    this.scrollQueued = false;
    this.sx = 0;
    this.sy = 0;
    box.addEventListener("scroll", () => {
      if (this.scrollQueued) return;
      this.scrollQueued = true;
      requestAnimationFrame(() => {
        this.scrollQueued = false;
        this.readScroll();
        this.paint();
        host.scrolled?.(this);
      });
    });
    box.addEventListener("pointermove", (e) => this._pointer(e));
    box.addEventListener("pointerdown", (e) => this._pointer(e));
    box.addEventListener("pointerleave", (e) => {
      if (e.pointerType !== "touch") host.focusChanged(this, null, null);
    });
    box.addEventListener("keydown", (e) => this._key(e));
    box.addEventListener("blur", () => host.focusChanged(this, null, null));
  }

  /** The visible part: scroll offset (as last read) and size. */
  get view() {
    return { sx: this.sx, sy: this.sy, w: this.w, h: this.h };
  }

  /** Reads the scroll offset (a layout read: done with the other reads, before any write). */
  readScroll() {
    this.sx = this.box.scrollLeft;
    this.sy = this.box.scrollTop;
  }

  /**
   * Sizes the box for `lay` unless `key` says nothing changed since the last draw; returns true
   * when the frame needs drawing. Only writes styles: the element sizes every frame first, then
   * measures them all (measure()) with one layout, then paints them.
   */
  prepare(viewModule, lay, key) {
    this.module = viewModule;
    this.lay = lay;
    if (key === this.key) return false;
    this.key = key;
    // A focus beyond the new figure (a shorter sentence) is dropped.
    const rows = lay.L ?? lay.pane.rows;
    const cols = lay.L ?? lay.pane.cols;
    if (this.focus && ((this.focus.i ?? 0) >= rows || (this.focus.j ?? 0) >= cols)) this.focus = null;
    const style = this.box.style;
    const scrolls = lay.fullW > lay.viewW + 0.5 || lay.fullH > lay.viewH + 0.5;
    style.width = `${Math.ceil(lay.viewW)}px`;
    style.height = `${Math.ceil(lay.viewH)}px`;
    style.overflow = scrolls ? "auto" : "hidden";
    if (this.box.classList.contains("scrolls") !== scrolls) this.box.classList.toggle("scrolls", scrolls);
    this.spacer.style.width = `${Math.ceil(lay.fullW)}px`;
    return true;
  }

  /** Reads the box's visible size (after prepare()) and whether it is on screen (or near). */
  measure() {
    const lay = this.lay;
    this.w = Math.min(this.box.clientWidth || lay.viewW, Math.ceil(lay.viewW));
    this.h = Math.min(this.box.clientHeight || lay.viewH, Math.ceil(lay.viewH));
    const r = this.box.getBoundingClientRect();
    this.onScreen = r.bottom > -NEAR && r.top < innerHeight + NEAR;
    this.readScroll();
  }

  /** Sizes the sticky canvas holder and the spacer to the measured view (writes only). */
  place() {
    this.sticky.style.width = `${this.w}px`;
    this.sticky.style.height = `${this.h}px`;
    this.spacer.style.height = `${Math.max(0, Math.ceil(this.lay.fullH - this.h))}px`;
  }

  /**
   * Redraws the visible part (after a scroll) and the overlay. A frame far off screen (the
   * matrices of every step) is cleared and drawn when the browser is idle or when it comes near,
   * whichever is first (`force` draws it now).
   */
  paint({ force = false } = {}) {
    if (!this.lay) return;
    if (this.onScreen === false && !force) {
      if (!this.dirty) {
        this.dirty = true;
        for (const canvas of [this.base, this.top]) canvas.getContext("2d")?.clearRect(0, 0, canvas.width, canvas.height);
        this.overlayDrawn = false;
        this.box.dataset.stale = "";
      }
      idleFrames.add(this);
      queueIdle();
      return;
    }
    this.dirty = false;
    idleFrames.delete(this);
    delete this.box.dataset.stale;
    this.module.draw(canvasPainter(this.base, this.w, this.h, { grow: true }), this.lay, this.view);
    this.paintOverlay();
  }

  /** Told by the element's IntersectionObserver whether the frame is on screen (or near). */
  visibility(onScreen) {
    this.onScreen = onScreen;
    if (onScreen && this.dirty) this.paint();
  }

  /** Shows `focus` ({ i, j } as the view defines it, or null) on the overlay only. */
  setFocus(focus) {
    this.focus = focus;
    this.paintOverlay();
  }

  paintOverlay() {
    if (!this.lay) return;
    // An overlay with nothing on it is cleared once, not reallocated and cleared on every draw.
    if (this.focus || this.overlayDrawn) {
      const p = canvasPainter(this.top, this.w, this.h, { grow: true });
      if (this.focus) this.module.highlight(p, this.lay, this.focus, this.view);
      this.overlayDrawn = Boolean(this.focus);
    }
    const dim = Boolean(this.focus) && this.lay.kind === "lines";
    if (this.box.classList.contains("focused") !== dim) this.box.classList.toggle("focused", dim);
  }

  readout() {
    return this.focus && this.lay ? this.module.readout(this.lay, this.focus) : "";
  }

  _pointer(e) {
    if (!this.lay) return;
    const r = this.base.getBoundingClientRect();
    const focus = this.module.hit(this.lay, e.clientX - r.left, e.clientY - r.top, this.view);
    if (e.type === "pointermove" && e.pointerType === "touch") return;
    if (!focus && e.type === "pointermove") {
      this.host.focusChanged(this, null, null);
      return;
    }
    this.host.focusChanged(this, focus, { x: e.clientX, y: e.clientY });
  }

  _key(e) {
    if (!this.lay) return;
    if (e.key === "Escape") {
      this.host.focusChanged(this, null, null);
      return;
    }
    if (!["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
    e.preventDefault();
    const focus = this.module.move(this.lay, this.focus, e.key);
    this.readScroll();
    const { sx, sy } = this.module.reveal(this.lay, focus, this.view);
    if (sx !== this.sx || sy !== this.sy) {
      this.box.scrollLeft = sx;
      this.box.scrollTop = sy;
      this.readScroll();
      this.paint();
    }
    const r = this.base.getBoundingClientRect();
    this.host.focusChanged(this, focus, { x: r.left + 12, y: r.top + 12, keyboard: true });
  }
}
