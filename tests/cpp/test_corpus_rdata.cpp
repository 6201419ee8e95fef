// The R serialization reader (lib/tools/corpus/rdata.hpp) on hand-made streams: each item is
// spelled out byte by byte as R's serialize() writes it (see rdata_writer.hpp).
#include "helpers.hpp"
#include "rdata_writer.hpp"

#include <corpus/rdata.hpp>

#include <cstring>

using attnlens::ErrorCode;
using attnlens::corpus::kRNaInteger;
using attnlens::corpus::kRNull;
using attnlens::corpus::parse_r_serialized;
using attnlens::corpus::parse_rds;
using attnlens::corpus::RData;
using attnlens::corpus::REncoding;
using attnlens::corpus::RNode;
using attnlens::corpus::RRef;
using attnlens::corpus::RType;
using testing::kAscii;
using testing::kLatin1;
using testing::require_error;
using testing::RWriter;

namespace {

RData parse(const RWriter& w) {
  return parse_r_serialized(w.bytes(), "test stream");
}

const RNode& root(const RData& d) {
  return d.node(d.root());
}

// list(variables = list(emma = c(0L, 30L), persuasion = c(30L, 12L)), references = list(),
// compressed = TRUE), laid out as R lays out a lazy-load index (.rdx): the first "names" tag is a
// symbol, every later one a REFSXP to it.
RWriter index_stream() {
  RWriter w;
  w.flags(testing::kVecSxp, true).i32(3);
  w.flags(testing::kVecSxp, true).i32(2);
  w.integers({0, 30}).integers({30, 12});
  w.names_attribute_start().strings({"emma", "persuasion"}).nil();
  w.flags(testing::kVecSxp, true).i32(0);
  w.names_attribute_start(1).strings({}).nil();
  w.integers({1}, testing::kLglSxp);
  w.names_attribute_start(1).strings({"variables", "references", "compressed"}).nil();
  return w;
}

}  // namespace

TEST_CASE("rdata: the header gives the version and the native encoding", "[corpus]") {
  const RData v3 = parse(RWriter(3, "latin1").nil());
  CHECK(v3.version() == 3);
  CHECK(v3.native_encoding() == "latin1");
  CHECK(v3.root() == kRNull);
  const RData v2 = parse(RWriter(2).nil());
  CHECK(v2.version() == 2);
  CHECK(v2.native_encoding().empty());
}

TEST_CASE("rdata: integer, logical, double, complex and raw vectors with NA", "[corpus]") {
  {
    const RData d = parse(RWriter().integers({7, -3, kRNaInteger, 0}));
    CHECK(root(d).type == RType::Integer);
    CHECK(root(d).integers == std::vector<std::int32_t>{7, -3, kRNaInteger, 0});
  }
  {
    const RData d = parse(RWriter().integers({1, 0, kRNaInteger}, testing::kLglSxp));
    CHECK(root(d).type == RType::Logical);
    CHECK(root(d).integers == std::vector<std::int32_t>{1, 0, kRNaInteger});
  }
  {
    // R's NA_real_ is a NaN with payload 1954; decoding must keep the bits.
    const double r_na = [] {
      const std::uint64_t bits = 0x7FF00000000007A2ull;
      double v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }();
    const RData d = parse(RWriter().reals({1.5, -0.25, 1e300, r_na}));
    const auto& reals = root(d).reals;
    REQUIRE(reals.size() == 4);
    CHECK(reals[0] == 1.5);
    CHECK(reals[1] == -0.25);
    CHECK(reals[2] == 1e300);
    std::uint64_t bits;
    std::memcpy(&bits, &reals[3], sizeof bits);
    CHECK(bits == 0x7FF00000000007A2ull);
  }
  {
    RWriter w;
    w.flags(testing::kCplxSxp).i32(2).f64(1).f64(-2).f64(0.5).f64(4);
    const RData d = parse(w);
    CHECK(root(d).type == RType::Complex);
    CHECK(root(d).reals == std::vector<double>{1, -2, 0.5, 4});
  }
  {
    RWriter w;
    w.flags(testing::kRawSxp).i32(3).raw(std::string("\x00\xff\x10", 3));
    const RData d = parse(w);
    CHECK(root(d).bytes == std::vector<std::uint8_t>{0x00, 0xFF, 0x10});
  }
}

TEST_CASE("rdata: long vector lengths are read from two words", "[corpus]") {
  RWriter w;
  w.flags(testing::kIntSxp).i32(-1).u32(0).u32(2).i32(5).i32(6);
  CHECK(root(parse(w)).integers == std::vector<std::int32_t>{5, 6});
}

TEST_CASE("rdata: character vectors keep encodings and NA", "[corpus]") {
  RWriter w;
  w.flags(testing::kStrSxp).i32(4);
  w.chars("plain").chars("caf\xC3\xA9", testing::kUtf8).chars("caf\xE9", kLatin1).na_chars();
  const RData d = parse(w);
  const auto& strings = root(d).strings;
  REQUIRE(strings.size() == 4);
  CHECK(strings[0].bytes == "plain");
  CHECK(strings[0].encoding == REncoding::Ascii);
  CHECK(strings[1].encoding == REncoding::Utf8);
  CHECK(strings[2].bytes == "caf\xE9");
  CHECK(strings[2].encoding == REncoding::Latin1);
  CHECK(strings[3].is_na);
  require_error([&] { d.utf8_strings(d.root(), "the test vector"); }, ErrorCode::BAD_FILE,
                {"test stream", "element 4 of the test vector is NA"});
}

TEST_CASE("rdata: utf8_strings converts Latin-1 and checks UTF-8", "[corpus]") {
  {
    RWriter w;
    w.flags(testing::kStrSxp).i32(3);
    w.chars("plain").chars("caf\xC3\xA9", testing::kUtf8).chars("caf\xE9", kLatin1);
    const RData d = parse(w);
    CHECK(d.utf8_strings(d.root(), "v") ==
          std::vector<std::string>{"plain", "caf\xC3\xA9", "caf\xC3\xA9"});
  }
  {
    // Native strings follow the header's encoding.
    RWriter w(3, "ISO-8859-1");
    w.flags(testing::kStrSxp).i32(1).chars("\xE0 la", testing::kNative);
    const RData d = parse(w);
    CHECK(d.utf8_strings(d.root(), "v") == std::vector<std::string>{"\xC3\xA0 la"});
  }
  {
    RWriter w;
    w.flags(testing::kStrSxp).i32(2).chars("ok").chars("bad \xC3(", testing::kUtf8);
    const RData d = parse(w);
    require_error([&] { d.utf8_strings(d.root(), "v"); }, ErrorCode::BAD_FILE,
                  {"element 2 of v is not valid UTF-8", "byte 4"});
  }
  {
    RWriter w;
    w.flags(testing::kStrSxp).i32(1).chars("\x01\x02", testing::kBytes);
    const RData d = parse(w);
    require_error([&] { d.utf8_strings(d.root(), "v"); }, ErrorCode::BAD_FILE, {"marked as bytes"});
  }
  {
    RWriter w(3, "CP932");
    w.flags(testing::kStrSxp).i32(1).chars("\x82\xA0", testing::kNative);
    const RData d = parse(w);
    require_error([&] { d.utf8_strings(d.root(), "v"); }, ErrorCode::BAD_FILE, {"'CP932'"});
  }
  require_error([] { parse(RWriter().integers({1})).utf8_strings(1, "v"); }, ErrorCode::BAD_FILE,
                {"v is an integer vector (INTSXP), not a character vector"});
}

TEST_CASE("rdata: a named list, its names attribute and REFSXP tags", "[corpus]") {
  const RData d = parse(index_stream());
  const RNode& top = root(d);
  REQUIRE(top.type == RType::List);
  REQUIRE(top.items.size() == 3);

  const RRef variables = d.element(d.root(), "variables");
  const RRef emma = d.element(variables, "emma");
  CHECK(d.node(emma).integers == std::vector<std::int32_t>{0, 30});
  CHECK(d.node(d.element(variables, "persuasion")).integers == std::vector<std::int32_t>{30, 12});
  CHECK(d.node(d.element(d.root(), "compressed")).type == RType::Logical);
  CHECK(d.node(d.element(d.root(), "references")).items.empty());

  // All three names tags are the one symbol: the later two are references to the first.
  const RRef tag1 = d.node(d.node(variables).attributes).tags.at(0);
  const RRef tag3 = d.node(top.attributes).tags.at(0);
  CHECK(tag1 == tag3);
  CHECK(d.node(tag1).type == RType::Symbol);
  CHECK(d.node(tag1).text == "names");

  require_error([&] { d.element(d.root(), "nope"); }, ErrorCode::BAD_FILE,
                {"test stream", "no element named 'nope'"});
  require_error([&] { d.element(emma, "x"); }, ErrorCode::BAD_FILE, {"not in a list"});
}

TEST_CASE("rdata: pairlists keep tags, attributes and a dotted tail", "[corpus]") {
  // pairlist(a = 1L, 2L, b = "x") with attribute foo = "bar"
  RWriter w;
  w.flags(testing::kListSxp, true, true);
  w.flags(testing::kListSxp, false, true).symbol("foo").strings({"bar"}).nil();
  w.symbol("a").integers({1});
  w.flags(testing::kListSxp).integers({2});
  w.flags(testing::kListSxp, false, true).symbol("b").strings({"x"});
  w.nil();
  const RData d = parse(w);
  const RNode& list = root(d);
  REQUIRE(list.type == RType::Pairlist);
  REQUIRE(list.items.size() == 3);
  REQUIRE(list.tags.size() == 3);
  CHECK(d.node(list.tags[0]).text == "a");
  CHECK(list.tags[1] == kRNull);
  CHECK(d.node(list.tags[2]).text == "b");
  CHECK(d.node(list.items[1]).integers == std::vector<std::int32_t>{2});
  CHECK(list.tail == kRNull);
  CHECK(d.utf8_strings(d.attribute(d.root(), "foo"), "foo") == std::vector<std::string>{"bar"});
  CHECK(d.attribute(d.root(), "absent") == kRNull);

  // A language object f(1L): its arguments are plain cells of the same chain. A cell whose CDR
  // is not a cell (a dotted pair) keeps it as the tail.
  RWriter call;
  call.flags(testing::kLangSxp).symbol("f").flags(testing::kListSxp).integers({1}).nil();
  const RData c = parse(call);
  CHECK(root(c).type == RType::Language);
  REQUIRE(root(c).items.size() == 2);
  CHECK(c.node(root(c).items[0]).text == "f");

  RWriter dotted;
  dotted.flags(testing::kListSxp).integers({1}).integers({2});
  const RData p = parse(dotted);
  REQUIRE(root(p).items.size() == 1);
  CHECK(p.node(root(p).tail).integers == std::vector<std::int32_t>{2});
}

TEST_CASE("rdata: a long pairlist does not nest", "[corpus]") {
  // 5000 cells: deeper than kMaxRNesting if each cell counted as a level.
  RWriter w;
  for (int i = 0; i < 5000; ++i)
    w.flags(testing::kListSxp).integers({i});
  w.nil();
  const RData d = parse(w);
  REQUIRE(root(d).items.size() == 5000);
  CHECK(d.node(root(d).items[4999]).integers == std::vector<std::int32_t>{4999});
}

TEST_CASE("rdata: an environment may refer to itself", "[corpus]") {
  // new.env() holding x = <the environment itself>, enclosed by the global environment.
  RWriter w;
  w.flags(testing::kEnvSxp).i32(1);
  w.flags(testing::kGlobalEnvSxp);
  w.flags(testing::kListSxp, false, true).symbol("x").ref(1).nil();  // frame: x -> ref 1
  w.nil();                                                           // hash table
  w.nil();                                                           // attributes
  const RData d = parse(w);
  const RNode& env = root(d);
  REQUIRE(env.type == RType::Environment);
  CHECK(env.locked);
  REQUIRE(env.items.size() == 3);
  CHECK(d.node(env.items[0]).type == RType::GlobalEnv);
  const RNode& frame = d.node(env.items[1]);
  REQUIRE(frame.items.size() == 1);
  CHECK(frame.items[0] == d.root());
  CHECK(d.node(frame.tags[0]).text == "x");
}

TEST_CASE("rdata: singletons, symbols, builtins, S4, external pointers, persistent names",
          "[corpus]") {
  RWriter w;
  w.flags(testing::kVecSxp).i32(7);
  w.flags(testing::kEmptyEnvSxp).flags(testing::kBaseEnvSxp);
  w.symbol("sym");
  w.flags(testing::kBuiltinSxp).i32(3).raw("sum");
  w.flags(testing::kS4Sxp, true, false, true);
  w.flags(testing::kListSxp, false, true).symbol("class").strings({"Foo"}).nil();
  w.flags(testing::kExtPtrSxp).nil().symbol("tag");
  w.flags(testing::kPersistSxp).i32(0).i32(1).chars("key");
  const RData d = parse(w);
  const auto& items = root(d).items;
  REQUIRE(items.size() == 7);
  CHECK(d.node(items[0]).type == RType::EmptyEnv);
  CHECK(d.node(items[1]).type == RType::BaseEnv);
  CHECK(d.node(items[2]).text == "sym");
  CHECK(d.node(items[3]).type == RType::Builtin);
  CHECK(d.node(items[3]).text == "sum");
  CHECK(d.node(items[4]).type == RType::S4);
  CHECK(d.node(items[4]).is_object);
  CHECK(d.utf8_strings(d.attribute(items[4], "class"), "class") == std::vector<std::string>{"Foo"});
  CHECK(d.node(items[5]).type == RType::ExternalPointer);
  CHECK(d.node(d.node(items[5]).items.at(1)).text == "tag");
  CHECK(d.node(items[6]).type == RType::Persist);
  REQUIRE(d.node(items[6]).strings.size() == 1);
  CHECK(d.node(items[6]).strings[0].bytes == "key");
}

TEST_CASE("rdata: ALTREP compact sequences and wrappers expand", "[corpus]") {
  // 3:7 as R >= 3.5 writes it: class compact_intseq, state c(5, 3, 1).
  RWriter w;
  w.flags(testing::kAltrepSxp);
  w.flags(testing::kListSxp).symbol("compact_intseq");
  w.flags(testing::kListSxp).symbol("base").flags(testing::kListSxp).integers({13}).nil();
  w.reals({5, 3, 1});
  w.nil();
  const RData d = parse(w);
  CHECK(root(d).type == RType::Integer);
  CHECK(root(d).integers == std::vector<std::int32_t>{3, 4, 5, 6, 7});

  // A wrapper around c("a", "b") (state: CONS(object, metadata)) with a names attribute.
  RWriter wrap;
  wrap.flags(testing::kAltrepSxp);
  wrap.flags(testing::kListSxp).symbol("wrap_string");
  wrap.flags(testing::kListSxp).symbol("base").flags(testing::kListSxp).integers({16}).nil();
  wrap.flags(testing::kListSxp).strings({"a", "b"}).integers({0, 0});
  wrap.names_attribute_start().strings({"x", "y"}).nil();
  const RData s = parse(wrap);
  CHECK(s.utf8_strings(s.root(), "v") == std::vector<std::string>{"a", "b"});
  CHECK(s.utf8_strings(s.attribute(s.root(), "names"), "names") ==
        std::vector<std::string>{"x", "y"});

  // Expanding 2^30 elements out of a few bytes is refused.
  RWriter bomb;
  bomb.flags(testing::kAltrepSxp);
  bomb.flags(testing::kListSxp).symbol("compact_intseq");
  bomb.flags(testing::kListSxp).symbol("base").flags(testing::kListSxp).integers({13}).nil();
  bomb.reals({1073741824.0, 1, 1}).nil();
  require_error([&] { parse(bomb); }, ErrorCode::BAD_FILE,
                {"compact sequence's length 1.07374e+09", "expansion limit"});

  RWriter other;
  other.flags(testing::kAltrepSxp);
  other.flags(testing::kListSxp).symbol("deferred_string").nil();
  other.nil().nil();
  require_error([&] { parse(other); }, ErrorCode::BAD_FILE,
                {"ALTREP class 'deferred_string' is not supported"});
}

TEST_CASE("rdata: every truncation of a stream is BAD_FILE", "[corpus]") {
  const std::string full = index_stream().bytes();
  REQUIRE_NOTHROW(parse_r_serialized(full, "full"));
  for (std::size_t length = 0; length < full.size(); ++length) {
    INFO("prefix of " << length << " of " << full.size() << " bytes");
    require_error([&] { parse_r_serialized(full.substr(0, length), "cut.rds"); },
                  ErrorCode::BAD_FILE, {"cut.rds"});
  }
  require_error([&] { parse_r_serialized(full + "??", "long.rds"); }, ErrorCode::BAD_FILE,
                {"long.rds: 2 bytes follow the serialized object"});
}

TEST_CASE("rdata: lying and negative lengths are BAD_FILE before any allocation", "[corpus]") {
  {
    RWriter w;
    w.flags(testing::kStrSxp).i32(0x7FFFFFFF).chars("one");
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE,
                  {"declares 2147483647 elements, more than the 11 bytes left can hold"});
  }
  {
    // A long length of 2^48 - 1 elements.
    RWriter w;
    w.flags(testing::kRealSxp).i32(-1).u32(0xFFFF).u32(0xFFFFFFFF);
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE, {"declares 281474976710655 elements"});
  }
  {
    RWriter w;
    w.flags(testing::kVecSxp).i32(-5);
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE, {"negative length -5"});
  }
  {
    RWriter w;
    w.flags(testing::kCharSxp).i32(1000).raw("short");
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE,
                  {"ends inside a string", "1000 bytes needed, 5 left"});
  }
}

TEST_CASE("rdata: malformed structure is BAD_FILE naming the problem", "[corpus]") {
  require_error([] { parse_r_serialized("A\n", "a.rds"); }, ErrorCode::BAD_FILE,
                {"a.rds", "ASCII serialization format is not supported"});
  require_error([] { parse_r_serialized("B\n", "b.rds"); }, ErrorCode::BAD_FILE, {"native binary"});
  require_error([] { parse_r_serialized("RDX3\n", "c.rds"); }, ErrorCode::BAD_FILE,
                {"not R serialization data"});
  require_error([] { parse(RWriter(4).nil()); }, ErrorCode::BAD_FILE,
                {"format version 4 is not supported"});
  {
    RWriter w(3, "");
    w.flags(testing::kVecSxp).i32(1).ref(1);
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE,
                  {"reference 1 points past the 0 symbols and environments read so far"});
  }
  {
    RWriter w;
    w.flags(99);
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE, {"unknown object type code 99"});
  }
  {
    RWriter w;
    w.flags(testing::kStrSxp).i32(2).chars("a").integers({1});
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE,
                  {"element 1 of a character vector is an integer vector (INTSXP), not a string"});
  }
  {
    RWriter w;
    w.flags(testing::kSymSxp).na_chars();
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE, {"symbol's name is NA"});
  }
  {
    RWriter w;
    w.flags(testing::kBcodeSxp).i32(1);
    require_error([&] { parse(w); }, ErrorCode::BAD_FILE, {"byte code is not supported"});
  }
}

TEST_CASE("rdata: nesting is bounded", "[corpus]") {
  const auto nested = [](int depth) {
    RWriter w;
    for (int i = 0; i < depth; ++i)
      w.flags(testing::kVecSxp).i32(1);
    w.nil();
    return w;
  };
  // kMaxRNesting lists inside each other put their NULL at depth kMaxRNesting: allowed.
  REQUIRE_NOTHROW(parse(nested(attnlens::corpus::kMaxRNesting)));
  require_error([&] { parse(nested(attnlens::corpus::kMaxRNesting + 1)); }, ErrorCode::BAD_FILE,
                {"nested more than 1000 deep"});
}

TEST_CASE("rdata: parse_rds reads gzip-compressed and plain .rds data", "[corpus]") {
  const std::string plain = RWriter().strings({"a", "b"}).bytes();
  const RData d = parse_rds(testing::compress(plain, true), "x.rds");
  CHECK(d.utf8_strings(d.root(), "x") == std::vector<std::string>{"a", "b"});
  const RData p = parse_rds(plain, "x.rds");
  CHECK(p.utf8_strings(p.root(), "x") == std::vector<std::string>{"a", "b"});
  require_error([] { parse_rds("BZh91AY", "y.rds"); }, ErrorCode::BAD_FILE,
                {"y.rds: bzip2-compressed"});
  require_error([&] { parse_rds(testing::compress(plain, true), "z.rds", 10); },
                ErrorCode::BAD_FILE, {"z.rds: inflates to more than the limit of 10 bytes"});
}
