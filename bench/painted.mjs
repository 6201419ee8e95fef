// npm run bench: the demo page in headless Chromium, from an edit to the painted frame that shows
// the figure (tests/support/painted.mjs, the probe the e2e speed report uses), for the lines view
// and, beside it, the heatmap, at the page's two targets: 64 tokens (16 ms) and 512 tokens (50 ms).
// Each scenario edits the last word of a sentence of n tokens; random weights, 8 heads.
//   node bench/painted.mjs [--quick] [--before=DIR]
//   DIR: an older built site (a copy of dist/site made before a change), whose page is edited
//   turn about with this build's, the same edits in the same browser, so both columns share the
//   machine's load.
import { join } from "node:path";
import { existsSync } from "node:fs";
import { serve } from "../scripts/serve.mjs";
import { cli, cliError } from "../scripts/cli.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { sentence } from "../tests/support/sentences.mjs";
import { EDIT, installProbe, measure, median } from "../tests/support/painted.mjs";

const root = new URL("..", import.meta.url).pathname;
const usage = "usage: node bench/painted.mjs [--quick] [--before=DIR]   DIR: an older built site (a copy of dist/site)";
const { values } = cli({ usage, options: { quick: { type: "boolean" }, before: { type: "string" } } });
const edits = values.quick ? 5 : 11;
const sites = [["this build", join(root, "dist/site")]];
if (values.before) sites.push(["before", values.before]);
for (const [, dir] of sites) if (!existsSync(join(dir, "index.html"))) cliError(`no built site in ${dir} (index.html is missing)`, usage);

const SCENARIOS = [
  ["lines", "causal", 64],
  ["lines", "full", 64],
  ["lines", "compare", 64],
  ["heatmap", "compare", 64],
  ["lines", "causal", 512],
  ["lines", "compare", 512],
  ["heatmap", "compare", 512],
];
const TARGET = { 64: 16, 512: 50 };

const servers = await Promise.all(sites.map(([, dir]) => serve(dir)));
const browser = await launchBrowser();
const rows = [];
try {
  for (const [view, mode, n] of SCENARIOS) {
    const base = sentence(n - 1);
    const pages = [];
    for (const server of servers) {
      const { page, problems } = await openPage(browser.context, server.url);
      await page.addInitScript(installProbe);
      await page.goto(`${server.url}index.html?${new URLSearchParams({ view, mode, heads: 8, sentence: `${base} x` })}`);
      await page.waitForSelector("attn-lens canvas.figure");
      pages.push({ page, problems, times: [], explain: [] });
    }
    for (const p of pages) {
      await p.page.bringToFront();
      await measure(p.page, EDIT, `${base} y`); // warm-up
    }
    for (let k = 0; k < edits; k++)
      for (const p of pages) {
        // Only the tab in front gets animation frames: the other would never paint.
        await p.page.bringToFront();
        const r = await measure(p.page, EDIT, `${base} ${String.fromCharCode(97 + (k % 26)).repeat(3)}`);
        p.times.push(r.ms);
        p.explain.push(r.computeMs);
      }
    for (const p of pages) {
      if (p.problems.length) throw new Error(`the page reported: ${p.problems.join("; ")}`);
      await p.page.close();
    }
    rows.push({ view, mode, n, cells: pages.map((p) => ({ ms: median(p.times), explain: median(p.explain) })) });
    console.error(`  ${view}, ${mode}, ${n} tokens: ${pages.map((p) => `${median(p.times).toFixed(1)} ms`).join(" / ")}`);
  }
} finally {
  await browser.close();
  await Promise.all(servers.map((s) => s.close()));
}

console.log(`\nEdit to painted frame, headless Chromium, medians of ${edits} edits (explain(): the library's share)`);
const head = sites.map(([name]) => `${name} (ms)`.padStart(18) + "explain".padStart(9)).join("");
console.log(`${"view, mask".padEnd(20)}${"tokens".padStart(7)}${"target".padStart(8)}${head}`);
for (const r of rows) {
  const cells = r.cells.map((c) => c.ms.toFixed(1).padStart(18) + c.explain.toFixed(1).padStart(9)).join("");
  console.log(`${`${r.view}, ${r.mode}`.padEnd(20)}${String(r.n).padStart(7)}${String(TARGET[r.n]).padStart(8)}${cells}`);
}
