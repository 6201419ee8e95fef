#include <attnlens/bpe.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "io/json.hpp"
#include "text/byte_alphabet.hpp"
#include "text/unicode_pretokenize.hpp"
#include "text/unicode_tables.hpp"
#include "text/unicode_utf8.hpp"

#include <algorithm>
#include <limits>
#include <queue>

namespace attnlens {
namespace {

// Offset of the first invalid UTF-8 sequence in `text`, or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, pos);
    if (c.status != detail::Utf8Status::Ok) return pos;
    pos += c.length;
  }
  return std::string_view::npos;
}

// Raw bytes -> the token as written in vocab.json / merges.txt.
std::string encode_alphabet(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char b : bytes)
    detail::append_utf8(out, detail::byte_alphabet().char_of_byte[static_cast<unsigned char>(b)]);
  return out;
}

// A token as written in the files -> raw bytes. Returns false, with the offending code point
// in `bad`, for a character outside the alphabet. `text` is valid UTF-8.
bool decode_alphabet(std::string_view text, std::string& out, char32_t& bad) {
  out.clear();
  for (std::size_t pos = 0; pos < text.size();) {
    const detail::Utf8Char c = detail::decode_utf8_char(text, pos);
    pos += c.length;
    const int b = c.code_point < 0x144 ? detail::byte_alphabet().byte_of_char[c.code_point] : -1;
    if (b < 0) {
      bad = c.code_point;
      return false;
    }
    out += static_cast<char>(b);
  }
  return true;
}

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// Piece boundaries of `text`, calling f(begin, end) for each piece in order.
template <typename F>
void for_each_piece(std::string_view text, F&& f) {
  if (text.size() > kMaxBpeTextBytes) {
    detail::fail(ErrorCode::TOO_LARGE, "text has ", text.size(), " bytes, over the limit of ",
                 kMaxBpeTextBytes);
  }
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = detail::gpt2_piece_end(text, pos);
    f(pos, end);
    pos = end;
  }
}

// Pieces of at most this many bytes are remembered during one encode() call, up to
// kCacheEntries distinct pieces: repeated words in a long text are merged once.
constexpr std::size_t kCacheablePieceBytes = 64;
constexpr std::size_t kCacheEntries = std::size_t{1} << 16;

template <typename... Parts>
[[noreturn]] void fail_file(std::string_view file, const Parts&... parts) {
  detail::fail(ErrorCode::BAD_FILE, file, ": ", parts...);
}

// Python json.dumps(ensure_ascii=True) of one string, as GPT-2's encoder.json is written.
void append_python_json_string(std::string& out, std::string_view utf8) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (std::size_t pos = 0; pos < utf8.size();) {
    const detail::Utf8Char c = detail::decode_utf8_char(utf8, pos);
    pos += c.length;
    const char32_t cp = c.code_point;
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else {
      // The alphabet and ASCII stay inside the basic plane: no surrogate pairs needed.
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4)
        out += kHex[(cp >> shift) & 0xF];
    }
  }
  out += '"';
}

}  // namespace

const char* bpe_unicode_version() noexcept {
  return detail::kUnicodeTablesVersion;
}

void BpeTokenizer::build_index() {
  by_bytes_.clear();
  by_bytes_.reserve(tokens_.size());
  for (std::size_t id = 0; id < tokens_.size(); ++id)
    by_bytes_.emplace(tokens_[id], static_cast<std::int32_t>(id));
  for (int b = 0; b < 256; ++b)
    byte_ids_[static_cast<std::size_t>(b)] = by_bytes_.at(std::string(1, static_cast<char>(b)));
  pairs_.clear();
  pairs_.reserve(merges_.size());
  for (std::size_t rank = 0; rank < merges_.size(); ++rank) {
    const auto [left, right] = merges_[rank];
    const std::int32_t merged = by_bytes_.at(tokens_[static_cast<std::size_t>(left)] +
                                             tokens_[static_cast<std::size_t>(right)]);
    pairs_.emplace(pair_key(left, right),
                   (static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(merged));
  }
}

void BpeTokenizer::add_special_tokens(const std::vector<std::string>& tokens) {
  for (const std::string& token : tokens) {
    if (token.empty() || by_bytes_.count(token) != 0) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "special token \"", token, "\" ",
                   token.empty() ? "is empty" : "is already in the vocabulary");
    }
    tokens_.push_back(token);
    by_bytes_.emplace(token, static_cast<std::int32_t>(tokens_.size() - 1));
  }
}

BpeTokenizer BpeTokenizer::from_files(std::string_view vocab_json, std::string_view merges_txt,
                                      std::string_view vocab_name, std::string_view merges_name) {
  BpeTokenizer t;
  const detail::JsonValue vocab = detail::parse_json(vocab_json, vocab_name);
  if (!vocab.is_object()) {
    fail_file(vocab_name, "expected an object {token: id} but found ", vocab.kind_name());
  }
  const auto& members = vocab.members();
  if (members.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    fail_file(vocab_name, "has ", members.size(), " tokens, more than int32 ids can number");
  }
  const auto n = static_cast<std::int64_t>(members.size());
  t.tokens_.resize(members.size());
  std::vector<bool> seen(members.size(), false);
  std::string bytes;
  for (const detail::JsonMember& m : members) {
    if (!m.value.is_integer() || m.value.as_integer() < 0 || m.value.as_integer() >= n) {
      if (m.value.is_number()) {
        fail_file(vocab_name, "token \"", m.name, "\" has id ", m.value.as_number(),
                  "; ids must be the integers 0 .. ", n - 1, " (one per token)");
      }
      fail_file(vocab_name, "token \"", m.name, "\" has id ", m.value.kind_name(),
                "; ids must be the integers 0 .. ", n - 1, " (one per token)");
    }
    const auto id = static_cast<std::size_t>(m.value.as_integer());
    if (seen[id]) {
      fail_file(vocab_name, "id ", id, " is given to two tokens, \"",
                encode_alphabet(t.tokens_[id]), "\" and \"", m.name, "\"");
    }
    if (m.name.empty()) fail_file(vocab_name, "token ", id, " is the empty string");
    char32_t bad = 0;
    if (!decode_alphabet(m.name, bytes, bad)) {
      fail_file(vocab_name, "token \"", m.name, "\" (id ", id, ") contains U+",
                detail::Hex{static_cast<std::uint32_t>(bad)},
                ", which is not in GPT-2's byte-to-unicode alphabet");
    }
    seen[id] = true;
    t.tokens_[id] = bytes;
  }
  std::unordered_map<std::string_view, std::int32_t> ids;
  ids.reserve(t.tokens_.size());
  for (std::size_t id = 0; id < t.tokens_.size(); ++id)
    ids.emplace(t.tokens_[id], static_cast<std::int32_t>(id));
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    if (ids.count(std::string_view(&c, 1)) == 0) {
      fail_file(vocab_name, "has no token for the byte 0x",
                detail::Hex{static_cast<std::uint32_t>(b)}, " (\"",
                encode_alphabet(std::string_view(&c, 1)),
                "\"); all 256 single-byte tokens are needed to encode any text");
    }
  }

  // merges.txt: lines "left right".
  if (const std::size_t at = first_invalid_utf8(merges_txt); at != std::string_view::npos) {
    fail_file(merges_name, "line ",
              1 + std::count(merges_txt.begin(),
                             merges_txt.begin() + static_cast<std::ptrdiff_t>(at), '\n'),
              " is not valid UTF-8 (byte ", at, " of the file)");
  }
  std::unordered_map<std::uint64_t, std::size_t> line_of_pair;
  std::size_t line_number = 0;
  std::size_t pos = 0;
  std::size_t first_empty_line = 0;  // 0: none yet
  std::string left_bytes, right_bytes;
  while (pos < merges_txt.size()) {
    std::size_t eol = merges_txt.find('\n', pos);
    if (eol == std::string_view::npos) eol = merges_txt.size();
    std::string_view line = merges_txt.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == 1 && line.substr(0, 8) == "#version") continue;
    if (line.empty()) {
      if (first_empty_line == 0) first_empty_line = line_number;
      continue;
    }
    if (first_empty_line != 0) {
      fail_file(merges_name, "line ", first_empty_line, " is empty, but merges follow it");
    }
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos) {
      fail_file(merges_name, "line ", line_number, " is not two tokens separated by one space");
    }
    const std::string_view left = line.substr(0, space);
    const std::string_view right = line.substr(space + 1);
    char32_t bad = 0;
    if (!decode_alphabet(left, left_bytes, bad) || !decode_alphabet(right, right_bytes, bad)) {
      fail_file(merges_name, "line ", line_number, " contains U+",
                detail::Hex{static_cast<std::uint32_t>(bad)},
                ", which is not in GPT-2's byte-to-unicode alphabet");
    }
    const auto left_id = ids.find(left_bytes);
    const auto right_id = ids.find(right_bytes);
    if (left_id == ids.end() || right_id == ids.end()) {
      fail_file(merges_name, "line ", line_number, " merges \"", left, "\" and \"", right,
                "\", but ", vocab_name, " has no token \"", left_id == ids.end() ? left : right,
                "\"");
    }
    if (ids.count(left_bytes + right_bytes) == 0) {
      fail_file(merges_name, "line ", line_number, " merges \"", left, "\" and \"", right,
                "\" into \"", encode_alphabet(left_bytes + right_bytes), "\", which ", vocab_name,
                " does not have");
    }
    const std::uint64_t key = pair_key(left_id->second, right_id->second);
    const auto [it, inserted] = line_of_pair.emplace(key, line_number);
    if (!inserted) {
      fail_file(merges_name, "line ", line_number, " repeats the merge of line ", it->second,
                " (\"", left, "\" and \"", right, "\")");
    }
    t.merges_.emplace_back(left_id->second, right_id->second);
  }
  t.build_index();
  return t;
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const {
  // piece is n bytes; symbols are nodes of a linked list over byte positions, each holding a
  // token id. A node that absorbs its right neighbour keeps its position.
  const std::size_t n = piece.size();
  if (n == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::int32_t> id(n);
  std::vector<std::uint32_t> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    id[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1 < n ? static_cast<std::uint32_t>(i + 1) : kNone;
    prev[i] = i > 0 ? static_cast<std::uint32_t>(i - 1) : kNone;
  }
  // Candidate merges as (rank << 32 | left position): the smallest rank first, and among equal
  // ranks (the same pair) the leftmost first. Entries go stale when a neighbour merges; they
  // are checked when popped.
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> heap;
  const auto push = [&](std::uint32_t left) {
    if (left == kNone || next[left] == kNone) return;
    const auto it = pairs_.find(pair_key(id[left], id[next[left]]));
    if (it != pairs_.end()) heap.push((it->second & 0xFFFFFFFF00000000u) | left);
  };
  for (std::size_t i = 0; i + 1 < n; ++i)
    push(static_cast<std::uint32_t>(i));

  std::vector<std::uint32_t> batch;
  while (!heap.empty()) {
    // GPT-2 merges every occurrence of the best pair in one left-to-right pass before looking
    // at the pairs that pass creates: take all entries of this rank first.
    const std::uint64_t rank = heap.top() >> 32;
    batch.clear();
    while (!heap.empty() && (heap.top() >> 32) == rank) {
      batch.push_back(static_cast<std::uint32_t>(heap.top()));
      heap.pop();
    }
    const auto [left_id, right_id] = merges_[rank];
    const auto merged = static_cast<std::int32_t>(pairs_.at(pair_key(left_id, right_id)));
    for (const std::uint32_t left : batch) {
      const std::uint32_t right = next[left];
      if (!alive[left] || right == kNone || id[left] != left_id || id[right] != right_id) {
        continue;
      }
      id[left] = merged;
      alive[right] = false;
      next[left] = next[right];
      if (next[right] != kNone) prev[next[right]] = left;
      push(prev[left]);
      push(left);
    }
  }
  for (std::uint32_t i = 0; i != kNone; i = next[i])
    out.push_back(id[i]);
}

std::vector<std::int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> cache;
  for_each_piece(text, [&](std::size_t begin, std::size_t end) {
    const std::string_view piece = text.substr(begin, end - begin);
    const bool cacheable = piece.size() <= kCacheablePieceBytes;
    if (cacheable) {
      const auto it = cache.find(piece);
      if (it != cache.end()) {
        // The ids of an earlier copy of this piece, already in `ids`.
        const auto [from, count] = it->second;
        for (std::size_t i = 0; i < count; ++i)
          ids.push_back(ids[from + i]);
        return;
      }
    }
    const std::size_t from = ids.size();
    encode_piece(piece, ids);
    if (cacheable && cache.size() < kCacheEntries) {
      cache.emplace(piece, std::make_pair(from, ids.size() - from));
    }
  });
  return ids;
}

std::vector<BpeToken> BpeTokenizer::tokens(std::string_view text) const {
  const std::vector<std::int32_t> ids = encode(text);
  std::vector<BpeToken> out;
  out.reserve(ids.size());
  std::size_t pos = 0;
  for (const std::int32_t id : ids) {
    const std::string& bytes = tokens_[static_cast<std::size_t>(id)];
    out.push_back(BpeToken{id, pos, pos + bytes.size(), bytes});
    pos += bytes.size();
  }
  return out;
}

std::string BpeTokenizer::decode(const std::int32_t* ids, std::size_t count) const {
  if (ids == nullptr && count != 0) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "ids is null but count is ", count);
  }
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size()) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "ids[", i, "] is ", ids[i],
                   ", outside the vocabulary's ids 0 .. ", vocab_size() - 1);
    }
    text += tokens_[static_cast<std::size_t>(ids[i])];
  }
  return text;
}

std::string BpeTokenizer::decode(const std::vector<std::int32_t>& ids) const {
  return decode(ids.data(), ids.size());
}

const std::string& BpeTokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "id is ", id, ", outside the vocabulary's ids 0 .. ",
                 vocab_size() - 1);
  }
  return tokens_[static_cast<std::size_t>(id)];
}

std::string BpeTokenizer::id_to_token(std::int32_t id) const {
  return encode_alphabet(token_bytes(id));
}

std::int32_t BpeTokenizer::token_to_id(std::string_view token) const {
  std::string bytes;
  char32_t bad = 0;
  if (first_invalid_utf8(token) != std::string_view::npos) return -1;
  if (!decode_alphabet(token, bytes, bad)) return -1;
  const auto it = by_bytes_.find(bytes);
  return it == by_bytes_.end() ? -1 : it->second;
}

std::string BpeTokenizer::to_vocab_json() const {
  std::string out = "{";
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    if (id > 0) out += ", ";
    append_python_json_string(out, encode_alphabet(tokens_[id]));
    out += ": ";
    out += std::to_string(id);
  }
  out += '}';
  return out;
}

std::string BpeTokenizer::to_merges_txt() const {
  std::string out = "#version: 0.2\n";
  for (const auto& [left, right] : merges_) {
    out += encode_alphabet(tokens_[static_cast<std::size_t>(left)]);
    out += ' ';
    out += encode_alphabet(tokens_[static_cast<std::size_t>(right)]);
    out += '\n';
  }
  return out;
}

BpeTokenizer train_bpe(const std::vector<std::string_view>& corpus, std::int32_t vocab_size,
                       const BpeTrainOptions& options) {
  const std::int32_t specials = options.end_of_text.empty() ? 0 : 1;
  if (vocab_size < 256 + 1 + specials || vocab_size > (1 << 24)) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "vocab_size is ", vocab_size, "; it must be from ",
                 256 + 1 + specials, " (256 bytes, one merge",
                 specials ? ", the end-of-text token" : "", ") to 2^24");
  }
  if (options.min_frequency < 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "min_frequency is ", options.min_frequency,
                 "; it must be at least 1");
  }
  const std::size_t merged_vocab = static_cast<std::size_t>(vocab_size - specials);

  BpeTokenizer t;
  std::unordered_map<std::string, std::int32_t> id_of;  // raw bytes -> id
  // Byte tokens in GPT-2's id order.
  std::array<std::int32_t, 256> byte_id{};
  for (std::size_t i = 0; i < 256; ++i) {
    const std::uint8_t b = detail::byte_alphabet().byte_order[i];
    t.tokens_.emplace_back(1, static_cast<char>(b));
    byte_id[b] = static_cast<std::int32_t>(i);
    id_of.emplace(t.tokens_.back(), byte_id[b]);
  }

  // 1. Count the pieces; sort them so the work below is the same on every platform.
  std::unordered_map<std::string_view, std::int64_t> piece_counts;
  for (const std::string_view text : corpus) {
    for_each_piece(text, [&](std::size_t begin, std::size_t end) {
      ++piece_counts[text.substr(begin, end - begin)];
    });
  }
  std::vector<std::pair<std::string_view, std::int64_t>> pieces(piece_counts.begin(),
                                                                piece_counts.end());
  piece_counts.clear();
  std::sort(pieces.begin(), pieces.end());

  // words[w]: the current token ids of piece w; count[w]: how often it occurs.
  std::vector<std::vector<std::int32_t>> words;
  std::vector<std::int64_t> count;
  for (const auto& [piece, c] : pieces) {
    if (piece.size() < 2) continue;  // a single byte never takes part in a pair
    std::vector<std::int32_t> symbols(piece.size());
    for (std::size_t i = 0; i < piece.size(); ++i)
      symbols[i] = byte_id[static_cast<unsigned char>(piece[i])];
    words.push_back(std::move(symbols));
    count.push_back(c);
  }

  // 2. Pair counts and, per pair, the words that hold it (maybe stale: checked when used).
  std::unordered_map<std::uint64_t, std::int64_t> pair_count;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> pair_words;
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (std::size_t i = 0; i + 1 < words[w].size(); ++i) {
      const std::uint64_t key = pair_key(words[w][i], words[w][i + 1]);
      pair_count[key] += count[w];
      auto& list = pair_words[key];
      if (list.empty() || list.back() != w) list.push_back(static_cast<std::uint32_t>(w));
    }
  }
  // Max-heap on (count, then the smaller pair key): a pair's latest count is pushed whenever
  // it changes; popped entries whose count is no longer current are dropped.
  struct Candidate {
    std::int64_t count;
    std::uint64_t key;
    bool operator<(const Candidate& o) const {
      return count != o.count ? count < o.count : key > o.key;
    }
  };
  std::priority_queue<Candidate> heap;
  for (const auto& [key, c] : pair_count)
    heap.push({c, key});

  std::unordered_map<std::uint64_t, std::int64_t> delta;
  std::vector<std::int32_t> merged_word;
  while (t.tokens_.size() < merged_vocab && !heap.empty()) {
    const Candidate best = heap.top();
    heap.pop();
    const auto current = pair_count.find(best.key);
    if (current == pair_count.end() || current->second != best.count) continue;
    if (best.count < options.min_frequency) break;

    const auto left = static_cast<std::int32_t>(best.key >> 32);
    const auto right = static_cast<std::int32_t>(best.key & 0xFFFFFFFFu);
    // A token may be reached by two merges ("a"+"bc", "ab"+"c"): both map to one id.
    const std::string bytes =
        t.tokens_[static_cast<std::size_t>(left)] + t.tokens_[static_cast<std::size_t>(right)];
    const auto [found, is_new] = id_of.emplace(bytes, static_cast<std::int32_t>(t.tokens_.size()));
    const std::int32_t merged = found->second;
    if (is_new) t.tokens_.push_back(bytes);
    t.merges_.emplace_back(left, right);

    // Re-count the pairs of every word that holds (left, right).
    delta.clear();
    const std::vector<std::uint32_t> holders = std::move(pair_words[best.key]);
    pair_words.erase(best.key);
    for (const std::uint32_t w : holders) {
      std::vector<std::int32_t>& word = words[w];
      merged_word.clear();
      bool changed = false;
      for (std::size_t i = 0; i < word.size();) {
        if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
          merged_word.push_back(merged);
          i += 2;
          changed = true;
        } else {
          merged_word.push_back(word[i]);
          i += 1;
        }
      }
      if (!changed) continue;
      for (std::size_t i = 0; i + 1 < word.size(); ++i)
        delta[pair_key(word[i], word[i + 1])] -= count[w];
      for (std::size_t i = 0; i + 1 < merged_word.size(); ++i) {
        const std::uint64_t key = pair_key(merged_word[i], merged_word[i + 1]);
        delta[key] += count[w];
        if (merged_word[i] == merged || merged_word[i + 1] == merged) {
          auto& list = pair_words[key];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      }
      word.swap(merged_word);
    }
    for (const auto& [key, d] : delta) {
      if (d == 0) continue;
      std::int64_t& c = pair_count[key];
      c += d;
      if (c > 0) {
        heap.push({c, key});
      } else {
        pair_count.erase(key);
      }
    }
  }
  if (specials != 0) {
    std::string eot = options.end_of_text;
    if (id_of.count(eot) != 0) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "end_of_text \"", eot,
                   "\" was also learned as an ordinary token; pick another");
    }
    t.tokens_.push_back(std::move(eot));
  }
  t.build_index();
  return t;
}

}  // namespace attnlens
