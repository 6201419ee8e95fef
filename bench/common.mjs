// Shared by the contenders: reading the inputs, timing, reporting.
import { readFileSync, writeFileSync } from "node:fs";
import { cli, cliError, cliNumber } from "../scripts/cli.mjs";

export { time } from "./shared.mjs";

/** A contender's arguments, as bench/run.mjs passes them: --data=FILE --L=N [--H --D --mode --reps --out]. */
export function parseArgs() {
  const usage = "usage: CONTENDER --data=FILE --L=N [--H=8] [--D=64] [--mode=full] [--reps=10] [--out=FILE]";
  const names = ["data", "L", "H", "D", "mode", "reps", "out"];
  const { values } = cli({ usage, options: Object.fromEntries(names.map((n) => [n, { type: "string" }])) });
  if (!values.data) cliError("--data=FILE is required", usage);
  const whole = (name, fallback) => cliNumber(values, name, { fallback, min: 1, integer: true, usage });
  return {
    ...values,
    L: whole("L", undefined) ?? cliError("--L=N is required", usage),
    H: whole("H", 8),
    D: whole("D", 64),
    reps: whole("reps", 10),
  };
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
