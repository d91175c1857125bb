// Whether a model is valid: onnx::checker::check_model, strict ONNX shape inference, and ONNX's
// inferred dtypes and shapes equal to those of nncheck's own shape rules, node by node.
//
//   nncheck::checkValid(model);            // throws nncheck::Error naming the node, op, shapes
//   if (auto why = nncheck::whyInvalid(model)) std::cerr << *why << "\n";
//
// Shape operands (Reshape's shape, Slice's starts, ...) must be initializers so that both
// sides can infer static shapes; every value must get a fully known shape.
#pragma once

#include <optional>
#include <string>

#include "nncheck/graph.h"

namespace nncheck {

void checkValid(const Model& model);
std::optional<std::string> whyInvalid(const Model& model);

// The cheap part of checkValid, which the reference runs before any model: an IR version and a
// default opset this ONNX knows, graph inputs, initializers and outputs each named once, and no
// graph output that is also a graph input. Throws nncheck::Error naming what is wrong.
void checkStructure(const Model& model);

}  // namespace nncheck
