// loadAttnLens(): one shared instance, explicit bytes or paths, clear option errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { loadAttnLens } from "attnlens";

test("without options the instance is shared", async () => {
  const [a, b] = await Promise.all([loadAttnLens(), loadAttnLens()]);
  assert.equal(a, b);
  assert.match(a.version, /^\d+\.\d+\.\d+$/);
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
  assert.equal(a.version, pkg.version);
});

test("wasmBinary and wasmUrl give separate working instances", async () => {
  const url = new URL("../../dist/attnlens.wasm", import.meta.url);
  const fromBytes = await loadAttnLens({ wasmBinary: await readFile(url) });
  const fromUrl = await loadAttnLens({ wasmUrl: url });
  assert.notEqual(fromBytes, await loadAttnLens());
  const a = fromBytes.attention([[1, 0]], [[1, 0]], [[2, 3]]);
  const b = fromUrl.attention([[1, 0]], [[1, 0]], [[2, 3]]);
  assert.deepEqual(a.output.data, b.output.data);
});

test("bad load options are rejected with a clear error", async () => {
  await assert.rejects(loadAttnLens({ wasmBinary: "bytes" }), { code: "BAD_ARGUMENT", message: /wasmBinary must be an ArrayBuffer/ });
  await assert.rejects(loadAttnLens({ wasm: 1 }), { code: "UNKNOWN_OPTION" });
  await assert.rejects(loadAttnLens({ wasmUrl: "/nonexistent/attnlens.wasm" }), /ENOENT/);
});
