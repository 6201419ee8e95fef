// The figure computed from the sentence with seeded random weights (lens.js computeFigure), the
// element's default source. A figure's first computation waits for its own animation frame, so
// a post with many figures stays smooth; later ones (an edit) run inside the update that asks
// for them, so the figure changes in the same frame, unless the last one was slow.
import { COMPUTE_KEYS } from "../state.js";
import { computeFigure, loadLens } from "../lens.js";
import { panelsOf } from "../figure-data.js";
import { tracedHead, viewNamed } from "../views/index.js";

/**
 * A computation slower than this moves the next one to a task of its own, after the input
 * events already queued, so fast typing on a long text computes once for several keys.
 */
const SLOW_COMPUTE_MS = 50;
const soon = (() => {
  const channel = new MessageChannel();
  const queue = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (callback) => {
    queue.push(callback);
    channel.port2.postMessage(0);
  };
})();

// Elements waiting for their first computation, one per animation frame.
const pending = new Set();
let frameRequested = false;
function schedule(element) {
  pending.add(element);
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(function next() {
    const [first] = pending;
    if (first) {
      pending.delete(first);
      computeNow(first);
    }
    if (pending.size) requestAnimationFrame(next);
    else frameRequested = false;
  });
}

/** Whether `element` waits for the animation frame of its first computation. */
export const isScheduled = (element) => pending.has(element);

/** Forgets `element`'s scheduled computation (it left the page). */
export const unschedule = (element) => pending.delete(element);

/**
 * Computes the figure of `state` unless the one computed (or under way) answers it. Only a view
 * that needs the trace computes with it, of the head it shows (a head switch there computes
 * again); a figure computed with a trace serves every other view.
 */
export function explainIfChanged(element, state) {
  const key = JSON.stringify(COMPUTE_KEYS.map((k) => state[k]));
  const traced = viewNamed(state.view).needsTrace;
  const wanted = traced ? `${key}/trace/${tracedHead(state)}` : key;
  if (wanted === element._computedKey || (!traced && element._computedKey?.startsWith(`${key}/trace/`))) return;
  element._traceHead = traced ? tracedHead(state) : undefined;
  element._computedKey = wanted;
  if (!element._lens || !element._figure) schedule(element);
  else if (element._computeMs < SLOW_COMPUTE_MS) explain(element);
  else if (!element._deferred) {
    element._deferred = true;
    soon(() => {
      element._deferred = false;
      explain(element);
      element.requestUpdate();
    });
  }
}

async function computeNow(element) {
  try {
    element._lens ??= await loadLens();
  } catch (error) {
    element._error = error.message;
    return;
  }
  explain(element);
  element.requestUpdate();
}

function explain(element) {
  element._computeWith((state) => {
    const trace = element._traceHead !== undefined;
    const into = element.recycle ? element._figure : undefined;
    element._figure = { ...computeFigure(element._lens, state, { trace, traceHead: element._traceHead, into }), state };
    element._panels = element._figure.empty ? [] : panelsOf(element._figure);
  });
}
