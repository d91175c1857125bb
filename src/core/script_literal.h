// Tensors and text as literals of the languages nncheck writes scripts in (standalone
// reproducers): the one writer of each. A float is written as the shortest text that reads back
// as the same value of its dtype; long lists wrap twelve to a line.
//
//   std::string s = nncheck::cppTensorLiteral(t, "    ");   // {"float32", {2, 3}, {1, 2, ...}}
//   std::string p = nncheck::pythonArrayLiteral(t, "    "); // np.array([...], dtype=np.float32)...
#pragma once

#include <string>
#include <vector>

#include "nncheck/tensor.h"

namespace nncheck {

// A JSON string literal, which Python, JavaScript and C++ (for printable ASCII) all read.
std::string quotedLiteral(const std::string& s);
// A JSON list of string literals, ["a","b"], which Python and JavaScript read as lists.
std::string quotedListLiteral(const std::vector<std::string>& items);
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
