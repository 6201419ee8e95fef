// Keeps the README true: its "Use from JavaScript" example runs against the built package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";

test("the README's JavaScript example runs and prints what it says", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const code = readme.match(/```js\n([\s\S]*?)```/)[1];
  // Written next to this file so that `import "attnlens"` resolves to this package.
  const file = new URL("./.readme-example.mjs", import.meta.url);
  writeFileSync(file, code);
  try {
    const out = execFileSync("node", [file.pathname], { encoding: "utf8" });
    assert.match(out, /\[ 2, 8, 16, 32 \] \[ 2, 8, 16, 16 \]/);
    assert.match(out, /SHAPE_MISMATCH k has last dimension 5 but q has 4/);
  } finally {
    rmSync(file, { force: true });
  }
});

test("the README's model example runs on the shipped model and prints what it says", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const code = [...readme.matchAll(/```js\n([\s\S]*?)```/g)][1][1];
  assert.match(code, /lens\.loadModel/);
  const file = new URL("./.readme-model-example.mjs", import.meta.url);
  writeFileSync(file, code);
  try {
    // Run from the repository root: the example reads models/attnlens/.
    const out = execFileSync("node", [file.pathname], { encoding: "utf8", cwd: new URL("../..", import.meta.url).pathname });
    // console.log breaks an object over lines once it is long: compare with spaces collapsed.
    assert.match(out.replace(/\s+/g, " "), /\{ layers: 2, heads: 4, dModel: 128, context: 128, vocabSize: 4096, attentionNorm: true \}/);
    assert.match(out, /\[ 8, 4096 \] \[ 2, 4, 8, 8 \]/);
    assert.match(out, /\[ 'Mr', '\.', ' Darcy' \]/);
    assert.equal(out.match(/\{ id: \d+, text: .+, p: 0\.\d+ \}/g)?.length, 3, "three predictions");
  } finally {
    rmSync(file, { force: true });
  }
});
