// Bad checkpoint files of every kind are BAD_FILE errors that name the file (and the tensor or
// key), never a crash: truncated or inconsistent safetensors, other architectures' tensors and
// configs, bad tokenizer files. The good checkpoint is the native fixture
// (tests/cpp/dump_model_fixtures.cpp, written by scripts/test.sh).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose } from "./helpers.mjs";

const dir = process.env.ATTNLENS_MODEL_FIXTURES ?? new URL("../../build/native/model-fixtures/", import.meta.url).pathname;
const read = (name, encoding) => readFileSync(`${dir}/${name}`, encoding);
const good = {
  "model.safetensors": new Uint8Array(read("model.safetensors")),
  "config.json": read("config.json", "utf8"),
  "vocab.json": read("vocab.json", "utf8"),
  "merges.txt": read("merges.txt", "utf8"),
};
const lens = await loadAttnLens();

/** A safetensors file of F32 tensors { name: shape } filled with zeros (the format: an 8-byte
 * little-endian header length, the JSON header, the data). */
function safetensors(shapes) {
  const header = {};
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}

async function rejectsWith(files, code, ...patterns) {
  await assert.rejects(lens.loadModel({ files }), (e) => {
    assert.equal(e.name, "AttnLensError", String(e));
    assert.equal(e.code, code, e.message);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test("the good checkpoint loads (the cases below differ from it in one file)", async () => {
  const model = await lens.loadModel({ files: good });
  assert.equal(model.config.vocabSize, 300);
  model.dispose();
});

test("truncated or corrupt model.safetensors", async () => {
  const bytes = good["model.safetensors"];
  for (const cut of [0, 7, 8, 100, bytes.length - 1]) {
    await rejectsWith({ ...good, "model.safetensors": bytes.subarray(0, cut) }, "BAD_FILE", /^model\.safetensors/);
  }
  const huge = bytes.slice();
  new DataView(huge.buffer).setBigUint64(0, 1n << 40n, true);
  await rejectsWith({ ...good, "model.safetensors": huge }, "BAD_FILE", /^model\.safetensors/);
});

test("tensors of the wrong shape or missing, named", async () => {
  const config = JSON.parse(good["config.json"]);
  await rejectsWith(
    { ...good, "config.json": JSON.stringify({ ...config, n_embd: 32 }) },
    "BAD_FILE",
    /^model\.safetensors/,
    /wte\.weight|wpe\.weight|h\.0/,
  );
  await rejectsWith({ ...good, "config.json": JSON.stringify({ ...config, n_layer: 3 }) }, "BAD_FILE", /^model\.safetensors/, /h\.2\./);
  await rejectsWith(
    { ...good, "model.safetensors": safetensors({ "wte.weight": [300, 64] }) },
    "BAD_FILE",
    /^model\.safetensors/,
    /wpe\.weight|missing/,
  );
});

test("another architecture's checkpoint names what it found", async () => {
  const bert = safetensors({
    "bert.embeddings.word_embeddings.weight": [300, 64],
    "bert.encoder.layer.0.attention.self.query.weight": [64, 64],
  });
  await rejectsWith({ ...good, "model.safetensors": bert }, "BAD_FILE", /^model\.safetensors/, /BERT/);
  const llama = safetensors({ "model.embed_tokens.weight": [300, 64], "model.layers.0.self_attn.q_proj.weight": [64, 64] });
  await rejectsWith({ ...good, "model.safetensors": llama }, "BAD_FILE", /^model\.safetensors/, /LLaMA|Llama|llama/);
  const config = JSON.parse(good["config.json"]);
  // A BERT config over GPT-2 files: read as BERT, whose keys it lacks.
  await rejectsWith(
    { ...good, "config.json": JSON.stringify({ ...config, model_type: "bert" }) },
    "BAD_FILE",
    /^config\.json/,
    /"num_hidden_layers" is missing; a BERT config/,
  );
  await rejectsWith(
    { ...good, "config.json": JSON.stringify({ ...config, architectures: ["LlamaForCausalLM"] }) },
    "BAD_FILE",
    /^config\.json/,
    /LlamaForCausalLM/,
  );
});

test("bad config.json", async () => {
  const config = JSON.parse(good["config.json"]);
  await rejectsWith({ ...good, "config.json": "{not json" }, "BAD_FILE", /^config\.json/);
  await rejectsWith({ ...good, "config.json": "[]" }, "BAD_FILE", /^config\.json/);
  const { n_head: _, ...noHeads } = config;
  await rejectsWith({ ...good, "config.json": JSON.stringify(noHeads) }, "BAD_FILE", /^config\.json/, /n_head/);
  await rejectsWith({ ...good, "config.json": JSON.stringify({ ...config, n_head: 5 }) }, "BAD_FILE", /^config\.json/);
  await rejectsWith(
    { ...good, "config.json": JSON.stringify({ ...config, layer_norm_epsilon: 1e-6 }) },
    "BAD_FILE",
    /^config\.json/,
    /layer_norm_epsilon/,
  );
});

test("bad vocab.json or merges.txt, or a tokenizer larger than the model", async () => {
  await rejectsWith({ ...good, "vocab.json": "{" }, "BAD_FILE", /^vocab\.json/);
  await rejectsWith({ ...good, "merges.txt": "#version: 0.2\nzz qq\n" }, "BAD_FILE", /^merges\.txt/);
  const config = JSON.parse(good["config.json"]);
  const small = { ...config, vocab_size: 280 };
  await rejectsWith({ ...good, "config.json": JSON.stringify(small) }, "BAD_FILE", /^(vocab\.json|model\.safetensors)/);
});

test("missing files and wrong argument types", async () => {
  const { "config.json": _, ...noConfig } = good;
  await rejectsWith(noConfig, "BAD_FILE", /^config\.json: missing/);
  const { "merges.txt": __, ...noMerges } = good;
  await rejectsWith(noMerges, "BAD_FILE", /^merges\.txt: missing/);
  await rejectsWith({ ...good, "model.safetensors": "bytes?" }, "BAD_ARGUMENT", /files\["model\.safetensors"\] must be the file's bytes/);
  // What the model would be misread without: a sharded checkpoint, weights in another format, a
  // non-empty added_tokens.json (or one that cannot be read).
  const { "model.safetensors": weights, ...noWeights } = good;
  await rejectsWith(
    { ...noWeights, "model.safetensors.index.json": "{}", "model-00001-of-00002.safetensors": weights },
    "BAD_FILE",
    /^model\.safetensors\.index\.json: sharded checkpoints .* not loaded yet.*docs\/files\.md/,
  );
  await rejectsWith(
    { ...noWeights, "model-00002-of-00002.safetensors": weights },
    "BAD_FILE",
    /^model-00002-of-00002\.safetensors: sharded checkpoints/,
  );
  await rejectsWith(
    { ...noWeights, "pytorch_model.bin": new Uint8Array(1) },
    "BAD_FILE",
    /^model\.safetensors: missing; the folder's weights are in pytorch_model\.bin, a format attnlens does not read/,
  );
  await rejectsWith({ ...good, "added_tokens.json": '{"<extra>": 50257}' }, "BAD_FILE", /^added_tokens\.json: the folder adds tokens/);
  await rejectsWith({ ...good, "added_tokens.json": "{" }, "BAD_FILE", /^added_tokens\.json/);
  await assert.rejects(lens.loadModel({ files: good, onProgress: 1 }), (e) => e.code === "BAD_ARGUMENT" && /onProgress/.test(e.message));
  await assert.rejects(lens.loadModel(), (e) => e.code === "BAD_ARGUMENT" && /files/.test(e.message));
});

test("a folder as downloaded: the files no family reads are ignored, unread, and listed", async () => {
  // A hub folder's extras, attnlens' own, and another family's tokenizer (a hub GPT-2 folder
  // holds tokenizer.json beside vocab.json and merges.txt): never parsed, so even a broken one loads.
  const extras = ["README.md", ".gitattributes", "generation_config.json", "special_tokens_map.json", "eval.json", "MODEL.md"];
  const files = {
    ...good,
    "added_tokens.json": "{}",
    ...Object.fromEntries(extras.map((n) => [n, "# {"])),
    "tokenizer.json": "{ not JSON",
  };
  const model = await lens.loadModel({ files });
  assert.deepEqual([...model.ignored], ["added_tokens.json", ...extras, "tokenizer.json"]);
  assert.ok(Object.isFrozen(model.ignored));
  // The same model as without them.
  const plain = await lens.loadModel({ files: good });
  assert.deepEqual([...plain.ignored], []);
  assert.deepEqual([...model.encode("Hello there")], [...plain.encode("Hello there")]);
  model.dispose();
  plain.dispose();
});

test("onProgress reports the copy of model.safetensors and the end", async () => {
  const reports = [];
  const model = await lens.loadModel({ files: good, onProgress: (p) => reports.push(p) });
  const total = good["model.safetensors"].length;
  assert.deepEqual(reports.at(-1), { phase: "done", bytes: total, totalBytes: total });
  assert.ok(reports.some((p) => p.phase === "copy" && p.bytes === total));
  model.dispose();
});

test("failed loads leave the model module's heap where it was", async () => {
  const bad = { ...good, "config.json": JSON.stringify({ ...JSON.parse(good["config.json"]), n_layer: 3 }) };
  await lens.loadModel({ files: bad }).catch(() => {});
  const before = await lens.modelMemory();
  for (let i = 0; i < 20; i++) await lens.loadModel({ files: bad }).catch(() => {});
  assert.equal((await lens.modelMemory()).usedBytes, before.usedBytes);
});

// A File a reader picked is read chunk by chunk (16 MiB) straight into the heap: a checkpoint
// over one chunk (19 MB: 50 257 × 96 embeddings), given as bytes and as a Blob, is the same model.
test("model.safetensors as a Blob (a picked File) loads chunk by chunk into the same model", async () => {
  const made = await lens.createModel({ config: { layers: 1, heads: 2, dModel: 96, context: 32, vocabSize: 50257 }, seed: 3 });
  const saved = made.save();
  made.dispose();
  const bytes = saved["model.safetensors"];
  assert.ok(bytes.length > 16 << 20, `${bytes.length} bytes: the test needs more than one chunk`);
  const reports = [];
  const fromBlob = await lens.loadModel({
    files: { ...saved, "model.safetensors": new Blob([bytes]) },
    onProgress: (p) => reports.push(p),
  });
  const fromBytes = await lens.loadModel({ files: saved });
  const copies = reports.filter((p) => p.phase === "copy").map((p) => p.bytes);
  assert.deepEqual(copies, [16 << 20, bytes.length], "a report per chunk read, to the whole file");
  assert.deepEqual(reports.at(-1), { phase: "done", bytes: bytes.length, totalBytes: bytes.length });
  const ids = [5, 17, 50256, 0, 1234];
  const a = fromBlob.forward(ids).logits;
  const b = fromBytes.forward(ids).logits;
  assert.deepEqual(a.shape, b.shape);
  // Equal values (tolerance 0); NaN on either side or a size mismatch fails, naming where.
  assertClose(a.data, b.data, 0, "the logits of the model read from a Blob against the one read from bytes", a.shape);
  fromBlob.dispose();
  fromBytes.dispose();
  // A truncated file is the parser's error, as for bytes.
  await rejectsWith(
    { ...good, "model.safetensors": new Blob([good["model.safetensors"].subarray(0, 100)]) },
    "BAD_FILE",
    /^model\.safetensors/,
  );
});

test("a Blob that cannot be read, or changes while it is read, is a named BAD_FILE error, and frees its staging", async () => {
  const size = good["model.safetensors"].length;
  // Blob-like objects (loadModel knows a Blob by its methods, as a File from another window).
  const failing = { size, slice: () => ({ arrayBuffer: async () => Promise.reject(new Error("the file is gone")) }), arrayBuffer() {} };
  const shrunk = { size, slice: () => ({ arrayBuffer: async () => new ArrayBuffer(10) }), arrayBuffer() {} };
  await lens.loadModel({ files: { ...good, "model.safetensors": failing } }).catch(() => {});
  const before = await lens.modelMemory();
  await rejectsWith(
    { ...good, "model.safetensors": failing },
    "BAD_FILE",
    /files\["model\.safetensors"\]: bytes 0 to \d+ of the file could not be read \(the file is gone\)/,
  );
  await rejectsWith(
    { ...good, "model.safetensors": shrunk },
    "BAD_FILE",
    /the file changed while it was read \(10 bytes at 0 where \d+ were expected\)/,
  );
  assert.equal((await lens.modelMemory()).usedBytes, before.usedBytes);
  await rejectsWith(
    { ...good, "model.safetensors": 5 },
    "BAD_ARGUMENT",
    /must be the file's bytes \(a Uint8Array or an ArrayBuffer\) or a Blob/,
  );
});
