#include "sotu.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "normalize.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace attnlens::corpus {
namespace {

using detail::fail;

const std::string& string_member(const detail::JsonValue& object, std::string_view key,
                                 std::string_view file_name) {
  const detail::JsonValue* value = object.find(key);
  if (value == nullptr || !value->is_string()) {
    fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" is ",
         value == nullptr ? "missing" : value->kind_name(), "; a string was expected");
  }
  return value->as_string();
}

}  // namespace

SotuAddress parse_sotu_address(std::string_view json, std::string_view file_name) {
  const detail::JsonValue root = detail::parse_json(json, file_name);
  if (!root.is_object()) {
    fail(ErrorCode::BAD_FILE, file_name, ": the file holds ", root.kind_name(),
         ", not an object with year, name, party and text");
  }
  const detail::JsonValue* year = root.find("year");
  if (year == nullptr || !year->is_integer() || year->as_integer() < 1700 ||
      year->as_integer() > 2200) {
    fail(ErrorCode::BAD_FILE, file_name, ": \"year\" is ",
         year == nullptr ? "missing" : year->kind_name(),
         "; a whole number from 1700 to 2200 was expected");
  }
  SotuAddress address;
  address.year = static_cast<int>(year->as_integer());
  address.president = string_member(root, "name", file_name);
  address.party = string_member(root, "party", file_name);
  address.text = string_member(root, "text", file_name);
  address.file = std::string(file_name);
  return address;
}

std::vector<std::string> sotu_files(const std::string& directory) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) {
    fail(ErrorCode::BAD_FILE, directory, ": cannot list the folder (", error.message(), ")");
  }
  std::vector<std::string> files;
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) break;
    const std::filesystem::path& path = it->path();
    if (path.extension() == ".json" && it->is_regular_file(error)) {
      files.push_back(path.filename().string());
    }
  }
  if (error) {
    fail(ErrorCode::BAD_FILE, directory, ": listing the folder failed (", error.message(), ")");
  }
  if (files.empty()) fail(ErrorCode::BAD_FILE, directory, ": the folder holds no .json file");
  std::sort(files.begin(), files.end());
  return files;
}

void MarkerTally::add(const StrippedText& stripped) {
  for (const auto& [marker, count] : stripped.removed)
    removed[marker] += count;
  for (const auto& [marker, count] : stripped.unwrapped)
    unwrapped[marker] += count;
}

Document sotu_document(const SotuAddress& address, int ordinal, MarkerTally& tally) {
  const StrippedText stripped = strip_stage_markers(address.text);
  tally.add(stripped);
  Document d;
  d.source = "sotu";
  d.work = std::to_string(address.year) + " " + address.president;
  d.origin = address.file;
  d.ordinal = ordinal;
  d.text = collapse_spaces(normalize_typography(stripped.text));
  return d;
}

}  // namespace attnlens::corpus
