// UTF-8 as ONNX requires its strings to be: the one decoder of nncheck, which the loaders use to
// refuse text that is none and the writers of scripts and Markdown use to make text inert.
//
//   if (auto bad = firstInvalidUtf8(name)) throw Error("byte " + std::to_string(*bad) + " ...");
//   for (size_t at = 0; at < s.size();) {
//     const CodePoint c = decodeUtf8(s, at);   // c.valid false: one stray byte, s[at]
//     at += c.length;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nncheck {

struct CodePoint {
  uint32_t value = 0;  // the code point; the byte itself when !valid
  size_t length = 1;   // bytes it takes (1 for a stray byte)
  bool valid = true;   // false: s[at] begins no well-formed sequence (overlong, surrogate, cut)
};

// The code point at `at` (at < s.size()).
CodePoint decodeUtf8(std::string_view s, size_t at);

// The offset of the first byte that is not well-formed UTF-8, or nullopt when all of `s` is.
std::optional<size_t> firstInvalidUtf8(std::string_view s);

// Whether a code point ends a line or changes how text reads in some language or viewer while
// not showing itself: C0 and C1 controls (CR, LF, NEL among them), DEL, U+2028 and U+2029 (line
// and paragraph separators, which end a JavaScript comment), the zero-width and bidirectional
// controls (which reorder what a reviewer sees: "Trojan Source"), the byte order mark, the tag
// characters and noncharacters.
bool isInvisibleOrBreaking(uint32_t codePoint);

// `s` with every such code point and every stray byte written as a visible escape ("\x0d",
// "\u2028", "\x80" for a stray byte), the rest as it is: text that shows on one line as what it
// holds, for comments and Markdown. `s` is one line: a LF is escaped too.
std::string escapeInvisible(std::string_view s);

}  // namespace nncheck
