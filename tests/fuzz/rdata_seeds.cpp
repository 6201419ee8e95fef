// Writes starting inputs for fuzz_rdata (see its header for the commands): hand-made streams of
// every kind the reader keeps, in the target's input layout (a first byte choosing the reader).
//   rdata_seeds DIR
#include "rdata_writer.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using testing::RWriter;

void save(const std::string& dir, const std::string& name, char mode, const std::string& body) {
  std::ofstream(dir + "/" + name, std::ios::binary) << mode << body;
}

// list(variables = list(a = c(0L, n)), references = list(), compressed = TRUE)
std::string index(int record_length) {
  RWriter w;
  w.flags(testing::kVecSxp, true).i32(3);
  w.flags(testing::kVecSxp, true).i32(1).integers({0, record_length});
  w.names_attribute_start().strings({"a"}).nil();
  w.flags(testing::kVecSxp, true).i32(0);
  w.names_attribute_start(1).strings({}).nil();
  w.integers({1}, testing::kLglSxp);
  w.names_attribute_start(1).strings({"variables", "references", "compressed"}).nil();
  return w.bytes();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: rdata_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string text = RWriter().strings({"CHAPTER I", "", "It is a truth"}).bytes();

  RWriter mixed;
  mixed.flags(testing::kVecSxp, true).i32(6);
  mixed.integers({1, 0, -2147483647 - 1}).reals({1.5, -0.0});
  mixed.flags(testing::kStrSxp).i32(2).chars("caf\xC3\xA9", testing::kUtf8).na_chars();
  mixed.flags(testing::kListSxp, false, true).symbol("x").integers({1}, testing::kLglSxp).nil();
  mixed.flags(testing::kEnvSxp).i32(0).flags(testing::kGlobalEnvSxp);
  mixed.flags(testing::kListSxp, false, true).ref(1).ref(2).nil().nil().nil();
  mixed.flags(testing::kAltrepSxp).flags(testing::kListSxp).symbol("compact_intseq");
  mixed.flags(testing::kListSxp).symbol("base").flags(testing::kListSxp).integers({13}).nil();
  mixed.reals({5, 1, 1}).nil();
  mixed.names_attribute_start().strings({"i", "r", "s", "p", "e", "q"}).nil();

  save(dir, "index", 0, index(10));
  save(dir, "mixed", 0, mixed.bytes());
  save(dir, "text-rds", 1, testing::compress(text, true));
  const std::string record = testing::rdb_record(text, static_cast<std::uint32_t>(text.size()));
  const std::string rdx = testing::compress(index(static_cast<int>(record.size())), true);
  const std::string length = {static_cast<char>(rdx.size() >> 8), static_cast<char>(rdx.size())};
  save(dir, "lazyload", 2, length + rdx + record);
  return 0;
}
