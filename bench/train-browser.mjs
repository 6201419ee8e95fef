// npm run bench, the training page in headless Chromium: starts training with the default
// settings (train.html, one <attn-lens-train>) and waits until the induction head forms (best
// induction score >= 0.4 and second-copy loss under a third of the first: web/train/criteria.js)
// or the time limit passes. Prints progress every 10 s, then the step, tokens, seconds of
// training and of wall time since Start, and tokens/s.
//   node bench/train-browser.mjs [--seed N] [--limit SECONDS]   (defaults: the page's seed, 180)
// Serves dist/site (npm run build first).
import { formed } from "../web/train/criteria.js";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { serve } from "../scripts/serve.mjs";
import { cli, cliNumber } from "../scripts/cli.mjs";

const usage = "usage: node bench/train-browser.mjs [--seed N] [--limit SECONDS]";
const { values } = cli({ usage, options: { seed: { type: "string" }, limit: { type: "string" } } });
const seed = cliNumber(values, "seed", { min: 0, integer: true, usage });
const limit = cliNumber(values, "limit", { fallback: 180, min: 0, usage });

const server = await serve(new URL("../dist/site", import.meta.url).pathname);
const browser = await launchBrowser();
let code = 0;
try {
  const { page, problems } = await openPage(browser.context, server.url);
  await page.goto(`${server.url}train.html`);
  if (seed !== undefined) {
    await page.fill("#train-seed", String(seed));
    await page.dispatchEvent("#train-seed", "change");
  }
  await page.waitForFunction(() => document.body.dataset.step === "0", null, { timeout: 60000 });
  const started = Date.now();
  await page.click("#start");
  let done = null;
  let last = null;
  let printed = 0;
  while (!done && (Date.now() - started) / 1000 < limit) {
    await page.waitForTimeout(500);
    const history = await page.evaluate(() => window.trainHistory.map(({ attention, ...r }) => r));
    last = history.at(-1) ?? last;
    done = history.find(formed) ?? null;
    const wall = (Date.now() - started) / 1000;
    if (last && wall - printed >= 10) {
      printed = wall;
      console.log(
        `  ${wall.toFixed(0).padStart(4)} s  step ${last.step}  first ${last.first.toFixed(3)}  second ${last.second.toFixed(3)}  induction ${last.bestInduction.toFixed(2)}  ${Math.round(last.tokensPerSecond)} tokens/s  ETA to the run's end ${Math.round(last.eta)} s`,
      );
    }
  }
  const wall = ((Date.now() - started) / 1000).toFixed(1);
  const r = done ?? last;
  const what = done ? "induction head formed" : `NOT formed within ${limit} s`;
  console.log(
    `Chromium, train.html defaults${seed !== undefined ? `, seed ${seed}` : ""}: ${what} at step ${r.step} (${r.tokens} tokens, ${r.seconds.toFixed(1)} s of training, ${wall} s wall since Start): induction ${r.bestInduction.toFixed(2)}, second copy ${r.second.toFixed(3)} against the first's ${r.first.toFixed(3)}, ${Math.round(r.tokensPerSecond)} tokens/s`,
  );
  if (problems.length) {
    console.log("page problems:", problems);
    code = 1;
  }
} finally {
  await browser.close();
  await server.close();
}
process.exit(code);
