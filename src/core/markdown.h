// Text as Markdown, the one writer of it: what a case holds (titles, messages, names, a model's
// text) reaches an issue draft inert, shown as it is and never read as Markdown or HTML (no
// heading, link, image, mention of markup, raw HTML or fence it did not open itself).
//
//   s += "# " + markdownText(title) + "\n";          // markup's openers escaped
//   s += "- **Configuration**: " + markdownCode(configuration) + "\n";
//   s += markdownBlock(modelText, "text");            // a fence longer than any backtick run
#pragma once

#include <string>
#include <string_view>

namespace nncheck {

// Text in running prose, on one line: each mark that opens markup backslash-escaped (code,
// emphasis, links and images, HTML, entities, strikethrough, tables, math, headings, references,
// mentions: \ ` * _ [ ] < > & ~ | $ # @ !, and a list item's, quote's or ordered list's opener
// at its start), line breaks, controls and invisible characters shown as escapes (utf8.h's
// escapeInvisible). The rest reads as written: "ort 1.30: Add (with axis)".
std::string markdownText(std::string_view s);

// Text as an inline code span on one line: delimited by a backtick run longer than any in it,
// with line breaks, controls and invisible characters shown as escapes.
std::string markdownCode(std::string_view s);

// Text of many lines as a fenced code block with the info string `info` ("text"), its fence
// longer than any backtick run in it, each line's controls and invisible characters (a CR, which
// CommonMark reads as a line's end, among them) shown as escapes. Ends in '\n'.
std::string markdownBlock(std::string_view text, std::string_view info);

}  // namespace nncheck
