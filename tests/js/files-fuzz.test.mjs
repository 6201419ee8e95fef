// Fuzz pass over the attention file parsers: the committed examples mutated a few thousand
// times from a fixed seed (bit flips, byte overwrites with interesting values, cuts, splices,
// JSON values swapped for other types). Every outcome must be FigureData whose checks hold or
// the typed BadFileError: no other exception, no hang (node:test's timeout), no NaN drawn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BadFileError, parseAttentionFile } from "../../web/files/index.js";
import { examples, rng } from "../fixtures/attention/make.mjs";

const ROUNDS = 600;
const INTERESTING = [0x00, 0xff, 0x7f, 0x80, 0x22, 0x5b, 0x5d, 0x7b, 0x7d, 0x2c, 0x2d, 0x30, 0x39, 0x2e, 0x65];

function mutate(bytes, random) {
  const out = Uint8Array.from(bytes);
  const pick = (n) => Math.floor(random() * n);
  const kind = pick(5);
  if (kind === 0) for (let k = 0; k < 1 + pick(4); k++) out[pick(out.length)] ^= 1 << pick(8);
  else if (kind === 1) for (let k = 0; k < 1 + pick(4); k++) out[pick(out.length)] = INTERESTING[pick(INTERESTING.length)];
  else if (kind === 2) return out.subarray(0, pick(out.length));
  else if (kind === 3) {
    // Splice: repeat a piece of the file somewhere else (duplicated keys, nesting, headers).
    const from = pick(out.length);
    const piece = out.subarray(from, from + 1 + pick(64));
    const at = pick(out.length);
    const spliced = new Uint8Array(out.length + piece.length);
    spliced.set(out.subarray(0, at));
    spliced.set(piece, at);
    spliced.set(out.subarray(at), at + piece.length);
    return spliced;
  } else {
    // The header region (first 128 bytes) gets most of the attention: sizes and shapes live there.
    for (let k = 0; k < 1 + pick(3); k++) out[pick(Math.min(128, out.length))] = pick(256);
  }
  return out;
}

/** A JSON example with one value (picked from its keys) replaced by another type. */
function mutateJson(bytes, random) {
  const json = JSON.parse(new TextDecoder().decode(bytes));
  const replacements = [null, 0, -1, 1e308, "x", [], [[]], {}, true, [1, [2]], 2 ** 40, "<b>html</b>"];
  const keys = Object.keys(json);
  const key = keys[Math.floor(random() * keys.length)];
  json[key] = replacements[Math.floor(random() * replacements.length)];
  return new TextEncoder().encode(JSON.stringify(json));
}

test("mutated examples give FigureData or BadFileError, nothing else", { timeout: 120000 }, () => {
  const random = rng(20240601);
  const counts = { parsed: 0, refused: 0 };
  const started = performance.now();
  let slowest = 0;
  for (const [name, { bytes }] of Object.entries(examples())) {
    for (let round = 0; round < ROUNDS; round++) {
      const input = name.endsWith(".json") && round % 4 === 0 ? mutateJson(bytes, random) : mutate(bytes, random);
      const t0 = performance.now();
      try {
        const data = parseAttentionFile(input, { name });
        const [layers, heads, L] = data.weights.shape;
        assert.equal(data.weights.data.length, layers * heads * L * L, `${name} round ${round}: size`);
        assert.equal(data.tokens.length, L);
        assert.ok(
          data.weights.data.every((w) => Number.isFinite(w) && w >= 0),
          `${name} round ${round}: weights finite and >= 0`,
        );
        counts.parsed++;
      } catch (error) {
        if (!(error instanceof BadFileError)) throw new Error(`${name} round ${round}: ${error?.constructor?.name}: ${error?.message}`);
        assert.ok(error.message.length > 10, `${name} round ${round}: a message`);
        counts.refused++;
      }
      slowest = Math.max(slowest, performance.now() - t0);
    }
  }
  console.log(
    `# fuzz: ${counts.parsed} parsed, ${counts.refused} refused in ${(performance.now() - started).toFixed(0)} ms; slowest ${slowest.toFixed(1)} ms`,
  );
  assert.ok(counts.parsed > 0 && counts.refused > 0, "the mutations reach both outcomes");
});
