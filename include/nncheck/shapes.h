// Static shape inference, for an engine or an optimizer of one's own: every value of a model
// with its dtype and shape, and its contents where they are known before it runs (initializers,
// Constant nodes, Shape and Size of static shapes, small subexpressions of known values), by the
// rules nncheck's generator and reference hold to. What nncheck's TorchScript and MLIR engines
// compile from; an optimizer uses it to decide a rewrite (is this MatMul's B constant? is this
// Transpose pair the identity?) without running anything.
//
//   std::map<std::string, nncheck::ValueFacts> facts = nncheck::inferShapes(model);
//   const nncheck::ValueFacts& b = facts.at(node.inputs[1]);
//   if (b.value) foldIntoGemm(*b.value);           // b.shape == {K, N}, b.dtype == Float32
#pragma once

#include <map>
#include <optional>
#include <string>

#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

struct ValueFacts {
  DType dtype = DType::Undefined;
  Shape shape;
  std::optional<Tensor> value;  // the contents, when known before running
};

// Every graph input, initializer and node output of `model`, in no particular order. Throws
// nncheck::Unsupported when a shape is known only at run time (a Reshape whose shape is a graph
// input), naming the node, and for ops or versions nncheck does not know; nncheck::Error, naming
// the op, the node and the shapes, for a model that breaks an op's rules.
std::map<std::string, ValueFacts> inferShapes(const Model& model);

}  // namespace nncheck
