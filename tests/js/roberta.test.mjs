// A RoBERTa folder through the package, as the hub publishes one (RobertaForMaskedLM's tensors,
// config.json with pad_token_id 1 and two position rows more than tokens, vocab.json and
// merges.txt), written by scripts/bert-checkpoint.mjs. The forward's numbers are compared with a
// float64 reference of modeling_roberta.py in tests/cpp/test_bert.cpp; here the tokenizer is
// compared with Hugging Face's own (@huggingface/tokenizers) on the tokenizer.json roberta-base
// ships for the same vocabulary (a byte-level BPE, RobertaProcessing's <s> … </s>, and <mask>
// with lstrip), and the model with what a reader asks of it: full attention, fillMask, a save
// that reads back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { loadAttnLens } from "attnlens";
import { BERT_PRESETS, writeBertCheckpoint } from "../../scripts/bert-checkpoint.mjs";
import { byteLevelBpeModel } from "../../scripts/modernbert-checkpoint.mjs";
import { randomGenerator } from "./helpers.mjs";

const lens = await loadAttnLens();
const dir = mkdtempSync(join(tmpdir(), "attnlens-roberta-"));
writeBertCheckpoint(dir, BERT_PRESETS["roberta-tiny"], 3);
const read = (name) => readFileSync(join(dir, name), "utf8");
const folder = () => ({
  "model.safetensors": new Uint8Array(readFileSync(join(dir, "model.safetensors"))),
  "config.json": read("config.json"),
  "vocab.json": read("vocab.json"),
  "merges.txt": read("merges.txt"),
});
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** roberta-base's tokenizer.json, on this folder's vocab.json and merges.txt. */
function robertaTokenizerJson() {
  const vocab = JSON.parse(read("vocab.json"));
  const added = (content, id, lstrip = false) => ({
    id,
    content,
    single_word: false,
    lstrip,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [added("<s>", 0), added("<pad>", 1), added("</s>", 2), added("<unk>", 3), added("<mask>", vocab["<mask>"], true)],
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: "RobertaProcessing", sep: ["</s>", 2], cls: ["<s>", 0], trim_offsets: true, add_prefix_space: false },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: byteLevelBpeModel(vocab, read("merges.txt")),
  };
}

const WORDS = [
  "the",
  "cat",
  "sat",
  "on",
  "mat",
  "Hello",
  "world",
  "naïve",
  "café",
  "HTTP",
  "they're",
  "don't",
  "3.14",
  "1,000",
  "日本語",
  "😀",
  "👩‍💻",
  "e\u0301",
];
const GLUE = [" ", "  ", "\t", "\n", ", ", ". ", "!", "?", "", " <mask>", "<mask>", " <mask> ", "  <mask>", "\u00a0<mask>", " <s>", "</s>"];

test("RoBERTa's tokenizer: the ids Hugging Face's gives, on 300 texts with <mask>, <s> and </s> written in them", () => {
  const reference = new Tokenizer(robertaTokenizerJson(), { add_prefix_space: false });
  const rand = randomGenerator(45);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = ["", " ", "Hello world", "a <mask> in possession", "<mask>", " <mask>", "It is <mask>.  <mask>"];
  while (texts.length < 300) {
    let text = "";
    for (let n = 1 + Math.floor(rand() * 12); n > 0; n--) text += pick(WORDS) + pick(GLUE);
    texts.push(text);
  }
  return lens.loadModel({ files: folder() }).then((model) => {
    try {
      const problems = [];
      for (const text of texts) {
        const expected = [...reference.encode(text).ids];
        const got = [...model.encode(text)];
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          problems.push(
            `${JSON.stringify(text)}:\n    @huggingface/tokenizers ${JSON.stringify(expected)}\n    attnlens                ${JSON.stringify(got)}`,
          );
        }
      }
      assert.equal(problems.length, 0, `${problems.length} of ${texts.length} texts differ:\n  ${problems.slice(0, 6).join("\n  ")}`);
      // Pairs as RobertaProcessing writes them: <s> a </s></s> b </s>. Every token is of type 0,
      // as tokenizers' Rust RobertaProcessing and transformers' RobertaTokenizer give them (the JS
      // port gives the second text type 1, which RoBERTa's one-row type table could not embed).
      const pair = ["The cat sat.", "It was <mask>."];
      const expected = reference.encode(pair[0], { text_pair: pair[1] });
      assert.deepEqual([...model.encode(pair)], [...expected.ids]);
      assert.deepEqual(
        model.tokens(pair).map((t) => t.type),
        expected.ids.map(() => 0),
      );
    } finally {
      model.dispose();
    }
  });
});

test("a RoBERTa folder: what it says of itself, full attention, fillMask at <mask>, and a save that reads back", async () => {
  const model = await lens.loadModel({ files: folder() });
  try {
    assert.deepEqual(
      { family: model.config.family, causal: model.config.causal, prediction: model.config.prediction, hasHead: model.config.hasHead },
      { family: "roberta", causal: false, prediction: "masked-token", hasHead: true },
    );
    // 514 position rows, counted from pad_token_id + 1 = 2: 512 tokens.
    assert.equal(model.config.context, 512);
    assert.equal(model.config.typeVocabSize, 1);
    const vocab = JSON.parse(read("vocab.json"));
    assert.equal(model.tokenizer.maskId, vocab["<mask>"]);
    assert.equal(model.tokenizer.maskText, "<mask>");
    const tokens = model.tokens("The cat <mask> on the mat.");
    assert.deepEqual(
      tokens.map((t) => t.text),
      ["<s>", "The", " cat", " <mask>", " on", " the", " mat", ".", "</s>"],
    );
    // Full attention: every row has weight on keys after it.
    const ids = model.encode("The cat sat on the mat.");
    const out = model.forward(ids, { attention: true });
    const T = ids.length;
    const [L, H] = [model.config.layers, model.config.heads];
    assert.deepEqual([...out.attention.shape], [L, H, T, T]);
    let upper = 0;
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) upper += out.attention.data[i * T + j];
    assert.ok(upper > 0.5, `the first head's weights above the diagonal sum to ${upper}`);
    const [fill] = model.fillMask("The cat <mask> on the mat.", { k: 5 });
    assert.equal(fill.position, 3);
    assert.equal(fill.predictions.length, 5);
    // Five fillers, likeliest first, from the model's distribution over the vocabulary.
    for (let i = 1; i < 5; i++) assert.ok(fill.predictions[i - 1].p >= fill.predictions[i].p);
    const saved = model.save();
    const back = await lens.loadModel({ files: saved });
    try {
      assert.equal(back.config.family, "roberta");
      assert.match(saved["config.json"], /"model_type": "roberta"[^]*"pad_token_id": 1,/);
      const again = back.fillMask("The cat <mask> on the mat.", { k: 5 });
      assert.deepEqual(
        again[0].predictions.map((p) => p.id),
        fill.predictions.map((p) => p.id),
      );
    } finally {
      back.dispose();
    }
  } finally {
    model.dispose();
  }
});

test("RoBERTa's refusals are named: a tokenizer.json alone, XLM-RoBERTa's unigram tokenizer", async () => {
  const onlyJson = folder();
  delete onlyJson["vocab.json"];
  delete onlyJson["merges.txt"];
  onlyJson["tokenizer.json"] = JSON.stringify(robertaTokenizerJson());
  await assert.rejects(
    lens.loadModel({ files: onlyJson }),
    (e) => e.code === "BAD_FILE" && /tokenizer\.json.*vocab\.json.*merges\.txt/.test(e.message),
  );
  const xlm = folder();
  xlm["config.json"] = read("config.json").replace('"roberta"', '"xlm-roberta"');
  await assert.rejects(lens.loadModel({ files: xlm }), (e) => e.code === "BAD_FILE" && /xlm-roberta.*unigram tokenizer/.test(e.message));
});
