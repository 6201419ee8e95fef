#include "rdata.hpp"

#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "utf8.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace attnlens::corpus {
namespace {

using detail::fail;

// Codes that appear in the stream but are not types of RNode.
constexpr int kRefSxp = 255;
constexpr int kNilValueSxp = 254;
constexpr int kAltrepSxp = 238;
constexpr int kAttrListSxp = 239;
constexpr int kAttrLangSxp = 240;
constexpr int kBcRepDef = 244;
constexpr int kGenericRefSxp = 245;
constexpr int kClassRefSxp = 246;
constexpr int kBytecodeSxp = 21;

// Bits of a CHARSXP's levels that give its encoding (R's Defn.h).
constexpr unsigned kBytesMask = 1u << 1;
constexpr unsigned kLatin1Mask = 1u << 2;
constexpr unsigned kUtf8Mask = 1u << 3;
constexpr unsigned kAsciiMask = 1u << 6;

// Longest native-encoding name a version-3 header may hold (R_CODESET_MAX).
constexpr std::int32_t kMaxEncodingName = 63;

// Compact sequences (ALTREP) expand a few bytes into many elements: all of them together may
// expand to at most this many elements (64 MiB of integers).
constexpr std::uint64_t kMaxAltrepElements = std::uint64_t{1} << 24;

const char* type_name(int code) {
  switch (code) {
    case 0:
      return "NULL (NILSXP)";
    case 1:
      return "a symbol (SYMSXP)";
    case 2:
      return "a pairlist (LISTSXP)";
    case 3:
      return "a closure (CLOSXP)";
    case 4:
      return "an environment (ENVSXP)";
    case 5:
      return "a promise (PROMSXP)";
    case 6:
      return "a language object (LANGSXP)";
    case 7:
      return "a special function (SPECIALSXP)";
    case 8:
      return "a builtin function (BUILTINSXP)";
    case 9:
      return "a string (CHARSXP)";
    case 10:
      return "a logical vector (LGLSXP)";
    case 13:
      return "an integer vector (INTSXP)";
    case 14:
      return "a double vector (REALSXP)";
    case 15:
      return "a complex vector (CPLXSXP)";
    case 16:
      return "a character vector (STRSXP)";
    case 17:
      return "a dots (DOTSXP)";
    case 19:
      return "a list (VECSXP)";
    case 20:
      return "an expression vector (EXPRSXP)";
    case 21:
      return "a byte code (BCODESXP)";
    case 22:
      return "an external pointer (EXTPTRSXP)";
    case 23:
      return "a weak reference (WEAKREFSXP)";
    case 24:
      return "a raw vector (RAWSXP)";
    case 25:
      return "a S4 object (S4SXP)";
    case 238:
      return "an ALTREP object (ALTREP_SXP)";
    case 241:
      return "a base environment (BASEENV_SXP)";
    case 242:
      return "an empty environment (EMPTYENV_SXP)";
    case 247:
      return "a persistent name (PERSISTSXP)";
    case 248:
      return "a package environment (PACKAGESXP)";
    case 249:
      return "a namespace (NAMESPACESXP)";
    case 250:
      return "a base namespace (BASENAMESPACE_SXP)";
    case 251:
      return "a missing argument (MISSINGARG_SXP)";
    case 252:
      return "an unbound value (UNBOUNDVALUE_SXP)";
    case 253:
      return "a global environment (GLOBALENV_SXP)";
    case 254:
      return "NULL (NILVALUE_SXP)";
    case 255:
      return "a reference (REFSXP)";
    default:
      return "an object of unknown type";
  }
}

bool is_vector(RType type) {
  switch (type) {
    case RType::Logical:
    case RType::Integer:
    case RType::Real:
    case RType::Complex:
    case RType::String:
    case RType::List:
    case RType::Expression:
    case RType::Raw:
      return true;
    default:
      return false;
  }
}

// An item's flags word: type in bits 0-7, OBJECT bit 8, has-attributes bit 9, has-tag bit 10,
// levels in bits 12-27. For REFSXP, bits 8-31 hold the reference index instead.
struct Flags {
  explicit Flags(std::uint32_t word)
      : raw(word),
        type(static_cast<int>(word & 0xFF)),
        is_object((word & (1u << 8)) != 0),
        has_attributes((word & (1u << 9)) != 0),
        has_tag((word & (1u << 10)) != 0),
        levels(static_cast<std::uint16_t>((word >> 12) & 0xFFFF)) {}
  std::uint32_t raw;
  int type;
  bool is_object;
  bool has_attributes;
  bool has_tag;
  std::uint16_t levels;
};

class Parser {
 public:
  Parser(std::string_view bytes, std::string_view what, RData& out)
      : bytes_(bytes), what_(what), out_(out) {}

  void run() {
    read_header();
    const RRef root = read_item(0);
    if (pos_ != bytes_.size()) {
      fail(ErrorCode::BAD_FILE, what_, ": ", bytes_.size() - pos_,
           " bytes follow the serialized object (it ends at byte ", pos_, ")");
    }
    out_.set_root(root);
  }

 private:
  // ---- primitive reads: every one checks the bytes that remain ----

  [[noreturn]] void bad(std::size_t at, std::string_view problem) {
    fail(ErrorCode::BAD_FILE, what_, ": ", problem, " (at byte ", at, ")");
  }

  std::size_t remaining() const { return bytes_.size() - pos_; }

  void need(std::size_t count, std::string_view field) {
    if (count > remaining()) {
      fail(ErrorCode::BAD_FILE, what_, ": the data ends inside ", field, " (at byte ", pos_, ", ",
           count, " bytes needed, ", remaining(), " left)");
    }
  }

  std::uint32_t read_u32(std::string_view field) {
    need(4, field);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + pos_);
    pos_ += 4;
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
  }

  std::int32_t read_i32(std::string_view field) {
    const std::uint32_t u = read_u32(field);
    std::int32_t value;
    std::memcpy(&value, &u, sizeof value);
    return value;
  }

  double read_f64(std::string_view field) {
    need(8, field);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + pos_);
    pos_ += 8;
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i)
      u = (u << 8) | p[i];
    double value;
    std::memcpy(&value, &u, sizeof value);
    return value;
  }

  std::string_view read_bytes(std::size_t count, std::string_view field) {
    need(count, field);
    const std::string_view view = bytes_.substr(pos_, count);
    pos_ += count;
    return view;
  }

  // A vector length: a non-negative int, or -1 followed by the upper and lower 32 bits of a long
  // length. Every element needs at least `min_element_bytes` of the data that remains, which
  // bounds what a lying length can make us allocate.
  std::size_t read_length(std::size_t min_element_bytes, std::string_view field) {
    const std::size_t at = pos_;
    const std::int32_t short_length = read_i32(field);
    std::uint64_t length = 0;
    if (short_length >= 0) {
      length = static_cast<std::uint64_t>(short_length);
    } else if (short_length == -1) {
      const std::uint64_t upper = read_u32(field);
      const std::uint64_t lower = read_u32(field);
      length = (upper << 32) | lower;
    } else {
      fail(ErrorCode::BAD_FILE, what_, ": ", field, " has the negative length ", short_length,
           " (at byte ", at, ")");
    }
    if (length > remaining() / min_element_bytes) {
      fail(ErrorCode::BAD_FILE, what_, ": ", field, " declares ", length,
           " elements, more than the ", remaining(), " bytes left can hold (at byte ", at, ")");
    }
    return static_cast<std::size_t>(length);
  }

  // ---- the stream ----

  void read_header() {
    const std::string_view format = read_bytes(2, "the format line");
    if (format == "A\n") bad(0, "the ASCII serialization format is not supported (only XDR)");
    if (format == "B\n") {
      bad(0, "the native binary serialization format is not supported (only XDR)");
    }
    if (format != "X\n") {
      bad(0, "not R serialization data (it does not start with \"X\\n\")");
    }
    const std::size_t at = pos_;
    const std::int32_t version = read_i32("the format version");
    read_i32("the writer's R version");
    read_i32("the oldest R version that can read the data");
    if (version != 2 && version != 3) {
      fail(ErrorCode::BAD_FILE, what_, ": serialization format version ", version,
           " is not supported (versions 2 and 3 are) (at byte ", at, ")");
    }
    std::string encoding;
    if (version == 3) {
      const std::size_t length_at = pos_;
      const std::int32_t length = read_i32("the native encoding's length");
      if (length < 0 || length > kMaxEncodingName) {
        fail(ErrorCode::BAD_FILE, what_, ": the native encoding's name is ", length,
             " bytes long; 0 to ", kMaxEncodingName, " are allowed (at byte ", length_at, ")");
      }
      encoding = std::string(read_bytes(static_cast<std::size_t>(length), "the native encoding"));
    }
    out_.set_header(version, std::move(encoding));
  }

  RRef add(RNode node) { return out_.add(std::move(node)); }

  void remember(RRef ref) { refs_.push_back(ref); }

  RRef read_item(int depth) {
    const std::size_t at = pos_;
    return read_item(Flags(read_u32("an object's flags")), at, depth);
  }

  RRef read_item(const Flags& flags, std::size_t at, int depth) {
    if (depth > kMaxRNesting) {
      fail(ErrorCode::BAD_FILE, what_, ": objects are nested more than ", kMaxRNesting,
           " deep (at byte ", at, ")");
    }
    switch (flags.type) {
      case kNilValueSxp:
        return kRNull;
      case static_cast<int>(RType::EmptyEnv):
      case static_cast<int>(RType::BaseEnv):
      case static_cast<int>(RType::GlobalEnv):
      case static_cast<int>(RType::UnboundValue):
      case static_cast<int>(RType::MissingArg):
      case static_cast<int>(RType::BaseNamespace):
        return singleton(static_cast<RType>(flags.type));
      case kRefSxp:
        return read_reference(flags, at);
      case static_cast<int>(RType::Persist):
      case static_cast<int>(RType::Package):
      case static_cast<int>(RType::Namespace):
        return read_named_environment(static_cast<RType>(flags.type), depth);
      case kAltrepSxp:
        return read_altrep(flags, at, depth);
      case static_cast<int>(RType::Symbol):
        return read_symbol(at, depth);
      case static_cast<int>(RType::Environment):
        return read_environment(at, depth);
      case static_cast<int>(RType::Pairlist):
      case static_cast<int>(RType::Language):
      case static_cast<int>(RType::Closure):
      case static_cast<int>(RType::Promise):
      case static_cast<int>(RType::Dots):
        return read_cells(flags, depth);
      case kAttrListSxp:
      case kAttrLangSxp:
      case kBcRepDef:
      case kBytecodeSxp:
        bad(at, "byte code is not supported");
      case kClassRefSxp:
      case kGenericRefSxp:
        bad(at, "class and generic-function references are not supported");
      default:
        return read_vector(flags, at, depth);
    }
  }

  RRef singleton(RType type) {
    RNode node;
    node.type = type;
    return add(std::move(node));
  }

  RRef read_reference(const Flags& flags, std::size_t at) {
    std::uint32_t index = flags.raw >> 8;
    if (index == 0) {
      const std::int32_t wide = read_i32("a reference index");
      if (wide <= 0) bad(at, "a reference index is not positive");
      index = static_cast<std::uint32_t>(wide);
    }
    if (index > refs_.size()) {
      fail(ErrorCode::BAD_FILE, what_, ": reference ", index, " points past the ", refs_.size(),
           " symbols and environments read so far (at byte ", at, ")");
    }
    return refs_[index - 1];
  }

  // PERSISTSXP, PACKAGESXP and NAMESPACESXP: a string vector that names the object.
  RRef read_named_environment(RType type, int depth) {
    const std::size_t at = pos_;
    if (read_i32("a persistent name's reserved word") != 0) {
      bad(at, "the reserved word before a persistent name is not 0");
    }
    RNode node;
    node.type = type;
    const std::size_t count = read_length(8, "a persistent name");
    node.strings.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
      node.strings.push_back(read_string_element(i, depth + 1));
    const RRef ref = add(std::move(node));
    remember(ref);
    return ref;
  }

  RRef read_symbol(std::size_t at, int depth) {
    const std::size_t name_at = pos_;
    const Flags name_flags(read_u32("a symbol's name"));
    if (name_flags.type != static_cast<int>(RType::Char)) {
      fail(ErrorCode::BAD_FILE, what_, ": a symbol's name is ", type_name(name_flags.type),
           ", not a string (at byte ", name_at, ")");
    }
    RString name = read_char(name_flags, depth + 1);
    if (name.is_na) bad(at, "a symbol's name is NA");
    RNode node;
    node.type = RType::Symbol;
    node.text = std::move(name.bytes);
    node.encoding = name.encoding;
    const RRef ref = add(std::move(node));
    remember(ref);
    return ref;
  }

  RRef read_environment(std::size_t at, int depth) {
    const std::int32_t locked = read_i32("an environment's locked flag");
    if (locked != 0 && locked != 1) bad(at, "an environment's locked flag is neither 0 nor 1");
    RNode node;
    node.type = RType::Environment;
    node.locked = locked == 1;
    // Registered before its contents are read: they may refer back to it.
    const RRef ref = add(std::move(node));
    remember(ref);
    const RRef enclosure = read_item(depth + 1);
    const RRef frame = read_item(depth + 1);
    const RRef hash_table = read_item(depth + 1);
    const RRef attributes = read_item(depth + 1);
    RNode& filled = out_.mutable_node(ref);
    filled.items = {enclosure, frame, hash_table};
    filled.attributes = attributes;
    filled.is_object = attributes != kRNull && out_.attribute(ref, "class") != kRNull;
    return ref;
  }

  // LISTSXP and its relatives: ATTRIB (if flagged), TAG (if flagged), CAR, then the CDR. The CDR
  // chain of plain cells is read in this loop, not by recursion, so a long pairlist does not
  // deepen the stack.
  RRef read_cells(const Flags& flags, int depth) {
    RNode head;
    head.type = static_cast<RType>(flags.type);
    head.is_object = flags.is_object;
    head.levels = flags.levels;
    const RRef ref = add(std::move(head));
    bool has_attributes = flags.has_attributes;
    bool has_tag = flags.has_tag;
    while (true) {
      if (has_attributes) {
        const RRef attributes = read_item(depth + 1);
        out_.mutable_node(ref).attributes = attributes;
      }
      const RRef tag = has_tag ? read_item(depth + 1) : kRNull;
      const RRef value = read_item(depth + 1);
      RNode& node = out_.mutable_node(ref);
      node.tags.push_back(tag);
      node.items.push_back(value);

      const std::size_t next_at = pos_;
      const Flags next(read_u32("a pairlist's next cell"));
      if (next.type == kNilValueSxp) return ref;
      if (next.type == static_cast<int>(RType::Pairlist) && !next.has_attributes) {
        has_attributes = false;
        has_tag = next.has_tag;
        continue;
      }
      const RRef tail = read_item(next, next_at, depth + 1);
      out_.mutable_node(ref).tail = tail;
      return ref;
    }
  }

  // One CHARSXP after its flags: a length (-1 for NA) and the bytes.
  RString read_char(const Flags& flags, int depth) {
    const std::size_t at = pos_;
    const std::int32_t length = read_i32("a string's length");
    RString s;
    if (length == -1) {
      s.is_na = true;
    } else if (length < 0) {
      fail(ErrorCode::BAD_FILE, what_, ": a string has the negative length ", length, " (at byte ",
           at, ")");
    } else {
      s.bytes = std::string(read_bytes(static_cast<std::size_t>(length), "a string"));
    }
    if (flags.levels & kUtf8Mask) {
      s.encoding = REncoding::Utf8;
    } else if (flags.levels & kLatin1Mask) {
      s.encoding = REncoding::Latin1;
    } else if (flags.levels & kBytesMask) {
      s.encoding = REncoding::Bytes;
    } else if (flags.levels & kAsciiMask) {
      s.encoding = REncoding::Ascii;
    }
    // Streams from old versions of R may give a string attributes; R reads and drops them.
    if (flags.has_attributes) read_item(depth + 1);
    return s;
  }

  RString read_string_element(std::size_t index, int depth) {
    const std::size_t at = pos_;
    const Flags flags(read_u32("a character vector's element"));
    if (flags.type != static_cast<int>(RType::Char)) {
      fail(ErrorCode::BAD_FILE, what_, ": element ", index, " of a character vector is ",
           type_name(flags.type), ", not a string (at byte ", at, ")");
    }
    return read_char(flags, depth);
  }

  RRef read_vector(const Flags& flags, std::size_t at, int depth) {
    RNode node;
    node.type = static_cast<RType>(flags.type);
    node.is_object = flags.is_object;
    node.levels = flags.levels;
    switch (flags.type) {
      case static_cast<int>(RType::Char): {
        RString s = read_char(flags, depth);
        node.text = std::move(s.bytes);
        node.encoding = s.encoding;
        node.is_na = s.is_na;
        break;
      }
      case static_cast<int>(RType::Logical):
      case static_cast<int>(RType::Integer): {
        const std::size_t count = read_length(4, type_name(flags.type));
        node.integers.resize(count);
        for (auto& value : node.integers)
          value = read_i32("an integer element");
        break;
      }
      case static_cast<int>(RType::Real): {
        const std::size_t count = read_length(8, type_name(flags.type));
        node.reals.resize(count);
        for (auto& value : node.reals)
          value = read_f64("a double element");
        break;
      }
      case static_cast<int>(RType::Complex): {
        const std::size_t count = read_length(16, type_name(flags.type));
        node.reals.resize(2 * count);
        for (auto& value : node.reals)
          value = read_f64("a complex element");
        break;
      }
      case static_cast<int>(RType::String): {
        const std::size_t count = read_length(8, type_name(flags.type));
        node.strings.reserve(count);
        for (std::size_t i = 0; i < count; ++i)
          node.strings.push_back(read_string_element(i, depth + 1));
        break;
      }
      case static_cast<int>(RType::List):
      case static_cast<int>(RType::Expression): {
        const std::size_t count = read_length(4, type_name(flags.type));
        node.items.reserve(count);
        for (std::size_t i = 0; i < count; ++i)
          node.items.push_back(read_item(depth + 1));
        break;
      }
      case static_cast<int>(RType::Raw): {
        const std::size_t count = read_length(1, type_name(flags.type));
        const std::string_view raw = read_bytes(count, "a raw vector");
        node.bytes.assign(raw.begin(), raw.end());
        break;
      }
      case static_cast<int>(RType::Special):
      case static_cast<int>(RType::Builtin): {
        const std::size_t count = read_length(1, "a function name");
        node.text = std::string(read_bytes(count, "a function name"));
        break;
      }
      case static_cast<int>(RType::S4):
        break;
      case static_cast<int>(RType::ExternalPointer):
      case static_cast<int>(RType::WeakReference): {
        // Registered before their fields are read, as R does.
        const RRef ref = add(std::move(node));
        remember(ref);
        if (flags.type == static_cast<int>(RType::ExternalPointer)) {
          const RRef protected_value = read_item(depth + 1);
          const RRef tag = read_item(depth + 1);
          out_.mutable_node(ref).items = {protected_value, tag};
        }
        if (flags.has_attributes) {
          const RRef attributes = read_item(depth + 1);
          out_.mutable_node(ref).attributes = attributes;
        }
        return ref;
      }
      default:
        fail(ErrorCode::BAD_FILE, what_, ": unknown object type code ", flags.type, " (flags 0x",
             detail::Hex{flags.raw}, ", at byte ", at, ")");
    }
    if (flags.has_attributes && flags.type != static_cast<int>(RType::Char)) {
      node.attributes = read_item(depth + 1);
    }
    return add(std::move(node));
  }

  // ALTREP: a class description (class symbol, package symbol, base type), the class's state
  // and the attributes. Expanded here into the ordinary object it stands for.
  RRef read_altrep(const Flags& flags, std::size_t at, int depth) {
    const RRef info = read_item(depth + 1);
    const RRef state = read_item(depth + 1);
    const RRef attributes = read_item(depth + 1);
    const RNode& info_node = out_.node(info);
    if (info_node.type != RType::Pairlist || info_node.items.empty() ||
        out_.node(info_node.items[0]).type != RType::Symbol) {
      bad(at, "an ALTREP object's class description is not a pairlist starting with a symbol");
    }
    const std::string class_name = out_.node(info_node.items[0]).text;
    RNode node;
    if (class_name == "compact_intseq" || class_name == "compact_realseq") {
      node = expand_sequence(class_name == "compact_intseq", state, at);
    } else if (class_name.rfind("wrap_", 0) == 0) {
      // The state is CONS(wrapped object, metadata).
      const RNode& cell = out_.node(state);
      if (cell.type != RType::Pairlist || cell.items.size() != 1 ||
          !is_vector(out_.node(cell.items[0]).type)) {
        bad(at, "a wrapper ALTREP object's state is not a pair (vector, metadata)");
      }
      node = out_.node(cell.items[0]);
    } else {
      fail(ErrorCode::BAD_FILE, what_, ": the ALTREP class '", class_name,
           "' is not supported (compact_intseq, compact_realseq and wrap_* are) (at byte ", at,
           ")");
    }
    node.is_object = flags.is_object;
    node.levels = flags.levels;
    node.attributes = attributes;
    return add(std::move(node));
  }

  // compact_intseq / compact_realseq: the state is a double vector (length, first, step).
  RNode expand_sequence(bool integer, RRef state, std::size_t at) {
    const RNode& info = out_.node(state);
    if (info.type != RType::Real || info.reals.size() != 3) {
      bad(at, "a compact sequence's state is not a double vector of 3 (length, first, step)");
    }
    const double length = info.reals[0];
    const double first = info.reals[1];
    const double step = info.reals[2];
    if (!(length >= 0) || length != std::floor(length) ||
        length > static_cast<double>(kMaxAltrepElements - altrep_elements_)) {
      fail(ErrorCode::BAD_FILE, what_, ": a compact sequence's length ", length,
           " is not a whole number from 0 to the ", kMaxAltrepElements - altrep_elements_,
           " elements left of the expansion limit (at byte ", at, ")");
    }
    if (!std::isfinite(first) || (step != 1 && step != -1)) {
      bad(at, "a compact sequence does not start at a finite value with a step of 1 or -1");
    }
    const auto count = static_cast<std::size_t>(length);
    const double last = first + step * (length - 1);
    if (integer && count > 0 &&
        (first != std::floor(first) ||
         std::fabs(first) > std::numeric_limits<std::int32_t>::max() ||
         std::fabs(last) > std::numeric_limits<std::int32_t>::max())) {
      bad(at, "a compact integer sequence leaves the range of R integers");
    }
    altrep_elements_ += count;
    RNode node;
    if (integer) {
      node.type = RType::Integer;
      node.integers.resize(count);
      for (std::size_t i = 0; i < count; ++i)
        node.integers[i] = static_cast<std::int32_t>(first + step * static_cast<double>(i));
    } else {
      node.type = RType::Real;
      node.reals.resize(count);
      for (std::size_t i = 0; i < count; ++i)
        node.reals[i] = first + step * static_cast<double>(i);
    }
    return node;
  }

  std::string_view bytes_;
  std::string_view what_;
  RData& out_;
  std::size_t pos_ = 0;
  std::vector<RRef> refs_;  // symbols, environments, ... in the order read; REFSXP i is refs_[i-1]
  std::uint64_t altrep_elements_ = 0;
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

RData::RData() {
  nodes_.emplace_back();  // RRef 0: NULL
}

RRef RData::add(RNode node) {
  if (nodes_.size() >= std::numeric_limits<RRef>::max()) {
    fail(ErrorCode::TOO_LARGE, what_, ": more than ", std::numeric_limits<RRef>::max(), " objects");
  }
  nodes_.push_back(std::move(node));
  return static_cast<RRef>(nodes_.size() - 1);
}

void RData::set_header(int version, std::string native_encoding) {
  version_ = version;
  native_encoding_ = std::move(native_encoding);
}

RRef RData::attribute(RRef object, std::string_view name) const {
  const RNode& attributes = node(node(object).attributes);
  for (std::size_t i = 0; i < attributes.tags.size(); ++i) {
    const RNode& tag = node(attributes.tags[i]);
    if (tag.type == RType::Symbol && tag.text == name) return attributes.items[i];
  }
  return kRNull;
}

RRef RData::element(RRef object, std::string_view name) const {
  const RNode& list = node(object);
  if (list.type != RType::List) {
    fail(ErrorCode::BAD_FILE, what_, ": looking for the element '", name, "' in ",
         type_name(static_cast<int>(list.type)), ", not in a list");
  }
  const RNode& names = node(attribute(object, "names"));
  if (names.type != RType::String || names.strings.size() != list.items.size()) {
    fail(ErrorCode::BAD_FILE, what_, ": looking for the element '", name,
         "' in a list without a names attribute of its length (", list.items.size(), ")");
  }
  for (std::size_t i = 0; i < names.strings.size(); ++i) {
    if (!names.strings[i].is_na && names.strings[i].bytes == name) return list.items[i];
  }
  fail(ErrorCode::BAD_FILE, what_, ": the list has no element named '", name, "'");
}

std::vector<std::string> RData::utf8_strings(RRef object, std::string_view label) const {
  const RNode& vector = node(object);
  if (vector.type != RType::String) {
    fail(ErrorCode::BAD_FILE, what_, ": ", label, " is ", type_name(static_cast<int>(vector.type)),
         ", not a character vector");
  }
  const bool native_is_utf8 = native_encoding_.empty() ||
                              equals_ignoring_case(native_encoding_, "UTF-8") ||
                              equals_ignoring_case(native_encoding_, "utf8");
  const bool native_is_latin1 = equals_ignoring_case(native_encoding_, "ISO-8859-1") ||
                                equals_ignoring_case(native_encoding_, "latin1");
  std::vector<std::string> out;
  out.reserve(vector.strings.size());
  for (std::size_t i = 0; i < vector.strings.size(); ++i) {
    const RString& s = vector.strings[i];
    if (s.is_na) fail(ErrorCode::BAD_FILE, what_, ": element ", i + 1, " of ", label, " is NA");
    bool latin1 = s.encoding == REncoding::Latin1;
    if (s.encoding == REncoding::Bytes) {
      fail(ErrorCode::BAD_FILE, what_, ": element ", i + 1, " of ", label,
           " is marked as bytes, not text");
    }
    if (s.encoding == REncoding::Native) {
      if (native_is_latin1) {
        latin1 = true;
      } else if (!native_is_utf8) {
        fail(ErrorCode::BAD_FILE, what_, ": element ", i + 1, " of ", label,
             " is in the writer's native encoding '", native_encoding_,
             "', which this reader does not convert (UTF-8 and Latin-1 only)");
      }
    }
    if (latin1) {
      out.push_back(latin1_to_utf8(s.bytes));
      continue;
    }
    const std::size_t bad = find_invalid_utf8(s.bytes);
    if (bad != std::string_view::npos) {
      fail(ErrorCode::BAD_FILE, what_, ": element ", i + 1, " of ", label,
           " is not valid UTF-8 (at byte ", bad, " of the string)");
    }
    out.push_back(s.bytes);
  }
  return out;
}

std::vector<double> RData::numbers(RRef object, std::string_view label) const {
  const RNode& vector = node(object);
  if (vector.type == RType::Real) return vector.reals;
  if (vector.type != RType::Integer) {
    fail(ErrorCode::BAD_FILE, what_, ": ", label, " is ", type_name(static_cast<int>(vector.type)),
         ", not an integer or double vector");
  }
  std::vector<double> out;
  out.reserve(vector.integers.size());
  for (const std::int32_t value : vector.integers) {
    out.push_back(value == kRNaInteger ? std::numeric_limits<double>::quiet_NaN()
                                       : static_cast<double>(value));
  }
  return out;
}

RData parse_r_serialized(std::string_view bytes, std::string_view what) {
  RData data;
  data.set_what(std::string(what));
  Parser(bytes, what, data).run();
  return data;
}

RData parse_rds(std::string_view bytes, std::string_view what, std::size_t max_size) {
  if (is_gzip(bytes)) return parse_r_serialized(gunzip(bytes, max_size, what), what);
  if (bytes.substr(0, 3) == "BZh") {
    fail(ErrorCode::BAD_FILE, what, ": bzip2-compressed .rds files are not supported");
  }
  if (bytes.substr(0, 6) ==
      "\xFD"
      "7zXZ") {
    fail(ErrorCode::BAD_FILE, what, ": xz-compressed .rds files are not supported");
  }
  return parse_r_serialized(bytes, what);
}

}  // namespace attnlens::corpus
