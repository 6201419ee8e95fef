#include "austen.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "normalize.hpp"

#include <algorithm>

namespace attnlens::corpus {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool is_roman(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c == 'I' || c == 'V' || c == 'X' || c == 'L' || c == 'C';
  });
}

bool is_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "CHAPTER XII", "Chapter 3", "CHAPTER 1." -> the numeral, else empty.
std::string_view chapter_numeral(std::string_view line) {
  for (const std::string_view word : {std::string_view("CHAPTER "), std::string_view("Chapter ")}) {
    if (line.substr(0, word.size()) != word) continue;
    std::string_view numeral = trim(line.substr(word.size()));
    if (!numeral.empty() && numeral.back() == '.') numeral.remove_suffix(1);
    if (is_roman(numeral) || is_number(numeral)) return numeral;
  }
  return {};
}

// "VOLUME II" -> "II", else empty.
std::string_view volume_numeral(std::string_view line) {
  const std::string_view word = "VOLUME ";
  if (line.substr(0, word.size()) != word) return {};
  const std::string_view numeral = trim(line.substr(word.size()));
  return is_roman(numeral) || is_number(numeral) ? numeral : std::string_view{};
}

bool is_end(std::string_view line) {
  return line == "THE END" || line == "FINIS" || line == "A NOTE ON THE TEXT";
}

// Builds one document's paragraphs line by line.
class Paragraphs {
 public:
  void add_line(std::string_view line) {
    std::string without_italics;
    without_italics.reserve(line.size());
    for (const char c : line) {
      if (c != '_') without_italics += c;
    }
    const std::string cleaned = collapse_spaces(without_italics);
    if (cleaned.empty()) return;
    if (!paragraph_.empty() && !ends_with_dash(paragraph_)) paragraph_ += ' ';
    paragraph_ += cleaned;
  }

  void end_paragraph() {
    if (!paragraph_.empty() && !is_editorial(paragraph_)) {
      if (!text_.empty()) text_ += '\n';
      text_ += paragraph_;
    }
    paragraph_.clear();
  }

  // The document's text so far; starts a new one.
  std::string take() {
    end_paragraph();
    std::string out = std::move(text_);
    text_.clear();
    return out;
  }

 private:
  static bool ends_with_dash(const std::string& s) {
    return s.size() >= 2 && s.compare(s.size() - 2, 2, "--") == 0;
  }
  // A bracketed editor's note, or a row of asterisks (a scene break).
  static bool is_editorial(const std::string& p) {
    if (p.front() == '[' && p.back() == ']') return true;
    return std::all_of(p.begin(), p.end(), [](char c) { return c == '*' || c == ' '; });
  }

  std::string paragraph_;
  std::string text_;
};

}  // namespace

std::vector<Document> austen_documents(std::string_view title, std::string_view origin,
                                       const std::vector<std::string>& lines) {
  const auto make_document = [&](std::string part, int ordinal) {
    Document d;
    d.source = "austen";
    d.work = std::string(title);
    d.part = std::move(part);
    d.origin = std::string(origin);
    d.ordinal = ordinal;
    return d;
  };
  std::vector<Document> documents;
  Paragraphs paragraphs;
  std::string volume;
  int chapters = 0;
  for (const std::string& raw : lines) {
    const std::string_view line = trim(raw);
    if (is_end(line)) break;
    if (const std::string_view numeral = volume_numeral(line); !numeral.empty()) {
      paragraphs.end_paragraph();
      volume = numeral;
      continue;
    }
    if (const std::string_view numeral = chapter_numeral(line); !numeral.empty()) {
      std::string text = paragraphs.take();
      if (chapters > 0) {
        documents.back().text = std::move(text);
      } else if (!text.empty()) {
        documents.push_back(make_document("front matter", 0));
        documents.back().text = std::move(text);
      }
      ++chapters;
      documents.push_back(make_document(
          (volume.empty() ? "" : "Volume " + volume + ", ") + "Chapter " + std::string(numeral),
          chapters));
      continue;
    }
    if (line.empty()) {
      paragraphs.end_paragraph();
    } else {
      paragraphs.add_line(line);
    }
  }
  if (chapters == 0) {
    detail::fail(ErrorCode::BAD_FILE, origin, ": ", title,
                 " has no chapter heading (a line such as \"CHAPTER I\" or \"Chapter 1\")");
  }
  documents.back().text = paragraphs.take();
  return documents;
}

}  // namespace attnlens::corpus
