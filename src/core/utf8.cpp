#include "core/utf8.h"

#include <cstdio>

namespace nncheck {

CodePoint decodeUtf8(std::string_view s, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(at);
  const CodePoint stray{b0, 1, false};
  if (b0 < 0x80) return {b0, 1, true};
  size_t length;
  uint32_t value, least;
  if ((b0 & 0xe0) == 0xc0) {
    length = 2, value = b0 & 0x1f, least = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    length = 3, value = b0 & 0x0f, least = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    length = 4, value = b0 & 0x07, least = 0x10000;
  } else {
    return stray;  // a continuation byte, or 0xf8 and above
  }
  if (at + length > s.size()) return stray;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return stray;
    value = value << 6 | (byte(at + i) & 0x3f);
  }
  // Overlong forms, UTF-16 surrogates and values past Unicode's range are no UTF-8.
  if (value < least || (value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) return stray;
  return {value, length, true};
}

std::optional<size_t> firstInvalidUtf8(std::string_view s) {
  for (size_t at = 0; at < s.size();) {
    const CodePoint c = decodeUtf8(s, at);
    if (!c.valid) return at;
    at += c.length;
  }
  return std::nullopt;
}

bool isInvisibleOrBreaking(uint32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad ||     // controls, soft hyphen
         c == 0x061c || c == 0x180e ||                            // Arabic letter mark, Mongolian
         (c >= 0x200b && c <= 0x200f) ||                          // zero-width, LRM, RLM
         (c >= 0x2028 && c <= 0x202e) ||                          // separators, embeddings
         (c >= 0x2060 && c <= 0x206f) ||                          // joiners, isolates
         c == 0xfeff || (c >= 0xfff0 && c <= 0xfffb) ||           // BOM, specials
         (c >= 0xe0000 && c <= 0xe007f) ||                        // tags
         (c & 0xfffe) == 0xfffe || (c >= 0xfdd0 && c <= 0xfdef);  // noncharacters
}

std::string escapeInvisible(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t at = 0; at < s.size();) {
    const CodePoint c = decodeUtf8(s, at);
    if (c.valid && !isInvisibleOrBreaking(c.value)) {
      out.append(s, at, c.length);
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, c.value < 0x100 ? "\\x%02x" : "\\u%04x",
                    static_cast<unsigned>(c.value));
      out += buf;
    }
    at += c.length;
  }
  return out;
}

}  // namespace nncheck
