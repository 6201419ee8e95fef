// Shared by the contenders: reading the inputs, timing, reporting.
import { readFileSync, writeFileSync } from "node:fs";

export function parseArgs() {
  const args = Object.fromEntries(
    process.argv
      .slice(2)
      .map((a) => a.match(/^--([^=]+)=(.*)$/))
      .filter(Boolean)
      .map((m) => [m[1], m[2]]),
  );
  return { ...args, L: Number(args.L), H: Number(args.H ?? 8), D: Number(args.D ?? 64), reps: Number(args.reps ?? 10) };
}

/** q, k, v [1, H, L, D] as Float32Arrays from the runner's data file. */
export function readInputs({ data, H, L, D }) {
  const bytes = readFileSync(data);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const n = H * L * D;
  return { q: all.slice(0, n), k: all.slice(n, 2 * n), v: all.slice(2 * n, 3 * n) };
}

/**
 * Warm-up (at least `warmup` runs and 300 ms, so that V8 has tiered WebAssembly and JS up to its
 * optimising compiler), then `reps` timed runs; returns the median in ms and the last result.
 */
export async function time(run, reps, warmup = 2) {
  let result;
  const start = performance.now();
  for (let i = 0; i < warmup || (performance.now() - start < 300 && i < 1000); i++) result = await run();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    result = await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], result };
}

export function report(args, ms, output, extra = {}) {
  if (args.out) writeFileSync(args.out, Buffer.from(output.buffer, output.byteOffset, output.byteLength));
  console.log(JSON.stringify({ ms, ...extra }));
}
