// Tensors and text as the languages nncheck writes scripts in (standalone reproducers, the
// source it hands engines): the one writer of each. Text from a case (names, titles, messages,
// attributes) reaches a script only through these, which make it inert: a string literal is in
// printable ASCII alone, every other character escaped, so no line terminator of any language
// (LF, CR, U+2028, U+2029, NEL), control or bidirectional character lands in the source; a
// comment shows such characters as escapes, so none ends it early. A float is written as the
// shortest text that reads back as the same value of its dtype; long lists wrap twelve to a line.
//
//   std::string s = nncheck::cppTensorLiteral(t, "    ");   // {"float32", {2, 3}, {1, 2, ...}}
//   std::string p = nncheck::pythonArrayLiteral(t, "    "); // np.array([...], dtype=np.float32)...
//   std::string n = nncheck::pythonStringLiteral(name);     // "x\r\u2028y"
//   std::string h = nncheck::pythonComment(title);          // "# title\n", one line a line
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nncheck/tensor.h"

namespace nncheck {

// A string literal: "...", printable ASCII with every other character escaped. Python's and
// JavaScript's throw nncheck::Error for text that is not UTF-8 (their strings are Unicode); C++'s
// writes bytes as they are (octal escapes) and throws for a NUL, which would end the string.
std::string pythonStringLiteral(std::string_view s);
std::string javascriptStringLiteral(std::string_view s);
std::string cppStringLiteral(std::string_view s);
// A list of string literals, ["a", "b"] (Python's list, JavaScript's array).
std::string pythonListLiteral(const std::vector<std::string>& items);
std::string javascriptListLiteral(const std::vector<std::string>& items);
// A text of many lines as one Python string, a literal a line in parentheses (indented by
// `indent`), readable as the text it holds; cppTextLiteral the same in C++ (adjacent literals).
std::string pythonTextLiteral(std::string_view text, const std::string& indent);
std::string cppTextLiteral(std::string_view text, const std::string& indent);
// Comments: each line of `text` (split at LF) prefixed with `indent` and "# " or "// ", trailing
// blanks dropped, every character that could end the comment or hide what it says written as a
// visible escape (utf8.h's escapeInvisible), a C++ line's last backslash too (it would splice the
// next line into the comment) and C++'s "??" (a trigraph where those are read). Each ends in '\n'.
std::string pythonComment(std::string_view text, const std::string& indent = "");
std::string javascriptComment(std::string_view text, const std::string& indent = "");
std::string cppComment(std::string_view text, const std::string& indent = "");
// The dims as "[2, 3]".
std::string dimsLiteral(const Shape& shape);
// A float of dtype `d` (float64: 17 digits, else 9), without NaN or infinity spelled.
std::string floatLiteral(double v, DType d);
// A numpy array; throws nncheck::Error for a dtype numpy lacks (bfloat16).
std::string pythonArrayLiteral(const Tensor& t, const std::string& indent);
// ONNX Runtime's JavaScript tensor `{type, data: new <TypedArray>([...]), dims}`; throws for a
// dtype it has no typed array for.
std::string javascriptTensorLiteral(const Tensor& t, const std::string& indent);
// The C++ reproducer's `Tensor{type, dims, values}` (values as doubles, exact for every float32
// and every integer up to 2^53 and those past it a double holds; throws for others and for
// strings).
std::string cppTensorLiteral(const Tensor& t, const std::string& indent);

}  // namespace nncheck
