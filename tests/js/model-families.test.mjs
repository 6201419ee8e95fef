// Every family through the package: the tiny checkpoints of tests/fixtures/models/ (BERT,
// DistilBERT and GPT-2, written by make_torch.py) loaded as a page loads a folder. The numbers
// themselves are compared with PyTorch's in tests/cpp/test_torch_models.cpp; here: what the
// model says of itself (family, causal, prediction kind), full attention, sentence pairs, mask
// filling, and every bad folder a named error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { assertClose } from "./helpers.mjs";

const lens = await loadAttnLens();
const folder = (name) => new URL(`../fixtures/models/${name}/`, import.meta.url);
function files(name, ...texts) {
  const out = { "model.safetensors": new Uint8Array(readFileSync(new URL("model.safetensors", folder(name)))) };
  for (const t of ["config.json", ...texts]) out[t] = readFileSync(new URL(t, folder(name)), "utf8");
  return out;
}

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.name, "AttnLensError", String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

test("a BERT folder: full attention, token types and sentence pairs, [MASK] filling", async () => {
  const model = await lens.loadModel({ files: files("bert-tiny", "vocab.txt") });
  assert.deepEqual(
    { family: model.config.family, causal: model.config.causal, prediction: model.config.prediction, hasHead: model.config.hasHead },
    { family: "bert", causal: false, prediction: "masked-token", hasHead: true },
  );
  assert.equal(model.config.typeVocabSize, 2);
  assert.equal(model.tokenizer.kind, "WordPiece");
  assert.match(model.tokenizer.note, /lower-cased/);
  const tokens = model.tokens("The man said: Emma!");
  assert.deepEqual(
    tokens.map((t) => t.text),
    ["[CLS]", "The", "man", "said", ":", "Emma", "!", "[SEP]"],
  );
  // ":" is not in the vocabulary: the reader's character, read as [UNK].
  assert.equal(tokens[4].id, model.tokenizer.unkId);
  assert.equal(
    model.tokenizer.unkId,
    readFileSync(new URL("vocab.txt", folder("bert-tiny")), "utf8")
      .split("\n")
      .indexOf("[UNK]"),
  );
  // An unknown token under another name (tokenizer_config.json's unk_token) is the one in use.
  const renamed = files("bert-tiny", "vocab.txt");
  renamed["vocab.txt"] = renamed["vocab.txt"].replace("[UNK]\n", "<unk>\n");
  renamed["tokenizer_config.json"] = JSON.stringify({ unk_token: "<unk>" });
  const other = await lens.loadModel({ files: renamed });
  assert.equal(other.tokenizer.unkId, renamed["vocab.txt"].split("\n").indexOf("<unk>"));
  assert.equal(other.tokens("The man said: Emma!")[4].id, other.tokenizer.unkId);
  other.dispose();
  assert.deepEqual(
    tokens.map((t) => t.special),
    [true, false, false, false, false, false, false, true],
  );
  assert.deepEqual(tokens[2], {
    id: tokens[2].id,
    text: "man",
    begin: 4,
    end: 7,
    byteBegin: 4,
    byteEnd: 7,
    type: 0,
    segment: 0,
    special: false,
  });
  // A pair: [CLS] A [SEP] B [SEP], types 0 then 1, offsets into each text.
  const pair = model.tokens(["the man", "a woman"]);
  assert.deepEqual(
    pair.map((t) => [t.text, t.type, t.segment]),
    [
      ["[CLS]", 0, 0],
      ["the", 0, 0],
      ["man", 0, 0],
      ["[SEP]", 0, 0],
      ["a", 1, 1],
      ["woman", 1, 1],
      ["[SEP]", 1, 1],
    ],
  );
  assert.deepEqual([pair[5].begin, pair[5].end], [2, 7]);
  // Full attention: every row sums to 1 and attends to later tokens too.
  const ids = model.encode("the man said good day");
  const r = model.forward(ids, { attention: true });
  const [layers, heads, L] = r.attention.shape;
  assert.deepEqual(r.attention.shape, [2, 2, L, L]);
  let above = 0;
  for (let row = 0; row < layers * heads * L; row++) {
    let sum = 0;
    for (let j = 0; j < L; j++) {
      const w = r.attention.data[row * L + j];
      sum += w;
      if (j > row % L && w > 0) above++;
    }
    assert.ok(Math.abs(sum - 1) <= 1e-6, `row ${row} sums to ${sum}`);
  }
  assert.ok(above > 0, "full attention reaches later tokens");
  // Mask filling: the predictions at each [MASK], computed there only.
  const filled = model.fillMask("the [MASK] said good day", { k: 3 });
  assert.equal(filled.length, 1);
  assert.equal(filled[0].token.text, "[MASK]");
  assert.equal(filled[0].predictions.length, 3);
  const logits = model.forward(model.encode("the [MASK] said good day")).logits;
  const V = logits.shape[1];
  const row = logits.data.subarray(filled[0].position * V, (filled[0].position + 1) * V);
  const best = [...row.keys()].sort((a, b) => row[b] - row[a] || a - b).slice(0, 3);
  assert.deepEqual(
    filled[0].predictions.map((p) => p.id),
    best,
  );
  // analyze(): predictions at [MASK] positions only.
  const a = model.analyze("the [MASK] said [MASK] day", { k: 2, attention: true });
  assert.deepEqual(
    a.predictions.map((p) => (p === null ? null : p.length)),
    [null, null, 2, null, 2, null, null],
  );
  assert.equal(a.attention.shape[0], 2);
  model.dispose();
});

test("an encoder's text longer than maxTokens keeps [CLS] and [SEP] and cuts the longer sentence first", async () => {
  const model = await lens.loadModel({ files: files("bert-tiny", "vocab.txt") });
  const texts = (r) => r.tokens.map((t) => t.text);
  // 1 + 9 + 1 tokens; 6 fit: [CLS], the first four words, [SEP].
  const one = model.analyze("the man said that the man said good day", { maxTokens: 6, attention: true });
  assert.deepEqual(texts(one), ["[CLS]", "the", "man", "said", "that", "[SEP]"]);
  assert.equal(one.totalTokens, 11);
  assert.deepEqual(one.attention.shape, [2, 2, 6, 6]);
  // The same six tokens encoded whole give the same attention: the cut sequence is what ran.
  const whole = model.analyze("the man said that", { attention: true });
  // (The same ids at the same positions: the same arithmetic, so equal to the bit.)
  assertClose(one.attention.data, whole.attention.data, 0, "the cut text's attention vs the short text's");
  // A pair [CLS] A(6) [SEP] B(2) [SEP] in 8: the 3 to drop all come from A, the longer.
  const pair = model.analyze(["the man said that the day", "good day"], { maxTokens: 8 });
  assert.deepEqual(texts(pair), ["[CLS]", "the", "man", "said", "[SEP]", "good", "day", "[SEP]"]);
  assert.deepEqual(
    pair.tokens.map((t) => t.type),
    [0, 0, 0, 0, 0, 1, 1, 1],
  );
  // Sentences of equal length share the cut; the first loses the odd one (3 + 3 in 3: 1 + 2), as
  // Hugging Face's fast tokenizers truncate "longest_first".
  const even = model.analyze(["the man said", "good day now"], { maxTokens: 6 });
  assert.deepEqual(texts(even), ["[CLS]", "the", "[SEP]", "good", "day", "[SEP]"]);
  // No room beside the specials: refused, naming them (the first maxTokens tokens would drop a
  // [SEP], and a pair's second sentence with it).
  assert.throws(
    () => model.analyze(["a b c", "d e f"], { maxTokens: 3 }),
    (e) =>
      e.code === "BAD_ARGUMENT" &&
      /maxTokens is 3, but the special tokens alone \(\[CLS\], \[SEP\], \[SEP\]\) take 3: .* at least 4/.test(e.message),
  );
  assert.throws(
    () => model.analyze("the man", { maxTokens: 1 }),
    (e) => e.code === "BAD_ARGUMENT" && /take 2/.test(e.message),
  );
  // A text that fits is not refused whatever maxTokens leaves.
  assert.deepEqual(texts(model.analyze("", { maxTokens: 2 })), ["[CLS]", "[SEP]"]);
  const four = model.analyze(["a b c", "d e f"], { maxTokens: 4 });
  assert.deepEqual(four.tokens.filter((t) => t.special).length, 3);
  // fillMask cuts a long text as analyze does: the mask inside the context is filled, [SEP] kept.
  const long = `the [MASK] said ${"good day ".repeat(40)}`;
  const fills = model.fillMask(long);
  assert.equal(fills.length, 1);
  assert.equal(fills[0].position, 2);
  const cut = model.analyze(long);
  assert.equal(cut.tokens.length, model.config.context);
  assert.equal(cut.tokens.at(-1).text, "[SEP]");
  assert.deepEqual(fills[0].predictions, cut.predictions[2]);
  model.dispose();
});

test("the same BERT forward with and without padding gives the same real rows", async () => {
  const model = await lens.loadModel({ files: files("bert-tiny", "vocab.txt") });
  const ids = model.encode("the man said");
  const one = model.forward(ids, { residuals: true });
  const padded = Int32Array.from([...ids, 0, 0, 0]);
  const mask = Int32Array.from([...ids].map(() => 1).concat([0, 0, 0]));
  const two = model.forward(padded, { residuals: true, attentionMask: mask });
  const L = ids.length;
  const V = one.logits.shape[1];
  // Padded keys get weight 0, so the real rows are the same sums of the same terms (the
  // kernels visit the keys in the same blocks): within float32 rounding of 1e-6.
  assertClose(two.logits.data.subarray(0, L * V), one.logits.data, 1e-5, "the real rows' logits", [L, V]);
  model.dispose();
});

test("DistilBERT and GPT-2 folders say what they are", async () => {
  const distil = await lens.loadModel({ files: files("distilbert-tiny", "vocab.txt") });
  assert.equal(distil.config.family, "distilbert");
  assert.equal(distil.config.causal, false);
  assert.equal(distil.config.typeVocabSize, 0);
  assert.throws(
    () => distil.forward(distil.encode("the man"), { tokenTypes: [0, 1, 1, 1] }),
    /token_types\[0, 1\] is 1; this model has no token types/,
  );
  distil.dispose();
  const gpt2 = await lens.loadModel({ files: files("gpt2-tiny") });
  assert.deepEqual([gpt2.config.family, gpt2.config.causal, gpt2.config.prediction], ["gpt2", true, "next-token"]);
  assert.throws(() => gpt2.fillMask("x"), /fillMask\(\) needs a masked-token model/);
  gpt2.dispose();
  const bare = await lens.loadModel({ files: files("bert-tiny-old", "vocab.txt") });
  assert.equal(bare.config.hasHead, false);
  assert.throws(() => bare.fillMask("the [MASK]"), /needs the model's prediction head/);
  assert.throws(
    () => bare.forward(bare.encode("the man"), { logits: true }),
    (e) => e.code === "BAD_ARGUMENT" && /forward\(ids, \{ logits: true \}\) needs the model's prediction head/.test(e.message),
  );
  assert.equal(bare.forward(bare.encode("the man")).logits, null);
  const a = bare.analyze("the [MASK] man", { attention: true });
  assert.deepEqual(a.predictions, [null, null, null, null, null]);
  bare.dispose();
});

test("bad encoder folders are named errors: the file, the key, the length", async () => {
  const good = files("bert-tiny", "vocab.txt");
  const config = JSON.parse(good["config.json"]);
  const withConfig = (change) => ({ ...good, "config.json": JSON.stringify({ ...config, ...change }) });
  await rejects(
    lens.loadModel({ files: withConfig({ model_type: "albert" }) }),
    "BAD_FILE",
    /config\.json: model_type "albert" is not a family attnlens loads/,
  );
  await rejects(
    lens.loadModel({ files: withConfig({ position_embedding_type: "relative_key_query" }) }),
    "BAD_FILE",
    /config\.json: position_embedding_type is "relative_key_query"/,
  );
  // A GPT-2 folder's files under a BERT config, and a BERT folder with GPT-2's tokenizer files.
  const gpt2 = files("gpt2-tiny");
  await rejects(
    lens.loadModel({ files: { ...gpt2, "config.json": good["config.json"] } }),
    "BAD_FILE",
    /model\.safetensors: this looks like a GPT-2 checkpoint/,
  );
  // merges.txt belongs to a byte-level BPE, which needs its vocab.json too.
  const { "vocab.txt": _, ...noVocab } = good;
  await rejects(
    lens.loadModel({ files: { ...noVocab, "merges.txt": "#version: 0.2\n" } }),
    "BAD_FILE",
    /vocab\.json: missing; the tokenizer needs vocab\.json and merges\.txt/,
  );
  // vocab.txt without [UNK], with a duplicate; a truncated safetensors file.
  await rejects(
    lens.loadModel({ files: { ...good, "vocab.txt": good["vocab.txt"].replace("[UNK]\n", "") } }),
    "BAD_FILE",
    /vocab\.txt: .*\[UNK\]/,
  );
  await rejects(lens.loadModel({ files: { ...good, "vocab.txt": good["vocab.txt"] + "the\n" } }), "BAD_FILE", /vocab\.txt: .*"the".*line/);
  await rejects(
    lens.loadModel({ files: { ...good, "model.safetensors": good["model.safetensors"].subarray(0, 9000) } }),
    "BAD_FILE",
    /model\.safetensors/,
  );
  // A 16 MB config.json is refused before it is parsed: the heap, which never shrinks, grows by
  // little more than the text's copy (parsing it took the heap to 1.4 GB).
  const heapBefore = (await lens.modelMemory()).heapBytes;
  const huge = good["config.json"].replace(/}\s*$/, `${" ".repeat(16 << 20)}}`);
  await rejects(
    lens.loadModel({ files: { ...good, "config.json": huge } }),
    "BAD_FILE",
    /^config\.json: 16\d{6} bytes, over the limit of 1048576/,
  );
  const grown = (await lens.modelMemory()).heapBytes - heapBefore;
  assert.ok(grown <= 64 << 20, `the heap grew by ${grown} bytes`);
  // A non-finite weight (a NaN with its sign bit set) is named once with its file, for each
  // family that reads model.safetensors itself.
  for (const name of ["bert-tiny", "distilbert-tiny"]) {
    const folder = files(name, "vocab.txt");
    const weights = folder["model.safetensors"].slice();
    // The last value's high bytes (F32 or BF16, little-endian): sign set, exponent all ones.
    weights.set([0xc1, 0xff], weights.length - 2);
    await rejects(
      lens.loadModel({ files: { ...folder, "model.safetensors": weights } }),
      "BAD_FILE",
      /^model\.safetensors: tensor "[^"]+" \((F32|BF16) \[80\]\) holds nan at flat index 79; attnlens loads finite values only$/,
    );
  }
  const model = await lens.loadModel({ files: good });
  const long = "the ".repeat(40);
  assert.throws(
    () => model.forward(model.encode(long)),
    (e) => e.code === "TOO_LARGE" && /42 tokens per sequence, more than the model's context of 24/.test(e.message),
  );
  assert.throws(
    () => model.forward(model.encode("the man"), { attentionMask: [1, 1] }),
    (e) => e.code === "SHAPE_MISMATCH" && /attentionMask has 2 entries but the ids have 4/.test(e.message),
  );
  model.dispose();
});

test("masked-LM training steps through the package: the loss falls, nothing leaks", async () => {
  const model = await lens.loadModel({ files: files("bert-tiny", "vocab.txt") });
  const ids = model.encode("the man said good day");
  const labels = Int32Array.from(ids, (id, i) => (i === 2 || i === 4 ? id : -1));
  const masked = Int32Array.from(ids, (id, i) => (labels[i] >= 0 ? model.tokenizer.maskId : id));
  const losses = [];
  for (let step = 0; step < 25; step++) losses.push(model.trainStep({ ids: masked, labels }, { lr: 1e-2 }));
  assert.ok(losses.at(-1) < 0.5 * losses[0], `losses ${losses[0]} -> ${losses.at(-1)}`);
  const { loss, grads } = model.gradients(masked, labels);
  assert.ok(Number.isFinite(loss));
  assert.ok("bert.encoder.layer.1.attention.self.query.weight" in grads);
  const saved = model.save();
  assert.deepEqual(Object.keys(saved).sort(), ["config.json", "model.safetensors", "tokenizer_config.json", "vocab.txt"]);
  const again = await lens.loadModel({ files: saved });
  assertClose(again.forward(masked).logits.data, model.forward(masked).logits.data, 0, "saved and loaded again (F32)", null);
  again.dispose();
  model.dispose();
});

test("save() writes the tokenizer's files as loaded: renamed specials, prefix, word limit and text cleaning read back the same", async () => {
  const good = files("bert-tiny", "vocab.txt");
  const lines = good["vocab.txt"].split("\n").filter((t) => t.length > 0);
  const rename = { "[UNK]": "<unk>", "[CLS]": "<s>", "[SEP]": "</s>", "[PAD]": "<pad>", "[MASK]": "<mask>" };
  const renamed = lines.map((t) => rename[t] ?? (t.startsWith("##") ? `@@${t.slice(2)}` : t));
  // A tokenizer.json whose every setting differs from BERT's defaults.
  const tokenizerJson = JSON.stringify({
    version: "1.0",
    added_tokens: Object.values(rename).map((content) => ({
      id: renamed.indexOf(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: "BertNormalizer", clean_text: false, handle_chinese_chars: true, strip_accents: null, lowercase: false },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: { type: "BertProcessing", sep: ["</s>", renamed.indexOf("</s>")], cls: ["<s>", renamed.indexOf("<s>")] },
    decoder: { type: "WordPiece", prefix: "@@", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "<unk>",
      continuing_subword_prefix: "@@",
      max_input_chars_per_word: 4,
      vocab: Object.fromEntries(renamed.map((t, i) => [t, i])),
    },
  });
  // vocab.txt with a renamed unknown token and a cased tokenizer_config.json.
  const config = JSON.stringify({ do_lower_case: false, unk_token: "<unk>", tokenizer_class: "BertTokenizer" });
  const texts = ["The man said: Emma!", "the manner\u0001 of the day", "good day <mask> said the man", "The MAN said"];
  for (const [what, tokenizerFiles] of [
    ["tokenizer.json", { "tokenizer.json": tokenizerJson }],
    [
      "vocab.txt + tokenizer_config.json",
      { "vocab.txt": good["vocab.txt"].replace("[UNK]\n", "<unk>\n"), "tokenizer_config.json": config },
    ],
  ]) {
    const { "vocab.txt": _, ...weights } = good;
    const model = await lens.loadModel({ files: { ...weights, ...tokenizerFiles } });
    const saved = model.save();
    for (const [name, text] of Object.entries(tokenizerFiles)) assert.equal(saved[name], text, `${what}: ${name} written as loaded`);
    const again = await lens.loadModel({ files: saved });
    for (const text of texts) assert.deepEqual(again.tokens(text), model.tokens(text), `${what}: ${JSON.stringify(text)}`);
    assert.equal(again.tokenizer.unkId, model.tokenizer.unkId);
    model.dispose();
    again.dispose();
  }
});
