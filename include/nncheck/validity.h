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

// The cheap part of checkValid, which the reference runs before any model and the corpus and
// conformance readers run on every model they load: an IR version and a default opset this ONNX
// knows, graph inputs, initializers and outputs each named once, no graph output that is also a
// graph input, and every value of every graph defined once (no two nodes writing 'y'). Throws
// nncheck::Error naming what is wrong; nncheck::Unsupported for an IR version or default opset
// this ONNX does not know (or none: a model of ONNX's training domain alone).
void checkStructure(const Model& model);

}  // namespace nncheck
