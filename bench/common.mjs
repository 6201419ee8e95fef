// Shared by the contenders: reading the inputs, timing, reporting.
import { readFileSync, writeFileSync } from "node:fs";

export { time } from "./shared.mjs";

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

export function report(args, ms, output, extra = {}) {
  if (args.out) writeFileSync(args.out, Buffer.from(output.buffer, output.byteOffset, output.byteLength));
  console.log(JSON.stringify({ ms, ...extra }));
}
