// The texts the tokenizer parity tests encode (tests/js/bpe-parity.test.mjs against the native
// tokenizer, tests/js/tokenizer.test.mjs against the WebAssembly one).
import { randomGenerator } from "./helpers.mjs";

// Picked by hand: each exercises a branch of GPT-2's pre-tokenization regex or of the merges.
export const handPicked = [
  "Hello world",
  "The cat sat on the mat.",
  "I'm sure it's fine, isn't it? They've said we'll see; you'd agree. We're done.",
  "IT'S LOUD, ISN'T IT? 'Quoted' and 'sdf and ''s and '' and 'll've",
  "rock 'n' roll, o'clock, y'all, ma'am",
  "Numbers: 1, 22, 333, 4444, 55555, 3.14159, 1,000,000, -42, +7, 1e10, 0x1F, 2024-01-01",
  "Tabs\tand\ttabs\t\tdouble",
  "Spaces  two   three    four     five",
  "trailing spaces   ",
  "   leading spaces",
  "Line\nbreaks\n\nand\n\n\nmore\r\nwindows\r\n",
  " \n \n  \n",
  "\n",
  " ",
  "a",
  "",
  "No-break\u00a0space, ideographic\u3000space, line\u2028separator, zero\u200bwidth, BOM\ufefftoo",
  "Punctuation!!! ??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [] {} <> |\\/ ~`",
  '"Quotes" “curly” ‘single’ «guillemets» „low“',
  "Ελληνικά κείμενα, Русский текст, עברית, العربية, हिन्दी, ภาษาไทย",
  "日本語の文章です。猫がマットの上に座った。中文文本。한국어 텍스트입니다.",
  "Emoji: 😀 😂 🎉 👍🏽 ❤️ ✨ 🇺🇸 🇯🇵 👩‍💻 👨‍👩‍👧‍👦 🏳️‍🌈",
  "Keycaps #️⃣ *️⃣ 0️⃣ 1️⃣ 9️⃣ and 🔟",
  "Combining: e\u0301 a\u0308 n\u0303 o\u0302\u0323 Z\u0335\u0321a\u0337l\u0336g\u0338o",
  "Other numbers: ١٢٣ ۴۵۶ ½ ¾ ² ³ Ⅻ ⅷ ① ⑳ 𝟙𝟚𝟛",
  "Math: ∑ ∫ √ ∞ ≠ ≤ ≥ ± × ÷ α+β=γ 𝔸𝔹ℂ",
  "Supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
  "a".repeat(300),
  "ab".repeat(200) + " " + "xyz".repeat(100),
  "1234567890".repeat(20),
  "!?".repeat(150),
  " ".repeat(100) + "x",
  "\n".repeat(50) + "y" + "\t".repeat(50),
  "<|endoftext|> is not special to the reference encoder",
  "https://example.com/path?query=1&b=2#frag user@example.org C:\\Windows\\path",
  "def f(x):\n    return x ** 2  # comment\n\n\tif (a && b) { c++; }",
  "Control\u0001chars\u001f and DEL\u007f and C1\u0085 next line",
  "\u{10FFFF}\u{E000}\u{FFFD}\u{1F9D1}\u{1F3FB}",
];

// Pieces to build texts from: words and scripts, numbers, punctuation, contractions, white
// space of every kind, emoji sequences, combining marks.
const pools = {
  word: [
    "the",
    "The",
    "THE",
    "cat",
    "sat",
    "mat",
    "because",
    "it",
    "was",
    "tired",
    "bank",
    "river",
    "attention",
    "Transformer",
    "naïve",
    "café",
    "Zoë",
    "straße",
    "ÉCOLE",
  ],
  script: ["Привет", "мир", "αβγ", "Ωμέγα", "שלום", "مرحبا", "नमस्ते", "สวัสดี", "猫", "東京は", "マット", "안녕", "ᚠᚢᚦ", "ꯀꯁ", "𐌰𐌱"],
  number: ["0", "7", "42", "1999", "3.14", "1,000", "007", "٣", "½", "²", "Ⅷ"],
  punct: [
    ".",
    ",",
    "!",
    "?",
    "...",
    "—",
    "-",
    "(",
    ")",
    '"',
    "'",
    "’",
    ":",
    ";",
    "/",
    "@",
    "#",
    "$",
    "%",
    "&",
    "*",
    "«",
    "»",
    "¿",
    "¡",
    "。",
    "、",
  ],
  contraction: ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'x"],
  space: [
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    " \n",
    "\n ",
    "\r\n",
    "\u00a0",
    "\u2009",
    "\u3000",
    "\u2028",
    "\u200b",
    "\ufeff",
    "\u000b",
    "\u000c",
  ],
  emoji: ["😀", "👍🏽", "❤️", "👩‍💻", "👨‍👩‍👧", "🇫🇷", "#️⃣", "3️⃣", "🏳️‍⚧️", "🧑🏿‍🦱", "☕", "✌🏻"],
  combining: ["e\u0301", "o\u0308", "\u0301", "a\u0300\u0316", "ก\u0e34", "क\u094d\u0937"],
};
const kinds = Object.keys(pools);

export function generatedTexts(count, seed) {
  const rand = randomGenerator(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const texts = [];
  for (let i = 0; i < count; i++) {
    let text = "";
    const parts = 1 + Math.floor(rand() * 14);
    for (let p = 0; p < parts; p++) {
      const kind = pick(kinds);
      let piece = pick(pools[kind]);
      if (rand() < 0.1) piece = piece.repeat(2 + Math.floor(rand() * 4));
      text += piece;
      const r = rand();
      if (r < 0.45) text += " ";
      else if (r < 0.5) text += "\n";
    }
    // Now and then a long run of random letters (long words exercise many merges).
    if (rand() < 0.05) {
      text += Array.from({ length: 40 + Math.floor(rand() * 200) }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join("");
    }
    texts.push(text);
  }
  return texts;
}
