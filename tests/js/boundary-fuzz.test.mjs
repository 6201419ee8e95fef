// A property-based test of the JS/wasm boundary: hostile typed arrays built at random
// from a table of overrides (several at once), with random lengths and contents, passed to a
// random entry point of either module. Every call must either give exactly what the same
// elements give in a plain array, or throw an AttnLensError with a known code; never a raw
// error, never other bytes; and the modules' heaps must end where they started.
// ATTNLENS_BOUNDARY_FUZZ=N runs N cases (default 300; the closing note's long run used more).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { randomGenerator } from "./helpers.mjs";

const lens = await loadAttnLens();
const CASES = Number(process.env.ATTNLENS_BOUNDARY_FUZZ ?? 300);
const SEED = Number(process.env.ATTNLENS_BOUNDARY_FUZZ_SEED ?? 29);
const shipped = new URL("../../models/attnlens/", import.meta.url);
const tokenizer = {
  vocab: readFileSync(new URL("vocab.json", shipped), "utf8"),
  merges: readFileSync(new URL("merges.txt", shipped), "utf8"),
};
/** The shipped tokenizer's size: the test model's vocabulary. */
const VOCAB = Object.keys(JSON.parse(tokenizer.vocab)).length;
const KNOWN_CODES = new Set(lens.errorCodes.map((c) => c.name));

// Each override changes what an array says of itself, never its own elements.
const OVERRIDES = [
  ["own length", (a, rand) => Object.defineProperty(a, "length", { value: Math.floor(rand() * 1e6) })],
  [
    "own iterator",
    (a, rand) => {
      const n = Math.floor(rand() * 5);
      a[Symbol.iterator] = function* () {
        for (let i = 0; i < n; i++) yield 1;
      };
    },
  ],
  ["own subarray", (a) => (a.subarray = () => new Uint8Array(1 << 16).fill(0x41))],
  ["own slice", (a) => (a.slice = () => new Float32Array(3))],
  [
    "own set",
    (a) =>
      (a.set = () => {
        throw new Error("the caller's set() was called");
      }),
  ],
  ["own buffer", (a) => Object.defineProperty(a, "buffer", { value: new ArrayBuffer(16) })],
  ["own byteOffset", (a) => Object.defineProperty(a, "byteOffset", { value: 8 })],
  ["own constructor", (a) => Object.defineProperty(a, "constructor", { value: Uint8Array })],
  ["prototype swapped", (a) => Object.setPrototypeOf(a, Object.create(Object.getPrototypeOf(a), { length: { get: () => 7 } }))],
];

/** A typed array of `K` holding `values`, at a random offset of a larger buffer of other bytes, with random overrides. */
function hostile(K, values, rand, applied) {
  const pad = Math.floor(rand() * 4);
  const raw = new Uint8Array((values.length + 2 * pad) * K.BYTES_PER_ELEMENT).fill(0x5a);
  const a = new K(raw.buffer, pad * K.BYTES_PER_ELEMENT, values.length);
  a.set(values);
  for (const [name, apply] of OVERRIDES) {
    if (rand() < 0.35) {
      apply(a, rand);
      applied.push(name);
    }
  }
  return a;
}

function sameResult(a, b, where) {
  if (ArrayBuffer.isView(b)) {
    assert.equal(a.length, b.length, where);
    for (let i = 0; i < b.length; i++) if (!Object.is(a[i], b[i])) assert.fail(`${where}: element ${i} is ${a[i]}, expected ${b[i]}`);
  } else if (b && typeof b === "object") {
    for (const key of Object.keys(b)) sameResult(a[key], b[key], `${where}.${key}`);
  } else {
    assert.ok(Object.is(a, b), `${where}: ${a} vs ${b}`);
  }
}

test(`boundary fuzz: ${CASES} hostile arrays at random entry points (seed ${SEED}), twice`, async () => {
  const model = await lens.createModel({ config: { layers: 1, heads: 2, dModel: 16, context: 12, vocabSize: VOCAB }, seed: 3, tokenizer });
  const files = model.save();
  // The same cases run twice: the second pass must leave both heaps where the first left them
  // (the first may grow staging areas and explain()'s bounded embedding table once).
  const heaps = [];
  for (let pass = 0; pass < 2; pass++) {
    await fuzzPass(model, files);
    heaps.push({ model: (await lens.modelMemory()).usedBytes, core: lens.memory().usedBytes });
  }
  model.dispose();
  assert.deepEqual(heaps[1], heaps[0], "the heaps after the second pass");
});

async function fuzzPass(model, files) {
  const rand = randomGenerator(SEED);
  const intArray = () => [Int32Array, Uint16Array, Int16Array, Uint8Array][Math.floor(rand() * 4)];
  const ids = (n) => Array.from({ length: n }, () => Math.floor(rand() * 255));
  const floats = (n) => Array.from({ length: n }, () => Math.fround(rand() * 4 - 2));
  // Each entry point draws its values and array kind, and returns run(array): its result.
  const entryPoints = {
    forward: () => ({ K: intArray(), values: ids(1 + Math.floor(rand() * 12)), run: (a) => model.forward(a).logits.data }),
    decode: () => ({ K: intArray(), values: ids(1 + Math.floor(rand() * 20)), run: (a) => model.decode(a) }),
    gradients: () => {
      const values = ids(1 + Math.floor(rand() * 12));
      return { K: intArray(), values, run: (a) => model.gradients(Int32Array.from(values), a).loss };
    },
    attention: () => {
      const L = 1 + Math.floor(rand() * 12);
      const shape = [L, 8];
      const others = [floats(8 * L), floats(8 * L)];
      const which = Math.floor(rand() * 3);
      const causal = rand() < 0.5;
      return {
        K: [Float32Array, Float64Array][Math.floor(rand() * 2)],
        values: floats(8 * L),
        run: (a) => {
          const arrays = [...others.map((x) => Float32Array.from(x))];
          arrays.splice(which, 0, a);
          const r = lens.attention(...arrays.map((data) => ({ data, shape })), { causal, returnWeights: true });
          return { output: r.output.data, weights: r.weights.data };
        },
      };
    },
    explain: () => ({
      K: Uint8Array,
      values: Array.from(
        new TextEncoder().encode(["The cat sat", "a b c d", "Élan vital!", "The cat sat a b c d Élan vital!"][Math.floor(rand() * 4)]),
      ),
      run: (a) => lens.explain(a, { modelDim: 8, numHeads: 2 }).weights.data,
    }),
    loadModel: () => ({
      K: Uint8Array,
      values: files["model.safetensors"],
      run: async (a) => {
        const m = await lens.loadModel({ files: { ...files, "model.safetensors": a } });
        try {
          return m.forward(Int32Array.from([1, 2, 3])).logits.data;
        } finally {
          m.dispose();
        }
      },
    }),
  };
  const names = Object.keys(entryPoints);
  const counts = Object.fromEntries(names.map((n) => [n, 0]));
  let refused = 0;
  for (let c = 0; c < CASES; c++) {
    const name = names[Math.floor(rand() * names.length)];
    counts[name]++;
    const { K, values, run } = entryPoints[name]();
    const applied = [];
    const array = hostile(K, values, rand, applied);
    const where = `case ${c}: ${name} with a ${K.name} (${applied.join(", ") || "no override"})`;
    let got;
    let gotError;
    try {
      got = await run(array);
    } catch (error) {
      gotError = error;
    }
    if (gotError) {
      assert.equal(gotError.name, "AttnLensError", `${where}: threw ${gotError}`);
      assert.ok(KNOWN_CODES.has(gotError.code), `${where}: unknown code ${gotError.code}`);
      refused++;
      continue;
    }
    sameResult(got, await run(K.from(values)), where);
  }
  // A refusal is allowed (say, an override that makes the array's length exceed a limit), but
  // most must be read as their elements.
  assert.ok(refused < CASES / 4, `${refused} of ${CASES} cases were refused`);
  assert.ok(
    names.every((n) => counts[n] > 0),
    `entry points tried: ${JSON.stringify(counts)}`,
  );
}
