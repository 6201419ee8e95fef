// The painted-frame probe shared by the e2e speed report (tests/e2e/speed.test.mjs) and the
// before/after benchmark of the demo page (bench/painted.mjs): installed in the page before its
// scripts, it records when <attn-lens> last changed its DOM or drew on a canvas and when it fired
// attn-lens-painted (the task after the animation frame that follows its draw calls).

/** Watches the figure: records the time of its last DOM mutation and its last canvas draw. */
export function installProbe() {
  const probe = { last: 0, painted: NaN };
  const mark = () => {
    if (probe.pending) return;
    probe.pending = true;
    // A draw call marks the end of the task it belongs to: the microtask runs right after it.
    queueMicrotask(() => {
      probe.pending = false;
      probe.last = performance.now();
    });
  };
  const proto = CanvasRenderingContext2D.prototype;
  for (const name of ["fillRect", "clearRect", "strokeRect", "fill", "stroke", "fillText", "strokeText", "putImageData", "drawImage"]) {
    const original = proto[name];
    proto[name] = function (...args) {
      mark();
      return original.apply(this, args);
    };
  }
  window.__attnProbe = probe;
  // The element says how long explain() took (0 when the change did not recompute).
  addEventListener("attn-lens-render", (e) => (probe.computeMs = e.detail.computeMs ?? NaN));
  addEventListener("attn-lens-painted", () => (probe.painted = performance.now()));
  const watch = () => {
    const root = document.querySelector("attn-lens")?.shadowRoot;
    if (!root) return requestAnimationFrame(watch);
    new MutationObserver(() => (probe.last = performance.now())).observe(root, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  };
  addEventListener("DOMContentLoaded", watch);
}

/** Runs `action` in the page (a function body) and resolves with ms to the figure's last change. */
export async function measure(page, action, arg) {
  await page.evaluate(() => new Promise((done) => setTimeout(done, 50)));
  const started = await page.evaluate(
    ([body, a]) => {
      const t0 = performance.now();
      window.__attnProbe.last = t0;
      window.__attnProbe.computeMs = NaN;
      window.__attnProbe.painted = NaN;
      new Function("arg", body)(a);
      return t0;
    },
    [action, arg],
  );
  // Quiet for 400 ms means done (the slowest figure before this work took about 2 s).
  await page.waitForFunction(() => performance.now() - Math.max(window.__attnProbe.last, window.__attnProbe.painted || 0) > 400, null, {
    polling: 50,
    timeout: 30000,
  });
  // With the times, what the figure shows (read in the same call): its first mode's last token.
  return page.evaluate((t0) => {
    const f = document.querySelector("attn-lens")?.explanation;
    const mode = f && !f.empty ? (f.causal ?? f.full) : null;
    return {
      ms: window.__attnProbe.painted - t0,
      issued: window.__attnProbe.last - t0,
      computeMs: window.__attnProbe.computeMs,
      lastToken: mode ? mode.tokens.at(-1).text : null,
    };
  }, started);
}

/** Page-side bodies for measure(): an edit of the sentence, a radio button, a select. */
export const EDIT = `const t = document.querySelector("#sentence"); t.value = arg; t.dispatchEvent(new Event("input", { bubbles: true }));`;
export const RADIO = `const r = document.querySelector(arg); r.checked = true; r.dispatchEvent(new Event("change", { bubbles: true }));`;
export const SELECT = `const [sel, v] = arg; const s = document.querySelector(sel); s.value = v; s.dispatchEvent(new Event("change", { bubbles: true }));`;

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
