// Screenshots of the built demo site in headless Chromium (for the README and for looking).
//   node scripts/screenshot.mjs OUT.png [QUERY] [--width 1280] [--height 900] [--page index.html] [--full]
//   node scripts/screenshot.mjs --readme DIR [NAME]  the README's set (or one of it): demo, long
//                                                paragraph, 360 px, blog, trained-model grid, the training
//                                                page before training, at step 2 000 and after "Skip ahead",
//                                                the causal model writing (Continue), a ModernBERT
//                                                folder's layers, global and local
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "./serve.mjs";
import { MODERNBERT_PRESETS, writeModernbertCheckpoint } from "./modernbert-checkpoint.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { RANDOM_MODE_EXAMPLES } from "../web/examples.js";
import { cli, cliError, cliNumber } from "./cli.mjs";

const usage = `usage: node scripts/screenshot.mjs OUT.png [QUERY] [--width N] [--height N] [--page FILE] [--full]
       node scripts/screenshot.mjs --readme DIR [NAME]`;
const { values, positionals: args } = cli({
  usage,
  positionals: 2,
  options: {
    readme: { type: "string" },
    width: { type: "string" },
    height: { type: "string" },
    page: { type: "string" },
    full: { type: "boolean" },
  },
});

// The page's long-paragraph preset: varied text, so that its rows differ.
const PARAGRAPH = RANDOM_MODE_EXAMPLES.find((e) => /long paragraph/.test(e.label)).sentence;

/** The README's pictures: [file, query, options]. */
const README = [
  // The page as it opens (the trained causal model), at the size the first-screen test checks.
  ["demo.png", "", { width: 1280, height: 800 }],
  // Random weights: causal and full attention side by side.
  [
    "random-compare.png",
    "?model=random&sentence=The+dog+and+the+cat+ran+from+the+house+to+the+park+by+the+river.&mode=compare",
    { width: 1280, height: 900, figureOnly: true },
  ],
  ["long-paragraph.png", `?heads=8&sentence=${encodeURIComponent(PARAGRAPH)}`, { width: 1280, height: 1000, figureOnly: true }],
  ["phone-360.png", "", { width: 360, height: 740, mobile: true }],
  ["blog.png", "", { width: 1280, height: 900, page: "examples/blog.html", full: true }],
  // The two trained models side by side: every head of each, labelled.
  [
    "trained-both.png",
    `?model=attnlens&mode=compare&view=grid&sentence=${encodeURIComponent("My dear Lizzy, I have just received your letter, and I am very glad to hear that you are well.")}`,
    { width: 1280, height: 1100, figureOnly: true },
  ],
  // The training page before training (step 0), in the phase change (trained to step 2 000 with
  // the defaults, about 45 s) and after "Skip ahead" (the saved run's last step).
  // Continue (web/write.js): the causal model wrote 12 tokens after the sentence; their chips and
  // the heatmap's labels are marked as written, each written token's row is where it looked.
  [
    "write.png",
    `?model=attnlens&layer=2&h=4&sentence=${encodeURIComponent("Mr. Darcy walked to Netherfield Park, and")}`,
    { width: 1280, height: 1250, write: 12 },
  ],
  // A ModernBERT-shaped folder (scripts/modernbert-checkpoint.mjs, random weights) picked in the
  // page: every head of its global layer 1 and its local layers 2–3, whose band of ±4 tokens
  // leaves the corners in the masked colour.
  [
    "modernbert-grid.png",
    "?model=random&view=grid",
    {
      width: 1280,
      height: 1000,
      figureOnly: true,
      checkpoint: (dir) => writeModernbertCheckpoint(dir, MODERNBERT_PRESETS.tiny, { seed: 4 }),
      files: ["model.safetensors", "config.json", "tokenizer.json"],
      sentence: "The keeper climbed the stairs of the old lighthouse every night to light the lamp for the ships at sea.",
    },
  ],
  ["train-before.png", "", { width: 1280, height: 1400, page: "train.html", locator: "main", train: "start" }],
  ["train-during.png", "", { width: 1280, height: 1400, page: "train.html", locator: "main", train: 2000 }],
  ["train-after.png", "", { width: 1280, height: 1400, page: "train.html", locator: "main", train: "skip" }],
];

async function shoot(
  browser,
  server,
  out,
  query,
  {
    width = 1280,
    height = 900,
    page: pagePath = "index.html",
    full = false,
    figureOnly = false,
    locator = null,
    train = null,
    write = 0,
    checkpoint = null,
    files = [],
    sentence = "",
  },
) {
  const { page, problems } = await openPage(browser.context, server.url);
  await page.setViewportSize({ width, height });
  await page.goto(`${server.url}${pagePath}${query}`);
  await page.waitForSelector("attn-lens .frame canvas.figure, attn-lens .grid canvas", { timeout: 20000 }).catch(() => {});
  // Figures below the fold are drawn as they come near: scroll through the page first.
  await page.evaluate(async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 300) {
      scrollTo(0, y);
      await new Promise((done) => setTimeout(done, 120));
    }
    scrollTo(0, 0);
  });
  if (train) {
    await page.waitForFunction(() => document.body.dataset.step === "0", null, { timeout: 30000 });
    if (train === "skip") {
      const { step } = await page.evaluate(async () => (await fetch("train-snapshot/state.json")).json());
      await page.click("#skip");
      await page.waitForFunction((s) => document.body.dataset.step === String(s), step, { timeout: 30000 });
    }
    if (typeof train === "number") {
      await page.click("#start");
      await page.waitForFunction((s) => Number(document.body.dataset.step) >= s, train, { timeout: 300000 });
      await page.click("#pause");
    }
  }
  if (checkpoint) {
    // A folder picked in the checkpoint picker, then the sentence typed.
    const dir = mkdtempSync(join(tmpdir(), "attnlens-screenshot-"));
    try {
      checkpoint(dir);
      await page.setInputFiles(
        "#open-checkpoint",
        files.map((f) => join(dir, f)),
      );
      await page.waitForFunction(() => /^Showing your checkpoint/.test(document.querySelector("#checkpoint-status").textContent), null, {
        timeout: 60000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await page.fill("#sentence", sentence);
    await page.waitForFunction(
      (s) => document.querySelector("#sentence").value === s && document.querySelector("#figure").attention?.tokens.length > 20,
      sentence,
      { timeout: 60000 },
    );
  }
  if (write) {
    await page.waitForFunction(() => !document.querySelector("#write").hidden, null, { timeout: 30000 });
    await page.fill("#write-tokens", String(write));
    // (Clicked from the page: a click by the driver scrolls the button into view.)
    await page.evaluate(() => document.querySelector("#write-go").click());
    await page.waitForFunction(() => /^Wrote/.test(document.querySelector("#write-status").textContent), null, { timeout: 60000 });
    await page.evaluate(() => scrollTo(0, 0));
  }
  await page.waitForTimeout(600);
  if (locator) await page.locator(locator).screenshot({ path: out });
  else if (figureOnly) await page.locator("attn-lens").screenshot({ path: out });
  else await page.screenshot({ path: out, fullPage: full });
  if (problems.length) console.log(problems.join("\n"));
  console.log(`wrote ${out}`);
  await page.close();
}

const readme = values.readme;
const width = cliNumber(values, "width", { fallback: 1280, min: 200, integer: true, usage });
const height = cliNumber(values, "height", { fallback: 900, min: 200, integer: true, usage });
const pagePath = values.page ?? "index.html";
const full = values.full ?? false;
if (!readme && !args[0]) cliError("name the output file (OUT.png) or use --readme DIR", usage);
if (readme && args.length > 1) cliError(`--readme takes one picture's name at most, not ${args.join(" ")}`, usage);
const server = await serve(new URL("../dist/site", import.meta.url).pathname);
try {
  if (readme) {
    const only = args[0];
    for (const [file, query, o] of README.filter(([file]) => !only || file === only)) {
      const browser = await launchBrowser(o.mobile ? { hasTouch: true, isMobile: true } : {});
      try {
        await shoot(browser, server, `${readme.replace(/\/$/, "")}/${file}`, query, o);
      } finally {
        await browser.close();
      }
    }
  } else {
    const [out, query = ""] = args;
    const browser = await launchBrowser();
    try {
      await shoot(browser, server, out, query, { width, height, page: pagePath, full });
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
