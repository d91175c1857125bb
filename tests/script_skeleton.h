// The skeleton of a script or a Markdown text nncheck writes: what of it is code or markup, with
// string literals, comments and code spans reduced to a mark each. Two scripts written from cases
// that differ only in their text (names, titles, messages) must have the same skeleton: text from
// a case that reached code, ended a comment early or opened markup shows as a difference. The
// lexers follow each language's own rules for what ends a comment or a literal (Python: LF and
// CR; JavaScript: those and U+2028, U+2029; C++: LF and CR, after splicing backslash-newlines),
// and refuse what the language refuses (an unterminated literal, NUL or bytes that are no UTF-8 in
// Python source). Shared by the injection tests and the reproducer fuzz harness.
//
//   std::optional<std::string> s = scriptSkeleton(script, "python");   // nullopt: malformed
//   EXPECT_EQ(scriptSkeleton(hostile, "c++"), scriptSkeleton(benign, "c++"));
//   EXPECT_EQ(markdownSkeleton(hostileDraft), markdownSkeleton(benignDraft));
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/utf8.h"

namespace nncheck::testing {

namespace skeleton_detail {

inline bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

// The code point at `at` (a stray byte as itself).
inline uint32_t codeAt(std::string_view s, size_t at, size_t& length) {
  const CodePoint c = decodeUtf8(s, at);
  length = c.length;
  return c.value;
}

struct Lexer {
  Lexer(std::string_view text, std::string lang) : s(text), language(std::move(lang)) {}
  std::string_view s;
  std::string language;
  size_t at = 0;
  std::string out;
  bool lastSpace = true;

  bool python() const { return language == "python"; }
  bool javascript() const { return language == "javascript"; }
  bool cpp() const { return language == "c++"; }

  // The length of the line terminator at `i`, 0 for none, in this language.
  size_t terminatorAt(size_t i) const {
    if (i >= s.size()) return 0;
    if (s[i] == '\n') return 1;
    if (s[i] == '\r') return i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1;
    if (javascript()) {
      size_t length;
      const uint32_t c = codeAt(s, i, length);
      if (c == 0x2028 || c == 0x2029) return length;
    }
    return 0;
  }

  void mark(const char* m) {
    out += m;
    lastSpace = false;
  }
  void code(char c) {
    if (isSpace(c) || c == '\n' || c == '\r') {
      if (!lastSpace) out += ' ';
      lastSpace = true;
      return;
    }
    out += c;
    lastSpace = false;
  }

  // A comment to the line's end (the terminator stays, as code's whitespace).
  void lineComment() {
    while (at < s.size() && !terminatorAt(at)) ++at;
  }
  bool blockComment() {  // at "/*"
    const size_t end = s.find("*/", at + 2);
    if (end == std::string_view::npos) return false;
    at = end + 2;
    return true;
  }

  // A quoted literal opened at `at` by `quote` (1 or 3 characters long). A backslash takes the
  // next character along, in a raw literal too (r"\"" holds a quote).
  bool quoted(std::string_view quote) {
    at += quote.size();
    for (;;) {
      if (at >= s.size()) return false;
      if (s.compare(at, quote.size(), quote) == 0) {
        at += quote.size();
        return true;
      }
      if (quote.size() == 1 && terminatorAt(at)) return false;  // a line's end ends no literal
      if (s[at] == '\\') {
        at += 2;
        continue;
      }
      ++at;
    }
  }

  // A JavaScript template literal at '`', its ${...} expressions lexed as code of their own.
  bool templateLiteral() {
    ++at;
    for (;;) {
      if (at >= s.size()) return false;
      if (s[at] == '`') {
        ++at;
        return true;
      }
      if (s[at] == '\\') {
        at += 2;
        continue;
      }
      if (s.compare(at, 2, "${") == 0) {
        at += 2;
        mark("${");
        if (!codeUntil('}')) return false;
        mark("}");
        continue;
      }
      ++at;
    }
  }

  // C++'s raw string R"delim( ... )delim" at 'R'.
  bool rawString() {
    const size_t open = s.find('(', at + 2);
    if (open == std::string_view::npos) return false;
    const std::string close = ")" + std::string(s.substr(at + 2, open - at - 2)) + "\"";
    const size_t end = s.find(close, open);
    if (end == std::string_view::npos) return false;
    at = end + close.size();
    return true;
  }

  // Code until `stop` at depth 0 (or the end, for stop 0); false for a malformed literal.
  bool codeUntil(char stop) {
    int depth = 0;
    while (at < s.size()) {
      const char c = s[at];
      if (stop && depth == 0 && c == stop) {
        ++at;
        return true;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (python() && c == '#') {
        lineComment();
        continue;
      }
      if (!python() && s.compare(at, 2, "//") == 0) {
        lineComment();
        continue;
      }
      if (!python() && s.compare(at, 2, "/*") == 0) {
        if (!blockComment()) return false;
        continue;
      }
      if (python() && (c == '"' || c == '\'' ||
                       (std::string_view("rRbBfFuU").find(c) != std::string_view::npos &&
                        literalAfterPrefix()))) {
        while (s[at] != '"' && s[at] != '\'') ++at;  // the prefix
        const char q = s[at];
        const bool triple = s.compare(at, 3, std::string(3, q)) == 0;
        if (!quoted(triple ? std::string_view(q == '"' ? "\"\"\"" : "'''")
                           : std::string_view(q == '"' ? "\"" : "'")))
          return false;
        mark("S");
        continue;
      }
      if (cpp() && c == 'R' && s.compare(at, 2, "R\"") == 0 &&
          (at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1])))) {
        if (!rawString()) return false;
        mark("S");
        continue;
      }
      if (!python() && (c == '"' || c == '\'')) {
        if (!quoted(c == '"' ? "\"" : "'")) return false;
        mark("S");
        continue;
      }
      if (javascript() && c == '`') {
        if (!templateLiteral()) return false;
        mark("S");
        continue;
      }
      if (const size_t t = terminatorAt(at)) {
        code('\n');
        at += t;
        continue;
      }
      code(c);
      ++at;
    }
    return stop == 0;
  }

  // Whether the identifier characters at `at` are a string prefix (f"..., rb'...).
  bool literalAfterPrefix() const {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(s[at - 1])) || s[at - 1] == '_'))
      return false;
    size_t i = at;
    while (i < s.size() && i - at < 3 &&
           std::string_view("rRbBfFuU").find(s[i]) != std::string_view::npos)
      ++i;
    return i < s.size() && (s[i] == '"' || s[i] == '\'');
  }
};

// C++'s translation phase 2: a backslash before a line's end joins the lines.
inline std::string spliced(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      size_t j = i + 1;
      while (j < s.size() && isSpace(s[j])) ++j;  // GCC splices over trailing blanks too
      if (j < s.size() && (s[j] == '\n' || s[j] == '\r')) {
        i = j + (s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n' ? 1 : 0);
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace skeleton_detail

// The script's code with each literal as "S" and comments left out, blanks collapsed; nullopt
// when the language would not read it (an unterminated literal or comment; in Python, a NUL, a
// byte that is no UTF-8, or an encoding declaration other than UTF-8's on its first two lines).
inline std::optional<std::string> scriptSkeleton(std::string_view script,
                                                 const std::string& language) {
  using namespace skeleton_detail;
  std::string text(script);
  if (language == "python") {
    if (text.find('\0') != std::string::npos || firstInvalidUtf8(text)) return std::nullopt;
    // PEP 263: "coding[:=]" in a comment on line 1 or 2 names the file's encoding.
    size_t lineEnd = 0;
    for (int line = 0; line < 2 && lineEnd < text.size(); ++line) {
      const size_t begin = lineEnd;
      lineEnd = text.find_first_of("\r\n", begin);
      if (lineEnd == std::string::npos) lineEnd = text.size();
      const std::string l = text.substr(begin, lineEnd - begin);
      const size_t hash = l.find('#'), coding = l.find("coding");
      if (hash != std::string::npos && coding != std::string::npos && coding > hash &&
          coding + 6 < l.size() && (l[coding + 6] == ':' || l[coding + 6] == '=')) {
        const std::string rest = l.substr(coding + 7);
        if (rest.find_first_not_of(" \t") == std::string::npos ||
            rest.compare(rest.find_first_not_of(" \t"), 5, "utf-8") != 0)
          return std::nullopt;
        break;  // the first declaration counts
      }
      ++lineEnd;
    }
  }
  if (language == "c++") text = spliced(text);
  Lexer lexer(text, language);
  if (!lexer.codeUntil(0)) return std::nullopt;
  return lexer.out;
}

// A Markdown text's markup: per line outside fenced code blocks, the marks CommonMark or GitHub
// could read as markup (# * _ [ ] < > ! | ~ & $ @ and a backtick's code span, as "C") that are
// not backslash-escaped, with fence lines as "F"; nullopt when a fence is left open.
inline std::optional<std::string> markdownSkeleton(std::string_view text) {
  std::string out;
  size_t fence = 0;  // the open fence's length, 0 outside one
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find_first_of("\r\n", at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end +
         (end < text.size() && text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n'
              ? 2
              : 1);
    size_t ticks = 0;
    while (ticks < line.size() && line[ticks] == '`') ++ticks;
    if (fence) {
      if (ticks >= fence && line.find_first_not_of(" \t", ticks) == std::string_view::npos) {
        fence = 0;
        out += "F\n";
      }
      if (end >= text.size()) break;
      continue;
    }
    if (ticks >= 3) {
      fence = ticks;
      out += "F\n";
      if (end >= text.size()) break;
      continue;
    }
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '\\' && i + 1 < line.size()) {
        ++i;
        continue;
      }
      if (c == '`') {  // a code span: to the next run of as many backticks
        size_t n = 0;
        while (i + n < line.size() && line[i + n] == '`') ++n;
        const size_t close = line.find(std::string(n, '`'), i + n);
        if (close == std::string_view::npos) {
          out += '`';
          i += n - 1;
          continue;
        }
        out += 'C';
        i = close + n - 1;
        continue;
      }
      if (std::string_view("#*_[]<>!|~&$@").find(c) != std::string_view::npos) out += c;
    }
    out += '\n';
    if (end >= text.size()) break;
  }
  if (fence) return std::nullopt;
  return out;
}

}  // namespace nncheck::testing
