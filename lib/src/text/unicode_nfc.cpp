#include "text/unicode_nfc.hpp"

#include <algorithm>

namespace attnlens::detail {
namespace {

// Hangul syllables, by arithmetic (The Unicode Standard, section 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount;
constexpr char32_t kSCount = kLCount * kNCount;

std::uint8_t rank_of(char32_t cp) {
  if (cp < 0x300) return 0;  // below the first combining mark
  const NfcRank* end = kNfcRanks + kNfcRankCount;
  const NfcRank* it =
      std::lower_bound(kNfcRanks, end, cp, [](const NfcRank& r, char32_t c) { return r.cp < c; });
  return it != end && it->cp == cp ? it->rank : 0;
}

const NfcDecomposition* decomposition_of(char32_t cp) {
  if (cp < 0xC0) return nullptr;  // below the first decomposable character
  const NfcDecomposition* end = kNfcDecompositions + kNfcDecompositionCount;
  const NfcDecomposition* it = std::lower_bound(
      kNfcDecompositions, end, cp, [](const NfcDecomposition& d, char32_t c) { return d.cp < c; });
  return it != end && it->cp == cp ? it : nullptr;
}

// The primary composite of (first, second), or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 &&
      second > kTBase && second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const NfcComposition* end = kNfcCompositions + kNfcCompositionCount;
  const NfcComposition* it =
      std::lower_bound(kNfcCompositions, end, std::pair{first, second},
                       [](const NfcComposition& c, const std::pair<char32_t, char32_t>& key) {
                         return c.first != key.first ? c.first < key.first : c.second < key.second;
                       });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

}  // namespace

void nfc(std::vector<NfcChar>& chars) {
  // 1. Canonical decomposition.
  std::vector<NfcChar> d;
  d.reserve(chars.size());
  for (const NfcChar& c : chars) {
    if (c.cp >= kSBase && c.cp < kSBase + kSCount) {
      const char32_t s = c.cp - kSBase;
      d.push_back({kLBase + s / kNCount, c.begin, c.end});
      d.push_back({kVBase + (s % kNCount) / kTCount, c.begin, c.end});
      if (s % kTCount != 0) d.push_back({kTBase + s % kTCount, c.begin, c.end});
    } else if (const NfcDecomposition* dec = decomposition_of(c.cp)) {
      for (std::uint8_t k = 0; k < dec->length; ++k)
        d.push_back({kNfcDecompositionParts[dec->offset + k], c.begin, c.end});
    } else {
      d.push_back(c);
    }
  }
  // 2. Canonical ordering: each run of non-starters sorted by class, stably.
  std::vector<std::uint8_t> rank(d.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    rank[i] = rank_of(d[i].cp);
  for (std::size_t i = 0; i < d.size();) {
    if (rank[i] == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && rank[j] != 0)
      ++j;
    if (j - i > 1) {
      std::vector<std::pair<std::uint8_t, NfcChar>> run;
      for (std::size_t k = i; k < j; ++k)
        run.emplace_back(rank[k], d[k]);
      std::stable_sort(run.begin(), run.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t k = i; k < j; ++k) {
        rank[k] = run[k - i].first;
        d[k] = run[k - i].second;
      }
    }
    i = j;
  }
  // 3. Canonical composition: a character joins the last starter unless a character between
  // them blocks it (a starter, or a class at least its own).
  chars.clear();
  std::size_t starter = 0;
  bool have_starter = false;
  int last = -1;  // class of the last character kept after the starter; -1: none
  for (std::size_t i = 0; i < d.size(); ++i) {
    const int cls = rank[i];
    if (have_starter && !(last != -1 && (last == 0 || last >= cls))) {
      if (const char32_t composite = compose(chars[starter].cp, d[i].cp)) {
        NfcChar& s = chars[starter];
        s.cp = composite;
        s.begin = std::min(s.begin, d[i].begin);
        s.end = std::max(s.end, d[i].end);
        continue;
      }
    }
    if (cls == 0) {
      starter = chars.size();
      have_starter = true;
      last = -1;
    } else {
      last = cls;
    }
    chars.push_back(d[i]);
  }
}

}  // namespace attnlens::detail
