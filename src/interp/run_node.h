// Pieces of the reference interpreter for code that runs models piecemeal or often: one node on
// values computed before it (the interpreter's loop; the generator checks each node's values as
// it grows), one model run again and again on new values of the same shapes (value search), and
// the reference's time limit around a run of either.
//
//   HeldValues values;   // filled with the model's leaves
//   std::vector<Tensor> outs = runNode(model.graph.nodes[n], n, model.defaultOpset(), values);
//   RepeatedRun run(tc.model);
//   TensorMap all = run.allValues(tc.inputs);   // shapes inferred once, on the first run
#pragma once

#include <vector>

#include "core/deadline.h"
#include "nncheck/error.h"
#include "nncheck/graph.h"
#include "nncheck/reference.h"
#include "ops/infer.h"

namespace nncheck {

// A run's values by name and the bytes they hold, counted as values are stored: the memory
// check before each node reads the count (a walk over every value held made a run quadratic in
// its nodes; 200,000 nodes took hours).
class HeldValues {
 public:
  const TensorMap& map() const { return map_; }
  int64_t bytes() const { return bytes_; }
  const Tensor* find(const std::string& name) const;
  void set(const std::string& name, Tensor t);
  TensorMap release();

 private:
  TensorMap map_;
  int64_t bytes_ = 0;
};

// The node's outputs in order (an absent optional output is an empty Tensor). `index` names
// the node in errors. The TensorMap form counts what `values` holds first: for a few nodes.
std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset,
                            const HeldValues& values);
std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset, const TensorMap& values);

// `run()`, one run of the reference, under referenceTimeLimit(): past it, the run stops at the
// next node (or inside a long kernel) and Unsupported("time") names the node that was running.
// A limit set around it that ends first (a campaign's time box) passes through unchanged.
Unsupported referenceTimeout(const DeadlineExceeded& e);
template <class Run>
auto underReferenceTimeLimit(Run&& run) -> decltype(run()) {
  Deadline limit(referenceTimeLimit());
  try {
    return run();
  } catch (const DeadlineExceeded& e) {
    if (!e.of(limit)) throw;
    throw referenceTimeout(e);
  }
}

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
  TensorMap runOnce(const TensorMap& inputs);
  const Model& model_;
  std::vector<const ops::OpSpec*> specs_;
  std::vector<std::vector<ops::TensorType>> types_;
};

}  // namespace nncheck
