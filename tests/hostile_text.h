// Text a hostile case holds: behind every line terminator of every language nncheck writes (CR,
// LF, CRLF, U+2028, U+2029, NEL, form feed), a line of planted code in each language that leaves a
// mark file when it runs; and what breaks out of literals, comments and Markdown otherwise
// (quotes, triple quotes, a raw string's end, a trailing backslash, a trigraph, a coding
// declaration, HTML, a link, an image, a mention, a heading, a fence). The injection tests and
// the reproducer fuzz harness plant it in every field a script or a draft takes from a case.
//
//   const HostileText text(marks, "title");        // marks: the folder marks would appear in
//   info.title = text.value();                     // no mark appears, whatever is run
#pragma once

#include <filesystem>
#include <string>

namespace nncheck::testing {

class HostileText {
 public:
  // `tag` makes each field's text (and marks) its own: names must differ.
  HostileText(const std::filesystem::path& marks, const std::string& tag) {
    const std::string m = marks.string() + "/";
    const std::string py = "open(\"" + m + "py-" + tag + "\", \"w\").close()";
    const std::string js = "require(\"fs\").writeFileSync(\"" + m + "js-" + tag + "\", \"\")";
    const std::string cpp = "extern \"C\" int system(const char*); static int ran_" + tag +
                            " = system(\"touch " + m + "cpp-" + tag + "\");";
    for (const char* end : {"\r", "\n", "\r\n", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xc2\x85", "\f"})
      text_ += std::string(end) + py + end + js + end + cpp;
    text_ += "\\\n" + py + "\\";  // a backslash that would splice lines, and one last
    text_ +=
        " \"\"\" ''' \")TS\" */ ?"
        "?/\n";  // (a trigraph, written in two)
    text_ += "-*- coding: utf-7 -*- +AAo-" + py + "\n";
    text_ +=
        "<img src=x onerror=alert(1)> ![i](http://evil.example/i.png) [l](http://evil.example)"
        " @maintainer #1 *b* _i_ | a | ~s~ $x$ &amp; </details>\n# Heading\n```\n~~~\n";
    text_ +=
        "\xe2\x80\xae"
        "bidi\xe2\x81\xa6 " +
        tag;
  }
  const std::string& value() const { return text_; }

  // A file name's worth (no '/', under 255 bytes) for a case's folder: planted code behind a CR
  // and a U+2028 that leaves its mark in the folder it runs in, "mark-py-<tag>" and the like.
  static std::string folderName(const std::string& tag) {
    return "case\r"
           "open(\"mark-py-" +
           tag +
           "\", \"w\").close()"
           "\xe2\x80\xa8"
           "require(\"fs\")" +
           ".writeFileSync(\"mark-js-" + tag +
           "\", \"\")\rstatic int m = system(\"touch mark-cpp\");";
  }

 private:
  std::string text_;
};

}  // namespace nncheck::testing
