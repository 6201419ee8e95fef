// Keystrokes on GPT-2 small's shapes (random weights, scripts/gpt2-checkpoint.mjs's GPT2_SMALL)
// picked in the demo page: appends of a token, and edits at the start typed one after another
// without waiting for the predictions ranked after each figure (web/element/trained.js,
// rankAfterPaint). For each: the painted frame (tests/support/figure.mjs, typeAndTime) and the
// element's computeMs (its render event: the model's share). One site at a time, in one
// headless Chromium: this build's site cross-origin isolated (the model worker loads the threaded
// module: web/element/threaded-model.js) and not (one thread); with --before=DIR, an older built
// site (a copy of dist/site) the same way, isolated.
//   node bench/worker-typing.mjs [--before=DIR] [--edits=N]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { cli, cliError, cliNumber } from "../scripts/cli.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { median } from "../tests/support/painted.mjs";
import { pickCheckpoint, typeAndTime } from "../tests/support/figure.mjs";
import { GPT2_SMALL, writeGpt2Checkpoint } from "../scripts/gpt2-checkpoint.mjs";

const usage = "usage: node bench/worker-typing.mjs [--before=DIR] [--edits=N]   DIR: an older built site (a copy of dist/site)";
const { values } = cli({ usage, options: { before: { type: "string" }, edits: { type: "string" } } });
const edits = cliNumber(values, "edits", { fallback: 8, min: 1, integer: true, usage, label: "--edits" });
const here = new URL("../dist/site", import.meta.url).pathname;
const sites = [
  ["this build", here, true],
  ["one thread", here, false],
];
if (values.before) sites.push(["before", values.before, true]);
for (const [, dir] of sites) if (!existsSync(join(dir, "index.html"))) cliError(`no built site in ${dir} (index.html is missing)`, usage);

const encoder = createRequire(import.meta.url)("gpt-3-encoder");
const words =
  "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door of the old house in the small town";
const sentence = encoder.decode(encoder.encode(words).slice(0, 32));
const start = sentence.replace(/^the/, "a");
const dir = mkdtempSync(join(tmpdir(), "attnlens-bench-worker-"));
const browser = await launchBrowser();
const rows = [];
try {
  console.error("writing GPT-2 small's shapes (498 MB)…");
  writeGpt2Checkpoint(dir, GPT2_SMALL, 1);
  for (const [name, site, isolated] of sites) {
    const server = await serve(site, { isolated });
    try {
      const { page } = await openPage(browser.context, server.url);
      await page.goto(`${server.url}index.html?sentence=${encodeURIComponent(sentence)}`);
      await page.waitForFunction(() => document.querySelector("#figure").explanation?.causal);
      const status = await pickCheckpoint(page, dir, { timeout: 300000 });
      if (!status.ok) throw new Error(`${name}: the page did not show the checkpoint: ${status.text}`);
      await page.waitForFunction(() => document.querySelector("#figure").attention?.scores?.induction, null, { timeout: 60000 });
      // The threads the worker's products split over (a build before threads says nothing).
      const threads = await page.evaluate(() => document.querySelector("#figure")._openedModels?.[0]?.model?.threads ?? 1);
      await page.evaluate(() => {
        window.__compute = [];
        document.querySelector("#figure").addEventListener("attn-lens-render", (e) => window.__compute.push(e.detail.computeMs));
      });
      const computed = () => page.evaluate(() => window.__compute.splice(0).at(-1));
      const append = { painted: [], compute: [] };
      const starts = { painted: [], compute: [] };
      for (let k = 0; k < edits; k++) {
        append.painted.push(await typeAndTime(page, `${sentence}.`));
        append.compute.push(await computed());
        await typeAndTime(page, sentence);
        console.error(`  ${name}: append ${k + 1} of ${edits}`);
      }
      for (let k = 0; k < edits; k++) {
        starts.painted.push(await typeAndTime(page, k % 2 ? sentence : start));
        starts.compute.push(await computed());
        console.error(`  ${name}: edit at the start ${k + 1} of ${edits}`);
      }
      rows.push({ name, threads, append, starts });
      await page.close();
    } finally {
      await server.close();
    }
  }
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\nGPT-2 small's shapes in the page, 32 tokens; medians of ${edits} keystrokes (ms)`);
console.log(
  `${"site".padEnd(14)}${"threads".padStart(8)}${"append".padStart(10)}${"computeMs".padStart(11)}${"start edits".padStart(13)}${"computeMs".padStart(11)}`,
);
for (const r of rows)
  console.log(
    `${r.name.padEnd(14)}${String(r.threads).padStart(8)}${median(r.append.painted).toFixed(1).padStart(10)}${median(r.append.compute).toFixed(1).padStart(11)}` +
      `${median(r.starts.painted).toFixed(1).padStart(13)}${median(r.starts.compute).toFixed(1).padStart(11)}`,
  );
console.log("start edits: the first word changed, then back, typed as soon as each figure is painted (its predictions still ranking)");
