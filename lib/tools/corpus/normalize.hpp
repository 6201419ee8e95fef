// The light normalisation both corpora get before the tokenizer sees them.
#pragma once

#include <string>
#include <string_view>

namespace attnlens::corpus {

// Typographic characters to the ASCII forms the two corpora mostly use already (Jane Austen's
// text is plain ASCII with "--" for a dash; a few State of the Union addresses use curly
// quotes and dashes):
//   U+2018 and U+2019 (single quotes, apostrophe) -> '     U+201C and U+201D -> "
//   U+2014 (em dash) -> "--"    U+2013 (en dash), U+2011 (non-breaking hyphen) -> "-"
//   U+00A0 (no-break space) -> " "
// Everything else is kept as it is (letters with accents, the degree sign, ...). `text` is
// UTF-8; so is the result.
std::string normalize_typography(std::string_view text);

// Runs of spaces and tabs become one space, and spaces at the start and the end go. Newlines
// are kept, and spaces next to them go.
std::string collapse_spaces(std::string_view text);

}  // namespace attnlens::corpus
