// Keeps the README and docs/api.md true: their JavaScript examples run against the built package
// and print what their comments say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";

const root = new URL("../..", import.meta.url).pathname;
const jsBlocks = (path) =>
  [...readFileSync(new URL(`../../${path}`, import.meta.url), "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

/** Runs `code` as an ES module from the repository root and returns what it prints. */
function run(code, name) {
  // Written next to this file so that `import "attnlens"` resolves to this package.
  const file = new URL(`./.${name}.mjs`, import.meta.url);
  writeFileSync(file, code);
  try {
    return execFileSync("node", [file.pathname], { encoding: "utf8", cwd: root });
  } finally {
    rmSync(file, { force: true });
  }
}

/** What the attention examples (the README's and docs/api.md's tour) print. */
function assertAttentionExample(out) {
  assert.match(out, /\[ 2, 8, 16, 32 \] \[ 2, 8, 16, 16 \]/);
  assert.match(out, /SHAPE_MISMATCH k has last dimension 5 but q has 4/);
}

test("the README's JavaScript example runs and prints what it says", () => {
  const [code] = jsBlocks("README.md");
  assert.ok(code, "the README has a ```js block");
  const out = run(code, "readme-example");
  assertAttentionExample(out);
  assert.match(out, /The cat sat on the mat \. \[ 4, 7, 7 \]/);
});

test("docs/api.md's JavaScript tour runs and prints what it says", () => {
  const [code] = jsBlocks("docs/api.md");
  assert.match(code, /lens\.selfAttention/);
  const out = run(code, "api-tour-example");
  assertAttentionExample(out);
  assert.match(out, /\[ 4, 1, 1 \] \[\s*'scale',\s*'x',\s*'q',\s*'k',\s*'v',\s*'scores'/);
});

test("docs/api.md's model example runs on the shipped model and prints what it says", () => {
  const code = jsBlocks("docs/api.md").find((block) => /lens\.loadModel/.test(block));
  assert.ok(code, "docs/api.md has a ```js block that calls lens.loadModel");
  // Run from the repository root: the example reads models/attnlens/.
  const out = run(code, "api-model-example");
  // console.log breaks an object over lines once it is long: compare with spaces collapsed.
  assert.match(
    out.replace(/\s+/g, " "),
    /\{\s*family: 'gpt2',\s*causal: true,\s*prediction: 'next-token',\s*hasHead: true,\s*layers: 2,\s*heads: 4,\s*kvHeads: 4,\s*dModel: 128,\s*headDim: 32,\s*context: 128,\s*vocabSize: 8192,\s*typeVocabSize: 0,\s*positions: 'learned',\s*norm: 'layernorm',\s*windows: \[\],\s*scoreSoftcap: 0,\s*logitSoftcap: 0,\s*attentionNorm: true\s*\}/,
  );
  assert.match(out, /\[ 7, 8192 \] \[ 2, 4, 7, 7 \]/);
  assert.match(out, /\[ 'Mr', '\.', ' Darcy' \]/);
  assert.equal(out.match(/\{ id: \d+, text: .+, p: 0\.\d+ \}/g)?.length, 3, "three predictions");
});

test("docs/api.md's encoder example runs on the shipped encoder and prints what it says", () => {
  const code = jsBlocks("docs/api.md").find((block) => /fillMask/.test(block));
  assert.ok(code, "docs/api.md has a ```js block that calls fillMask");
  const out = run(code, "api-encoder-example");
  assert.match(
    out,
    /\[\s*'gpt2',\s*'bert',\s*'distilbert',\s*'roberta',\s*'llama',\s*'mistral',\s*'qwen2',\s*'qwen3',\s*'gemma2',\s*'gemma3_text',\s*'modernbert'\s*\]/,
  );
  assert.match(out, /^bert false masked-token$/m);
  assert.match(out, /^\[CLS\]\/0 Mr\/0 \.\/0  Darcy\/0 \[SEP\]\/0 He\/1  bow\/1 ed\/1 \.\/1 \[SEP\]\/1$/m);
  assert.match(out, /^7 3$/m);
  assert.match(out, /\[ 2, 4, 7, 7 \]/);
});
