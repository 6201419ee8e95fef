// npm run bench: the demo page in headless Chromium, from an edit to the painted frame that shows
// the figure (tests/support/painted.mjs, the probe the e2e speed report uses), for the lines view
// and, beside it, the heatmap, at the page's two targets: 64 tokens (16 ms) and 512 tokens (50 ms).
// Each scenario edits the last word of a sentence of n tokens; random weights, 8 heads.
// Then the page as it opens (the shipped causal model): a word appended to a 127-token sentence
// and deleted, with the figure in view and with the predictions strip in view (target 16 ms).
// Then a GPT-2-small-shaped checkpoint (random weights, scripts/gpt2-checkpoint.mjs's
// GPT2_SMALL, 500 MB) picked in the page: the time to its first figure, and a keystroke on a
// 32-token sentence (append a token, delete it, change the first word), each to the painted
// frame with the predictions and the grid of 144 heads: issue 27's page targets; for the edit at
// the start also the time until every token's predictions are ranked (the last token's come with
// the figure, the others in tasks after it) and an edit at the start typed while they are; and
// the page's longest task (Long Tasks API, over 50 ms; 0: none) while loading and over all the
// keystrokes.
//   node bench/painted.mjs [--quick] [--edits=N] [--only=VIEW/MODE/TOKENS] [--before=DIR] [--no-views] [--no-checkpoint]
//   --only: one of the scenarios below (e.g. lines/compare/64) and nothing else; --edits: per
//   scenario (11, or 5 with --quick).
//   DIR: an older built site (a copy of dist/site made before a change), whose page is edited
//   turn about with this build's, the same edits in the same browser, so both columns share the
//   machine's load.
import { join } from "node:path";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { serve } from "../scripts/serve.mjs";
import { cli, cliError, cliNumber } from "../scripts/cli.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { sentence } from "../tests/support/sentences.mjs";
import { EDIT, installProbe, measure, median } from "../tests/support/painted.mjs";
import { pickCheckpoint, typeAndTime } from "../tests/support/figure.mjs";
import { GPT2_SMALL, writeGpt2Checkpoint } from "../scripts/gpt2-checkpoint.mjs";

const root = new URL("..", import.meta.url).pathname;
const usage =
  "usage: node bench/painted.mjs [--quick] [--edits=N] [--only=VIEW/MODE/TOKENS] [--before=DIR] [--no-views] [--no-checkpoint]   DIR: an older built site (a copy of dist/site)";
const { values } = cli({
  usage,
  options: {
    quick: { type: "boolean" },
    before: { type: "string" },
    edits: { type: "string" },
    only: { type: "string" },
    "no-checkpoint": { type: "boolean" },
    "no-views": { type: "boolean" },
  },
});
const edits = cliNumber(values, "edits", { fallback: values.quick ? 5 : 11, min: 1, integer: true, usage, label: "--edits" });
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
const names = SCENARIOS.map((s) => s.join("/"));
if (values.only !== undefined && !names.includes(values.only))
  cliError(`--only must be one of ${names.join(", ")}; got "${values.only}"`, usage);
const scenarios = values.only === undefined ? SCENARIOS : SCENARIOS.filter((s) => s.join("/") === values.only);

const servers = await Promise.all(sites.map(([, dir]) => serve(dir)));
const browser = await launchBrowser();
const rows = [];
const checkpoint = [];
const shipped = { tokens: 0, rows: [] };
try {
  for (const [view, mode, n] of values["no-views"] ? [] : scenarios) {
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
  if (values.only === undefined) await shippedRows();
  if (values.only === undefined && !values["no-checkpoint"]) await checkpointRows();
} finally {
  await browser.close();
  await Promise.all(servers.map((s) => s.close()));
}

/**
 * The page as it opens (the shipped causal model), a sentence of 127 tokens: a keystroke that
 * appends a word and one that deletes it, turn about, with the figure in view (the page as it
 * opens) and with the predictions strip scrolled into view (127 cards of five predictions):
 * issue 27's "the shipped model, every keystroke within a frame at 128 tokens".
 */
async function shippedRows() {
  const text =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. " +
    "However little known the feelings or views of such a man may be on his first entering a neighbourhood, this truth is so " +
    "well fixed in the minds of the surrounding families, that he is considered the rightful property of some one or other of " +
    "their daughters. My dear Mr. Bennet, said his lady to him one day, have you heard that Netherfield Park is let at last? " +
    "Mr. Bennet replied that he had not. But it is, returned she; for Mrs. Long has just been here, and she told me all about it.";
  const pages = [];
  for (const server of servers) {
    const { page, problems } = await openPage(browser.context, server.url);
    await page.goto(`${server.url}index.html`);
    await page.waitForFunction(() => document.querySelector("#figure").attention?.predictions, null, { timeout: 60000 });
    await page.bringToFront();
    // The longest prefix of whole words within 127 tokens (the appended word makes 128 or more).
    let words = text.split(" ");
    for (;;) {
      await typeAndTime(page, words.join(" "));
      const n = await page.evaluate(() => document.querySelector("#figure").attention.tokens.length);
      if (n <= 127) break;
      words = words.slice(0, -1);
    }
    const sentence = words.join(" ");
    const tokens = await page.evaluate(() => document.querySelector("#figure").attention.tokens.length);
    pages.push({ page, problems, sentence, tokens, top: [], strip: [] });
  }
  for (const where of ["top", "strip"]) {
    for (const p of pages) {
      await p.page.bringToFront();
      await p.page.evaluate((strip) => {
        if (!strip) return scrollTo(0, 0);
        const s = document.querySelector("#figure").shadowRoot.querySelector(".prediction-strip");
        s.scrollIntoView({ block: "center" });
        s.scrollLeft = s.scrollWidth;
      }, where === "strip");
      await typeAndTime(p.page, `${p.sentence} Mr`); // warm-up
      await typeAndTime(p.page, p.sentence);
    }
    for (let k = 0; k < edits; k++)
      for (const p of pages) {
        await p.page.bringToFront();
        p[where].push(await typeAndTime(p.page, `${p.sentence} Mr`));
        p[where].push(await typeAndTime(p.page, p.sentence));
      }
  }
  for (const p of pages) {
    if (p.problems.length) throw new Error(`the page reported: ${p.problems.join("; ")}`);
    await p.page.close();
  }
  const row = (name, pick) => ({ name, target: 16, cells: pages.map((p) => ({ ms: median(pick(p)) })) });
  shipped.tokens = pages[0].tokens;
  shipped.rows.push(
    row("figure in view", (p) => p.top),
    row("predictions in view", (p) => p.strip),
  );
}

/** GPT-2 small's shapes picked in each site's page, then keystrokes turn about (see the top). */
async function checkpointRows() {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-bench-gpt2-"));
  try {
    writeGpt2Checkpoint(dir, GPT2_SMALL, 1);
    const encoder = createRequire(import.meta.url)("gpt-3-encoder");
    const words =
      "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door of the old house in the small town";
    const sentence = encoder.decode(encoder.encode(words).slice(0, 32));
    const start = sentence.replace(/^the/, "a");
    // Picks the checkpoint's files; resolves with ms to its first figure (status line and predictions).
    const timedPick = async (page) => {
      const t0 = performance.now();
      const status = await pickCheckpoint(page, dir, { timeout: 300000, polling: 50 });
      if (!status.ok) throw new Error(`the page did not show the checkpoint: ${status.text}`);
      return performance.now() - t0;
    };
    // The page's longest task (the Long Tasks API: those over 50 ms) since the last call; 0 for none.
    const longest = (page) =>
      page.evaluate(() => {
        const ms = Math.max(0, ...window.__longTasks.map((e) => e.duration));
        window.__longTasks = [];
        return ms;
      });
    const pages = [];
    for (const server of servers) {
      const { page, problems } = await openPage(browser.context, server.url);
      await page.addInitScript(() => {
        window.__longTasks = [];
        new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries())).observe({ type: "longtask" });
      });
      await page.goto(`${server.url}index.html?sentence=${encodeURIComponent(sentence)}`);
      await page.waitForFunction(() => document.querySelector("#figure").explanation?.causal);
      await longest(page);
      const load = await timedPick(page);
      // A large model's induction probe may follow its first figure (web/element/trained.js): the
      // keystrokes are timed after it.
      await page.waitForFunction(() => document.querySelector("#figure").attention?.scores?.induction, null, { timeout: 60000 });
      pages.push({
        page,
        problems,
        load,
        loadTask: await longest(page),
        append: [],
        delete: [],
        start: [],
        ranked: [],
        again2: [],
        tasks: [],
      });
    }
    for (let k = 0; k < Math.ceil(edits / 2); k++)
      for (const p of pages) {
        await p.page.bringToFront();
        await longest(p.page);
        p.append.push(await typeAndTime(p.page, `${sentence}.`));
        p.delete.push(await typeAndTime(p.page, sentence));
        const edit = await typeAndTime(p.page, start, { ranked: true });
        p.start.push(edit.painted);
        p.ranked.push(edit.ranked);
        await typeAndTime(p.page, sentence);
        // The first word changed again while the last change's predictions are still ranked.
        await typeAndTime(p.page, start);
        p.again2.push(await typeAndTime(p.page, sentence));
        p.tasks.push(await longest(p.page));
      }
    // Closed, then the same files picked again.
    for (const p of pages) {
      await p.page.bringToFront();
      await p.page.click("#close-checkpoint");
      await p.page.waitForFunction(() => document.querySelector("#figure").model === "random");
      await p.page.evaluate(() => (document.querySelector("#checkpoint-status").textContent = ""));
      p.again = await timedPick(p.page);
    }
    for (const p of pages) {
      if (p.problems.length) throw new Error(`the page reported: ${p.problems.join("; ")}`);
      await p.page.close();
    }
    const row = (name, target, pick) => ({ name, target, cells: pages.map((p) => ({ ms: pick(p), explain: NaN })) });
    checkpoint.push(
      row("picked -> first figure", 5000, (p) => p.load),
      row("closed, picked again", 1000, (p) => p.again),
      row("append a token", 50, (p) => median(p.append)),
      row("delete it", 50, (p) => median(p.delete)),
      row("change the first word", 200, (p) => median(p.start)),
      row("  every prediction ranked", NaN, (p) => median(p.ranked)),
      row("  again, while those rank", 200, (p) => median(p.again2)),
      row("longest page task, load", 50, (p) => p.loadTask),
      row("longest page task, keystrokes", 50, (p) => Math.max(...p.tasks)),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`\nEdit to painted frame, headless Chromium, medians of ${edits} edits (explain(): the library's share)`);
const head = sites.map(([name]) => `${name} (ms)`.padStart(18) + "explain".padStart(9)).join("");
console.log(`${"view, mask".padEnd(20)}${"tokens".padStart(7)}${"target".padStart(8)}${head}`);
for (const r of rows) {
  const cells = r.cells.map((c) => c.ms.toFixed(1).padStart(18) + c.explain.toFixed(1).padStart(9)).join("");
  console.log(`${`${r.view}, ${r.mode}`.padEnd(20)}${String(r.n).padStart(7)}${String(TARGET[r.n]).padStart(8)}${cells}`);
}
if (shipped.rows.length) {
  console.log(
    `\nThe shipped model as the page opens, ${shipped.tokens} tokens: a word appended or deleted, to the painted frame; medians of ${2 * edits}`,
  );
  console.log(`${"keystroke with".padEnd(27)}${"target".padStart(8)}${sites.map(([name]) => `${name} (ms)`.padStart(18)).join("")}`);
  for (const r of shipped.rows)
    console.log(`${r.name.padEnd(32)}${String(r.target).padStart(8)}${r.cells.map((c) => c.ms.toFixed(1).padStart(18)).join("")}`);
}
if (checkpoint.length) {
  console.log(
    `\nGPT-2 small's shapes picked in the page (random weights, 32 tokens), to the painted frame; medians of ${Math.ceil(edits / 2)}`,
  );
  console.log(`${"keystroke".padEnd(32)}${"target".padStart(8)}${sites.map(([name]) => `${name} (ms)`.padStart(18)).join("")}`);
  for (const r of checkpoint)
    console.log(
      `${r.name.padEnd(32)}${String(Number.isNaN(r.target) ? "" : r.target).padStart(8)}${r.cells.map((c) => c.ms.toFixed(0).padStart(18)).join("")}`,
    );
}
