// An ONNX model as the text of one TOSA function, `@forward`, with ONNX's exact semantics at the
// model's opset: TOSA's ops where they compute exactly what ONNX does, the arith and math
// dialects on tensors where TOSA has no such op or rounds differently (float division, square
// root, truncation). Initializers become `tosa.const` with their exact bits; graph inputs become
// the function's arguments, graph outputs its results. MLIR's parser verifies the text.
//
//   Program p = translate(model);   // throws nncheck::Unsupported naming the node
//   // p.text: "func.func @forward(%a0: tensor<2x3xf32>) -> (tensor<2x3xf32>) ... {"
#pragma once

#include <string>
#include <vector>

#include "nncheck/graph.h"

namespace nncheck::mlir {

// One argument or result of @forward.
struct Port {
  std::string name;  // the ONNX value
  DType dtype = DType::Undefined;
  Shape shape;
};

struct Program {
  std::string text;  // a module holding @forward, with llvm.emit_c_interface
  std::vector<Port> inputs, outputs;
};

Program translate(const Model& model);

// MLIR's name of an element type: "f32", "i64", "i1"; Unsupported for types not translated.
std::string elementType(DType t);
// "tensor<2x3xf32>", "tensor<f32>" for rank 0.
std::string tensorType(DType t, const Shape& shape);

}  // namespace nncheck::mlir
