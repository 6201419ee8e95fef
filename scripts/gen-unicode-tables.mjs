// Generates lib/src/text/unicode_tables.cpp from this Node's own Unicode data (its regular
// expression engine and String.prototype.toLowerCase / toUpperCase), three tables:
//   1. the character classes GPT-2's pre-tokenization regex uses (\p{L}, \p{N} and \s as
//      JavaScript evaluates them with the `u` flag), so that the C++ BPE tokenizer splits text
//      exactly as the reference JS encoder does;
//   2. the word categories of the random-mode word tokenizer (text.cpp);
//   3. simple Unicode case folding (the C + S mappings of CaseFolding.txt), for its hash keys;
// lib/src/text/unicode_wordpiece_tables.cpp, what BERT's normalizer needs (wordpiece.cpp):
//   4. character classes (white space, controls, punctuation, nonspacing marks), lower-casing
//      (String.prototype.toLowerCase of one code point) and NFD with the marks dropped
//      (normalize("NFD") less \p{Mn}), packed as variable-length integers;
// and lib/src/text/unicode_nfc_tables.cpp, what NFC needs (unicode_nfc.cpp):
//   5. combining classes, canonical decompositions and primary composites.
//
//   node scripts/gen-unicode-tables.mjs           rewrite the files
//   node scripts/gen-unicode-tables.mjs --check   exit 1 if a committed file differs
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { cli } from "./cli.mjs";

// An unknown flag is an error (parseArgs strict), not a silent rewrite of the tables.
const { check = false } = cli({
  usage: "usage: node scripts/gen-unicode-tables.mjs [--check]",
  options: { check: { type: "boolean" } },
}).values;

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

// ---------------------------------------------------------------------------------------------
// 4. BERT's normalizer (unicode_wordpiece_tables.cpp).
const wordpieceOut = fileURLToPath(new URL("../lib/src/text/unicode_wordpiece_tables.cpp", import.meta.url));
const isSurrogate = (cp) => cp >= 0xd800 && cp <= 0xdfff;
const cpsOf = (s) => Array.from(s, (c) => c.codePointAt(0));
const hexCp = (cp) => "U+" + cp.toString(16).toUpperCase().padStart(4, "0");

// Canonical combining class zero or not, read off normalize("NFD")'s canonical ordering: a
// character of class c > 0 is moved before U+0345 (class 240) when c < 240, and U+0334 (class 1)
// is moved before it when c > 1. Only for characters that NFD leaves as they are.
function isNonStarter(cp) {
  const s = String.fromCodePoint(cp);
  if (s.normalize("NFD") !== s) throw new Error(`${hexCp(cp)} decomposes`);
  return ("a\u0345" + s).normalize("NFD") !== "a\u0345" + s || ("a" + s + "\u0334").normalize("NFD") !== "a" + s + "\u0334";
}
const nonStarterCache = new Map();
const nonStarter = (cp) => {
  if (!nonStarterCache.has(cp)) nonStarterCache.set(cp, isNonStarter(cp));
  return nonStarterCache.get(cp);
};
const bert = {
  whiteSpace: /^\p{White_Space}$/u,
  control: /^[\p{Cc}\p{Cf}]$/u,
  punctuation: /^\p{P}$/u,
  mn: /^\p{Mn}$/u,
};
// Classes as in unicode_wordpiece_tables.hpp (BertClass).
const BERT = { Other: 0, Space: 1, Control: 2, ControlSpace: 3, Punctuation: 4, MarkStarter: 5, Mark: 6 };
const asciiPunctuation = (cp) => (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
function bertClassOf(cp) {
  if (isSurrogate(cp)) return BERT.Other;
  const s = String.fromCodePoint(cp);
  const space = bert.whiteSpace.test(s);
  // \t, \n and \r are white space to BERT, not controls.
  const control = bert.control.test(s) && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d;
  if (control) return space ? BERT.ControlSpace : BERT.Control;
  if (space) return BERT.Space;
  if (asciiPunctuation(cp) || bert.punctuation.test(s)) return BERT.Punctuation;
  if (bert.mn.test(s)) return nonStarter(cpsOf(s.normalize("NFD"))[0]) ? BERT.Mark : BERT.MarkStarter;
  return BERT.Other;
}

// Variable-length unsigned integers, 7 bits a byte, low bits first; signed ones zigzag-coded.
const blob = [];
const varint = (n) => {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`varint ${n}`);
  do {
    const low = n % 128;
    n = Math.floor(n / 128);
    blob.push(n > 0 ? low + 128 : low);
  } while (n > 0);
};
const zigzag = (n) => (n >= 0 ? 2 * n : -2 * n - 1);

// (a) Class runs: for each run, the distance from the previous run's first code point, then the
// class.
const classRuns = [];
{
  let previous = -1;
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    const c = bertClassOf(cp);
    if (c !== previous) {
      classRuns.push([cp, c]);
      previous = c;
    }
  }
}
const classStart = blob.length;
varint(classRuns.length);
{
  let previous = 0;
  for (const [cp, c] of classRuns) {
    varint((cp - previous) * 8 + c);
    previous = cp;
  }
}
const classBytes = blob.length - classStart;

// (b) Lower-casing one code point: ranges first, first + step, ..., last map to cp + delta.
// U+0130 (İ) is the only code point whose lower case is two code points (i and U+0307); the
// C++ code handles it.
const lowerRanges = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp)) continue;
  const lower = cpsOf(String.fromCodePoint(cp).toLowerCase());
  if (lower.length === 1 && lower[0] === cp) continue;
  if (lower.length !== 1) {
    if (cp !== 0x130 || lower.join() !== [0x69, 0x307].join()) {
      throw new Error(`${hexCp(cp)} lower-cases to ${lower.length} code points`);
    }
    continue;
  }
  const r = lowerRanges[lowerRanges.length - 1];
  const gap = r ? cp - r.last : 0;
  if (r && r.delta === lower[0] - cp && (r.first === r.last ? gap <= 2 : gap === r.step)) {
    r.step = gap;
    r.last = cp;
  } else {
    lowerRanges.push({ first: cp, last: cp, step: 1, delta: lower[0] - cp });
  }
}
const lowerStart = blob.length;
varint(lowerRanges.length);
{
  let previous = 0;
  for (const r of lowerRanges) {
    varint(r.first - previous);
    varint((r.last - r.first) / r.step);
    varint(r.step);
    varint(zigzag(r.delta));
    previous = r.last;
  }
}
const lowerBytes = blob.length - lowerStart;

// (c) NFD less nonspacing marks, for every code point NFD changes (Hangul syllables excepted:
// the C++ code decomposes them by Unicode's arithmetic). Each entry: (distance from the previous
// entry's code point << 3 | count << 1 | starter), where count (0..3) is the number of code
// points kept and starter says whether the decomposition begins with a character of combining
// class 0 (it then blocks canonical reordering, even when it is a dropped mark); then each kept
// code point as a zigzag difference from the one before it (the first: from the first kept code
// point of the last entry that kept one; runs like À Á Â Ã -> A then cost one byte each).
const hangul = (cp) => cp >= 0xac00 && cp <= 0xd7a3;
const stripEntries = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp)) continue;
  const s = String.fromCodePoint(cp);
  const nfd = s.normalize("NFD");
  if (nfd === s) continue;
  const parts = cpsOf(nfd);
  if (hangul(cp)) {
    // Unicode's arithmetic (section 3.12), as wordpiece.cpp does it.
    const index = cp - 0xac00;
    const expected = [0x1100 + Math.floor(index / 588), 0x1161 + Math.floor((index % 588) / 28)];
    if (index % 28 !== 0) expected.push(0x11a7 + (index % 28));
    if (parts.join() !== expected.join()) throw new Error(`${hexCp(cp)}: Hangul arithmetic differs from NFD`);
    continue;
  }
  const starters = parts.map((p) => !nonStarter(p));
  // The starters of a decomposition come first: one barrier before the entry stands for all.
  const firstNonStarter = starters.indexOf(false);
  if (firstNonStarter >= 0 && starters.slice(firstNonStarter).some(Boolean)) {
    throw new Error(`${hexCp(cp)}: a starter follows a non-starter in its decomposition`);
  }
  const kept = parts.filter((p) => !bert.mn.test(String.fromCodePoint(p)));
  if (kept.length > 3) throw new Error(`${hexCp(cp)} keeps ${kept.length} code points`);
  stripEntries.push({ cp, kept, starter: starters[0] });
}
const stripStart = blob.length;
varint(stripEntries.length);
{
  let previous = 0;
  let previousKept = 0;
  for (const e of stripEntries) {
    varint((e.cp - previous) * 8 + e.kept.length * 2 + (e.starter ? 1 : 0));
    let ref = previousKept;
    for (const k of e.kept) {
      varint(zigzag(k - ref));
      ref = k;
    }
    if (e.kept.length > 0) previousKept = e.kept[0];
    previous = e.cp;
  }
}
const stripBytes = blob.length - stripStart;

// (d) Characters that NFD may reorder and that survive the marks' removal: nonspacing marks
// aside, the non-starters (a few spacing marks: viramas, musical symbols, Hangul tone marks).
// Their canonical combining classes as ranks 1, 2, ... (ordered by how NFD orders them).
const spacingNonStarters = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp)) continue;
  const s = String.fromCodePoint(cp);
  if (s.normalize("NFD") !== s || bert.mn.test(s)) continue;
  if (nonStarter(cp)) {
    const c = bertClassOf(cp);
    if (c !== BERT.Other) throw new Error(`${hexCp(cp)} is a non-starter of BERT class ${c}`);
    spacingNonStarters.push(cp);
  }
}
// x before y in NFD's order: "a x y" is left alone and "a y x" is reordered.
const cccLess = (x, y) => {
  const xy = "a" + String.fromCodePoint(x, y);
  const yx = "a" + String.fromCodePoint(y, x);
  return xy.normalize("NFD") === xy && yx.normalize("NFD") !== yx;
};
const byCcc = [...spacingNonStarters].sort((x, y) => (cccLess(x, y) ? -1 : cccLess(y, x) ? 1 : 0));
const rankOf = new Map();
{
  let rank = 0;
  byCcc.forEach((cp, i) => {
    if (i === 0 || cccLess(byCcc[i - 1], cp)) rank++;
    rankOf.set(cp, rank);
  });
}
// Every punctuation character and every white space is a starter (they end words, so NFD's
// reordering never crosses a word boundary).
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp)) continue;
  const c = bertClassOf(cp);
  if (
    (c === BERT.Punctuation || c === BERT.Space) &&
    String.fromCodePoint(cp).normalize("NFD") === String.fromCodePoint(cp) &&
    nonStarter(cp)
  ) {
    throw new Error(`${hexCp(cp)} is punctuation or white space but not a starter`);
  }
}
// Lower-casing and stripping commute code point by code point (BertNormalizer strips first,
// the Python BertTokenizer lower-cases first).
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp)) continue;
  const s = String.fromCodePoint(cp);
  const strip = (t) => t.normalize("NFD").replace(/\p{Mn}/gu, "");
  if (strip(s.toLowerCase()) !== strip(s).toLowerCase()) throw new Error(`${hexCp(cp)}: lower-casing and stripping do not commute`);
}

const blobRows = [];
for (let i = 0; i < blob.length; i += 16) {
  blobRows.push(
    "    " +
      blob
        .slice(i, i + 16)
        .map((b) => "0x" + b.toString(16).toUpperCase().padStart(2, "0"))
        .join(", ") +
      ",",
  );
}
const reorderRows = byCcc.map((cp) => `    {${hex(cp)}, ${rankOf.get(cp)}},  // ${hexCp(cp)}`).join("\n");

const wordpieceText = `// Generated by scripts/gen-unicode-tables.mjs from Node ${process.versions.node} (Unicode ${process.versions.unicode}); do not edit.
// What BERT's normalizer needs: character classes, one code point's lower case, and NFD with the
// nonspacing marks (\\p{Mn}) dropped. How each is derived: the generator.
#include "text/unicode_wordpiece_tables.hpp"

#include <cstdint>
#include <iterator>

namespace attnlens::detail {

// ${blob.length} bytes: ${classRuns.length} class runs (${classBytes} bytes), ${lowerRanges.length} lower-case ranges (${lowerBytes} bytes),
// ${stripEntries.length} decompositions (${stripBytes} bytes); each part starts with its count. Read by
// wordpiece_tables() (unicode_wordpiece_tables.hpp describes the layout).
const std::uint8_t kWordPieceTableBytes[] = {
${blobRows.join("\n")}
};
const std::size_t kWordPieceTableSize = sizeof(kWordPieceTableBytes);

// Spacing characters that NFD may reorder, with their canonical combining classes as ranks.
const ReorderClass kWordPieceReorderClasses[] = {
${reorderRows}
};
const std::size_t kWordPieceReorderClassCount = std::size(kWordPieceReorderClasses);

const char* const kWordPieceTablesVersion = "${process.versions.unicode}";

}  // namespace attnlens::detail
`;

// ---------------------------------------------------------------------------------------------
// 5. NFC (unicode_nfc_tables.cpp), for the tokenizer.json pipeline's NFC normalizer (unicode_nfc.cpp),
// read off normalize("NFD") and normalize("NFC") one code point at a time:
//   - the canonical combining classes of the characters NFD leaves as they are, as ranks 1, 2, ...
//     in NFD's order (nonStarter and cccLess above);
//   - each character's full canonical decomposition, normalize("NFD") (Hangul syllables aside:
//     the algorithm computes them);
//   - the primary composites: characters that NFD changes and NFC keeps, each as the pair
//     (NFC of its decomposition less the last character, that last character).
const nfcOut = fileURLToPath(new URL("../lib/src/text/unicode_nfc_tables.cpp", import.meta.url));
const isHangulSyllable = (cp) => cp >= 0xac00 && cp <= 0xd7a3;
const nfcNonStarters = [];
const nfcDecompositions = [];
const nfcCompositions = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (isSurrogate(cp) || isHangulSyllable(cp)) continue;
  const s = String.fromCodePoint(cp);
  const d = s.normalize("NFD");
  if (d === s) {
    if (nonStarter(cp)) nfcNonStarters.push(cp);
    continue;
  }
  nfcDecompositions.push([cp, cpsOf(d)]);
  if (s.normalize("NFC") === s) {
    const parts = cpsOf(d);
    const first = cpsOf(String.fromCodePoint(...parts.slice(0, -1)).normalize("NFC"));
    const second = parts.at(-1);
    if (first.length !== 1 || String.fromCodePoint(first[0], second).normalize("NFC") !== s) {
      throw new Error(`${hexCp(cp)}: no composition pair found`);
    }
    nfcCompositions.push([first[0], second, cp]);
  }
}
const nfcByCcc = [...nfcNonStarters].sort((x, y) => (cccLess(x, y) ? -1 : cccLess(y, x) ? 1 : 0));
const nfcRank = new Map();
{
  let rank = 0;
  nfcByCcc.forEach((cp, i) => {
    if (i === 0 || cccLess(nfcByCcc[i - 1], cp)) rank++;
    nfcRank.set(cp, rank);
  });
}
nfcCompositions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
const nfcPool = [];
const nfcDecompositionRows = nfcDecompositions.map(([cp, parts]) => {
  const row = `    {${hex(cp)}, ${nfcPool.length}, ${parts.length}},  // ${hexCp(cp)}`;
  nfcPool.push(...parts);
  return row;
});
const nfcPoolRows = [];
for (let i = 0; i < nfcPool.length; i += 8) {
  nfcPoolRows.push(
    "    " +
      nfcPool
        .slice(i, i + 8)
        .map(hex)
        .join(", ") +
      ",",
  );
}
const nfcText = `// Generated by scripts/gen-unicode-tables.mjs from Node ${process.versions.node} (Unicode ${process.versions.unicode}); do not edit.
// What NFC needs (unicode_nfc.cpp): combining classes, canonical decompositions, primary
// composites. How each is derived: the generator.
#include "text/unicode_nfc.hpp"

#include <iterator>

namespace attnlens::detail {

// One entry a line as generated: clang-format would align the trailing comments of rows of
// different widths differently from one version to another.
// clang-format off

// Characters of canonical combining class above 0, with the class as a rank in NFD's order.
const NfcRank kNfcRanks[] = {
${[...nfcNonStarters].map((cp) => `    {${hex(cp)}, ${nfcRank.get(cp)}},  // ${hexCp(cp)}`).join("\n")}
};
const std::size_t kNfcRankCount = std::size(kNfcRanks);

// Full canonical decompositions (Hangul syllables aside), sorted by code point: parts at
// kNfcDecompositionParts[offset, offset + length).
const NfcDecomposition kNfcDecompositions[] = {
${nfcDecompositionRows.join("\n")}
};
const std::size_t kNfcDecompositionCount = std::size(kNfcDecompositions);
const char32_t kNfcDecompositionParts[] = {
${nfcPoolRows.join("\n")}
};

// Primary composites (Hangul syllables aside), sorted by (first, second).
const NfcComposition kNfcCompositions[] = {
${nfcCompositions.map(([a, b, c]) => `    {${hex(a)}, ${hex(b)}, ${hex(c)}},  // ${hexCp(c)}`).join("\n")}
};
const std::size_t kNfcCompositionCount = std::size(kNfcCompositions);

// clang-format on

}  // namespace attnlens::detail
`;

const outputs = [
  [out, text],
  [wordpieceOut, wordpieceText],
  [nfcOut, nfcText],
];
if (check) {
  // Tables from another Unicode version differ by design: that is not a stale file, so a Node
  // with other Unicode data says so and checks nothing.
  const committed = readFileSync(wordpieceOut, "utf8").match(/kWordPieceTablesVersion = "([^"]*)"/)?.[1];
  if (committed && committed !== process.versions.unicode) {
    console.log(
      `unicode tables not checked: they hold Unicode ${committed} and Node ${process.versions.node} has ${process.versions.unicode}`,
    );
    process.exit(0);
  }
  const body = (t) => t.split("\n").slice(1).join("\n");
  let differs = false;
  for (const [file, generated] of outputs) {
    if (body(readFileSync(file, "utf8")) !== body(generated)) {
      console.error(`${file} differs from what Node ${process.versions.node} (Unicode ${process.versions.unicode}) generates`);
      differs = true;
    }
  }
  if (differs) process.exit(1);
  console.log(`unicode tables match Node ${process.versions.node} (Unicode ${process.versions.unicode})`);
} else {
  for (const [file, generated] of outputs) writeFileSync(file, generated);
  console.log(
    `wrote ${out}: ${entries.length} class runs, ${wordRuns.length} word category runs, ${folds.size} case foldings in ${foldRanges.length} ranges, Unicode ${process.versions.unicode}`,
  );
  console.log(
    `wrote ${wordpieceOut}: ${blob.length} bytes (${classRuns.length} class runs, ${lowerRanges.length} lower-case ranges, ${stripEntries.length} decompositions), ${byCcc.length} reorderable spacing marks`,
  );
  console.log(
    `wrote ${nfcOut}: ${nfcNonStarters.length} combining classes, ${nfcDecompositions.length} decompositions, ${nfcCompositions.length} composites`,
  );
}
