// The texts, vocabulary and tokenizer.json of the WordPiece parity tests
// (tests/js/wordpiece-parity.test.mjs against tokenizers.js, tests/js/wordpiece-rust.test.mjs
// against Hugging Face's Rust tokenizers), and the native tool that tokenizes them:
// attnlens_wordpiece (lib/tools/wordpiece_tool.cpp, built by the native build that
// scripts/test.sh runs first).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomGenerator } from "./helpers.mjs";

const tool = process.env.ATTNLENS_WORDPIECE_TOOL ?? fileURLToPath(new URL("../../build/native/attnlens_wordpiece", import.meta.url));
const sample = readFileSync(new URL("../fixtures/corpus/heldout_sample.txt", import.meta.url), "utf8");

export const specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

// Pieces of the generated texts.
export const pools = {
  word: [...new Set(sample.match(/\p{L}+/gu))],
  accented: [
    "café",
    "naïve",
    "Ångström",
    "résumé",
    "São",
    "Straße",
    "İstanbul",
    "ÉCOLE",
    "e\u0301te\u0301",
    "Tiếng",
    "Việt",
    "Ωμέγα",
    "ΆΈΉ",
    "Ёлка",
    "Привет",
    "Þórr",
    "Łódź",
    "Ǆemal",
    "ﬁne",
    "Ⅻ",
  ],
  script: ["한국어", "안녕", "नमस्ते", "สวัสดี", "שלום", "مرحبا", "ひらがな", "カタカナ", "ᚠᚢᚦ", "𐌰𐌱"],
  cjk: ["猫", "東京", "中文文本", "日本語", "\uF900", "\uFA0E", "々", "〇"],
  emoji: ["😀", "👍🏽", "❤️", "👩‍💻", "🇫🇷", "#️⃣", "☕", "✌🏻", "🧑🏿‍🦱"],
  punct: [..."!\"#$%&'()*+,-./:;<=>?@\\^_`{|}~", ..."«»¿¡–—‘’“”„…‹›、。「」『』【】〈〉・‿⁀※†‡•‰′″⁂؟،।॥჻᙮‐‒―⸘⸮〽﹏！？（）＿§¶"],
  symbol: ["€", "£", "©", "®", "°", "±", "×", "÷", "∑", "√", "∞", "≠", "→", "♥", "✓", "½", "²"],
  control: [
    "\u0000",
    "\u0001",
    "\u0005",
    "\u001f",
    "\u007f",
    "\u0085",
    "\u200b",
    "\u200d",
    "\u200e",
    "\u00ad",
    "\ufeff",
    "\ufffd",
    "\u000b",
    "\u000c",
  ],
  space: [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2003", "\u2028", " \n\t "],
  combining: ["a\u0300\u0316", "o\u0308", "\u0301", "n\u0303", "क\u094d\u0937", "ก\u0e34"],
  number: ["0", "7", "42", "1999", "3.14", "1,000", "٣", "१२"],
};
const kinds = Object.keys(pools);

const cases = (word, rand) => {
  const r = rand();
  if (r < 0.4) return word;
  if (r < 0.6) return word.toUpperCase();
  if (r < 0.8) return word[0].toUpperCase() + word.slice(1);
  return [...word].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join("");
};

// `count` texts from a seeded generator: pieces of every pool, in mixed case, with or without
// white space between them, and now and then a long word (some just over the 100-character
// limit) or a word repeated.
export function generatedTexts(count, seed) {
  const rand = randomGenerator(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = [];
  while (texts.length < count) {
    let text = "";
    const parts = 1 + Math.floor(rand() * 16);
    for (let p = 0; p < parts; p++) {
      const kind = pick(kinds);
      let piece = pick(pools[kind]);
      if (kind === "word" || kind === "accented") piece = cases(piece, rand);
      if (rand() < 0.08) piece = piece.repeat(2 + Math.floor(rand() * 4));
      text += piece;
      const r = rand();
      if (r < 0.45) text += " ";
      else if (r < 0.5) text += "\n";
    }
    if (rand() < 0.08) {
      const length = 90 + Math.floor(rand() * 25);
      text += " " + Array.from({ length }, () => pick(["a", "b", "é", "ß", "n", "e"])).join("") + " ";
    }
    // Never a special token's text: both tokenizers would match it differently (see the header).
    if (specials.some((s) => text.includes(s))) continue;
    texts.push(text);
  }
  return texts;
}

// Hand-picked texts: google-research/bert's examples, and each class of input once.
export const handPicked = [
  "",
  "   ",
  "UNwant\u00E9d,running",
  " \tHeLLo!how  \n Are yoU?  ",
  "ah\u535A\u63A8zz",
  "H\u00E9llo h\u00E4llo",
  "a\u0005b c\u0000d e\ufffdf",
  'emma\'s "quoted" (parenthesised) -- dashed; colon: semi; end.',
  "İstanbul ΆΈΉ Ǆ ﬁ ẞ",
  "한국어 텍스트입니다. 日本語の文章です。",
  "a".repeat(100),
  "a".repeat(101),
  "é".repeat(101),
  "\u1FEF\u037E\u0387",
  "x\u0301\u0316y",
];

// The vocabulary: specials; the sample's words (as written and lower-cased), their first 2, 3
// and 4 letters, and the rest and the last 2, 3 and 4 letters as "##" pieces; every character of the pools, uncased and cased, whole
// and as a "##" piece, except a few left out so that some words are [UNK].
function buildVocab() {
  const uncased = (s) =>
    s
      .toLowerCase()
      .normalize("NFD")
      .replace(/\p{Mn}/gu, "");
  const left_out = new Set(["q", "Q", "ж", "😀", "ᚦ", "∞"]);
  const tokens = new Set();
  for (const w of pools.word) {
    for (const form of [w, w.toLowerCase()]) {
      tokens.add(form);
      if (form.length >= 5) {
        for (let k = 2; k <= 4; k++) {
          tokens.add(form.slice(0, k));
          tokens.add("##" + form.slice(k));
          tokens.add("##" + form.slice(-k));
        }
      }
    }
  }
  for (const kind of kinds) {
    for (const piece of pools[kind]) {
      for (const c of [...piece, ...piece.toUpperCase(), ...uncased(piece), ...uncased(piece.toUpperCase())]) {
        if (/^\s$/u.test(c) || left_out.has(c)) continue;
        tokens.add(c);
        tokens.add("##" + c);
      }
    }
  }
  // For the final-sigma example of the last test.
  for (const t of ["ο", "##ο", "σ", "##σ"]) tokens.add(t);
  for (const s of specials) tokens.delete(s);
  return [...specials, ...[...tokens].sort()];
}

export const vocabTokens = buildVocab();

export function tokenizerJson(lowercase) {
  const vocab = Object.fromEntries(vocabTokens.map((t, i) => [t, i]));
  const id = (t) => vocabTokens.indexOf(t);
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specials.map((content) => ({
      id: id(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: lowercase ? null : false,
      lowercase,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map((t) => [t, { id: t, ids: [id(t)], tokens: [t] }])),
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
}

const records = (texts) =>
  Buffer.concat(
    texts.flatMap((t) => {
      const bytes = Buffer.from(t, "utf8");
      return [Buffer.from(`${bytes.length}\n`), bytes];
    }),
  );

// Runs the native tool in `mode` over `texts` with the tokenizer.json; one output line per text
// (per pair in "pairs" mode).
export function runTool(mode, json, texts) {
  assert.ok(existsSync(tool), `${tool} is missing: run the native build first (scripts/test.sh does)`);
  const dir = mkdtempSync(join(tmpdir(), "attnlens-wordpiece-"));
  try {
    const file = join(dir, "tokenizer.json");
    writeFileSync(file, JSON.stringify(json));
    const run = spawnSync(tool, [mode, file], { input: records(texts), maxBuffer: 1 << 28 });
    assert.equal(run.status, 0, `attnlens_wordpiece failed: ${run.stderr}`);
    const lines = run.stdout.toString("utf8").split("\n");
    assert.equal(lines.pop(), "", "output ends with a newline");
    return lines;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Native tokens of each text: [{ id, begin, end }] or { error }.
export function nativeTokens(json, texts) {
  const lines = runTool("tokens", json, texts);
  assert.equal(lines.length, texts.length, "one line per text");
  return lines.map((line) => {
    if (line.startsWith("error ")) return { error: line };
    if (line === "") return [];
    return line.split(" ").map((t) => {
      const [id, span] = t.split("@");
      const [begin, end] = span.split(":").map(Number);
      return { id: Number(id), begin, end };
    });
  });
}

export const show = (text) => JSON.stringify(text);
