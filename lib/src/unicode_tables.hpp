// Private: Unicode character classes for GPT-2's pre-tokenization (bpe.cpp). The table is
// generated from Node's regular expression engine by scripts/gen-unicode-tables.mjs
// (unicode_tables.cpp), so the classes are exactly those of the reference JS encoder's regex.
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

// The Unicode version the table was generated from, e.g. "17.0".
extern const char* const kUnicodeTablesVersion;

}  // namespace attnlens::detail
