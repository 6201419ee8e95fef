// Packaging smoke test: `npm pack`, install the tarball into an empty project, import it in
// Node ESM, and bundle a page that imports it with Vite and run that page in Chromium, where
// the relaxed-SIMD module must load by default and agree with the SIMD128 one.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "vite";
import { serve } from "../../scripts/serve.mjs";
import { launchBrowser, openPage } from "../support/browser.mjs";

const repo = resolve(new URL("../..", import.meta.url).pathname);
const work = mkdtempSync(join(tmpdir(), "attnlens-pack-"));
after(() => rmSync(work, { recursive: true, force: true }));
const npm = (args, cwd) => execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });

let tarball;

test("npm pack ships exactly the package files", () => {
  const out = JSON.parse(npm(["pack", "--json", "--pack-destination", work], repo));
  tarball = join(work, out[0].filename);
  const files = out[0].files.map((f) => f.path).sort();
  for (const f of [
    "dist/attnlens.js",
    "dist/attnlens.node.js",
    "dist/attnlens.wasm",
    "dist/attnlens-relaxed.wasm",
    "dist/attnlens.d.ts",
    "dist/model.d.ts",
    "dist/api.js",
    "dist/boundary.js",
    "dist/flow.js",
    "dist/attnlens_core.js",
    "dist/model.js",
    "dist/model-input.js",
    "dist/attnlens_model_core.js",
    "dist/attnlens-model.wasm",
    "dist/attnlens-model-relaxed.wasm",
    // The threaded model module, which the element's model worker loads in a cross-origin-isolated page.
    "dist/attnlens_model_threads.js",
    "dist/attnlens_model_threads.worker.js",
    "dist/attnlens-model-threads.wasm",
    "dist/element.js",
    "dist/element-trained.js",
    "dist/element-train-draw.js",
    "dist/element-train-worker.js",
    "dist/element-model-worker.js",
    "dist/train-snapshot/model.safetensors",
    "dist/train-snapshot/config.json",
    "dist/train-snapshot/state.json",
    "dist/models/attnlens/model.safetensors",
    "dist/models/attnlens/config.json",
    "dist/models/attnlens/vocab.json",
    "dist/models/attnlens/merges.txt",
    "package.json",
    "README.md",
    "LICENSE",
  ]) {
    assert.ok(files.includes(f), `${f} is in the tarball`);
  }
  assert.ok(!files.some((f) => f.startsWith("lib/") || f.startsWith("tests/") || f.startsWith("dist/site/")), files.join(", "));
});

test("the tarball installs into an empty project and works from Node ESM", () => {
  const app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  npm(["install", tarball], app);
  writeFileSync(
    join(app, "main.js"),
    `import { loadAttnLens, AttnLensError, rollout } from "attnlens";
const lens = await loadAttnLens();
const flow = rollout({ data: Float32Array.from([1, 0, 0.5, 0.5]), shape: [1, 1, 2, 2] });
const r = lens.attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], { causal: true, returnWeights: true });
let code;
try { lens.attention([[1]], [[1, 2]], [[1]]); } catch (e) { code = e instanceof AttnLensError && e.code; }
console.log(JSON.stringify({ version: lens.version, weights: Array.from(r.weights.data), output: Array.from(r.output.data), code, flow: Array.from(flow.data) }));
`,
  );
  // The Node that runs this test (npm test runs it under Node 20 and Node 22).
  const result = JSON.parse(execFileSync(process.execPath, ["main.js"], { cwd: app, encoding: "utf8" }));
  assert.deepEqual(result.weights.slice(0, 2), [1, 0]);
  assert.deepEqual(result.output.slice(0, 2), [1, 2]);
  assert.equal(result.code, "SHAPE_MISMATCH");
  // The package's own functions: rollout's ½ A + ½ I of one layer ([0.5, 0.5] -> [0.25, 0.75]).
  assert.deepEqual(result.flow, [1, 0, 0.25, 0.75]);
});

test("a page that imports attnlens bundles with Vite and runs in Chromium", async () => {
  const app = join(work, "app");
  writeFileSync(
    join(app, "index.html"),
    `<!doctype html><html><body><pre id="result">loading</pre><script type="module" src="./page.js"></script></body></html>`,
  );
  writeFileSync(
    join(app, "page.js"),
    `import { loadAttnLens, relaxedSimdSupported } from "attnlens";
const lens = await loadAttnLens();
const baseline = await loadAttnLens({ simd: "baseline" });
const ex = lens.explain("The cat sat on the mat", { modelDim: 16, numHeads: 2 });
// Inputs in [-2, 2]: each module is within 1e-5 of exact attention there (tests/js), so the two
// are within 2e-5 of each other.
const n = 2 * 200 * 32;
const q = { data: Float32Array.from({ length: n }, (_, i) => 2 * Math.sin(i * 0.37)), shape: [1, 2, 200, 32] };
const k = { data: Float32Array.from({ length: n }, (_, i) => 2 * Math.cos(i * 0.11)), shape: [1, 2, 200, 32] };
let worst = 0;
for (const causal of [false, true]) {
  const a = lens.attention(q, k, k, { causal }).output.data;
  const b = baseline.attention(q, k, k, { causal }).output.data;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
}
document.getElementById("result").textContent = JSON.stringify({
  tokens: ex.tokens.map((t) => t.text),
  upper: ex.weights.data[1],
  simd: [lens.simd, baseline.simd],
  probe: relaxedSimdSupported(),
  worst,
});
`,
  );
  await build({ root: app, logLevel: "error", build: { outDir: join(app, "dist"), target: "es2022" } });
  const assets = readdirSync(join(app, "dist", "assets"));
  // Both modules are assets (only the one the loader picks is fetched), and so are the two
  // variants of the model module (fetched by loadModel / createModel / loadTokenizer only).
  const wasm = assets.filter((f) => f.endsWith(".wasm"));
  const modules = wasm.filter((f) => !f.startsWith("attnlens-model"));
  assert.equal(modules.length, 2, `Vite emitted two .wasm files besides the model module's: ${assets.join(", ")}`);
  assert.equal(wasm.length - modules.length, 2, `and the model module's two: ${assets.join(", ")}`);
  assert.ok(
    modules.some((f) => f.startsWith("attnlens-relaxed-")),
    `one is attnlens-relaxed.wasm: ${modules.join(", ")}`,
  );
  const server = await serve(join(app, "dist"));
  const browser = await launchBrowser();
  try {
    const { page, problems, outside } = await openPage(browser.context, server.url);
    await page.goto(server.url);
    await page.waitForFunction(() => document.getElementById("result").textContent.startsWith("{"));
    const result = JSON.parse(await page.textContent("#result"));
    assert.deepEqual(result.tokens, ["The", "cat", "sat", "on", "the", "mat"]);
    assert.equal(result.upper, 0);
    // Chromium >= 114 runs relaxed SIMD: the default load picks the relaxed module.
    assert.equal(result.probe, true);
    assert.deepEqual(result.simd, ["relaxed", "baseline"]);
    assert.ok(result.worst <= 2e-5, `relaxed vs baseline in Chromium: max |difference| ${result.worst}`);
    assert.deepEqual(problems, []);
    assert.deepEqual(outside, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
