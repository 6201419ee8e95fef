// Private: GPT-2's byte-to-unicode alphabet, shared by the byte-level BPE tokenizer (bpe.cpp)
// and the tokenizer.json pipeline's ByteLevel steps (tokenizer_json.cpp).
#pragma once

#include <array>
#include <cstdint>

namespace attnlens::detail {

// GPT-2's byte-to-unicode alphabet (bytes_to_unicode() in its encoder.py): the printable bytes
// '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves; the other 68 bytes, in byte order, for
// U+0100, U+0101, ... Ids 0..255 of GPT-2's vocabulary follow this order of bytes.
struct ByteAlphabet {
  std::array<char32_t, 256> char_of_byte{};    // byte -> code point
  std::array<int, 0x144> byte_of_char{};       // code point -> byte, or -1
  std::array<std::uint8_t, 256> byte_order{};  // GPT-2's id order of the 256 byte tokens

  ByteAlphabet() {
    byte_of_char.fill(-1);
    int n = 0;
    const auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    for (int b = 0; b < 256; ++b) {
      if (printable(b)) byte_order[static_cast<std::size_t>(n++)] = static_cast<std::uint8_t>(b);
    }
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      if (!printable(b)) {
        byte_order[static_cast<std::size_t>(n++)] = static_cast<std::uint8_t>(b);
        char_of_byte[static_cast<std::size_t>(b)] = static_cast<char32_t>(0x100 + extra++);
      } else {
        char_of_byte[static_cast<std::size_t>(b)] = static_cast<char32_t>(b);
      }
    }
    for (int b = 0; b < 256; ++b)
      byte_of_char[char_of_byte[static_cast<std::size_t>(b)]] = b;
  }
};

// The alphabet, built on first use (thread-safe).
inline const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet a;
  return a;
}

}  // namespace attnlens::detail
