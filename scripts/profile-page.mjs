// Where the demo page spends an edit: runs edits of an n-token sentence in Chromium under the
// DevTools CPU profiler and prints the functions with the most self time (and the total of
// each script), so that a slow view can be found without guessing.
//   node scripts/profile-page.mjs [view] [mode] [tokens] [heads] [edits]
//   e.g. node scripts/profile-page.mjs lines compare 512 8 5
// Serves dist/site (run the build first). Timings under the profiler run slower than without.
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { sentence } from "../tests/support/sentences.mjs";
import { serve } from "./serve.mjs";
import { cli, cliNumber } from "./cli.mjs";

const usage = "usage: node scripts/profile-page.mjs [view] [mode] [tokens] [heads] [edits]  (e.g. lines compare 512 8 5)";
const [view = "heatmap", mode = "compare", ...numbers] = cli({ usage, positionals: 5 }).positionals;
// The counts are whole numbers (the page itself names an unknown view or mode).
const [tokens, heads, count] = ["tokens", "heads", "edits"].map((name, i) =>
  cliNumber({ [name]: numbers[i] }, name, { fallback: [512, 8, 5][i], min: name === "tokens" ? 2 : 1, integer: true, usage, label: name }),
);

const server = await serve(new URL("../dist/site", import.meta.url).pathname);
const browser = await launchBrowser();
try {
  const { page, problems } = await openPage(browser.context, server.url);
  const base = sentence(Number(tokens) - 1);
  const query = new URLSearchParams({ view, mode, heads, sentence: `${base} x` });
  await page.goto(`${server.url}index.html?${query}`);
  await page.waitForSelector("attn-lens svg.figure, attn-lens canvas.figure");
  await page.waitForTimeout(500);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  await cdp.send("Profiler.start");
  for (let k = 0; k < Number(count); k++) {
    await page.evaluate(
      (text) => {
        const t = document.querySelector("#sentence");
        t.value = text;
        t.dispatchEvent(new Event("input", { bubbles: true }));
      },
      `${base} ${String.fromCharCode(97 + k).repeat(3)}`,
    );
    await page.waitForTimeout(400);
  }
  const { profile } = await cdp.send("Profiler.stop");
  const self = new Map();
  const byScript = new Map();
  const dt = new Map(profile.nodes.map((n) => [n.id, 0]));
  profile.samples.forEach((id, i) => dt.set(id, dt.get(id) + (profile.timeDeltas[i] ?? 0) / 1000));
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const ms = dt.get(node.id);
    if (!ms) continue;
    const file = url.split("/").pop() || "(native)";
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + ms);
    byScript.set(file, (byScript.get(file) ?? 0) + ms);
  }
  const top = (map, k) =>
    [...map]
      .filter(([name]) => !/^\((idle|program)\)/.test(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, k);
  console.log(`# ${view}, ${mode}, ${tokens} tokens, ${heads} heads: self time over ${count} edits (ms; per edit = / ${count})`);
  for (const [name, ms] of top(self, 30)) console.log(`${ms.toFixed(1).padStart(9)}  ${name}`);
  console.log("# by script");
  for (const [name, ms] of top(byScript, 12)) console.log(`${ms.toFixed(1).padStart(9)}  ${name}`);
  if (problems.length) console.log("problems:", problems);
} finally {
  await browser.close();
  await server.close();
}
