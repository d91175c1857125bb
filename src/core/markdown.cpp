#include "core/markdown.h"

#include <algorithm>
#include <cctype>

#include "core/utf8.h"

namespace nncheck {
namespace {

size_t longestBacktickRun(std::string_view s) {
  size_t longest = 0, run = 0;
  for (const char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string markdownText(std::string_view s) {
  const std::string visible = escapeInvisible(s);
  // What opens markup anywhere in a line: code, emphasis, links and images, HTML and autolinks,
  // entities, strikethrough, tables, math, headings and issue references, mentions; and the
  // escape itself.
  constexpr std::string_view kInline = "\\`*_[]<>&~|$#@!";
  // What opens a block at a line's start: a list item, a setext underline, a quote, and a number
  // ending in '.' or ')' (an ordered list).
  size_t digits = 0;
  while (digits < visible.size() && std::isdigit(static_cast<unsigned char>(visible[digits])))
    ++digits;
  const size_t opener =
      digits < visible.size() && (visible[digits] == '.' || visible[digits] == ')') ? digits
      : !visible.empty() && std::string_view("-+=").find(visible[0]) != std::string_view::npos
          ? 0
          : std::string::npos;
  std::string out;
  out.reserve(visible.size() * 2);
  for (size_t i = 0; i < visible.size(); ++i) {
    if (i == opener || kInline.find(visible[i]) != std::string_view::npos) out += '\\';
    out += visible[i];
  }
  return out;
}

std::string markdownCode(std::string_view s) {
  const std::string visible = escapeInvisible(s);
  const std::string fence(longestBacktickRun(visible) + 1, '`');
  // A space each side keeps a backtick at either end from joining the fence; CommonMark strips
  // one space each side when both are there.
  const bool pad = visible.empty() || visible.front() == '`' || visible.back() == '`' ||
                   visible.front() == ' ' || visible.back() == ' ';
  std::string out = fence;  // (appended: GCC 12 warns falsely on `a + b + c` of strings)
  if (pad) out += ' ';
  out += visible;
  if (pad) out += ' ';
  return out += fence;
}

std::string markdownBlock(std::string_view text, std::string_view info) {
  std::string body;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    body.append(escapeInvisible(text.substr(at, end - at))).append("\n");
    at = end + 1;
  }
  const std::string fence(std::max<size_t>(3, longestBacktickRun(body) + 1), '`');
  std::string out = fence;
  out.append(info).append("\n").append(body).append(fence).append("\n");
  return out;
}

}  // namespace nncheck
