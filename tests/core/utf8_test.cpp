// UTF-8 as ONNX requires it: what is well formed decodes, what is not (overlong forms, surrogates,
// cut sequences, stray continuation bytes) is found, and what ends a line or hides itself shows.
#include "core/utf8.h"

#include <gtest/gtest.h>

namespace nncheck {
namespace {

TEST(Utf8, WellFormedTextDecodesAndTheFirstStrayByteIsFound) {
  EXPECT_EQ(firstInvalidUtf8("plain \xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(decodeUtf8("\xf0\x9f\x98\x80", 0).value, 0x1f600u);
  for (const auto& [text, at] :
       std::vector<std::pair<std::string, size_t>>{{"ab\xff", 2},         // no UTF-8 byte
                                                   {"\xc0\x80", 0},       // an overlong NUL
                                                   {"x\xed\xa0\x80", 1},  // a surrogate
                                                   {"\xe2\x80", 0},       // cut short
                                                   {"\x80", 0},  // a continuation byte alone
                                                   {"\xf4\x90\x80\x80", 0}})  // past U+10FFFF
    EXPECT_EQ(firstInvalidUtf8(text), at) << ::testing::PrintToString(text);
}

TEST(Utf8, WhatEndsALineOrHidesItselfShowsAsAnEscape) {
  EXPECT_EQ(escapeInvisible("a\tb\r\nc\x7f"), "a\\x09b\\x0d\\x0ac\\x7f");
  EXPECT_EQ(escapeInvisible("\xc2\x85\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xae\xef\xbb\xbf"),
            "\\x85\\u2028\\u2029\\u202e\\ufeff");
  EXPECT_EQ(escapeInvisible("\xff\xc3\xa9 \xe6\x97\xa5"), "\\xff\xc3\xa9 \xe6\x97\xa5")
      << "a stray byte shows; printable characters stay";
}

}  // namespace
}  // namespace nncheck
