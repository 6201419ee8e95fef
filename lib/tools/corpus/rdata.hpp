// A reader for R's serialization format (what saveRDS(), serialize() and R's lazy-load databases
// write), for untrusted input: every length is checked against the bytes that remain, nesting is
// bounded, and anything malformed is Error(BAD_FILE) naming the data and the byte offset.
//
// Supported: the XDR (big-endian binary) format "X\n", versions 2 and 3; NULL, symbols, pairlists
// and their relatives (language objects, closures, promises, dots) with tags and attributes,
// environments, character strings with their encodings and NA, logical, integer, double,
// complex, character, generic (list) and expression vectors, raw vectors, S4 objects, external
// pointers and weak references (their fields only), built-in function names, references to
// earlier symbols and environments (REFSXP), persistent names (PERSISTSXP, kept unresolved),
// namespaces and packages (by their names), the special environments and values, and long
// vectors. ALTREP objects of the compact sequence and wrapper classes are expanded to the
// ordinary vectors they stand for.
// Not supported (BAD_FILE says so): the ASCII and native-binary formats, byte code, and other
// ALTREP classes.
#pragma once

#include "inflate.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::corpus {

// R's SEXPTYPE codes, as written in the stream, and the codes serialize.c uses for singletons.
enum class RType : std::uint8_t {
  Nil = 0,
  Symbol = 1,
  Pairlist = 2,
  Closure = 3,
  Environment = 4,
  Promise = 5,
  Language = 6,
  Special = 7,
  Builtin = 8,
  Char = 9,
  Logical = 10,
  Integer = 13,
  Real = 14,
  Complex = 15,
  String = 16,
  Dots = 17,
  List = 19,
  Expression = 20,
  ExternalPointer = 22,
  WeakReference = 23,
  Raw = 24,
  S4 = 25,
  BaseEnv = 241,
  EmptyEnv = 242,
  Persist = 247,
  Package = 248,
  Namespace = 249,
  BaseNamespace = 250,
  MissingArg = 251,
  UnboundValue = 252,
  GlobalEnv = 253,
};

// How the bytes of a string are encoded, from the string's flags.
enum class REncoding : std::uint8_t {
  Native,  // the writer's native encoding (for version 3, RData::native_encoding)
  Utf8,
  Latin1,
  Bytes,  // raw bytes, no encoding
  Ascii,
};

// One element of a character vector (an R CHARSXP).
struct RString {
  std::string bytes;  // the string's bytes as stored (empty for NA)
  REncoding encoding = REncoding::Native;
  bool is_na = false;  // R's NA_character_
};

// R's NA for logical and integer vectors.
inline constexpr std::int32_t kRNaInteger = INT32_MIN;

// An index into RData::nodes(). 0 is R's NULL.
using RRef = std::uint32_t;
inline constexpr RRef kRNull = 0;

// One R object. Which fields are used depends on `type`:
//   Symbol, Builtin, Special: `text` is the name. Char: `text` holds the string.
//   Logical, Integer: `integers` (kRNaInteger is NA). Real: `reals`. Complex: `reals` as
//   (real, imaginary) pairs. String: `strings`. Raw: `bytes`. List, Expression: `items`.
//   Pairlist, Language, Closure, Promise, Dots: a chain of cells; `items` holds the value (CAR)
//   of each cell, `tags` the tag of each cell (kRNull when it has none), and `tail` the CDR of
//   the last cell (kRNull for a proper list). A cell after the first that carries attributes of
//   its own is kept as the `tail` object instead of being merged.
//   Environment: `items` = {enclosure, frame, hash table}, `locked`.
//   ExternalPointer: `items` = {protected value, tag}. Persist, Namespace, Package: `strings`
//   are the names the writer gave. The special environments and values carry nothing.
struct RNode {
  RType type = RType::Nil;
  bool is_object = false;    // R's OBJECT bit (the object has a class)
  std::uint16_t levels = 0;  // R's general-purpose bits
  RRef attributes = kRNull;  // a Pairlist of attributes tagged by name, or kRNull
  std::string text;
  REncoding encoding = REncoding::Native;  // for Char
  bool is_na = false;                      // for Char: NA_character_
  bool locked = false;                     // for Environment
  std::vector<std::int32_t> integers;
  std::vector<double> reals;
  std::vector<RString> strings;
  std::vector<std::uint8_t> bytes;
  std::vector<RRef> items;
  std::vector<RRef> tags;
  RRef tail = kRNull;
};

// Deepest nesting of objects inside objects that parse_r_serialized() accepts. The cells of a
// pairlist are read in a loop and do not count; a list in a list does.
inline constexpr int kMaxRNesting = 1000;

// The objects of one serialized stream. Objects refer to each other by RRef, so shared and
// circular references (an environment that holds itself) need no ownership juggling.
class RData {
 public:
  RData();

  // The object the stream holds.
  RRef root() const { return root_; }
  const RNode& node(RRef ref) const { return nodes_.at(ref); }
  const std::vector<RNode>& nodes() const { return nodes_; }

  // Format version (2 or 3) and, for version 3, the writer's native encoding ("UTF-8", ...).
  int version() const { return version_; }
  const std::string& native_encoding() const { return native_encoding_; }

  // Names the data in error messages, e.g. "Rdata.rdb, object 'emma'".
  const std::string& what() const { return what_; }

  // The attribute `name` of `object` (e.g. "names", "class"), or kRNull if it has none.
  RRef attribute(RRef object, std::string_view name) const;

  // The element called `name` of the named list or vector `object` (found through its "names"
  // attribute). Throws Error(BAD_FILE) naming `what()` when `object` is not a List, has no
  // names, or has no element of that name.
  RRef element(RRef object, std::string_view name) const;

  // The strings of a character vector as UTF-8: ASCII and UTF-8 strings as they are, Latin-1
  // converted, native strings as UTF-8 when the stream's native encoding is UTF-8 (or unknown,
  // version 2) and as Latin-1 when it is ISO-8859-1/latin1. `label` names the vector in errors.
  // Throws Error(BAD_FILE) when `object` is not a character vector, holds NA, holds "bytes"
  // strings, or a string is not valid UTF-8 (naming the element's index).
  std::vector<std::string> utf8_strings(RRef object, std::string_view label) const;

  // The integer or double vector `object` as doubles (integer NA becomes NaN). `label` names the
  // vector in errors. Throws Error(BAD_FILE) for any other type.
  std::vector<double> numbers(RRef object, std::string_view label) const;

  // Used by the parser.
  RRef add(RNode node);
  RNode& mutable_node(RRef ref) { return nodes_.at(ref); }
  void set_root(RRef root) { root_ = root; }
  void set_header(int version, std::string native_encoding);
  void set_what(std::string what) { what_ = std::move(what); }

 private:
  std::vector<RNode> nodes_;
  RRef root_ = kRNull;
  int version_ = 0;
  std::string native_encoding_;
  std::string what_;
};

// Parses one serialized R object.
//   bytes: the whole stream, starting with the format line "X\n".
//   what:  names the data in error messages, e.g. "Rdata.rdb, object 'emma'".
// Throws Error(BAD_FILE) naming `what` and the byte offset for anything malformed or
// unsupported: another format, an unknown version or type, a length past the end of the data or
// negative, a reference to an object not yet read, nesting deeper than kMaxRNesting, or bytes
// left over after the object.
RData parse_r_serialized(std::string_view bytes, std::string_view what);

// Reads an .rds file's bytes (what saveRDS() writes): gzip-compressed or plain serialization.
//   bytes:     the file's contents.
//   what:      names the file in error messages.
//   max_size:  the largest decompressed size accepted, in bytes.
// Throws Error(BAD_FILE) as gunzip() and parse_r_serialized() do, and for bzip2 or xz files.
RData parse_rds(std::string_view bytes, std::string_view what,
                std::size_t max_size = kMaxInflatedBytes);

}  // namespace attnlens::corpus
