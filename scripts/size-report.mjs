// Prints raw and gzip sizes of the given files, and their total.
//   node scripts/size-report.mjs FILE... [--budget-gzip-kb N --label NAME]
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const budget = option("--budget-gzip-kb");
const label = option("--label") ?? "package";
// The rest are files; a flag among them was not understood.
const unknown = args.filter((a) => a.startsWith("--"));
if (unknown.length) {
  console.error(`size-report: unknown option ${unknown.join(", ")}; options: --budget-gzip-kb N, --label TEXT, then files`);
  process.exit(2);
}

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
