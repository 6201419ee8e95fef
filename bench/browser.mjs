// npm run bench, third table: the attention benchmark in headless Chromium (Debian's, through
// playwright-core), where users are. Same inputs, shapes and timing rule as bench/run.mjs:
// q, k, v = [1, 8, L, 64], one thread, median after warm-up; every output checked against the
// float64 reference. Chromium runs relaxed SIMD, so attnlens loads attnlens-relaxed.wasm; the
// SIMD128 module is measured too.
// Each round's ratios against onnxruntime-web are printed too, against issue 27's targets at
// L = 256 (full >= 1.3x, causal >= 2x, in every round).
//   node bench/browser.mjs [--quick] [--rounds=3] [--sizes=256,1024]
import { chromium } from "playwright-core";
import { join } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { randomInputs, reference, worstDifference } from "./shared.mjs";
import { cli, cliNumber, cliWholeList } from "../scripts/cli.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = join(here, "..");
const usage = "usage: node bench/browser.mjs [--quick] [--rounds=N] [--sizes=256,1024]";
const { values } = cli({
  usage,
  options: { quick: { type: "boolean" }, rounds: { type: "string" }, sizes: { type: "string" } },
});
const quick = values.quick ?? false;
const ROUNDS = cliNumber(values, "rounds", { fallback: quick ? 1 : 3, min: 1, integer: true, usage });
const SIZES = cliWholeList(values, "sizes", [256, 1024], usage);
const TOLERANCE = 1e-4;

const server = await serve(root);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
});
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  await page.goto(`${server.url}/bench/browser.html`);
  const version = browser.version();
  const {
    rows,
    rounds: roundRows,
    smallRuns,
  } = await page.evaluate(
    async ({ sizes, quick, rounds }) => {
      const { loadAttnLens } = await import("/dist/attnlens.js");
      const { randomInputs, time } = await import("/bench/shared.mjs");
      const { attentionModel } = await import("/bench/onnx.mjs");
      const ort = await import("/bench/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs");
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmPaths = "/bench/node_modules/onnxruntime-web/dist/";
      ort.env.logLevel = "error";
      const relaxed = await loadAttnLens();
      const baseline = await loadAttnLens({ simd: "baseline" });
      const [H, D] = [8, 64];
      // Every contender runs once per round and keeps its best median, as in bench/run.mjs: a
      // burst of load from elsewhere on a shared machine then spoils one round, not the table.
      const best = new Map();
      // Each round's medians too (without the outputs): the ratios of one round share its load.
      const each = [];
      let round = 0;
      const out = {
        push(r) {
          const key = `${r.name}|${r.L}|${r.causal}`;
          if (!best.has(key) || r.ms < best.get(key).ms) best.set(key, r);
          each.push({ name: r.name, L: r.L, causal: r.causal, ms: r.ms, round });
        },
      };
      for (; round < rounds; round++)
        for (const L of sizes) {
          const all = randomInputs(L, 2026 + L);
          const n = H * L * D;
          const shape = [1, H, L, D];
          const [q, k, v] = [0, 1, 2].map((i) => ({ data: all.slice(i * n, (i + 1) * n), shape }));
          const reps = quick ? 3 : L >= 1024 ? 7 : 40;
          for (const causal of [false, true]) {
            for (const [name, lens] of [
              [`attnlens wasm (${relaxed.simd})`, relaxed],
              [`attnlens wasm (${baseline.simd})`, baseline],
            ]) {
              const r = await time(() => lens.attention(q, k, v, { causal }), reps);
              out.push({ name, L, causal, ms: r.ms, output: Array.from(r.result.output.data) });
            }
            const session = await ort.InferenceSession.create(attentionModel({ B: 1, H, L, D, causal }), {
              executionProviders: ["wasm"],
              graphOptimizationLevel: "all",
            });
            const feeds = Object.fromEntries(["q", "k", "v"].map((x, i) => [x, new ort.Tensor("float32", [q, k, v][i].data, shape)]));
            const r = await time(() => session.run(feeds), reps);
            out.push({ name: "onnxruntime-web (wasm, 1 thread)", L, causal, ms: r.ms, output: Array.from(r.result.output.data) });
            await session.release();
          }
        }
      // The page's shape, [1, 4, 64, 16]: Chromium's clock has 0.1 ms steps, so calls are timed
      // in batches of 200 and the median batch is divided.
      const small = randomInputs(64, 7, 4, 16);
      const m = 4 * 64 * 16;
      const [sq, sk, sv] = [0, 1, 2].map((i) => ({ data: small.slice(i * m, (i + 1) * m), shape: [1, 4, 64, 16] }));
      // With `into`, the output goes to one array allocated up front: in Chromium allocating a
      // fresh 16 KB Float32Array per call costs tens of µs (V8's ArrayBuffer allocation and the
      // garbage collections it triggers), more than the attention itself.
      const smallRuns = {};
      const into = { output: new Float32Array(m) };
      for (const [name, lens] of [
        [relaxed.simd, relaxed],
        [baseline.simd, baseline],
      ]) {
        for (const [how, options] of [
          ["fresh output array", {}],
          ["into one array", { into }],
        ]) {
          const r = await time(
            () => {
              for (let i = 0; i < 200; i++) lens.attention(sq, sk, sv, options);
            },
            quick ? 5 : 25,
          );
          smallRuns[`${name}, ${how}`] = (r.ms / 200) * 1000;
        }
      }
      return { rows: [...best.values()], rounds: each, smallRuns };
    },
    { sizes: SIZES, quick, rounds: ROUNDS },
  );
  const expected = new Map();
  for (const r of rows) {
    const key = `${r.L}|${r.causal}`;
    if (!expected.has(key)) expected.set(key, reference(randomInputs(r.L, 2026 + r.L), r.L, r.causal));
    r.diff = worstDifference(Float32Array.from(r.output), expected.get(key));
  }
  const columns = [false, true].flatMap((causal) => SIZES.map((L) => ({ causal, L })));
  const names = [...new Set(rows.map((r) => r.name))];
  const find = (name, { causal, L }) => rows.find((r) => r.name === name && r.causal === causal && r.L === L);
  console.log(
    `attnlens benchmark in Chromium ${version} (headless) — q, k, v = [1, 8, L, 64], one thread, median after warm-up, best of ${ROUNDS} round(s)`,
  );
  console.log(`| contender | ${columns.map((c) => `${c.causal ? "causal" : "full"} L=${c.L}`).join(" | ")} |`);
  console.log(`| --- | ${columns.map(() => "---").join(" | ")} |`);
  for (const name of names) {
    const cells = columns.map((c) => {
      const r = find(name, c);
      return `${r.ms.toFixed(r.ms < 10 ? 2 : 1)} ms${r.diff > TOLERANCE ? " ✗" : ""}`;
    });
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
  const peer = "onnxruntime-web (wasm, 1 thread)";
  for (const name of names.filter((n) => n !== peer)) {
    const ratios = columns.map((c) => `${(find(peer, c).ms / find(name, c).ms).toFixed(2)}×`);
    console.log(`| ↳ ${name} vs onnxruntime-web | ${ratios.join(" | ")} |`);
  }
  // Issue 27's targets at L = 256: the relaxed module (what Chromium loads) against onnxruntime-web.
  const TARGETS = { false: 1.3, true: 2 };
  const ours = names.find((n) => n.includes("relaxed"));
  for (const L of SIZES) {
    const cells = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ms = (name, causal) => roundRows.find((r) => r.round === round && r.name === name && r.L === L && r.causal === causal).ms;
      cells.push(
        [false, true]
          .map((causal) => {
            const ratio = ms(peer, causal) / ms(ours, causal);
            const mark = L === 256 ? (ratio >= TARGETS[causal] ? " ✓" : " ✗") : "";
            return `${causal ? "causal" : "full"} ${ratio.toFixed(2)}×${mark}`;
          })
          .join(", "),
      );
    }
    const target = L === 256 ? ` (targets: full ≥ ${TARGETS.false}×, causal ≥ ${TARGETS.true}×, every round)` : "";
    console.log(`${ours} vs onnxruntime-web at L = ${L}, each round${target}: ${cells.map((c, i) => `round ${i + 1}: ${c}`).join("; ")}`);
  }
  console.log(
    `Small shape [1, 4, 64, 16], full, from JS: ${Object.entries(smallRuns)
      .map(([name, us]) => `${us.toFixed(1)} µs per call (${name})`)
      .join(", ")}`,
  );
  const worst = Math.max(...rows.map((r) => r.diff));
  console.log(
    `Largest difference from the float64 reference: ${worst.toExponential(2)} (${worst <= TOLERANCE ? "within" : "✗ above"} the tolerance ${TOLERANCE})`,
  );
} finally {
  await browser.close();
  await server.close();
}
