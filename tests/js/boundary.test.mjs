// The JS/wasm boundary under hostile arguments: every typed array that crosses into
// wasm is read through its intrinsic kind, buffer, offset and length, whatever it reports of
// itself. A table of hostile forms (own `length`, custom iterators, subclasses whose methods
// and getters lie, views into larger buffers holding other bytes, shared and resizable buffers)
// is applied to every entry point: each must give the same result as a plain array with the same
// elements. Proxies, detached buffers and fake typed arrays must be a BAD_ARGUMENT. Afterwards
// the modules still work and their heaps hold what they held before. Then the findings of the
// adversarial pass, one regression test each.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadAttnLens } from "attnlens";
import { assertAttnLensError, randomGenerator } from "./helpers.mjs";
import { parseAttentionFile } from "../../web/files/index.js";

const lens = await loadAttnLens();
const shipped = new URL("../../models/attnlens/", import.meta.url);
const tokenizerFiles = {
  vocab: readFileSync(new URL("vocab.json", shipped), "utf8"),
  merges: readFileSync(new URL("merges.txt", shipped), "utf8"),
};
/** The shipped tokenizer's size: the test models' vocabulary. */
const VOCAB = Object.keys(JSON.parse(tokenizerFiles.vocab)).length;
const config = { layers: 1, heads: 2, dModel: 16, context: 16, vocabSize: VOCAB };
const makeModel = (seed = 1) => lens.createModel({ config, seed, tokenizer: tokenizerFiles });

const KINDS = { Int32Array, Uint8Array, Uint16Array, Float32Array, Float64Array, Int16Array, Uint32Array };
const SECRET = 0x41;

/**
 * Hostile forms of a typed array of `kind` holding `values`: [name, make()]. Each made array has
 * exactly `values` as its own elements (what the library must read), and lies about them in
 * every other way the form allows.
 */
function hostileForms(kind, values) {
  const K = KINDS[kind];
  const n = values.length;
  const plain = () => K.from(values);
  class Lying extends K {
    get length() {
      return n + 1000;
    }
    subarray() {
      return new Uint8Array(4 << 20).fill(SECRET);
    }
    slice() {
      return new K(n + 1000).fill(SECRET);
    }
    set() {
      throw new Error("set() of the caller's array must not be called");
    }
    get buffer() {
      return new ArrayBuffer(8);
    }
    get byteOffset() {
      return 4;
    }
    get byteLength() {
      return 1 << 30;
    }
    *[Symbol.iterator]() {
      yield values[0];
    }
    static get [Symbol.species]() {
      return Uint8Array;
    }
  }
  return [
    ["plain", plain],
    [
      "own length larger",
      () => {
        const a = plain();
        Object.defineProperty(a, "length", { value: n + 4096 });
        return a;
      },
    ],
    [
      "own length 1",
      () => {
        const a = plain();
        Object.defineProperty(a, "length", { value: 1 });
        return a;
      },
    ],
    [
      "own iterator yielding one value",
      () => {
        const a = plain();
        a[Symbol.iterator] = function* () {
          yield values[0];
        };
        return a;
      },
    ],
    [
      "own subarray, slice and set",
      () => {
        const a = plain();
        a.subarray = () => new Uint8Array(4 << 20).fill(SECRET);
        a.slice = () => new K(n + 100);
        a.set = () => {
          throw new Error("set() of the caller's array must not be called");
        };
        return a;
      },
    ],
    [
      "subclass whose getters and methods lie",
      () => {
        const a = new Lying(n);
        K.prototype.set.call(a, values);
        return a;
      },
    ],
    [
      "view into a larger buffer of other bytes",
      () => {
        const pad = 16;
        const bytes = new Uint8Array((n + 2 * pad) * K.BYTES_PER_ELEMENT).fill(SECRET);
        const a = new K(bytes.buffer, pad * K.BYTES_PER_ELEMENT, n);
        a.set(values);
        return a;
      },
    ],
    [
      "SharedArrayBuffer",
      () => {
        const a = new K(new SharedArrayBuffer(n * K.BYTES_PER_ELEMENT));
        a.set(values);
        return a;
      },
    ],
    [
      "length-tracking view of a resizable buffer",
      () => {
        const a = new K(new ArrayBuffer(n * K.BYTES_PER_ELEMENT, { maxByteLength: 2 * n * K.BYTES_PER_ELEMENT + 64 }));
        a.set(values);
        return a;
      },
    ],
  ];
}

/** Forms that are not the values at all: each must be a BAD_ARGUMENT naming the argument. */
function refusedForms(kind, values) {
  const K = KINDS[kind];
  return [
    ["Proxy of a typed array", () => new Proxy(K.from(values), {})],
    [
      "detached buffer",
      () => {
        const a = K.from(values);
        structuredClone(a.buffer, { transfer: [a.buffer] });
        return a;
      },
    ],
    ["plain object posing as one", () => ({ ...Array.from(values), length: values.length, [Symbol.toStringTag]: kind })],
  ];
}

// A typed array's own elements, read as the library must read them (never through what the
// array says of itself).
const TypedArray = Object.getPrototypeOf(Int8Array.prototype);
const getter = (name) => Object.getOwnPropertyDescriptor(TypedArray, name).get;
const elementsOf = (x) => Array.from(new Float32Array(getter("buffer").call(x), getter("byteOffset").call(x), getter("length").call(x)));

const heapOf = async () => ({ model: (await lens.modelMemory()).usedBytes, core: lens.memory().usedBytes });

/**
 * Runs `call(arg)` with every hostile form of `kind`/`values`: each form must give `expected`
 * (compared with `same`), each refused form a BAD_ARGUMENT whose message names `name`.
 */
async function acrossForms(name, kind, values, call, same = (a, b) => assert.deepEqual(a, b)) {
  const expected = await call(KINDS[kind].from(values));
  for (const [form, make] of hostileForms(kind, values)) {
    let got;
    try {
      got = await call(make());
    } catch (error) {
      assert.fail(`${name}, ${form}: threw ${error}`);
    }
    same(got, expected, `${name}, ${form}`);
  }
  for (const [form, make] of refusedForms(kind, values)) {
    await assert.rejects((async () => call(make()))(), (e) => {
      assert.equal(e.name, "AttnLensError", `${name}, ${form}: ${e}`);
      assert.equal(e.code, "BAD_ARGUMENT", `${name}, ${form}: ${e.message}`);
      assert.match(e.message, new RegExp(name.replace(/[[\]"]/g, "\\$&")), `${name}, ${form}`);
      return true;
    });
  }
}

const sameTensor = (a, b, where) => {
  assert.deepEqual(a.shape, b.shape, where);
  assert.equal(a.data.length, b.data.length, where);
  for (let i = 0; i < a.data.length; i++) {
    if (!Object.is(a.data[i], b.data[i])) assert.fail(`${where}: element ${i} is ${a.data[i]}, expected ${b.data[i]}`);
  }
};

test("hostile arrays: forward, gradients, trainStep, encode/decode read the array's own elements", async () => {
  const model = await makeModel(1);
  const ids = [464, 3797, 3332, 319, 262, 2603, 13, 5, 7];
  // Each kind of call once first: the kernels keep scratch buffers of up to 512 KiB warm between
  // calls (release_scratch in lib/src/core/kernels.cpp), which is memory held, not leaked. After
  // that, the hostile forms below must leave the module holding what it held.
  model.forward(ids, { attention: true });
  model.gradients(Int32Array.from(ids), Int32Array.from(ids));
  const warm = await makeModel(5);
  warm.trainStep({ data: Int32Array.from([...ids, 11]), shape: [1, 10] }, { lr: 1e-3 });
  warm.dispose();
  const before = await heapOf();
  await acrossForms(
    "ids",
    "Int32Array",
    ids,
    (x) => model.forward(x, { attention: true }),
    (a, b, w) => {
      sameTensor(a.logits, b.logits, `${w} logits`);
      sameTensor(a.attention, b.attention, `${w} attention`);
    },
  );
  await acrossForms("ids", "Uint16Array", ids, (x) => model.forward(x).logits, sameTensor);
  await acrossForms("ids.data", "Int32Array", [...ids, ...ids], (x) => model.forward({ data: x, shape: [2, 9] }).logits, sameTensor);
  await acrossForms(
    "targets",
    "Int32Array",
    ids.map((i) => (i * 7) % 4096),
    (y) => model.gradients(Int32Array.from(ids), y).loss,
  );
  await acrossForms("ids", "Int32Array", ids, (x) => model.decode(x));
  // trainStep changes the model: each form trains a fresh twin from the same seed.
  const batch = [...ids, 11];
  await acrossForms(
    "batch",
    "Int32Array",
    batch,
    async (x) => {
      const twin = await makeModel(5);
      try {
        return { loss: twin.trainStep({ data: x, shape: [1, 10] }, { lr: 1e-3 }), after: twin.forward(Int32Array.from(ids)).logits };
      } finally {
        twin.dispose();
      }
    },
    (a, b, w) => {
      assert.equal(a.loss, b.loss, w);
      sameTensor(a.after, b.after, w);
    },
  );
  model.dispose();
  // The twins and results are gone: the model module holds what it held (the model's own
  // memory was freed by dispose, so compare with a fresh one's).
  assert.ok((await heapOf()).model <= before.model, "the model module's heap grew over the hostile calls");
});

test("hostile arrays: loadModel's files are read as their own bytes", async () => {
  const source = await makeModel(9);
  const files = source.save();
  const ids = Int32Array.from([1, 2, 3, 4, 5]);
  const logitsOf = async (overrides) => {
    const model = await lens.loadModel({ files: { ...files, ...overrides } });
    try {
      return model.forward(ids).logits;
    } finally {
      model.dispose();
    }
  };
  const bytes = (text) => new TextEncoder().encode(text);
  await acrossForms(
    'files["model.safetensors"]',
    "Uint8Array",
    files["model.safetensors"],
    (x) => logitsOf({ "model.safetensors": x }),
    sameTensor,
  );
  await acrossForms('files["config.json"]', "Uint8Array", bytes(files["config.json"]), (x) => logitsOf({ "config.json": x }), sameTensor);
  await acrossForms('files["vocab.json"]', "Uint8Array", bytes(files["vocab.json"]), (x) => logitsOf({ "vocab.json": x }), sameTensor);
  source.dispose();
});

test("hostile arrays: attention(), selfAttention() and explain() read the array's own elements", async () => {
  const rand = randomGenerator(3);
  const values = (n) => Array.from({ length: n }, () => rand() * 2 - 1);
  const q = values(24);
  const k = values(24);
  const v = values(24);
  // explain() keeps a bounded table of token embeddings per dim and seed, and the first calls of
  // attention() and selfAttention() their staging areas: made once, before measuring.
  lens.explain("The cat sat on the mat", { numHeads: 2, modelDim: 8 });
  const warm = { data: new Float32Array(12), shape: [3, 4] };
  lens.attention(warm, warm, warm);
  lens.selfAttention({ modelDim: 4, numHeads: 2 }).forward(warm);
  const before = lens.memory().usedBytes;
  const run = (qd, kd = Float32Array.from(k), mask) =>
    lens.attention(
      { data: qd, shape: [2, 3, 4] },
      { data: kd, shape: [2, 3, 4] },
      { data: Float32Array.from(v), shape: [2, 3, 4] },
      { mask, returnWeights: true },
    );
  run(Float32Array.from(q)); // the staging area grows to this call's size once
  const afterWarmUp = lens.memory().usedBytes;
  assert.ok(afterWarmUp - before < 4096);
  const same = (a, b, w) => {
    sameTensor(a.output, b.output, `${w} output`);
    sameTensor(a.weights, b.weights, `${w} weights`);
  };
  await acrossForms("q.data", "Float32Array", q, (x) => run(x), same);
  await acrossForms("q.data", "Float64Array", q, (x) => run(x), same);
  await acrossForms("k.data", "Float32Array", k, (x) => run(Float32Array.from(q), x), same);
  await acrossForms(
    "mask.data",
    "Uint8Array",
    [1, 0, 1, 1, 1, 0, 0, 1, 1],
    (x) => run(Float32Array.from(q), undefined, { data: x, shape: [3, 3] }),
    same,
  );
  // into: the numbers go into the caller's array, through its own memory.
  await acrossForms("into.output", "Float32Array", new Array(24).fill(0), (x) => {
    const r = lens.attention(
      { data: Float32Array.from(q), shape: [2, 3, 4] },
      { data: Float32Array.from(k), shape: [2, 3, 4] },
      { data: Float32Array.from(v), shape: [2, 3, 4] },
      { into: { output: x } },
    );
    assert.equal(r.output.data, x, "the result's output is the array given");
    return elementsOf(x);
  });
  const wq = values(16);
  const others = { wk: values(16), wv: values(16), wo: values(16) };
  const x = { data: Float32Array.from(q.slice(0, 12)), shape: [3, 4] };
  await acrossForms(
    "weights.wq.data",
    "Float32Array",
    wq,
    (d) => {
      const w = (name) => ({ data: Float32Array.from(others[name]), shape: [4, 4] });
      const layer = lens.selfAttention({
        modelDim: 4,
        numHeads: 2,
        weights: { wq: { data: d, shape: [4, 4] }, wk: w("wk"), wv: w("wv"), wo: w("wo") },
      });
      return layer.forward(x).output;
    },
    sameTensor,
  );
  await acrossForms(
    "sentence",
    "Uint8Array",
    new TextEncoder().encode("The cat sat on the mat"),
    (x) => lens.explain(x, { numHeads: 2, modelDim: 8 }).weights,
    sameTensor,
  );
  assert.equal(lens.memory().usedBytes, afterWarmUp, "the attention module's heap holds what it held");
});

test("hostile arrays: explain's into reuses only plain arrays; a lying one gets a fresh array", () => {
  const first = lens.explain("The cat sat on the mat", { numHeads: 2, modelDim: 8, trace: true });
  const expected = lens.explain("A dog ran in the park", { numHeads: 2, modelDim: 8, trace: true });
  // Its own length is the right one, so only isPlainFloat32 keeps the bindings off its set().
  const lying = new Float32Array(first.weights.data.length);
  lying.set = () => {
    throw new Error("the bindings must not call the caller's set()");
  };
  first.weights.data = lying;
  const again = lens.explain("A dog ran in the park", { numHeads: 2, modelDim: 8, trace: true, into: first });
  assert.notEqual(again.weights.data, lying);
  sameTensor(again.weights, expected.weights, "weights");
  sameTensor(again.output, expected.output, "output");
  assert.equal(again.output.data, first.output.data, "the plain arrays are still reused");
});

test("ids with their own iterator never read past the ids (forward, gradients, trainStep, decode)", async () => {
  const model = await makeModel(2);
  const secret = model.encode("my password is hunter2, never show it");
  assert.ok(secret.length > 4);
  const ids = new Int32Array(16);
  ids[Symbol.iterator] = function* () {
    yield 5;
  };
  const r = model.forward(ids);
  assert.deepEqual(r.logits.shape, [16, VOCAB], "all 16 ids, not the iterator's one and 15 from the heap");
  const zeros = model.forward(new Int32Array(16)).logits;
  sameTensor(r.logits, zeros, "the ids are the array's own zeros");
  model.dispose();
});

test("a Uint8Array subclass whose subarray() lies cannot write past the staging buffer", async () => {
  const source = await makeModel(3);
  const files = source.save();
  class Evil extends Uint8Array {
    subarray() {
      return new Uint8Array(4 << 20).fill(0x41);
    }
  }
  const evil = new Evil(files["model.safetensors"].length);
  Uint8Array.prototype.set.call(evil, files["model.safetensors"]);
  const loaded = await lens.loadModel({ files: { ...files, "model.safetensors": evil } });
  const ids = Int32Array.from([3, 1, 4, 1, 5]);
  sameTensor(loaded.forward(ids).logits, source.forward(ids).logits, "the evil file's own bytes were loaded");
  // The module is alive: the earlier model and new loads still work.
  const again = await lens.loadModel({ files });
  sameTensor(again.forward(ids).logits, source.forward(ids).logits, "a later load");
  for (const m of [source, loaded, again]) m.dispose();
});

test("two loads in flight each get their own model (two 22 MB files, 20 rounds)", async () => {
  // 1 layer, d 512, vocab 8192: 7.4 M parameters, 22.5 MB of F32, two 16 MiB chunks each, so
  // the loads interleave at the awaits between chunks.
  const big = { layers: 1, heads: 8, dModel: 512, context: 32, vocabSize: 8192 };
  const sources = [await lens.createModel({ config: big, seed: 1 }), await lens.createModel({ config: big, seed: 2 })];
  const files = sources.map((m) => m.save());
  assert.ok(files.every((f) => f["model.safetensors"].length > 22e6));
  const ids = Int32Array.from([7, 8191, 0, 4096, 12]);
  const expected = sources.map((m) => m.forward(ids).logits);
  sources.forEach((m) => m.dispose());
  const baseline = (await lens.modelMemory()).usedBytes;
  for (let round = 0; round < 20; round++) {
    const models = await Promise.all(files.map((f) => lens.loadModel({ files: f })));
    models.forEach((m, i) => {
      sameTensor(m.forward(ids).logits, expected[i], `round ${round}, load ${i}`);
      m.dispose();
    });
  }
  // A load that fails midway frees its own staging buffer and leaves the other load whole.
  const failing = lens.loadModel({
    files: files[0],
    onProgress: ({ phase }) => {
      if (phase === "copy") throw new Error("stop");
    },
  });
  const fine = lens.loadModel({ files: files[1] });
  await assert.rejects(failing, /stop/);
  const model = await fine;
  sameTensor(model.forward(ids).logits, expected[1], "the load beside a failed one");
  model.dispose();
  assert.equal((await lens.modelMemory()).usedBytes, baseline, "every staging buffer and model was freed");
});

test("the .npy header is read in linear time; a long header is refused", { timeout: 10000 }, () => {
  const npy = (header) => {
    const text = new TextEncoder().encode(header);
    const out = new Uint8Array(12 + text.length);
    out.set([0x93, ...new TextEncoder().encode("NUMPY"), 2, 0]);
    new DataView(out.buffer).setUint32(8, text.length, true);
    out.set(text, 12);
    return out;
  };
  const start = "{'descr': '<f4', 'fortran_order': False, ";
  // The finding: 281 KiB of "'shape':(" took 14.6 s before; numpy refuses headers over 10 000
  // bytes, and so does attnlens now.
  assert.throws(
    () => parseAttentionFile(npy(start + "'shape':(".repeat(32000)), { name: "a.npy" }),
    /a\.npy: the \.npy header says 288041 bytes; .*at most 10000/,
  );
  // Within the limit the same pattern is a plain error, found in one pass.
  assert.throws(
    () => parseAttentionFile(npy(start + "'shape':(".repeat(1100)), { name: "b.npy" }),
    /b\.npy: the \.npy header is not a dict/,
  );
  // Real headers still read, with spacing and a trailing comma as numpy writes them.
  const good = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }" + " ".repeat(10) + "\n");
  const file = new Uint8Array(good.length + 4);
  file.set(good);
  new DataView(file.buffer).setFloat32(good.length, 1, true);
  assert.deepEqual(parseAttentionFile(file, { name: "c.npy" }).weights.shape, [1, 1, 1, 1]);
});

test("tokens() holds a bounded amount of JS memory per byte of text; analyze() makes only the objects it shows", async () => {
  // An 8.3 MB text in a Node whose JS heap may hold 400 MB: at most ~48 bytes per byte of text
  // at the peak. The token list itself takes about 110 bytes per token of ~4.2 bytes; the
  // finding measured 115 bytes per byte (the old code ran out of heap here even at 512 MB).
  const script = `
    import { loadAttnLens } from "attnlens";
    import { readFileSync } from "node:fs";
    const lens = await loadAttnLens();
    // Read here: the files are larger than one command-line argument may be (128 KiB).
    const dir = ${JSON.stringify(fileURLToPath(shipped))};
    const tok = await lens.loadTokenizer({ vocab: readFileSync(dir + "vocab.json", "utf8"), merges: readFileSync(dir + "merges.txt", "utf8") });
    const text = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. ".repeat(70000);
    const tokens = tok.tokens(text);
    console.log(tokens.length, tokens.at(-1).end === text.length);`;
  const { execFileSync } = await import("node:child_process");
  const out = execFileSync(process.execPath, ["--max-old-space-size=400", "--input-type=module", "-e", script], {
    cwd: new URL("../..", import.meta.url),
    encoding: "utf8",
  });
  assert.equal(out.trim(), "1890001 true"); // 27 tokens a sentence with the shipped vocabulary, and the trailing space
  const model = await makeModel(4);
  const text = "It is a truth universally acknowledged. ".repeat(1000);
  const r = model.analyze(text, { maxTokens: 8 });
  assert.equal(r.tokens.length, 8);
  assert.equal(r.totalTokens, model.encode(text).length);
  assert.deepEqual(
    r.tokens.map((t) => t.text),
    model
      .tokens(text)
      .slice(0, 8)
      .map((t) => t.text),
  );
  model.dispose();
});

test("a tiny file with a huge config fails before allocating the config's parameters", async () => {
  const source = await makeModel(6);
  const files = source.save();
  source.dispose();
  // 8 bytes of header length, 65 of header, 4 of data: 77 bytes.
  const tiny = new Uint8Array(77);
  const header = new TextEncoder().encode(
    JSON.stringify({ "wte.weight": { dtype: "F32", shape: [1, 1], data_offsets: [0, 4] } }).padEnd(65),
  );
  new DataView(tiny.buffer).setBigUint64(0, BigInt(header.length), true);
  tiny.set(header, 8);
  const config = JSON.stringify({ model_type: "gpt2", n_layer: 6, n_head: 32, n_embd: 4096, n_positions: 1024, vocab_size: 50257 });
  const heapBefore = (await lens.modelMemory()).heapBytes;
  await assert.rejects(lens.loadModel({ files: { "model.safetensors": tiny, "config.json": config } }), (e) => {
    assert.equal(e.code, "BAD_FILE", e.message);
    assert.match(e.message, /^model\.safetensors: tensor 'wte\.weight' has shape \[1, 1\] but the config .* needs \[50257, 4096\]/);
    return true;
  });
  const grown = (await lens.modelMemory()).heapBytes - heapBefore;
  assert.ok(grown < 64 << 20, `the heap grew by ${grown} bytes for a 77-byte file`);
  assert.ok(files["config.json"]);
});

test("onProgress throwing at 'done' frees the model it was about to return", async () => {
  const source = await makeModel(7);
  const files = source.save();
  source.dispose();
  const baseline = (await lens.modelMemory()).usedBytes;
  for (let i = 0; i < 5; i++) {
    await assert.rejects(
      lens.loadModel({
        files,
        onProgress: ({ phase }) => {
          if (phase === "done") throw new Error("progress failed");
        },
      }),
      /progress failed/,
    );
  }
  assert.equal((await lens.modelMemory()).usedBytes, baseline);
});

test("an update that would leave non-finite parameters is refused; overflowing weights are NON_FINITE", async () => {
  const model = await makeModel(8);
  const ids = Int32Array.from([1, 2, 3, 4, 5, 6]);
  const before = model.forward(ids).logits;
  const steps = model.optimizer.steps;
  assertAttnLensError(
    () => model.trainStep([[1, 2, 3, 4, 5, 6, 7]], { lr: 3e38 }),
    "NON_FINITE",
    /would make parameter \d+ non-finite.*nothing was changed/,
  );
  sameTensor(model.forward(ids).logits, before, "the model after the refused step");
  assert.equal(model.optimizer.steps, steps);
  assert.ok(model.save()["model.safetensors"].length > 0, "save() still works");
  // Finite weights that overflow float32 in the forward pass: an error naming the stage.
  const files = model.save();
  const huge = files["model.safetensors"].slice();
  const headerLength = Number(new DataView(huge.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(huge.subarray(8, 8 + headerLength)));
  // A LayerNorm gain of 1e30: finite, but the scores q·k overflow float32.
  const [from, to] = header["h.0.ln_1.weight"].data_offsets;
  new Float32Array(huge.buffer, 8 + headerLength + from, (to - from) / 4).fill(1e30);
  const loaded = await lens.loadModel({ files: { ...files, "model.safetensors": huge } });
  assertAttnLensError(() => loaded.forward(ids), "NON_FINITE", /overflowed float32 in block 0 \(h\.0(\.ln_2)?\)/);
  assertAttnLensError(() => loaded.predict("The cat", { k: 3 }), "NON_FINITE", /overflowed float32/);
  loaded.dispose();
  model.dispose();
});

test("a model over the address space is TOO_LARGE, not INTERNAL", async () => {
  for (const vocabSize of [1_200_000, 2_000_000]) {
    // 1000 x (vocab + context) embedding parameters: 1.2e9 and 2.0e9, under 2^31.
    await assert.rejects(lens.createModel({ config: { layers: 1, heads: 8, dModel: 1000, context: 8, vocabSize } }), (e) => {
      assert.equal(e.name, "AttnLensError");
      assert.ok(["TOO_LARGE", "OUT_OF_MEMORY"].includes(e.code), `${e.code}: ${e.message}`);
      return true;
    });
  }
});

test("k has an upper bound; top-k keeps the k likeliest, ties to the smaller id", async () => {
  const model = await makeModel(10);
  assertAttnLensError(() => model.predict("The cat", { k: 257 }), "BAD_ARGUMENT", /k must be an integer from 1 to 256; got number 257/);
  assertAttnLensError(() => model.analyze("The cat", { k: 1e9 }), "BAD_ARGUMENT", /k must be an integer from 1 to 256/);
  const ids = model.encode("The cat");
  const logits = model.forward(ids).logits;
  const top = model.predict("The cat", { k: 256 });
  const V = VOCAB;
  for (let t = 0; t < ids.length; t++) {
    const row = Array.from(logits.data.subarray(t * V, (t + 1) * V), (x, id) => ({ x, id }));
    row.sort((a, b) => b.x - a.x || a.id - b.id);
    assert.deepEqual(
      top[t].map((p) => p.id),
      row.slice(0, 256).map((p) => p.id),
      `position ${t}`,
    );
  }
  model.dispose();
});

test("a lone surrogate in a config, vocab or merges string is INVALID_UTF8, naming the file", async () => {
  const source = await makeModel(11);
  const files = source.save();
  source.dispose();
  await assert.rejects(
    lens.loadModel({ files: { ...files, "config.json": files["config.json"].replace('"gpt2"', '"gpt2\udc00x"') } }),
    (e) => {
      assert.equal(e.code, "INVALID_UTF8");
      assert.match(e.message, /^files\["config\.json"\] holds a lone UTF-16 surrogate at index \d+/);
      return true;
    },
  );
  await assert.rejects(
    lens.loadModel({ files: { ...files, "merges.txt": files["merges.txt"] + "\ud800" } }),
    /files\["merges\.txt"\] holds a lone UTF-16 surrogate/,
  );
  await assert.rejects(
    lens.loadTokenizer({ vocab: tokenizerFiles.vocab, merges: "\udfff" + tokenizerFiles.merges }),
    /merges holds a lone UTF-16 surrogate at index 0/,
  );
});

test("an own length on a plain array is not what the bindings read", async () => {
  const source = await makeModel(12);
  const files = source.save();
  const config = new TextEncoder().encode(files["config.json"]);
  Object.defineProperty(config, "length", { value: 1 << 30 });
  const before = (await lens.modelMemory()).usedBytes;
  const loaded = await lens.loadModel({ files: { ...files, "config.json": config } });
  const ids = Int32Array.from([9, 8, 7]);
  sameTensor(loaded.forward(ids).logits, source.forward(ids).logits, "loaded through an own length");
  loaded.dispose();
  source.dispose();
  assert.ok((await lens.modelMemory()).usedBytes <= before);
  // The attention module too: an own length on q's plain Float32Array.
  const q = new Float32Array(8).fill(0.5);
  Object.defineProperty(q, "length", { value: 2 });
  const r = lens.attention(
    { data: q, shape: [2, 4] },
    { data: new Float32Array(8), shape: [2, 4] },
    { data: new Float32Array(8).fill(1), shape: [2, 4] },
  );
  assert.deepEqual(Array.from(r.output.data), new Array(8).fill(1));
});

test("a JSON attention file of whole numbers gets no rounding tolerance", () => {
  const json = (rows) => new TextEncoder().encode(JSON.stringify({ tokens: ["a", "b", "c"], attention: rows }));
  const doubled = parseAttentionFile(
    json([
      [1, 1, 0],
      [1, 1, 0],
      [0, 1, 1],
    ]),
    { name: "hard.json" },
  );
  assert.match(doubled.warnings.join("\n"), /hard\.json: rows should sum to 1; the row of query 1 .* sums to 2\.00000/);
  const onehot = parseAttentionFile(
    json([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ]),
    { name: "onehot.json" },
  );
  assert.deepEqual(onehot.warnings, []);
});
