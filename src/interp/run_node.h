// Pieces of the reference interpreter for code that runs models piecemeal or often: one node on
// values computed before it (the interpreter's loop; the generator checks each node's values as
// it grows), and one model run again and again on new values of the same shapes (value search).
//
//   std::vector<Tensor> outs = runNode(model.graph.nodes[n], n, model.defaultOpset(), values);
//   RepeatedRun run(tc.model);
//   TensorMap all = run.allValues(tc.inputs);   // shapes inferred once, on the first run
#pragma once

#include <vector>

#include "nncheck/graph.h"
#include "nncheck/reference.h"
#include "ops/infer.h"

namespace nncheck {

// The node's outputs in order (an absent optional output is an empty Tensor). `index` names
// the node in errors.
std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset, const TensorMap& values);

// runReferenceAllValues(model, inputs) with the model's initializers as they are at each call.
// Every call after the first reuses the first's ops and output types: the inputs' shapes and
// every non-float operand (shapes, indices) must stay as they were.
class RepeatedRun {
 public:
  explicit RepeatedRun(const Model& model) : model_(model) {}
  TensorMap allValues(const TensorMap& inputs);
  // Each node's op, once a run has been made.
  const std::vector<const ops::OpSpec*>& specs() const { return specs_; }

 private:
  const Model& model_;
  std::vector<const ops::OpSpec*> specs_;
  std::vector<std::vector<ops::TensorType>> types_;
};

}  // namespace nncheck
