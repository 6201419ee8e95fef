// The blog example: two <attn-lens> elements loaded with one plain script tag, and an iframe
// embed of the demo, served from 127.0.0.1 with nothing else reachable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPage, useSite } from "../support/browser.mjs";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
const site = useSite();

/** Loads the post, scrolls through it, and returns when both figures are drawn. */
async function loadPost() {
  const session = await openPage(site.browser.context, site.server.url);
  const { page } = session;
  await page.goto(`${site.server.url}examples/blog.html`);
  await page.waitForSelector("#causal-figure svg.figure");
  // The second figure is far below the fold: it is not computed until it comes near.
  session.lazy = await page.evaluate(() => !document.querySelector("#full-figure").shadowRoot.querySelector("svg.figure"));
  await page.locator("#full-figure").scrollIntoViewIfNeeded();
  await page.waitForSelector("#full-figure svg.figure");
  session.ms = await page.evaluate(() => performance.now());
  return session;
}

const figureSvg = (page, id) => page.evaluate((sel) => document.querySelector(sel).toSVG(), id);

test("both figures render inside their shadow roots; causal has a zero upper triangle", async () => {
  const requestsBefore = site.server.requests.length;
  const { page, problems, outside, ms, lazy } = await loadPost();
  console.log(`# blog post: both figures drawn ${ms.toFixed(0)} ms after navigation (the second scrolled into view)`);
  assert.ok(lazy, "the figure below the fold waits until it comes near the viewport");
  const wasmLoads = site.server.requests.slice(requestsBefore).filter((path) => /^\/attnlens(-relaxed)?\.wasm$/.test(path)).length;
  assert.equal(wasmLoads, 1, "both elements share one wasm instance");
  for (const id of ["#causal-figure", "#full-figure"]) {
    const inShadow = await page.evaluate((sel) => {
      const el = document.querySelector(sel);
      return Boolean(el.shadowRoot?.querySelector("svg.figure")) && !el.querySelector("svg");
    }, id);
    assert.ok(inShadow, `${id} draws into its shadow root`);
  }
  const causal = await page.evaluate(() =>
    [...document.querySelector("#causal-figure").shadowRoot.querySelectorAll("rect.cell")].map((r) => [
      Number(r.dataset.i),
      Number(r.dataset.j),
      Number(r.dataset.w),
    ]),
  );
  assert.ok(causal.length > 0);
  for (const [i, j, w] of causal) if (j > i) assert.equal(w, 0);
  const full = await page.evaluate(() =>
    [...document.querySelector("#full-figure").shadowRoot.querySelectorAll("rect.cell")].map((r) => [
      Number(r.dataset.i),
      Number(r.dataset.j),
      Number(r.dataset.w),
    ]),
  );
  assert.ok(full.some(([i, j, w]) => j > i && w > 0));
  const frame = page.frameLocator("iframe");
  await frame.locator('attn-lens svg.figure[data-view="pca"]').waitFor();
  await page.screenshot({ path: `${artefacts}blog.png`, fullPage: true });
  assert.deepEqual(problems, []);
  assert.deepEqual(outside, []);
  assert.ok(site.server.requests.every((path) => !path.includes("..")));
  await page.close();
});

test("reloading gives identical figures; the same attributes give the same picture", async () => {
  const first = await loadPost();
  const a = [await figureSvg(first.page, "#causal-figure"), await figureSvg(first.page, "#full-figure")];
  await first.page.close();
  const second = await loadPost();
  const b = [await figureSvg(second.page, "#causal-figure"), await figureSvg(second.page, "#full-figure")];
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
  const title = await page.evaluate(
    () => document.querySelector("#causal-figure").shadowRoot.querySelector("svg.figure > text").textContent,
  );
  assert.match(title, /head 2 of 2/);
  const labels = await page.evaluate(() =>
    [...document.querySelector("#causal-figure").shadowRoot.querySelectorAll("text.row-label")].map((t) => t.lastChild.textContent),
  );
  assert.deepEqual(labels, ["a", "different", "sentence", "now"]);
  await page.evaluate(() => document.querySelector("#causal-figure").setAttribute("view", "lines"));
  await page.waitForSelector('#causal-figure svg.figure[data-view="lines"]');
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
  const messages = await page.evaluate(() =>
    [...document.querySelector("#full-figure").shadowRoot.querySelectorAll(".message.warning")].map((m) => m.textContent),
  );
  assert.ok(
    messages.some((m) => /view must be "heatmap"/.test(m)),
    messages.join(" | "),
  );
  assert.ok(
    messages.some((m) => /dim 10 is not divisible by heads 4/.test(m)),
    messages.join(" | "),
  );
  assert.ok(await page.evaluate(() => Boolean(document.querySelector("#full-figure").shadowRoot.querySelector("svg.figure"))));
  assert.deepEqual(problems, []);
  await page.close();
});
