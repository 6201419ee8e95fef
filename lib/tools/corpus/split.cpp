#include "split.hpp"

#include "io/json.hpp"
#include "utf8.hpp"

#include <algorithm>
#include <set>

namespace attnlens::corpus {
namespace {

void append_counts(std::string& out, const TextCounts& c) {
  out += "{\"documents\": " + std::to_string(c.documents) +
         ", \"paragraphs\": " + std::to_string(c.paragraphs) +
         ", \"words\": " + std::to_string(c.words) +
         ", \"characters\": " + std::to_string(c.characters) +
         ", \"bytes\": " + std::to_string(c.bytes) + "}";
}

void append_tally(std::string& out, const std::map<std::string, std::size_t>& tally) {
  out += "{";
  bool first = true;
  for (const auto& [marker, count] : tally) {
    out += first ? "\n      " : ",\n      ";
    first = false;
    detail::append_json_string(out, marker);
    out += ": " + std::to_string(count);
  }
  out += first ? "}" : "\n    }";
}

// The end of the last sentence that ends within text[0, limit), or 0 if none does: a sentence
// ends after '.', '?' or '!' (and any closing quotes) followed by a space.
std::size_t sentence_cut(std::string_view text, std::size_t limit) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const char c = text[i];
    if (c != '.' && c != '?' && c != '!') continue;
    std::size_t end = i + 1;
    while (end < text.size() && (text[end] == '"' || text[end] == '\''))
      ++end;
    if (end <= limit && end < text.size() && text[end] == ' ') best = end;
  }
  return best;
}

}  // namespace

bool is_held_out(const Document& document) {
  return document.ordinal > 0 && document.ordinal % kHeldOutEvery == 0;
}

void TextCounts::add(std::string_view text) {
  ++documents;
  bytes += text.size();
  characters += count_code_points(text);
  bool in_word = false;
  bool line_has_text = false;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n';
    if (!space && !in_word) ++words;
    in_word = !space;
    if (c == '\n') {
      if (line_has_text) ++paragraphs;
      line_has_text = false;
    } else if (!space) {
      line_has_text = true;
    }
  }
  if (line_has_text) ++paragraphs;
}

CorpusSplit split_corpus(const std::vector<Document>& documents) {
  CorpusSplit split;
  for (const Document& d : documents) {
    if (d.text.empty()) continue;
    const bool held_out = is_held_out(d);
    std::string& out = held_out ? split.heldout : split.train;
    out += d.text;
    out += "\n\n";
    (held_out ? split.heldout_counts : split.train_counts)[d.source].add(d.text);
  }
  return split;
}

std::string split_record(const std::vector<Document>& documents, const CorpusSplit& split,
                         const std::vector<SourceInfo>& sources,
                         const std::vector<std::string>& normalisation,
                         const MarkerTally& markers) {
  std::string out = "{\n  \"format\": ";
  detail::append_json_string(
      out,
      "UTF-8 text; one paragraph per line; every document followed by one empty line, so a "
      "blank line (\"\\n\\n\") separates documents");
  out += ",\n  \"rule\": ";
  const bool wordnet = std::any_of(sources.begin(), sources.end(),
                                   [](const SourceInfo& s) { return s.name == "wordnet"; });
  const std::string every = std::to_string(kHeldOutEvery);
  detail::append_json_string(
      out, "held out: every " + every + "th chapter of each novel (counted across volumes)" +
               (wordnet ? ", every " + every + "th WordNet document (100 consecutive synsets)"
                        : std::string()) +
               " and every " + every + "th address in date order; front matter always trains");
  out += ",\n  \"normalisation\": [";
  for (std::size_t i = 0; i < normalisation.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    detail::append_json_string(out, normalisation[i]);
  }
  out += "\n  ],\n  \"sources\": {";
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const SourceInfo& s = sources[i];
    out += i == 0 ? "\n    " : ",\n    ";
    detail::append_json_string(out, s.name);
    out += ": {\n      \"origin\": ";
    detail::append_json_string(out, s.origin);
    out += ",\n      \"licence\": ";
    detail::append_json_string(out, s.licence);
    out += ",\n      \"train\": ";
    const auto train = split.train_counts.find(s.name);
    append_counts(out, train == split.train_counts.end() ? TextCounts{} : train->second);
    out += ",\n      \"heldout\": ";
    const auto heldout = split.heldout_counts.find(s.name);
    append_counts(out, heldout == split.heldout_counts.end() ? TextCounts{} : heldout->second);
    out += "\n    }";
  }
  out += "\n  },\n  \"stage_markers\": {\n    \"removed\": ";
  append_tally(out, markers.removed);
  out += ",\n    \"unwrapped\": ";
  append_tally(out, markers.unwrapped);
  out += "\n  },\n  \"documents\": [";
  bool first = true;
  for (const Document& d : documents) {
    if (d.text.empty()) continue;
    TextCounts c;
    c.add(d.text);
    out += first ? "\n    {\"source\": " : ",\n    {\"source\": ";
    first = false;
    detail::append_json_string(out, d.source);
    out += ", \"work\": ";
    detail::append_json_string(out, d.work);
    out += ", \"part\": ";
    detail::append_json_string(out, d.part);
    out += ", \"origin\": ";
    detail::append_json_string(out, d.origin);
    out += ", \"split\": ";
    out += is_held_out(d) ? "\"heldout\"" : "\"train\"";
    out += ", \"words\": " + std::to_string(c.words) +
           ", \"characters\": " + std::to_string(c.characters) + "}";
  }
  out += "\n  ]\n}\n";
  return out;
}

HeldOutSample heldout_sample(const std::vector<Document>& documents, std::size_t bytes_per_source) {
  HeldOutSample sample;
  std::set<std::string> done;
  for (const Document& d : documents) {
    if (!is_held_out(d) || d.text.empty() || done.count(d.source) != 0) continue;
    done.insert(d.source);
    std::string taken;
    std::string_view rest = d.text;
    while (!rest.empty()) {
      const std::size_t newline = rest.find('\n');
      const std::string_view paragraph = rest.substr(0, newline);
      const std::size_t room =
          bytes_per_source - std::min(bytes_per_source, taken.size() + (taken.empty() ? 0 : 1));
      const std::size_t cut =
          paragraph.size() <= room ? paragraph.size() : sentence_cut(paragraph, room);
      if (cut == 0) break;
      if (!taken.empty()) taken += '\n';
      taken += paragraph.substr(0, cut);
      if (cut < paragraph.size() || newline == std::string_view::npos) break;
      rest.remove_prefix(newline + 1);
    }
    if (taken.empty()) continue;
    sample.text += taken + "\n\n";
    sample.taken_from.push_back(d.source + ": " + d.work + (d.part.empty() ? "" : ", " + d.part) +
                                " (" + d.origin + "), first " + std::to_string(taken.size()) +
                                " bytes");
  }
  return sample;
}

}  // namespace attnlens::corpus
