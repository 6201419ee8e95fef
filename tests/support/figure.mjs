// Reading an <attn-lens> figure from a test: what it computed, what it drew, what it says.
// The figures are canvases, so tests read them the way a reader does: the readout (hover, tap,
// keyboard), the accessible labels, the text description, the exports, and pixels.

/**
 * Resolves with the detail of the element's next render event after `action` runs; rejects
 * when none comes within 20 s (an action that changes nothing draws nothing).
 */
export async function nextRender(page, action, selector = "attn-lens") {
  const waiting = page.evaluate(
    (sel) =>
      new Promise((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no attn-lens-render event on ${sel} within 20 s`)), 20000);
        document.querySelector(sel).addEventListener(
          "attn-lens-render",
          (e) => {
            clearTimeout(timer);
            // What was drawn, read in the same call: the tokens of the figure's first mode.
            const f = document.querySelector(sel).explanation;
            const mode = f && !f.empty ? (f.causal ?? f.full) : null;
            done({
              ms: e.detail.ms,
              computeMs: e.detail.computeMs,
              error: e.detail.error,
              tokens: mode?.tokens.map((t) => t.text) ?? null,
            });
          },
          { once: true },
        );
      }),
    selector,
  );
  await action();
  return waiting;
}

/** What the element computed: per mode, tokens and weights [H, L, L] as plain arrays. */
export function computed(page, selector = "attn-lens") {
  return page.evaluate((sel) => {
    const f = document.querySelector(sel).explanation;
    if (!f || f.empty) return f;
    const modes = {};
    for (const m of ["causal", "full"]) {
      if (!f[m]) continue;
      modes[m] = {
        tokens: f[m].tokens.map((t) => t.text),
        shape: f[m].weights.shape,
        weights: Array.from(f[m].weights.data),
        mean: Array.from(f[m].meanWeights.data),
      };
    }
    return { modes, totalTokens: f.totalTokens, truncated: f.truncated };
  }, selector);
}

/** The frames drawn: id, accessible label, size, and whether the canvas holds a picture. */
export function frames(page, selector = "attn-lens") {
  return page.evaluate((sel) => {
    return [...document.querySelector(sel).shadowRoot.querySelectorAll(".frame")].map((box) => {
      const canvas = box.querySelector("canvas.figure");
      const context = canvas.getContext("2d");
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      const colours = new Set();
      for (let k = 0; k < data.length; k += 4 * 97) colours.add((data[k] << 16) | (data[k + 1] << 8) | data[k + 2]);
      return {
        id: box.dataset.frame,
        label: box.getAttribute("aria-label"),
        width: box.clientWidth,
        height: box.clientHeight,
        scrollWidth: box.scrollWidth,
        scrollHeight: box.scrollHeight,
        canvas: [canvas.width, canvas.height],
        colours: colours.size,
      };
    });
  }, selector);
}

export const readout = (page, selector = "attn-lens") =>
  page.evaluate((sel) => document.querySelector(sel).shadowRoot.querySelector(".readout").textContent, selector);

/** Focuses frame `index` and walks the keyboard cursor to row i, column j (0-based). */
export async function keyTo(page, index, i, j, selector = "attn-lens") {
  await page.evaluate(([sel, k]) => document.querySelector(sel).shadowRoot.querySelectorAll(".frame")[k].focus(), [selector, index]);
  await page.keyboard.press("ArrowUp");
  for (let k = 0; k < 2000 && !(await readout(page, selector)).startsWith("row 1 "); k++) await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Home");
  for (let k = 0; k < i; k++) await page.keyboard.press("ArrowDown");
  for (let k = 0; k < j; k++) await page.keyboard.press("ArrowRight");
  return readout(page, selector);
}

/** The 1-based row and column and the value a heatmap readout names. */
export function parseReadout(text) {
  const m = text.match(/row (\d+) “.*” → column (\d+) “.*”: (masked, weight 0|weight (\S+))/);
  if (!m) return null;
  return {
    i: Number(m[1]) - 1,
    j: Number(m[2]) - 1,
    masked: m[3].startsWith("masked"),
    value: m[4] === undefined ? 0 : Number(m[4].replace("−", "-")),
  };
}

export const svgOf = (page, selector = "attn-lens") => page.evaluate((sel) => document.querySelector(sel).toSVG(), selector);

/**
 * Puts an exported SVG into the page (off screen) and returns, per text element, its content,
 * its box in SVG units and whether it is turned, for overlap checks. The SVG is removed afterwards.
 */
export function svgTextBoxes(page, svgText) {
  return page.evaluate((text) => {
    const holder = document.createElement("div");
    holder.style.cssText = "position:absolute;left:-100000px;top:0";
    holder.innerHTML = text;
    document.body.append(holder);
    const boxes = [...holder.querySelectorAll("text")].map((t) => {
      const r = t.getBoundingClientRect();
      const root = holder.firstElementChild.getBoundingClientRect();
      return {
        text: t.textContent,
        x: r.left - root.left,
        y: r.top - root.top,
        w: r.width,
        h: r.height,
        size: Number(t.getAttribute("font-size")),
        rotated: t.hasAttribute("transform"),
      };
    });
    holder.remove();
    return boxes;
  }, svgText);
}

/** Whether two boxes overlap by more than `slack` px in both directions. */
export const overlaps = (a, b, slack = 0.5) =>
  a.x + slack < b.x + b.w && b.x + slack < a.x + a.w && a.y + slack < b.y + b.h && b.y + slack < a.y + a.h;

/**
 * Types `text` into the demo page's sentence box; resolves with ms from the input to the painted
 * frame of the figure's next render. With `{ ranked: true }`, resolves with { painted, ranked }:
 * also the ms until every token's predictions are ranked (a large model's figure ranks the last
 * token's with it and the rest in tasks after it is painted: web/element/trained.js, rankLater;
 * a build without that has them all at the paint).
 */
export const typeAndTime = (page, text, { ranked = false } = {}) =>
  page.evaluate(
    ([t, untilRanked]) =>
      new Promise((done) => {
        const el = document.querySelector("#figure");
        const input = document.querySelector("#sentence");
        const start = performance.now();
        const painted = () => {
          const ms = performance.now() - start;
          if (!untilRanked) return done(ms);
          const poll = () =>
            el.attention?.pendingPredictions?.length ? setTimeout(poll) : done({ painted: ms, ranked: performance.now() - start });
          poll();
        };
        // The painted frame of this input's render: a paint still pending from an earlier
        // figure may arrive first, so the clock stops at the first paint after this render.
        el.addEventListener("attn-lens-render", () => el.addEventListener("attn-lens-painted", painted, { once: true }), { once: true });
        input.value = t;
        input.dispatchEvent(new Event("input", { bubbles: true }));
      }),
    [text, ranked],
  );

/**
 * Picks a checkpoint folder's `files` (model.safetensors and config.json) in the demo page's picker and
 * resolves with { text, ok } once the status line says it is shown with its predictions (ok), or
 * the figure shows an error (not ok, the status line's text).
 */
export async function pickCheckpoint(page, dir, { timeout = 60000, polling = 100, files = null } = {}) {
  await page.setInputFiles(
    "#open-checkpoint",
    (files ?? ["model.safetensors", "config.json"]).map((f) => `${dir}/${f}`),
  );
  const shown = await page.waitForFunction(
    () => {
      const text = document.querySelector("#checkpoint-status").textContent;
      const figure = document.querySelector("#figure");
      if (/^Showing your checkpoint/.test(text) && figure.attention?.predictions) return { text, ok: true };
      if (figure.shadowRoot.querySelector(".message.error")) return { text, ok: false };
      return null;
    },
    null,
    { timeout, polling },
  );
  return shown.jsonValue();
}
