// Generates lib/src/text/unicode_tables.cpp from this Node's own Unicode data (its regular
// expression engine and String.prototype.toLowerCase / toUpperCase), three tables:
//   1. the character classes GPT-2's pre-tokenization regex uses (\p{L}, \p{N} and \s as
//      JavaScript evaluates them with the `u` flag), so that the C++ BPE tokenizer splits text
//      exactly as the reference JS encoder does;
//   2. the word categories of the random-mode word tokenizer (text.cpp);
//   3. simple Unicode case folding (the C + S mappings of CaseFolding.txt), for its hash keys.
//
//   node scripts/gen-unicode-tables.mjs           rewrite the file
//   node scripts/gen-unicode-tables.mjs --check   exit 1 if the committed file differs
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const out = fileURLToPath(new URL("../lib/src/text/unicode_tables.cpp", import.meta.url));

// Classes as in unicode_tables.hpp.
const OTHER = 0;
const LETTER = 1;
const NUMBER = 2;
const SPACE = 3;
const letter = /^\p{L}$/u;
const number = /^\p{N}$/u;
const space = /^\s$/u;

function classOf(cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) return OTHER; // surrogates never reach the tokenizer
  const s = String.fromCodePoint(cp);
  const classes = [letter.test(s) && LETTER, number.test(s) && NUMBER, space.test(s) && SPACE];
  const found = classes.filter(Boolean);
  if (found.length > 1) throw new Error(`U+${cp.toString(16)} is in more than one class`);
  return found[0] ?? OTHER;
}

// Each entry starts a run of code points of one class: (first code point << 2) | class.
const entries = [];
let previous = -1;
for (let cp = 0; cp <= 0x10ffff; cp++) {
  const c = classOf(cp);
  if (c !== previous) {
    entries.push(cp * 4 + c);
    previous = c;
  }
}

// Word categories as in unicode_tables.hpp (WordCategory), first match wins.
const WORD = {
  Other: 0,
  Space: 1,
  Extend: 2,
  Alpha: 3,
  Han: 4,
  Hiragana: 5,
  Katakana: 6,
  ProlongedSound: 7,
  SouthEastAsian: 8,
  Emoji: 9,
  RegionalIndicator: 10,
};
// Scripts written without spaces between words whose words need a dictionary to find (Unicode's
// Line_Break=SA scripts); without one, a run of such letters is one token.
const southEastAsian = new RegExp(
  ["Thai", "Lao", "Khmer", "Myanmar", "Tai_Le", "New_Tai_Lue", "Tai_Tham", "Tai_Viet", "Ahom", "Tai_Yo"]
    .map((s) => `\\p{Script=${s}}`)
    .join("|"),
  "u",
);
const word = {
  space: /^(?:\s|\p{White_Space}|\p{Cc}|\u200B)$/u,
  emoji: /^\p{Extended_Pictographic}$/u,
  regionalIndicator: /^\p{Regional_Indicator}$/u,
  extend: /^(?:\p{M}|\p{Emoji_Modifier}|\p{Cf})$/u,
  // Marks of one script (Devanagari vowel signs, Thai tone marks) only follow that script's
  // letters, so they are classed with them; that halves the table. Marks used with any script
  // (\p{Script=Inherited}, e.g. U+0301) stay Extend.
  scriptMark: /^(?=\p{M})[^\p{Script=Inherited}\p{Script=Common}]$/u,
  unassigned: /^\p{Cn}$/u,
  letterOrNumber: /^[\p{L}\p{N}]$/u,
  han: /^\p{Script=Han}$/u,
  hiragana: /^\p{Script=Hiragana}$/u,
  katakana: /^\p{Script=Katakana}$/u,
  prolonged: /^[\u30FC\uFF70]$/u,
};

// null for code points without a category of their own: surrogates (never decoded) and
// unassigned code points (they take the category of the run before them, which keeps the table
// small; text that uses them gets their future properties only with a newer table).
function wordCategoryOf(cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) return null;
  const s = String.fromCodePoint(cp);
  if (word.unassigned.test(s)) return null;
  if (word.space.test(s)) return WORD.Space;
  if (word.emoji.test(s)) return WORD.Emoji;
  if (word.regionalIndicator.test(s)) return WORD.RegionalIndicator;
  const scriptMark = word.scriptMark.test(s);
  if (word.extend.test(s) && !scriptMark) return WORD.Extend;
  if (!word.letterOrNumber.test(s) && !scriptMark) return WORD.Other;
  if (word.han.test(s)) return WORD.Han;
  if (word.hiragana.test(s)) return WORD.Hiragana;
  if (word.katakana.test(s)) return WORD.Katakana;
  if (word.prolonged.test(s)) return WORD.ProlongedSound;
  if (southEastAsian.test(s)) return WORD.SouthEastAsian;
  return WORD.Alpha;
}

// Runs of one word category: (first code point << 4) | category.
const wordRuns = [];
let previousWord = -1;
for (let cp = 0; cp <= 0x10ffff; cp++) {
  const c = wordCategoryOf(cp) ?? Math.max(previousWord, WORD.Other);
  if (c !== previousWord) {
    wordRuns.push(cp * 16 + c);
    previousWord = c;
  }
}

// Simple case folding. A regular expression with the `i` and `u` flags compares characters by
// exactly the simple case folding of CaseFolding.txt (ECMA-262, Canonicalize), so two code
// points fold alike iff /^a$/iu matches b. The folded form of c is taken among c's single-code-
// point case mappings, in this order of preference: lower(upper(c)) (ς, ſ, µ, ϑ fold to the
// lowercase of their uppercase: σ, s, μ, θ), lower(c), c; a candidate counts only if the regex
// says it folds like c (so ı, whose uppercase I lowercases to i, stays ı). Every class then has
// one member all others map to: the lowercase one (CaseFolding.txt chooses the same except for
// Cherokee, whose lowercase letters it folds to uppercase; the classes are the same).
const single = (s) => (Array.from(s).length === 1 ? s.codePointAt(0) : null);
function foldOf(cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) return cp;
  const s = String.fromCodePoint(cp);
  const upper = single(s.toUpperCase());
  const candidates = [upper !== null ? single(String.fromCodePoint(upper).toLowerCase()) : null, single(s.toLowerCase())];
  if (candidates.every((t) => t === null || t === cp)) return cp;
  const same = new RegExp(`^\\u{${cp.toString(16)}}$`, "iu");
  for (const t of candidates) if (t !== null && same.test(String.fromCodePoint(t))) return t;
  return cp;
}
const folds = new Map();
for (let cp = 0; cp <= 0x10ffff; cp++) {
  const f = foldOf(cp);
  if (f !== cp) folds.set(cp, f);
}
// Checks: ASCII folds to ASCII lowercase; folding is idempotent; code points that the regex
// engine says fold alike (cp and its case mappings) get the same folded form.
const fold = (cp) => folds.get(cp) ?? cp;
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const f = fold(cp);
  if (cp < 0x80 && f !== (cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp))
    throw new Error(`U+${cp.toString(16)}: ASCII must fold to its lowercase`);
  if (fold(f) !== f) throw new Error(`U+${cp.toString(16)}: folding is not idempotent`);
  const s = String.fromCodePoint(cp);
  const mapped = [single(s.toLowerCase()), single(s.toUpperCase())].filter((t) => t !== null && t !== cp);
  if (mapped.length === 0) continue;
  const same = new RegExp(`^\\u{${cp.toString(16)}}$`, "iu");
  for (const t of mapped) {
    if (same.test(String.fromCodePoint(t)) && fold(t) !== f) {
      throw new Error(`U+${cp.toString(16)} and U+${t.toString(16)} fold alike but map to different code points`);
    }
  }
}
// Ranges of the mapping: code points first, first + step, ..., last map to themselves + delta.
const foldRanges = [];
for (const [cp, f] of folds) {
  const r = foldRanges[foldRanges.length - 1];
  const gap = r ? cp - r.last : 0;
  if (r && r.delta === f - cp && (r.first === r.last ? gap <= 2 : gap === r.step)) {
    r.step = gap;
    r.last = cp;
  } else {
    foldRanges.push({ first: cp, last: cp, step: 1, delta: f - cp });
  }
}

const hex = (n) => "0x" + n.toString(16).toUpperCase().padStart(7, "0");
const rowsOf = (items, perRow) => {
  const rows = [];
  for (let i = 0; i < items.length; i += perRow) rows.push("    " + items.slice(i, i + perRow).join(", ") + ",");
  return rows.join("\n");
};
// One range a line, each with a trailing comment (so clang-format keeps the lines as they are).
const foldEntries = foldRanges.map((r) => `{${hex(r.first)}, ${hex(r.last)}, ${r.step}, ${r.delta}},`);
const foldWidth = Math.max(...foldEntries.map((e) => e.length));
const codePoint = (cp) => "U+" + cp.toString(16).toUpperCase().padStart(4, "0");
const foldRows = foldEntries
  .map((e, i) => {
    const r = foldRanges[i];
    const span = r.first === r.last ? codePoint(r.first) : `${codePoint(r.first)}..${codePoint(r.last)}`;
    return `    ${e.padEnd(foldWidth)}  // ${span}`;
  })
  .join("\n");

const text = `// Generated by scripts/gen-unicode-tables.mjs from Node ${process.versions.node} (Unicode ${process.versions.unicode}); do not edit.
// Character classes of GPT-2's pre-tokenization regex as JavaScript's \`u\` flag defines them:
// \\p{L} (letters), \\p{N} (numbers) and \\s (JS white space and line terminators); word
// categories of the word tokenizer; simple case folding. How each is derived: the generator.
#include "text/unicode_tables.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace attnlens::detail {
namespace {

// Runs of code points of one class, in order: (first code point << 2) | class.
constexpr std::uint32_t kRuns[] = {
${rowsOf(entries.map(hex), 8)}
};

// Runs of code points of one word category, in order: (first code point << 4) | category.
constexpr std::uint32_t kWordRuns[] = {
${rowsOf(wordRuns.map(hex), 8)}
};

// Case folding: first, first + step, ..., last (and no code point between) fold to cp + delta.
struct FoldRange {
  std::uint32_t first;
  std::uint32_t last;
  std::uint32_t step;
  std::int32_t delta;
};
constexpr FoldRange kFoldRanges[] = {
${foldRows}
};

}  // namespace

const char* const kUnicodeTablesVersion = "${process.versions.unicode}";

CharClass char_class(char32_t cp) noexcept {
  const std::uint32_t key = (static_cast<std::uint32_t>(cp) << 2) | 3u;
  const std::uint32_t* run = std::upper_bound(std::begin(kRuns), std::end(kRuns), key) - 1;
  return static_cast<CharClass>(*run & 3u);
}

WordCategory word_category(char32_t cp) noexcept {
  if (cp > 0x10FFFF) return WordCategory::Other;
  const std::uint32_t key = (static_cast<std::uint32_t>(cp) << 4) | 15u;
  const std::uint32_t* run = std::upper_bound(std::begin(kWordRuns), std::end(kWordRuns), key) - 1;
  return static_cast<WordCategory>(*run & 15u);
}

char32_t simple_case_fold(char32_t cp) noexcept {
  const auto c = static_cast<std::uint32_t>(cp);
  const FoldRange* range =
      std::upper_bound(std::begin(kFoldRanges), std::end(kFoldRanges), c,
                       [](std::uint32_t v, const FoldRange& r) { return v < r.first; });
  if (range == std::begin(kFoldRanges)) return cp;
  --range;
  if (c > range->last || (c - range->first) % range->step != 0) return cp;
  return static_cast<char32_t>(static_cast<std::int64_t>(c) + range->delta);
}

}  // namespace attnlens::detail
`;

if (process.argv.includes("--check")) {
  const committed = readFileSync(out, "utf8");
  const body = (t) => t.split("\n").slice(1).join("\n");
  if (body(committed) !== body(text)) {
    console.error(`${out} differs from what Node ${process.versions.node} (Unicode ${process.versions.unicode}) generates`);
    process.exit(1);
  }
  console.log(`unicode tables match Node ${process.versions.node} (Unicode ${process.versions.unicode})`);
} else {
  writeFileSync(out, text);
  console.log(
    `wrote ${out}: ${entries.length} class runs, ${wordRuns.length} word category runs, ${folds.size} case foldings in ${foldRanges.length} ranges, Unicode ${process.versions.unicode}`,
  );
}
