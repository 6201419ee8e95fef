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

for (const { width, height, mobile } of [
  { width: 1280, height: 800, mobile: false },
  { width: 360, height: 740, mobile: true },
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
        return {
          model: document.querySelector("#figure").model,
          canvasTop: canvas.top,
          canvasBottom: canvas.bottom,
          link: link.checkVisibility() && link.getBoundingClientRect().bottom <= innerHeight,
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        };
      });
      assert.equal(screen.model, "attnlens");
      // At least 150 px of the drawn figure (a third of a phone's heatmap, six rows at 1280)
      // before any scrolling.
      const visible = Math.min(screen.canvasBottom, height) - screen.canvasTop;
      assert.ok(
        visible >= 150,
        `${visible.toFixed(0)} px of the figure on the first screen (canvas from y = ${screen.canvasTop.toFixed(0)})`,
      );
      assert.ok(screen.link, "the training page's link is on the first screen");
      assert.equal(screen.overflow, 0, "nothing overflows sideways");
      await page.screenshot({ path: `${artefacts}first-screen-${width}.png` });
      assert.deepEqual(problems, []);
      await page.close();
    } finally {
      if (mobile) await browser.close();
    }
  });
}
