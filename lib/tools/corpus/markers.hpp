// Stage markers and editorial brackets in the State of the Union transcripts.
//
// Every bracketed span is classified by its content (case-insensitive, trimmed):
//   removed, with the brackets:
//     audience reactions  "[Laughter]", "[applause]", and "(Applause.)", "(applause)",
//                         "(Laughter.)", "(laughs)" in parentheses
//     stage directions    "[At this point, ...]"
//     editorial notes     "[Footnote 1: ...]", footnote references "[1]", page breaks "[p.2]",
//                         "[missing text]", "[sic]"
//   unwrapped (brackets dropped, words kept): every other bracketed span, editorial insertions
//     such as "[the States]", "[$]", and the interpolated paragraphs of the 1960 address.
// A '[' with no ']' before the next '[' opens a passage that continues over paragraphs (the
// 1960 address opens each interpolated paragraph with '[' and closes only the last): the lone
// '[' is dropped. A ']' with no '[' is dropped too. Parentheses hold ordinary prose otherwise
// and are kept.
// After a removal: a marker between two dashes ("--(applause)--", "—(applause)—") leaves one
// dash, runs of spaces become one space, and the text is trimmed.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace attnlens::corpus {

struct StrippedText {
  std::string text;
  // Each removed marker as written (e.g. "[Laughter]") and how often it occurred; markers longer
  // than 48 bytes are shortened to their first 45 bytes and "...".
  std::map<std::string, std::size_t> removed;
  // The same for unwrapped spans; "[ (unclosed)" and "] (unopened)" count lone brackets.
  std::map<std::string, std::size_t> unwrapped;
};

// Strips stage markers from one address. `text` is UTF-8; the result is too.
StrippedText strip_stage_markers(std::string_view text);

}  // namespace attnlens::corpus
