// Tensors and text as script literals: integers the C++ script's doubles hold exactly (INT64_MIN
// is one, INT64_MAX is not) and a refusal naming the value otherwise; text in printable ASCII
// whatever it holds, and comments no character of it can end.
#include "core/script_literal.h"

#include <gtest/gtest.h>

#include <limits>

#include "nncheck/error.h"

namespace nncheck {
namespace {

Tensor int64s(std::vector<int64_t> values) {
  Tensor t(DType::Int64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.span<int64_t>()[i] = values[i];
  return t;
}

TEST(ScriptLiteral, CppHoldsTheIntegersADoubleHoldsExactly) {
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(cppTensorLiteral(int64s({lowest, int64_t{1} << 60, -3}), ""),
            "{\"int64\", {3}, {-9.2233720368547758e+18, 1.152921504606847e+18, -3}}");
  try {
    cppTensorLiteral(int64s({std::numeric_limits<int64_t>::max()}), "");
    FAIL() << "INT64_MAX is no double";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("9223372036854775807 is not one"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cppTensorLiteral(int64s({(int64_t{1} << 53) + 1}), ""), Error);
}

TEST(ScriptLiteral, ListsWrapTwelveToALine) {
  std::vector<int64_t> values(13, 1);
  EXPECT_EQ(pythonArrayLiteral(int64s(values), "  "),
            "np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1], dtype=np.int64).reshape([13])");
}

// Each literal reads back as the text in its language (the injection tests run them); here, what
// each writes for the characters that end a line or a literal somewhere.
TEST(ScriptLiteral, TextIsWrittenInPrintableAsciiWithEveryOtherCharacterEscaped) {
  const std::string text = "a\"\\\r\n\t\x01\x7f\xc2\x85\xe2\x80\xa8\xf0\x9f\x98\x80?";
  EXPECT_EQ(pythonStringLiteral(text), "\"a\\\"\\\\\\r\\n\\t\\x01\\x7f\\x85\\u2028\\U0001f600?\"");
  EXPECT_EQ(javascriptStringLiteral(text),
            "\"a\\\"\\\\\\r\\n\\t\\u0001\\u007f\\u0085\\u2028\\ud83d\\ude00?\"");
  EXPECT_EQ(cppStringLiteral(text),
            "\"a\\\"\\\\\\r\\n\\t\\001\\177\\302\\205\\342\\200\\250\\360\\237\\230\\200\\?\"");
  EXPECT_EQ(pythonListLiteral({"a", "b\n"}), "[\"a\", \"b\\n\"]");
  EXPECT_THROW(pythonStringLiteral("\xff"), Error) << "a Python string is Unicode";
  EXPECT_THROW(javascriptStringLiteral("\xc0\x80"), Error) << "an overlong form is no UTF-8";
  EXPECT_EQ(cppStringLiteral("\xff"), "\"\\377\"") << "C++ holds bytes";
  EXPECT_THROW(cppStringLiteral(std::string("a\0b", 3)), Error) << "a NUL would end it";
}

TEST(ScriptLiteral, ACommentShowsWhatWouldEndItAsEscapes) {
  using namespace std::string_literals;  // (the text holds a NUL)
  const std::string text = "t\rcode()\xe2\x80\xa8more\xc2\x85\x00x\xff\nnext \\"s;
  EXPECT_EQ(pythonComment(text), "# t\\x0dcode()\\u2028more\\x85\\x00x\\xff\n# next \\\n");
  EXPECT_EQ(javascriptComment(text, "  "),
            "  // t\\x0dcode()\\u2028more\\x85\\x00x\\xff\n  // next \\\n");
  // A C++ line's last backslash would join the next line to the comment; "??/" is one too.
  EXPECT_EQ(cppComment("a \\\nb ?"
                       "?/"),
            "// a \\x5c\n// b ?\\?/\n");
  EXPECT_EQ(pythonComment(""), "#\n");
}

TEST(ScriptLiteral, AMultiLineTextIsALiteralALine) {
  EXPECT_EQ(pythonTextLiteral("a\nb\"\n", "  "), "(\n  \"a\\n\"\n  \"b\\\"\\n\"\n)");
  EXPECT_EQ(cppTextLiteral("a\nb", "  "), "  \"a\\n\"\n  \"b\"");
}

}  // namespace
}  // namespace nncheck
