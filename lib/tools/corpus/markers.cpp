#include "markers.hpp"

#include "normalize.hpp"

#include <algorithm>
#include <cctype>

namespace attnlens::corpus {
namespace {

std::string lower_trimmed(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  while (!s.empty() && space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && space(s.back()))
    s.remove_suffix(1);
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Content of a [...] span that is a marker or an editorial note, not words of the speech.
bool is_removed_bracket(std::string_view inner) {
  const std::string s = lower_trimmed(inner);
  if (starts_with(s, "applause") || starts_with(s, "laughter") || starts_with(s, "laughs")) {
    return true;
  }
  if (starts_with(s, "at this point") || starts_with(s, "footnote")) return true;
  if (all_digits(s)) return true;  // a footnote reference
  if (starts_with(s, "p.")) {      // a page break in the printed source, "[p.2]"
    std::string_view page = std::string_view(s).substr(2);
    while (!page.empty() && page.front() == ' ')
      page.remove_prefix(1);
    if (all_digits(page)) return true;
  }
  return s == "missing text" || s == "sic";
}

// Content of a (...) span that is an audience reaction.
bool is_audience_parenthesis(std::string_view inner) {
  std::string s = lower_trimmed(inner);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "applause" || s == "laughter" || s == "laughs";
}

// The marker as a key for the tallies, shortened when long (never inside a UTF-8 sequence).
std::string tally_key(std::string_view marker) {
  constexpr std::size_t kLongest = 48;
  constexpr std::size_t kKept = 45;
  if (marker.size() <= kLongest) return std::string(marker);
  std::size_t cut = kKept;
  while (cut > 0 && (static_cast<unsigned char>(marker[cut]) & 0xC0) == 0x80)
    --cut;
  return std::string(marker.substr(0, cut)) + "...";
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// After a removed marker at text[.., next): when the output ends in a dash and the text goes on
// with the same dash, the marker sat between two dashes; skip the second. Returns the new next.
std::size_t skip_doubled_dash(const std::string& out, std::string_view text, std::size_t next) {
  for (const std::string_view dash : {std::string_view("\xE2\x80\x94"), std::string_view("--")}) {
    if (ends_with(out, dash) && text.substr(next, dash.size()) == dash) return next + dash.size();
  }
  return next;
}

}  // namespace

StrippedText strip_stage_markers(std::string_view text) {
  StrippedText result;
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '[') {
      const std::size_t close = text.find(']', i + 1);
      const std::size_t next_open = text.find('[', i + 1);
      if (close == std::string_view::npos || next_open < close) {
        ++result.unwrapped["[ (unclosed)"];
        ++i;
        continue;
      }
      const std::string_view marker = text.substr(i, close + 1 - i);
      const std::string_view inner = marker.substr(1, marker.size() - 2);
      if (is_removed_bracket(inner)) {
        ++result.removed[tally_key(marker)];
        i = skip_doubled_dash(out, text, close + 1);
      } else {
        ++result.unwrapped[tally_key(marker)];
        out += inner;
        i = close + 1;
      }
      continue;
    }
    if (c == ']') {
      ++result.unwrapped["] (unopened)"];
      ++i;
      continue;
    }
    if (c == '(') {
      const std::size_t close = text.find(')', i + 1);
      if (close != std::string_view::npos &&
          is_audience_parenthesis(text.substr(i + 1, close - i - 1))) {
        ++result.removed[tally_key(text.substr(i, close + 1 - i))];
        i = skip_doubled_dash(out, text, close + 1);
        continue;
      }
    }
    out += c;
    ++i;
  }
  result.text = collapse_spaces(out);
  return result;
}

}  // namespace attnlens::corpus
