// Screenshots of the built demo site in headless Chromium (for the README and for looking).
//   node scripts/screenshot.mjs OUT.png [QUERY] [--width 1280] [--page index.html]
import { serve } from "./serve.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const width = Number(option("--width", "1280"));
const pagePath = option("--page", "index.html");
const [out, query = ""] = args;
const server = await serve(new URL("../dist/site", import.meta.url).pathname);
const browser = await launchBrowser();
try {
  const { page, problems } = await openPage(browser.context, server.url);
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${server.url}${pagePath}${query}`);
  await page.waitForSelector("attn-lens svg.figure", { timeout: 15000 }).catch(() => {});
  // Figures below the fold render as they come near: scroll through the page first.
  await page.evaluate(async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 300) {
      scrollTo(0, y);
      await new Promise((done) => setTimeout(done, 120));
    }
    scrollTo(0, 0);
  });
  await page.waitForTimeout(800);
  await page.screenshot({ path: out, fullPage: true });
  if (problems.length) console.log(problems.join("\n"));
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await server.close();
}
