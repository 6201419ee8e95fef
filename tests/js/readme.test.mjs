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
