// The blog example: two <attn-lens> elements loaded with one plain script tag, and an iframe
// embed of the demo, served from 127.0.0.1 with nothing else reachable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { launchBrowser, openPage, useSite } from "../support/browser.mjs";
import { computed, frames, keyTo, nextRender, parseReadout, readout, svgOf } from "../support/figure.mjs";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
const site = useSite();

/** Loads the post, scrolls through it, and returns when both figures are drawn. */
async function loadPost({ viewport = { width: 1280, height: 900 }, context = site.browser.context } = {}) {
  const session = await openPage(context, site.server.url);
  const { page } = session;
  // What the post itself fetches (not the iframe's page).
  session.postRequests = [];
  page.on("request", (r) => r.frame() === page.mainFrame() && session.postRequests.push(new URL(r.url()).pathname));
  await page.setViewportSize(viewport);
  await page.goto(`${site.server.url}examples/blog.html`);
  await page.waitForSelector("#causal-figure .frame canvas.figure");
  // The second figure is below the fold: it is not computed until it comes near.
  session.lazy = await page.evaluate(() => document.querySelector("#full-figure").explanation === null);
  await page.locator("#full-figure").scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector("#full-figure").explanation);
  await page.waitForSelector("#full-figure .frame canvas.figure");
  session.ms = await page.evaluate(() => performance.now());
  return session;
}

test("both figures render inside their shadow roots from one wasm instance; causal has a zero upper triangle", async () => {
  const requestsBefore = site.server.requests.length;
  const { page, problems, outside, ms, lazy, postRequests } = await loadPost({ viewport: { width: 1280, height: 700 } });
  console.log(`# blog post: both figures drawn ${ms.toFixed(0)} ms after navigation (the second scrolled into view)`);
  assert.ok(lazy, "the figure below the fold waits until it comes near the viewport");
  const requested = site.server.requests.slice(requestsBefore);
  const wasmLoads = postRequests.filter((path) => /^\/attnlens(-relaxed)?\.wasm$/.test(path)).length;
  assert.equal(wasmLoads, 1, "both elements share one wasm instance");
  // The static figure inside each element is for readers without JavaScript: in <noscript>, it
  // is neither shown nor fetched when the element runs.
  assert.equal(await page.locator("attn-lens img").count(), 0);
  assert.deepEqual(
    requested.filter((p) => p.startsWith("/examples/figures/")),
    [],
    "the no-JS figures are not fetched",
  );
  assert.ok(!requested.some((p) => /element-(steps|pca)/.test(p)), "a heatmap does not fetch the views it does not show");
  for (const id of ["#causal-figure", "#full-figure"]) {
    const inShadow = await page.evaluate((sel) => Boolean(document.querySelector(sel).shadowRoot.querySelector("canvas.figure")), id);
    assert.ok(inShadow, `${id} draws into its shadow root`);
  }
  const causal = (await computed(page, "#causal-figure")).modes.causal;
  const L = causal.tokens.length;
  for (let h = 0; h < causal.shape[0]; h++) {
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) assert.equal(causal.weights[(h * L + i) * L + j], 0);
  }
  const full = (await computed(page, "#full-figure")).modes.full;
  assert.ok(full.mean.some((w, k) => k % L > Math.floor(k / L) && w > 0));
  await page.frameLocator("iframe").locator("attn-lens .frame canvas.figure").waitFor();
  // The iframe's page finds the wasm at the element's URL, so a browser downloads it once for the
  // whole post (it was once under assets/ for the page; this test's routing turns
  // the HTTP cache off, so the URLs are what it can check).
  const wasmPaths = new Set(site.server.requests.slice(requestsBefore).filter((p) => p.endsWith(".wasm")));
  assert.deepEqual([...wasmPaths], ["/attnlens-relaxed.wasm"], "the figures and the iframe's page fetch one module URL");
  await page.screenshot({ path: `${artefacts}blog.png`, fullPage: true });
  assert.deepEqual(problems, []);
  assert.deepEqual(outside, []);
  assert.ok(site.server.requests.every((path) => !path.includes("..")));
  await page.close();
});

test("reloading gives identical figures; the same attributes give the same picture", async () => {
  const first = await loadPost();
  const a = [await svgOf(first.page, "#causal-figure"), await svgOf(first.page, "#full-figure")];
  await first.page.close();
  const second = await loadPost();
  const b = [await svgOf(second.page, "#causal-figure"), await svgOf(second.page, "#full-figure")];
  assert.equal(a[0], b[0]);
  assert.equal(a[1], b[1]);
  assert.notEqual(a[0], a[1]);
  assert.deepEqual([...first.problems, ...second.problems], []);
  await second.page.close();
});

test("changing attributes updates the figure, one render per burst", async () => {
  const { page, problems } = await loadPost();
  const renders = await page.evaluate(async () => {
    const el = document.querySelector("#causal-figure");
    let count = 0;
    el.addEventListener("attn-lens-render", () => count++);
    el.setAttribute("sentence", "A different sentence now");
    el.setAttribute("heads", "2");
    el.setAttribute("head", "1");
    el.setAttribute("seed", "3");
    await new Promise((done) => el.addEventListener("attn-lens-render", done, { once: true }));
    await new Promise((done) => setTimeout(done, 100));
    return count;
  });
  assert.equal(renders, 1);
  assert.match((await frames(page, "#causal-figure"))[0].label, /head 2 of 2/);
  assert.deepEqual((await computed(page, "#causal-figure")).modes.causal.tokens, ["A", "different", "sentence", "now"]);
  await nextRender(
    page,
    () => page.evaluate(() => document.querySelector("#causal-figure").setAttribute("view", "lines")),
    "#causal-figure",
  );
  assert.match((await frames(page, "#causal-figure"))[0].label, /heads/);
  await page.evaluate(() => document.querySelector("#causal-figure").setAttribute("theme", "dark"));
  await page.waitForFunction(() => document.querySelector("#causal-figure").dataset.theme === "dark");
  assert.deepEqual(problems, []);
  await page.close();
});

test("bad attributes give a clear message, not a broken figure", async () => {
  const { page, problems } = await loadPost();
  await page.evaluate(() => {
    const el = document.querySelector("#full-figure");
    el.setAttribute("dim", "10");
    el.setAttribute("view", "sideways");
  });
  await page.waitForFunction(() => document.querySelector("#full-figure").shadowRoot.querySelectorAll(".message.warning").length === 2);
  const messages = await page.$$eval("#full-figure .message.warning", (ms) => ms.map((m) => m.textContent));
  assert.ok(
    messages.some((m) => /view must be "heatmap"/.test(m)),
    messages.join(" | "),
  );
  assert.ok(
    messages.some((m) => /dim 10 cannot be split into 4 heads/.test(m)),
    messages.join(" | "),
  );
  assert.ok((await frames(page, "#full-figure"))[0].colours > 5, "the figure is still drawn");
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo-href="http://[": a message, no link, and the figure still follows its attributes', async () => {
  const { page, problems } = await loadPost();
  await page.evaluate(() => document.querySelector("#causal-figure").setAttribute("demo-href", "http://["));
  await page.waitForSelector("#causal-figure .message.warning");
  assert.match(await page.locator("#causal-figure .message.warning").textContent(), /demo-href "http:\/\/\[" is not a valid URL/);
  assert.equal(await page.locator("#causal-figure a.button").count(), 0);
  await nextRender(
    page,
    () => page.evaluate(() => document.querySelector("#causal-figure").setAttribute("sentence", "still alive")),
    "#causal-figure",
  );
  assert.deepEqual((await computed(page, "#causal-figure")).modes.causal.tokens, ["still", "alive"]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the element fills its column and sizes its cells to fit; no layout shift while scrolling (CLS < 0.1)", async () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 800 },
  ]) {
    const { page, problems } = await openPage(site.browser.context, site.server.url);
    await page.setViewportSize(viewport);
    await page.addInitScript(() => {
      window.__shifts = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push([e.startTime, e.value]);
      }).observe({ type: "layout-shift", buffered: true });
    });
    await page.goto(`${site.server.url}examples/blog.html`);
    const cls = await page.evaluate(async () => {
      for (let y = 0; y < document.body.scrollHeight; y += 150) {
        scrollTo(0, y);
        await new Promise((done) => setTimeout(done, 80));
      }
      await new Promise((done) => setTimeout(done, 800));
      // CLS as browsers report it: the largest burst of shifts (gaps under 1 s, at most 5 s long).
      let best = 0;
      let burst = 0;
      let start = -Infinity;
      let previous = -Infinity;
      for (const [t, v] of window.__shifts) {
        if (t - previous > 1000 || t - start > 5000) {
          burst = 0;
          start = t;
        }
        burst += v;
        previous = t;
        best = Math.max(best, burst);
      }
      return best;
    });
    console.log(`# blog post at ${viewport.width} px: CLS ${cls.toFixed(4)} while scrolling`);
    assert.ok(cls < 0.1, `CLS ${cls}`);
    const fit = await page.evaluate(() =>
      [...document.querySelectorAll("attn-lens")].map((el) => ({
        element: el.getBoundingClientRect().width,
        column: el.parentElement.getBoundingClientRect().width,
        frame: el.shadowRoot.querySelector(".frame").getBoundingClientRect().width,
      })),
    );
    for (const f of fit) {
      assert.ok(Math.abs(f.element - f.column) < 1, `the element spans its column: ${JSON.stringify(f)}`);
      assert.ok(f.frame <= f.column && f.frame > 0.6 * f.column, `the figure fits the column: ${JSON.stringify(f)}`);
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test("no-toolbar hides the buttons but keeps the readout; caption, figure-title and label show", async () => {
  const { page, problems } = await loadPost();
  await page.evaluate(() => {
    const el = document.querySelector("#causal-figure");
    el.setAttribute("no-toolbar", "");
    el.setAttribute("label", "Causal attention weights of a sentence about a cat");
  });
  await page.waitForFunction(() => document.querySelector("#causal-figure").shadowRoot.querySelectorAll(".toolbar button").length === 0);
  assert.match(await readout(page, "#causal-figure"), /Hover a cell/);
  const r = parseReadout(await keyTo(page, 0, 2, 1, "#causal-figure"));
  assert.deepEqual([r.i, r.j], [2, 1]);
  assert.equal(await page.locator("#causal-figure .figure-title").textContent(), "Causal attention");
  assert.match(await page.locator("#causal-figure p.caption").textContent(), /^Figure 1\. Causal attention/);
  assert.match((await frames(page, "#causal-figure"))[0].label, /^Causal attention weights of a sentence about a cat: /);
  const svg = await svgOf(page, "#causal-figure");
  assert.match(svg, /aria-label="Causal attention weights of a sentence about a cat"/);
  assert.ok(svg.includes(">Figure 1. Causal attention: everything above the diagonal is exactly zero."), "the caption is in the export");
  assert.deepEqual(problems, []);
  await page.close();
});

test("colour maps: a colour-blind-safe choice, and a dark-theme map whose low end stands apart from the background", async () => {
  const { page, problems } = await loadPost();
  const contrast = async (theme, colormap) => {
    await nextRender(
      page,
      () =>
        page.evaluate(
          ([t, c]) => {
            const el = document.querySelector("#full-figure");
            el.setAttribute("theme", t);
            el.setAttribute("colormap", c);
          },
          [theme, colormap],
        ),
      "#full-figure",
    );
    const svg = await svgOf(page, "#full-figure");
    // The legend bar is the colour map from 0 to 1: its first stop is the colour of weight 0.
    return page.evaluate((text) => {
      const rgb = (c) => (c.startsWith("#") ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : c.match(/\d+/g).map(Number));
      const lum = (c) =>
        rgb(c)
          .map((v) => v / 255)
          .map((s) => (s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4))
          .reduce((a, v, k) => a + v * [0.2126, 0.7152, 0.0722][k], 0);
      const doc = new DOMParser().parseFromString(text, "image/svg+xml");
      const background = doc.querySelector("svg > rect").getAttribute("fill");
      const legend = [...doc.querySelectorAll("rect")].find(
        (r) => r.getAttribute("height") === "10" && Number(r.getAttribute("width")) < 5,
      );
      const [hi, lo] = [lum(background), lum(legend.getAttribute("fill"))].sort((a, b) => b - a);
      return (hi + 0.05) / (lo + 0.05);
    }, svg);
  };
  for (const [theme, colormap] of [
    ["dark", "viridis"],
    ["dark", "magma"],
    ["light", "blues"],
    ["dark", "cividis"],
    ["light", "cividis"],
  ]) {
    const c = await contrast(theme, colormap);
    assert.ok(c >= 1.5, `${colormap} on ${theme}: weight 0 has contrast ${c.toFixed(2)} against the background`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("without JavaScript the post shows the static figures; the iframe embed fits without scrolling", async () => {
  const noJs = await launchBrowser({ javaScriptEnabled: false });
  try {
    const { page } = await openPage(noJs.context, site.server.url);
    await page.goto(`${site.server.url}examples/blog.html`);
    const images = await page.$$eval("attn-lens img", (imgs) =>
      imgs.map((i) => i.getBoundingClientRect().height > 300 && i.alt.length > 20),
    );
    assert.deepEqual(images, [true, true]);
    await page.locator("attn-lens img").nth(1).scrollIntoViewIfNeeded();
    await page.waitForFunction(() => [...document.querySelectorAll("attn-lens img")].every((i) => i.complete && i.naturalWidth > 0));
    await page.close();
  } finally {
    await noJs.close();
  }
  const { page, problems } = await loadPost();
  const frame = page.frameLocator("iframe");
  await frame.locator("attn-lens .frame canvas.figure").waitFor();
  const inner = await page.frames()[1].evaluate(() => ({
    scrollHeight: document.documentElement.scrollHeight,
    clientHeight: document.documentElement.clientHeight,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  assert.ok(inner.scrollHeight <= inner.clientHeight && inner.scrollWidth <= inner.clientWidth, JSON.stringify(inner));
  // No empty stretch in the post: every gap between blocks is under a screen's height.
  const gaps = await page.evaluate(() => {
    const blocks = [...document.querySelectorAll("article > *")].map((e) => e.getBoundingClientRect());
    return blocks.slice(1).map((b, k) => b.top - blocks[k].bottom);
  });
  assert.ok(Math.max(...gaps) < 100, `gaps ${gaps.join(", ")}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the post and the demo page in its iframe download the module once (the iframe's request is answered 304)", async () => {
  // A browser of its own (an empty HTTP cache) and no request routing, which turns the cache off:
  // the post as a reader's browser loads it. scripts/serve.mjs sends an ETag with no-cache, as a
  // static host's default; the iframe's page asks for the same module URL and gets a 304.
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    const problems = [];
    page.on("pageerror", (error) => problems.push(error.message));
    const from = site.server.sent.length;
    await page.goto(`${site.server.url}examples/blog.html`);
    await page.waitForSelector("#causal-figure .frame canvas.figure");
    await page.locator("iframe").scrollIntoViewIfNeeded();
    await page.frameLocator("iframe").locator("attn-lens .frame canvas.figure").waitFor();
    const isWasm = (p) => p.endsWith(".wasm");
    const sent = site.server.sent.slice(from).filter(isWasm);
    assert.deepEqual(sent, ["/attnlens-relaxed.wasm"], "the module's bytes are sent once");
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
