// The two WebAssembly modules and how loadAttnLens() picks one: attnlens-relaxed.wasm (relaxed
// SIMD, fused multiply-adds) where the engine runs relaxed SIMD, attnlens.wasm (SIMD128)
// elsewhere, overridable with { simd }. Runs in every Node of npm test (20 and 22).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { loadAttnLens, relaxedSimdSupported } from "attnlens";
import { assertClose, randomGenerator, randomTensor, referenceAttention } from "./helpers.mjs";

const major = Number(process.versions.node.split(".")[0]);
const flagged = process.execArgv.includes("--experimental-wasm-relaxed-simd");
const relaxedExpected = major >= 22 || flagged;
const noRelaxed = relaxedExpected ? false : `Node ${process.versions.node} runs no relaxed SIMD without a flag`;

test("the probe says what the engine runs: relaxed SIMD from Node 22, or Node 20 with the flag", () => {
  assert.equal(relaxedSimdSupported(), relaxedExpected);
});

test('simd "auto" (the default) loads the module the engine can run', async () => {
  const lens = await loadAttnLens();
  assert.equal(lens.simd, relaxedExpected ? "relaxed" : "baseline");
  assert.equal(await loadAttnLens({ simd: "auto" }), lens, "auto shares the default instance");
  console.log(`# Node ${process.versions.node}: loadAttnLens() runs the ${lens.simd} module`);
});

test('simd "baseline" loads attnlens.wasm everywhere, as its own shared instance', async () => {
  const baseline = await loadAttnLens({ simd: "baseline" });
  assert.equal(baseline.simd, "baseline");
  assert.equal(await loadAttnLens({ simd: "baseline" }), baseline);
  const r = baseline.attention([[1, 0]], [[1, 0]], [[2, 3]]);
  assert.deepEqual(Array.from(r.output.data), [2, 3]);
});

test('simd "relaxed" where the engine lacks relaxed SIMD is a clear error', { skip: relaxedExpected }, async () => {
  await assert.rejects(loadAttnLens({ simd: "relaxed" }), {
    name: "AttnLensError",
    code: "BAD_ARGUMENT",
    message: /simd is "relaxed" but this JS engine does not run relaxed SIMD/,
  });
});

test(
  "Node 20 with --experimental-wasm-relaxed-simd picks the relaxed module",
  { skip: major !== 20 && "only Node 20 has the flag" },
  () => {
    const script = 'import { loadAttnLens } from "attnlens"; const lens = await loadAttnLens(); console.log(lens.simd);';
    const out = execFileSync(process.execPath, ["--experimental-wasm-relaxed-simd", "--input-type=module", "-e", script], {
      cwd: new URL("../..", import.meta.url),
      encoding: "utf8",
    });
    assert.equal(out.trim(), "relaxed");
  },
);

test("bad simd options are rejected with a clear error", async () => {
  await assert.rejects(loadAttnLens({ simd: "fast" }), { code: "BAD_ARGUMENT", message: /simd must be "auto" or "relaxed" or "baseline"/ });
  const bytes = await readFile(new URL("../../dist/attnlens.wasm", import.meta.url));
  await assert.rejects(loadAttnLens({ simd: "baseline", wasmBinary: bytes }), {
    code: "BAD_ARGUMENT",
    message: /simd .* cannot be combined with wasmBinary or wasmUrl/,
  });
  const custom = await loadAttnLens({ wasmBinary: bytes });
  assert.equal(custom.simd, null, "a caller-supplied module is neither");
});

test("the relaxed module agrees with the baseline and the float64 reference", { skip: noRelaxed }, async () => {
  const relaxed = await loadAttnLens({ simd: "relaxed" });
  const baseline = await loadAttnLens({ simd: "baseline" });
  assert.equal(relaxed.simd, "relaxed");
  const rand = randomGenerator(16);
  for (const [L, S, E] of [
    [1, 1, 3],
    [70, 70, 16],
    [130, 67, 9],
    [256, 256, 64],
  ]) {
    const q = randomTensor([1, 2, L, E], rand, -2, 2);
    const k = randomTensor([1, 2, S, E], rand, -2, 2);
    for (const causal of [false, true]) {
      const options = { causal, causalAlign: "bottom-right", returnWeights: true };
      const exact = referenceAttention(q, k, k, { causal, bottomRight: true });
      const fast = relaxed.attention(q, k, k, options);
      const plain = baseline.attention(q, k, k, options);
      const label = `[1, 2, ${L}, ${E}] x ${S} keys${causal ? ", causal" : ""}`;
      // The existing tolerance of the kernels against the float64 reference on inputs in
      // [-2, 2] (attention.test.mjs); both modules meet it, so they are within twice it of each other.
      assertClose(fast.output.data, exact.output, 1e-5, `relaxed output ${label}`);
      assertClose(fast.weights.data, exact.weights, 1e-5, `relaxed weights ${label}`);
      assertClose(fast.output.data, plain.output.data, 2e-5, `relaxed vs baseline output ${label}`);
      assertClose(
        relaxed.attention(q, k, k, { causal, causalAlign: "bottom-right", streaming: true }).output.data,
        exact.output,
        1e-5,
        `relaxed streaming ${label}`,
      );
    }
  }
});
