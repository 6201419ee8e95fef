// Every command-line script of the repository parses its arguments with node:util's parseArgs in
// strict mode (through scripts/cli.mjs or directly), so a mistyped flag is an error that names it
// (exit 2) instead of a run with the defaults.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../", import.meta.url).pathname;
const list = (dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".mjs"))
    .map((f) => `${dir}/${f}`);
const sources = [...list("scripts"), ...list("bench"), ...list("bench/contenders")].filter((f) => f !== "scripts/cli.mjs");
// scripts/binaryen/adapter.mjs passes its arguments on to a binaryen tool untouched (not listed).

test("no script reads process.argv by hand", () => {
  const byHand = /process\.argv\s*(\.\s*(slice|includes|find|indexOf)\b|\[\s*[2-9])/;
  const offenders = sources.filter((f) => byHand.test(readFileSync(join(root, f), "utf8")));
  assert.deepEqual(offenders, [], `these read process.argv by hand instead of scripts/cli.mjs: ${offenders.join(", ")}`);
});

// The scripts that run without the bench's own dependencies (bench/node_modules is installed by
// `npm run bench` only): each refuses an unknown flag before doing any work.
const CLIS = list("scripts").filter((f) => f !== "scripts/cli.mjs" && /\bcli\(|\bparseArgs\(/.test(readFileSync(join(root, f), "utf8")));

test("the command-line scripts are found", () => {
  for (const f of ["scripts/screenshot.mjs", "scripts/train-induction.mjs", "scripts/gpt2-checkpoint.mjs", "scripts/serve.mjs"])
    assert.ok(CLIS.includes(f), `${f} is not among ${CLIS.join(", ")}`);
});

for (const file of CLIS)
  test(`${file} refuses an unknown flag, naming it (exit 2)`, () => {
    const r = spawnSync(process.execPath, [join(root, file), "--no-such-flag"], { encoding: "utf8", timeout: 60000 });
    assert.equal(r.status, 2, `exit ${r.status} (signal ${r.signal}); stderr: ${r.stderr}`);
    assert.match(r.stderr, /--no-such-flag/);
  });

// --help prints the usage and does nothing else: gpt2-checkpoint.mjs once wrote a 13 MB
// checkpoint into a folder named "--help".
for (const file of CLIS)
  test(`${file} --help prints its usage, exits 0 and writes nothing`, () => {
    const cwd = mkdtempSync(join(tmpdir(), "attnlens-help-"));
    try {
      const r = spawnSync(process.execPath, [join(root, file), "--help"], { encoding: "utf8", cwd, timeout: 60000 });
      assert.equal(r.status, 0, `exit ${r.status}; stderr: ${r.stderr}`);
      assert.match(r.stdout, /^usage: /);
      assert.deepEqual(readdirSync(cwd), []);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

test("scripts/cli.mjs: numbers and lists are checked, naming the flag", () => {
  const run = (code) => spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8", cwd: root, timeout: 60000 });
  const cli = `import { cli, cliNumber, cliWholeList } from "./scripts/cli.mjs";`;
  const ok = run(
    `${cli} const { values } = cli({ usage: "u", argv: ["--n=3", "--sizes", "4,5"], options: { n: { type: "string" }, sizes: { type: "string" } } });` +
      `console.log(JSON.stringify([cliNumber(values, "n", { integer: true }), cliWholeList(values, "sizes", [1]), cliNumber(values, "m", { fallback: 7 })]));`,
  );
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), "[3,[4,5],7]");
  for (const [argv, check, message] of [
    [["--n=1.5"], `cliNumber(values, "n", { integer: true })`, /--n "1\.5": expected a whole number/],
    [["--n="], `cliNumber(values, "n")`, /--n "": expected a number/],
    [["--n=-1"], `cliNumber(values, "n", { min: 0 })`, /--n "-1": expected a number ≥ 0/],
    [["--n=x"], `cliNumber(values, "n")`, /--n "x"/],
    [["--sizes=4,,5"], `cliWholeList(values, "sizes", [])`, /--sizes "4,,5": expected whole numbers/],
    [["extra"], `0`, /Unexpected argument 'extra'/],
    [["--n"], `0`, /--n <value>' argument missing/],
  ]) {
    const r = run(
      `${cli} const { values } = cli({ usage: "the usage", argv: ${JSON.stringify(argv)}, options: { n: { type: "string" }, sizes: { type: "string" } } }); ${check};`,
    );
    assert.equal(r.status, 2, `${argv}: exit ${r.status}, stderr ${r.stderr}`);
    assert.match(r.stderr, message);
    if (check === "0") assert.match(r.stderr, /the usage/); // cli() prints the usage with its errors
  }
});
