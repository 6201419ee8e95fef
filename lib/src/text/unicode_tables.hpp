// Private: Unicode tables generated from Node's Unicode data by scripts/gen-unicode-tables.mjs
// (unicode_tables.cpp): the character classes of GPT-2's pre-tokenization (bpe.cpp), exactly
// those of the reference JS encoder's regex; the word categories of the word tokenizer and
// simple case folding for its hash keys (text.cpp).
#pragma once

#include <cstdint>

namespace attnlens::detail {

enum class CharClass : std::uint8_t {
  Other = 0,   // none of the below
  Letter = 1,  // \p{L}
  Number = 2,  // \p{N}
  Space = 3,   // JS \s: white space and line terminators
};

// The class of a Unicode scalar value (surrogates and values above U+10FFFF are Other).
CharClass char_class(char32_t cp) noexcept;

// What a code point is to the word tokenizer (text.cpp), first match wins in this order:
// Space, Emoji, RegionalIndicator, Extend, then for letters, numbers (\p{L}, \p{N}) and marks
// of one script (not \p{Script=Inherited}) Han, Hiragana, Katakana, ProlongedSound,
// SouthEastAsian, Alpha; everything else is Other. Unassigned code points have the category of
// the nearest assigned one before them.
enum class WordCategory : std::uint8_t {
  Other = 0,   // punctuation, symbols, private use: a token each
  Space = 1,   // JS \s, White_Space, controls (Cc) and U+200B: separate tokens
  Extend = 2,  // marks of any script, emoji modifiers, format characters (ZWJ,
               // variation selectors, tags): stay with the character before
  Alpha = 3,   // letters and numbers of other scripts (Latin, Cyrillic, Hangul, ...)
  Han = 4,     // Han ideographs
  Hiragana = 5,
  Katakana = 6,
  ProlongedSound = 7,      // ー (U+30FC) and its halfwidth form: lengthens Hiragana or Katakana
  SouthEastAsian = 8,      // Thai, Lao, Khmer, Myanmar, Tai scripts (Unicode's Line_Break=SA)
  Emoji = 9,               // \p{Extended_Pictographic}
  RegionalIndicator = 10,  // flag halves
};

// The word category of a Unicode scalar value (values above U+10FFFF are Other).
WordCategory word_category(char32_t cp) noexcept;

// Simple Unicode case folding (CaseFolding.txt's C + S mappings, folding to the lowercase member
// of each class): 'A' -> 'a', 'É' -> 'é', 'Σ' and 'ς' -> 'σ', 'ſ' -> 's'. Other values are
// returned unchanged; ASCII folds to its lowercase.
char32_t simple_case_fold(char32_t cp) noexcept;

// The Unicode version the table was generated from, e.g. "17.0".
extern const char* const kUnicodeTablesVersion;

}  // namespace attnlens::detail
