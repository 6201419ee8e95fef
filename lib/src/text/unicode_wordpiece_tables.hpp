// Private: the Unicode data of BERT's normalizer (wordpiece.cpp), generated from Node's Unicode
// data by scripts/gen-unicode-tables.mjs into unicode_wordpiece_tables.cpp, and read from there
// by wordpiece_tables() (wordpiece.cpp). A separate file from unicode_tables.cpp: a program that
// never tokenizes with WordPiece links none of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlens::detail {

// What a code point is to BERT's normalizer and pre-tokenizer.
enum class BertClass : std::uint8_t {
  Other = 0,
  Space = 1,         // \p{White_Space} that is not a control, and \t \n \r
  Control = 2,       // \p{Cc} or \p{Cf} (not \t \n \r): dropped when cleaning text
  ControlSpace = 3,  // both (U+000B, U+000C, U+0085): dropped when cleaning, else white space
  Punctuation = 4,   // \p{P}, and ASCII 33-47, 58-64, 91-96, 123-126 ($, +, <, ^, `, |, ~ ...)
  MarkStarter = 5,   // \p{Mn} of canonical combining class 0 (e.g. U+0941)
  Mark = 6,          // \p{Mn} of another class (e.g. U+0301)
};

// A code point after NFD with nonspacing marks dropped: up to 3 code points.
struct StrippedChar {
  char32_t cps[3] = {0, 0, 0};
  std::uint8_t count = 0;
  // The decomposition begins with a character of canonical combining class 0: nothing after it
  // is reordered before it (canonical ordering), whether or not that character is kept.
  bool starter = true;
};

// The decoded tables. Lookups are binary searches, with ASCII read from a direct table.
class WordPieceTables {
 public:
  WordPieceTables();

  BertClass bert_class(char32_t cp) const noexcept;

  // The lower case of one code point (String.prototype.toLowerCase of it alone, i.e. without
  // the final-sigma rule): writes 1 or 2 code points to out and returns how many (2 only for
  // U+0130, "i" and U+0307).
  int lower(char32_t cp, char32_t out[2]) const noexcept;

  // NFD of one code point with \p{Mn} dropped (Hangul syllables by Unicode's arithmetic).
  StrippedChar strip(char32_t cp) const noexcept;

  // Canonical ordering rank of a character NFD may reorder that survives the marks' removal
  // (a few spacing marks); 0 for everything else (and for nonspacing marks, which are dropped).
  std::uint8_t reorder_rank(char32_t cp) const noexcept;

 private:
  struct LowerRange {
    std::uint32_t first, last, step;
    std::int32_t delta;
  };
  struct Decomposition {
    std::uint32_t cp;
    StrippedChar stripped;
  };
  std::vector<std::uint32_t> class_runs_;  // (first code point << 3) | class
  std::vector<LowerRange> lower_;
  std::vector<Decomposition> strip_;
  BertClass ascii_class_[128];
  char32_t reorder_min_ = 0;  // the smallest code point with a reorder rank
};

// The tables, decoded on first use (thread-safe).
const WordPieceTables& wordpiece_tables();

// Generated data (unicode_wordpiece_tables.cpp): a byte string of variable-length integers
// (7 bits a byte, low bits first; signed values zigzag-coded), in three parts each starting with
// its entry count:
//   class runs:      (distance from the previous run's first code point << 3 | class)
//   lower case:      first - previous last, (last - first) / step, step, zigzag(delta)
//   decompositions:  (distance from the previous code point << 3 | count << 1 | starter), then
//                    the count kept code points, each a zigzag difference from the one before
//                    (the first from the first kept code point of the previous entry with one)
struct ReorderClass {
  std::uint32_t cp;
  std::uint8_t rank;
};
extern const std::uint8_t kWordPieceTableBytes[];
extern const std::size_t kWordPieceTableSize;
extern const ReorderClass kWordPieceReorderClasses[];  // sorted by rank, then code point
extern const std::size_t kWordPieceReorderClassCount;
extern const char* const kWordPieceTablesVersion;  // e.g. "17.0"

}  // namespace attnlens::detail
