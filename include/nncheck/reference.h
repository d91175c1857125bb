// The reference interpreter: runs a model by the ONNX spec with nncheck's op library.
//
//   nncheck::TensorMap out = nncheck::runReference(model, {{"x", x}});
//   const nncheck::Tensor& y = out.at("y");
//
// Every node is checked by its op's shape rule before its kernel runs, so a malformed model
// fails with a message naming the node, the op and the shapes. Ops, dtypes or attribute values
// outside the op library throw nncheck::Unsupported.
#pragma once

#include <map>
#include <string>

#include "nncheck/graph.h"

namespace nncheck {

using TensorMap = std::map<std::string, Tensor>;

// Runs `model` on `inputs` (one per graph input that is not an initializer) and returns the
// graph outputs by name.
TensorMap runReference(const Model& model, const TensorMap& inputs);

// Like runReference, and also returns every intermediate value (for localization).
TensorMap runReferenceAllValues(const Model& model, const TensorMap& inputs);

}  // namespace nncheck
