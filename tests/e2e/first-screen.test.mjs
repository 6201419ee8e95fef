// The first screen a visitor sees, at 1280×800 and on a 360×740 phone: the bare page opens on the
// trained model, its figure starts on that screen with a good part of it drawn there, and the
// training page's link is visible on both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { launchBrowser, openPage, useSite } from "../support/browser.mjs";

const site = useSite();
const artefacts = new URL("../../test-results/", import.meta.url).pathname;
mkdirSync(artefacts, { recursive: true });

// The figure's canvas on the first screen: at 1280 its body, not only its title and a few rows
// (the column labels take 110 px of it; 280 px is about eight rows of the page's sentence); on a
// phone a third of the heatmap.
for (const { width, height, mobile, drawn } of [
  { width: 1280, height: 800, mobile: false, drawn: 280 },
  { width: 360, height: 740, mobile: true, drawn: 150 },
]) {
  test(`${width}×${height}: the trained model's figure on the first screen, the training page one tap away`, async () => {
    const browser = mobile ? await launchBrowser({ hasTouch: true, isMobile: true }) : site.browser;
    try {
      const { page, problems } = await openPage(browser.context, site.server.url);
      await page.setViewportSize({ width, height });
      await page.goto(`${site.server.url}index.html`);
      await page.waitForFunction(() => document.querySelector("#figure").attention?.tokens.length > 10, null, { timeout: 60000 });
      const screen = await page.evaluate(() => {
        const canvas = document.querySelector("#figure").shadowRoot.querySelector("canvas.figure").getBoundingClientRect();
        const link = document.querySelector(".train-link");
        const top = (selector) => document.querySelector(selector).getBoundingClientRect().top;
        return {
          model: document.querySelector("#figure").model,
          // The attention and view settings: beside the figure, or between the sentence and it.
          settings: [top('input[name="mode"][value="causal"]'), top("#views")],
          figureTop: top("#figure"),
          canvasTop: canvas.top,
          canvasBottom: canvas.bottom,
          link: link.checkVisibility() && link.getBoundingClientRect().bottom <= innerHeight,
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        };
      });
      assert.equal(screen.model, "attnlens");
      const visible = Math.min(screen.canvasBottom, height) - screen.canvasTop;
      assert.ok(
        visible >= drawn,
        `${visible.toFixed(0)} px of the figure on the first screen (canvas from y = ${screen.canvasTop.toFixed(0)})`,
      );
      assert.ok(screen.link, "the training page's link is on the first screen");
      for (const y of screen.settings) {
        assert.ok(y < height, `the attention and view settings are on the first screen (y = ${y.toFixed(0)})`);
        if (mobile) assert.ok(y < screen.figureTop, "on a phone they come between the sentence and the figure");
      }
      assert.equal(screen.overflow, 0, "nothing overflows sideways");
      await page.screenshot({ path: `${artefacts}first-screen-${width}.png` });
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      if (mobile) await browser.close();
    }
  });
}

test("the training card below the figure draws the saved run's induction head once scrolled to", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.setViewportSize({ width: 1280, height: 800 });
  const requests = [];
  page.on("request", (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(`${site.server.url}index.html`);
  await page.waitForFunction(() => document.querySelector("#figure").attention?.tokens.length > 10, null, { timeout: 60000 });
  // Below the figure, so the first screen is the figure's; nothing fetched for it yet.
  const before = await page.evaluate(() => ({
    top: document.querySelector("#train-card").getBoundingClientRect().top,
    figureTop: document.querySelector("#figure").getBoundingClientRect().top,
    ready: document.querySelector("#train-card").dataset.ready ?? null,
  }));
  assert.ok(before.top > before.figureTop, "the card comes after the figure");
  assert.equal(before.ready, null, "the thumbnail waits until the card is near the screen");
  assert.ok(!requests.some((p) => p.includes("train-snapshot/")), `fetched early: ${requests.filter((p) => p.includes("train-snapshot"))}`);
  await page.locator("#train-card").scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector("#train-card").dataset.ready, null, { timeout: 60000 });
  const card = await page.evaluate(() => {
    const c = document.querySelector("#train-card");
    const canvas = c.querySelector("canvas");
    const ctx = canvas.getContext("2d");
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4 * 97) colours.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
    return {
      ready: c.dataset.ready,
      caption: c.querySelector(".train-card-caption").textContent,
      label: canvas.getAttribute("aria-label"),
      link: c.querySelector("a").getAttribute("href"),
      colours: colours.size,
      width: canvas.getBoundingClientRect().width,
    };
  });
  assert.equal(card.ready, "true", card.caption);
  assert.match(card.caption, /^Layer \d, head \d of the saved run \(step [\d,]+\)\./);
  assert.match(card.caption, /Induction score 0\.\d\d; it formed at step 3,000/);
  assert.match(card.label, /induction head/);
  assert.equal(card.link, "./train.html");
  assert.equal(card.width, 160);
  assert.ok(card.colours > 8, `the thumbnail has ${card.colours} colours: not drawn`);
  // One fetch of each snapshot file.
  for (const f of ["model.safetensors", "config.json", "state.json"])
    assert.equal(requests.filter((p) => p.endsWith(`train-snapshot/${f}`)).length, 1, f);
  // The page's theme switch redraws it (dark background in the top-right, causal, corner).
  const corner = () =>
    page.evaluate(() => {
      const canvas = document.querySelector("#train-card canvas");
      return [
        ...canvas
          .getContext("2d")
          .getImageData(canvas.width - 2, 1, 1, 1)
          .data.slice(0, 3),
      ];
    });
  const light = await corner();
  await page.selectOption("#theme", "dark");
  await page.waitForFunction((l) => {
    const canvas = document.querySelector("#train-card canvas");
    const d = canvas.getContext("2d").getImageData(canvas.width - 2, 1, 1, 1).data;
    return d[0] !== l[0] || d[1] !== l[1] || d[2] !== l[2];
  }, light);
  const dark = await corner();
  assert.ok(dark[0] + dark[1] + dark[2] < light[0] + light[1] + light[2], `dark ${dark} vs light ${light}`);
  await page.locator("#train-card").screenshot({ path: `${artefacts}train-card.png` });
  assert.deepEqual(problems, []);
  await page.close();
});

test("1280×800, scrolled: the settings held beside the page cover none of the panels below the figure", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${site.server.url}index.html`);
  await page.waitForFunction(() => document.querySelector("#figure").attention?.tokens.length > 10, null, { timeout: 60000 });
  const covered = await page.evaluate(async () => {
    const out = [];
    for (const heading of document.querySelectorAll("main h2, main h3, main summary")) {
      if (!heading.checkVisibility() || heading.closest(".controls")) continue;
      heading.scrollIntoView({ block: "start" });
      await new Promise(requestAnimationFrame);
      const box = heading.getBoundingClientRect();
      // Every point along the heading's text shows the heading (or what is inside it).
      for (const x of [box.left + 4, (box.left + box.right) / 2, box.right - 4]) {
        const hit = document.elementFromPoint(x, box.top + box.height / 2);
        if (!hit || !(heading === hit || heading.contains(hit) || hit.contains(heading)))
          out.push(`${heading.textContent.trim()} at x = ${x.toFixed(0)}: ${hit?.className}`);
      }
    }
    return out;
  });
  assert.deepEqual(covered, []);
  assert.deepEqual(problems, []);
  await page.close();
});
