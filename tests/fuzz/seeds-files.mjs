// Writes the seed corpora of the file-format fuzz targets (committed; rerun after changing an
// input layout):   node tests/fuzz/seeds-files.mjs
// json:        documents in the shapes attnlens reads (safetensors headers, config.json, vocab).
// safetensors: first byte even: the whole file follows; odd: "header\0data" (fuzz_safetensors.cpp).
// bpe:         first byte % 3: 0 text to encode, 1 "vocab.json\0merges.txt", 2 text to train on.
// wordpiece:   first byte % 4: 0 an options byte and a text, 1 "vocab.txt\0text",
//              2 a tokenizer.json, 3 a tokenizer_config.json (fuzz_wordpiece.cpp).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const corpus = join(dirname(fileURLToPath(import.meta.url)), "corpus");

function write(target, files) {
  const dir = join(corpus, target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  files.forEach((bytes, i) => writeFileSync(join(dir, `seed-${String(i).padStart(2, "0")}`), bytes));
}

const header = (tensors, metadata) => {
  const entries = metadata ? [`"__metadata__":${JSON.stringify(metadata)}`] : [];
  let offset = 0;
  for (const [name, dtype, shape, bytes] of tensors) {
    entries.push(
      `${JSON.stringify(name)}:{"dtype":"${dtype}","shape":${JSON.stringify(shape)},"data_offsets":[${offset},${offset + bytes}]}`,
    );
    offset += bytes;
  }
  const text = `{${entries.join(",")}}`;
  return text + " ".repeat((8 - (text.length % 8)) % 8);
};

// A safetensors file as the reference writer lays it out.
function safetensors(tensors, metadata) {
  const h = Buffer.from(header(tensors, metadata));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(h.length));
  const data = Buffer.concat(tensors.map(([, , , bytes, fill]) => Buffer.alloc(bytes, fill)));
  return Buffer.concat([length, h, data]);
}

const f32 = [
  ["wte.weight", "F32", [4, 2], 32, 0x3f],
  ["h.0.ln_1.bias", "F32", [2], 8, 0],
];
const mixed = [
  ["a", "F16", [3], 6, 0x3c],
  ["b", "BF16", [2, 1], 4, 0x40],
  ["c", "U8", [5], 5, 7],
  ["d", "I64", [1], 8, 1],
  ["e", "F4", [2], 1, 0x12],
  ["f", "F32", [0, 3], 0, 0],
  ["s", "F32", [], 4, 0],
];
write("json", [
  JSON.stringify(
    {
      n_layer: 2,
      n_head: 4,
      n_embd: 128,
      n_positions: 128,
      vocab_size: 4000,
      layer_norm_epsilon: 1e-5,
      architectures: ["GPT2LMHeadModel"],
    },
    null,
    2,
  ),
  header(f32, { format: "pt" }),
  '{"!": 0, "\\"": 1, "\\u0120the": 262, "\\u00e9": 2, "<|endoftext|>": 50256}',
  '[null, true, false, -0, 1.5e-300, 123456789012345678901234567890, "\\ud83d\\ude00\\n\\t", [[{}]], {"a": {"b": []}}]',
]);
write("safetensors", [
  Buffer.concat([Buffer.from([0]), safetensors(f32, { format: "pt" })]),
  Buffer.concat([Buffer.from([0]), safetensors(mixed)]),
  Buffer.concat([
    Buffer.from([1]),
    Buffer.from(header(mixed, { k: "v" })),
    Buffer.from([0]),
    ...mixed.map(([, , , bytes, fill]) => Buffer.alloc(bytes, fill)),
  ]),
  Buffer.concat([
    Buffer.from([1]),
    Buffer.from('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'),
    Buffer.from([0, 0, 0, 0x80, 0x3f]),
  ]),
]);

// GPT-2's byte-to-unicode alphabet: printable bytes stand for themselves, others for U+0100...
const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
const alphabet = [];
for (let b = 0, extra = 0; b < 256; b++) alphabet.push(String.fromCodePoint(printable(b) ? b : 0x100 + extra++));
const enc = (s) => [...Buffer.from(s, "utf8")].map((b) => alphabet[b]).join("");
const vocab = Object.fromEntries(
  [...alphabet, ...["th", "the", " the", "at", " c", " cat"].map(enc), "<|endoftext|>"].map((t, i) => [t, i]),
);
const merges = ["#version: 0.2", "t h", "th e", "Ġ the", "a t", "Ġ c", "Ġc at", ""].join("\n");
const text = "The cat sat on the mat. It's the cat's mat; we'll see! 42 café 日本語 👩‍💻  \t\n";
write("bpe", [
  Buffer.from("\0" + text),
  Buffer.from("\0" + "a".repeat(100)),
  Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(vocab)), Buffer.from([0]), Buffer.from(merges)]),
  Buffer.from("\x02" + text.repeat(3)),
]);

const wpVocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "caf", "##e", "!", "日", "##本"];
const wpText = "The cats' caf\u00e9! CAFE\u0301 \u65e5\u672c\u8a9e \u0130 \ud55c \u0005 \u{1f469}\u200d\u{1f4bb} " + "x".repeat(120);
const wpJson = {
  version: "1.0",
  added_tokens: [],
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: { type: "BertProcessing", sep: ["[SEP]", 3], cls: ["[CLS]", 2] },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: {
    type: "WordPiece",
    unk_token: "[UNK]",
    continuing_subword_prefix: "##",
    max_input_chars_per_word: 100,
    vocab: Object.fromEntries(wpVocab.map((t, i) => [t, i])),
  },
};
write("wordpiece", [
  Buffer.from("\0\x1f" + wpText),
  Buffer.from("\0\x00" + wpText),
  Buffer.from("\0\x3b" + wpText),
  Buffer.concat([Buffer.from([1]), Buffer.from(wpVocab.join("\n") + "\n"), Buffer.from([0]), Buffer.from(wpText)]),
  Buffer.from("\x02" + JSON.stringify(wpJson)),
  Buffer.from(
    "\x03" +
      JSON.stringify({
        do_lower_case: false,
        strip_accents: null,
        tokenize_chinese_chars: true,
        cls_token: { content: "[CLS]" },
        sep_token: "[SEP]",
      }),
  ),
]);
