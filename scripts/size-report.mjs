// Prints raw and gzip sizes of the given files, and their total.
//   node scripts/size-report.mjs FILE... [--budget-gzip-kb N --label NAME]
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { cli, cliError, cliNumber } from "./cli.mjs";

const usage = "usage: node scripts/size-report.mjs FILE... [--budget-gzip-kb N] [--label NAME]";
const { values, positionals: args } = cli({
  usage,
  positionals: true,
  options: { "budget-gzip-kb": { type: "string" }, label: { type: "string" } },
});
const budget = cliNumber(values, "budget-gzip-kb", { min: 0, usage });
const label = values.label ?? "package";
if (args.length === 0) cliError("name at least one file", usage);

const kb = (n) => `${(n / 1024).toFixed(1).padStart(8)} KB`;
let raw = 0;
let gz = 0;
console.log(`\nsize report: ${label}`);
console.log(`${"file".padEnd(34)}${"raw".padStart(11)}${"gzip -9".padStart(11)}`);
for (const file of args) {
  const bytes = readFileSync(file);
  const zipped = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gz += zipped;
  console.log(`${file.padEnd(34)}${kb(bytes.length)}${kb(zipped)}`);
}
console.log(`${"total".padEnd(34)}${kb(raw)}${kb(gz)}`);
if (budget !== undefined) {
  const ok = gz <= Number(budget) * 1024;
  console.log(`budget: ${budget} KB gzip -> ${ok ? "within" : "OVER"} (${((gz / 1024 / Number(budget)) * 100).toFixed(0)}%)`);
  if (!ok) process.exitCode = 1;
}
