// Keystrokes on GPT-2 small's shapes (random weights, scripts/gpt2-checkpoint.mjs's GPT2_SMALL)
// picked in the demo page, at 32 tokens and in a 308-token paragraph: appends of a token, edits
// at the start typed one after another without waiting for the predictions ranked after each
// figure (web/element/trained.js, rankAfterPaint), and the paragraph pasted over the sentence. For each: the painted frame (tests/support/figure.mjs, typeAndTime) and the
// element's computeMs (its render event: the model's share). One site at a time, in one
// headless Chromium: this build's site cross-origin isolated (the model worker loads the threaded
// module: web/element/threaded-model.js) and not (one thread); with --before=DIR, an older built
// site (a copy of dist/site) the same way, isolated.
//   node bench/worker-typing.mjs [--before=DIR] [--edits=N] [--sites=this,one,before]
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
import { PROSE_PARAGRAPH, PROSE_SENTENCE, firstTokens } from "../tests/support/sentences.mjs";

const usage =
  "usage: node bench/worker-typing.mjs [--before=DIR] [--edits=N] [--sites=this,one,before]   DIR: an older built site (a copy of dist/site)";
const { values } = cli({ usage, options: { before: { type: "string" }, edits: { type: "string" }, sites: { type: "string" } } });
const edits = cliNumber(values, "edits", { fallback: 8, min: 1, integer: true, usage, label: "--edits" });
const here = new URL("../dist/site", import.meta.url).pathname;
const allSites = [
  ["this build", here, true, "this"],
  ["one thread", here, false, "one"],
];
if (values.before) allSites.push(["before", values.before, true, "before"]);
const picked = values.sites?.split(",") ?? allSites.map((s) => s[3]);
for (const p of picked)
  if (!allSites.some((s) => s[3] === p)) cliError(`--sites: no site ${JSON.stringify(p)} (this, one, or before with --before)`, usage);
const sites = allSites.filter((s) => picked.includes(s[3]));
for (const [, dir] of sites) if (!existsSync(join(dir, "index.html"))) cliError(`no built site in ${dir} (index.html is missing)`, usage);

const encoder = createRequire(import.meta.url)("gpt-3-encoder");
const sentence = firstTokens(encoder, PROSE_SENTENCE, 32);
const paragraph = firstTokens(encoder, PROSE_PARAGRAPH, 308);
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
      const measure = async (what, tokens, count, prepare, edit) => {
        const r = { what, tokens, painted: [], compute: [] };
        for (let k = 0; k < count; k++) {
          await prepare(k);
          r.painted.push(await typeAndTime(page, edit(k)));
          r.compute.push(await computed());
          console.error(`  ${name}: ${what} at ${tokens} tokens, ${k + 1} of ${count}`);
        }
        rows.push({ name, threads, ...r });
      };
      const start = (text) => text.replace(/^\w+/, (w) => (w.toLowerCase() === "a" ? "the" : "a"));
      const none = async () => {};
      // The text typed before a keystroke (nothing to wait for when the page shows it already).
      const typed = (text, options) => async () => {
        if ((await page.inputValue("#sentence")) !== text) await typeAndTime(page, text, options);
      };
      // 32 tokens: appends of a token (each from the sentence again), and edits at the start
      // typed as soon as each figure is painted (its predictions still ranking).
      await measure("append", 32, edits, typed(sentence), () => `${sentence}.`);
      await measure("edit at the start", 32, edits, none, (k) => (k % 2 ? sentence : start(sentence)));
      // The paragraph: pasted over the sentence, then the same edits.
      await measure("paste", 308, Math.min(edits, 4), typed(sentence, { ranked: true }), () => paragraph);
      await typed(paragraph, { ranked: true })();
      await measure("append", 308, edits, typed(paragraph), () => `${paragraph}.`);
      await measure("edit at the start", 308, edits, none, (k) => (k % 2 ? paragraph : start(paragraph)));
      await page.close();
    } finally {
      await server.close();
    }
  }
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
const TARGETS = { "append@308": 100, "edit at the start@308": 1200, "paste@308": 2500 };
console.log(
  `\nGPT-2 small's shapes in the page; medians of ${edits} keystrokes (${Math.min(edits, 4)} pastes), ms from the input event to the painted frame`,
);
console.log(
  `${"site".padEnd(12)}${"threads".padStart(8)}  ${"keystroke".padEnd(20)}${"tokens".padStart(7)}${"painted".padStart(10)}${"computeMs".padStart(11)}${"target".padStart(8)}`,
);
for (const r of rows)
  console.log(
    `${r.name.padEnd(12)}${String(r.threads).padStart(8)}  ${r.what.padEnd(20)}${String(r.tokens).padStart(7)}` +
      `${median(r.painted).toFixed(1).padStart(10)}${median(r.compute).toFixed(1).padStart(11)}${String(TARGETS[`${r.what}@${r.tokens}`] ?? "").padStart(8)}`,
  );
console.log(
  "edit at the start: the first word changed, then back, typed as soon as each figure is painted (its predictions still ranking); " +
    "paste: the 308-token paragraph over the 32-token sentence, after the sentence's predictions are all ranked",
);
