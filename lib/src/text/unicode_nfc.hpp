// Private: Unicode's NFC (UAX #15: canonical decomposition, canonical ordering, canonical
// composition) over code points that remember which original bytes they came from; the
// tokenizer.json pipeline's NFC normalizer (tokenizer_json.cpp). The data is generated from
// Node's normalize() by scripts/gen-unicode-tables.mjs (unicode_nfc_tables.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlens::detail {

// One character of text being normalized and the original bytes [begin, end) it came from.
struct NfcChar {
  char32_t cp;
  std::uint32_t begin;
  std::uint32_t end;
};

// Replaces `chars` (Unicode scalar values) by their NFC. Each decomposed part keeps the span of
// its character; a composite covers the spans of what it was composed from.
void nfc(std::vector<NfcChar>& chars);

// Generated tables (unicode_nfc_tables.cpp).
struct NfcRank {
  std::uint32_t cp;
  std::uint8_t rank;  // the canonical combining class, as a rank 1, 2, ... in NFD's order
};
struct NfcDecomposition {
  std::uint32_t cp;
  std::uint16_t offset;  // into kNfcDecompositionParts
  std::uint8_t length;
};
struct NfcComposition {
  std::uint32_t first;
  std::uint32_t second;
  std::uint32_t composite;
};
extern const NfcRank kNfcRanks[];  // sorted by code point
extern const std::size_t kNfcRankCount;
extern const NfcDecomposition kNfcDecompositions[];  // sorted by code point
extern const std::size_t kNfcDecompositionCount;
extern const char32_t kNfcDecompositionParts[];
extern const NfcComposition kNfcCompositions[];  // sorted by (first, second)
extern const std::size_t kNfcCompositionCount;

}  // namespace attnlens::detail
