// Text as Markdown: shown as it is, never read as markup (the injection tests plant hostile text
// in every field of an issue draft; here, what each writer makes of the marks that open markup).
#include "core/markdown.h"

#include <gtest/gtest.h>

namespace nncheck {
namespace {

TEST(Markdown, TextEscapesWhatOpensMarkupAndReadsAsWrittenOtherwise) {
  EXPECT_EQ(markdownText("ort 1.30: Add (with axis) fails; x=1, y.z"),
            "ort 1.30: Add (with axis) fails; x=1, y.z");
  EXPECT_EQ(markdownText("![i](http://e/x.png) <img> *b* _i_ `c` @me #1 a|b ~s~ $m$ &amp; \\"),
            "\\!\\[i\\](http://e/x.png) \\<img\\> \\*b\\* \\_i\\_ \\`c\\` \\@me \\#1 a\\|b \\~s\\~ "
            "\\$m\\$ \\&amp; \\\\");
  // What opens a block at a line's start: a list item, an ordered list, a setext underline.
  EXPECT_EQ(markdownText("- item"), "\\- item");
  EXPECT_EQ(markdownText("12. item"), "12\\. item");
  EXPECT_EQ(markdownText("= x"), "\\= x");
  // A line's end and what hides itself show as escapes: the text stays one line.
  EXPECT_EQ(markdownText("a\nb\rc\xe2\x80\xae"), "a\\\\x0ab\\\\x0dc\\\\u202e");
}

TEST(Markdown, ACodeSpanIsLongerThanAnyBacktickRunInIt) {
  EXPECT_EQ(markdownCode("level=all"), "`level=all`");
  EXPECT_EQ(markdownCode("a``b"), "```a``b```");
  EXPECT_EQ(markdownCode("`x"), "`` `x ``") << "a backtick at an end is padded off the fence";
  EXPECT_EQ(markdownCode("a\nb"), "`a\\x0ab`");
}

TEST(Markdown, ABlocksFenceIsLongerThanAnyBacktickRunInIt) {
  EXPECT_EQ(markdownBlock("x\n", "text"), "```text\nx\n```\n");
  EXPECT_EQ(markdownBlock("```\n````\n", "text"), "`````text\n```\n````\n`````\n");
  EXPECT_EQ(markdownBlock("a\rb", "text"), "```text\na\\x0db\n```\n")
      << "a CR would end a line inside the block";
}

}  // namespace
}  // namespace nncheck
