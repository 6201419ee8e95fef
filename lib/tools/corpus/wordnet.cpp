#include "wordnet.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "normalize.hpp"

#include <algorithm>
#include <string>

namespace attnlens::corpus {
namespace {

using detail::fail;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> fields_of(std::string_view head) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < head.size()) {
    while (at < head.size() && head[at] == ' ')
      ++at;
    const std::size_t end = std::min(head.find(' ', at), head.size());
    if (end > at) fields.push_back(head.substr(at, end - at));
    at = end;
  }
  return fields;
}

int hex_count(std::string_view s) {
  if (s.empty() || s.size() > 2) return -1;
  int n = 0;
  for (char c : s) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return -1;
    n = n * 16 + digit;
  }
  return n;
}

// "true_cat" -> "true cat"; "fine(a)" -> "fine" (an adjective's position marker).
std::string word_of(std::string_view field) {
  if (!field.empty() && field.back() == ')') {
    const std::size_t open = field.rfind('(');
    if (open != std::string_view::npos && open > 0) field = field.substr(0, open);
  }
  std::string word(field);
  std::replace(word.begin(), word.end(), '_', ' ');
  return word;
}

// Splits the gloss at semicolons outside double quotes.
std::vector<std::string_view> gloss_parts(std::string_view gloss) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= gloss.size(); ++i) {
    if (i < gloss.size() && gloss[i] == '"') quoted = !quoted;
    if (i == gloss.size() || (gloss[i] == ';' && !quoted)) {
      const std::string_view part = trim(gloss.substr(start, i - start));
      if (!part.empty()) parts.push_back(part);
      start = i + 1;
    }
  }
  return parts;
}

bool ends_sentence(const std::string& s) {
  return !s.empty() && (s.back() == '.' || s.back() == '?' || s.back() == '!');
}

}  // namespace

std::optional<Synset> parse_wordnet_line(std::string_view line, std::string_view where) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (trim(line).empty() || line.substr(0, 2) == "  ") return std::nullopt;
  const std::size_t bar = line.find(" | ");
  if (bar == std::string_view::npos) {
    fail(ErrorCode::BAD_FILE, where, ": no \" | \" before the gloss; not a WordNet synset line");
  }
  const std::vector<std::string_view> fields = fields_of(line.substr(0, bar));
  if (fields.size() < 4) {
    fail(ErrorCode::BAD_FILE, where, ": ", fields.size(),
         " fields before the gloss; a synset has an offset, a lexicographer file, a type and a "
         "word count first");
  }
  const int count = hex_count(fields[3]);
  if (count < 1) {
    fail(ErrorCode::BAD_FILE, where, ": the word count \"", fields[3],
         "\" is not a hexadecimal number from 1");
  }
  if (fields.size() < 4 + 2 * static_cast<std::size_t>(count)) {
    fail(ErrorCode::BAD_FILE, where, ": the line says ", count, " words but has fields for ",
         (fields.size() - 4) / 2);
  }
  Synset synset;
  for (int i = 0; i < count; ++i) {
    std::string word = word_of(fields[4 + 2 * static_cast<std::size_t>(i)]);
    if (std::find(synset.words.begin(), synset.words.end(), word) == synset.words.end()) {
      synset.words.push_back(std::move(word));
    }
  }
  for (std::string_view part : gloss_parts(line.substr(bar + 3))) {
    if (part.front() != '"') {
      synset.definitions.emplace_back(part);
      continue;
    }
    // An example: the words between the quotes; an attribution after them ("- Bible") goes.
    part.remove_prefix(1);
    const std::size_t close = part.find('"');
    const std::string_view example = trim(part.substr(0, close));
    if (!example.empty()) synset.examples.emplace_back(example);
  }
  return synset;
}

std::string wordnet_paragraph(const Synset& synset) {
  std::string out;
  for (std::size_t i = 0; i < synset.words.size(); ++i) {
    if (i > 0) out += ", ";
    out += synset.words[i];
  }
  if (!synset.definitions.empty()) {
    out += ": ";
    for (std::size_t i = 0; i < synset.definitions.size(); ++i) {
      if (i > 0) out += "; ";
      out += synset.definitions[i];
    }
  }
  if (!ends_sentence(out)) out += '.';
  for (const std::string& example : synset.examples) {
    std::string sentence = example;
    if (sentence[0] >= 'a' && sentence[0] <= 'z') sentence[0] = static_cast<char>(sentence[0] - 32);
    if (!ends_sentence(sentence)) sentence += '.';
    out += ' ';
    out += sentence;
  }
  return collapse_spaces(normalize_typography(out));
}

std::vector<Document> wordnet_documents(std::string_view text, std::string_view label,
                                        std::string_view file) {
  std::vector<Document> documents;
  std::size_t in_document = 0;
  std::size_t synsets = 0;
  std::size_t line_number = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    ++line_number;
    const std::string where = std::string(file) + ":" + std::to_string(line_number);
    const std::optional<Synset> synset = parse_wordnet_line(text.substr(at, end - at), where);
    at = end + 1;
    if (!synset) continue;
    if (in_document == 0) {
      Document d;
      d.source = "wordnet";
      d.work = "WordNet " + std::string(label);
      d.origin = std::string(file);
      d.ordinal = static_cast<int>(documents.size()) + 1;
      documents.push_back(std::move(d));
    }
    Document& d = documents.back();
    if (!d.text.empty()) d.text += '\n';
    d.text += wordnet_paragraph(*synset);
    ++synsets;
    if (++in_document == kWordNetSynsetsPerDocument) in_document = 0;
  }
  if (documents.empty()) fail(ErrorCode::BAD_FILE, file, ": the file holds no synset");
  for (Document& d : documents) {
    const std::size_t first =
        (static_cast<std::size_t>(d.ordinal) - 1) * kWordNetSynsetsPerDocument;
    const std::size_t last = std::min(first + kWordNetSynsetsPerDocument, synsets);
    d.part = "synsets " + std::to_string(first + 1) + "-" + std::to_string(last);
  }
  return documents;
}

}  // namespace attnlens::corpus
