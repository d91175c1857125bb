// Localization: for a model whose outputs differ from the reference, or on which the engine fails
// with an error (perhaps after computing a wrong shape), the first diverging node, the one whose
// inputs agree and whose output does not.
//
// First every intermediate value is exposed as a graph output and the engine runs once; the
// first node (in graph order) with a differing output is the answer. Exposing values can stop
// an engine from fusing nodes, so when that run shows no divergence, each node is tried as the
// output of the sub-model that computes it (its ancestors only, their values kept internal);
// the first such sub-model that differs names the node.
//
//   if (auto d = nncheck::localizeDivergence(engine, tc, nncheck::toleranceFor(tc.model)))
//     std::cerr << d->describe() << "\n";   // "node 'n3' (Softmax), output 'v4': ..."
#pragma once

#include <optional>
#include <string>

#include "nncheck/compare.h"
#include "nncheck/isolation.h"
#include "nncheck/test_case.h"

namespace nncheck {

struct Divergence {
  size_t node = 0;     // index in graph order
  std::string name;    // node name
  std::string opType;  // op
  std::string output;  // the first differing output of the node
  std::string detail;  // what differs (the comparison's message)
  // true: found with every value exposed; false: only the node's own sub-model differs (its
  // inputs internal), which points at fusion of the node with its producers.
  bool exposed = true;
  bool layoutDiffers = false;  // in dtype, shape or presence, not in values
  std::string describe() const;
};

// A model whose graph outputs are its outputs plus every node output (typed from the
// reference's values).
Model exposeAllValues(const Model& model, const TensorMap& values);

// The sub-model computing node `node`'s outputs from graph inputs and initializers: the node
// and its ancestors, with the node's outputs as the graph outputs.
TestCase subModelFor(const TestCase& tc, size_t node, const TensorMap& values);

// The first node of `g` (graph order) whose output in `got` differs from `want` (both by value
// name, as exposeAllValues makes them), found with every value exposed.
std::optional<Divergence> firstDivergence(const Graph& g, const TensorMap& got,
                                          const TensorMap& want, const Tolerance& tol);

// What the engine's values are compared with: the reference's, or with `expected` (the baseline
// oracle's baseline configuration), that engine's on the same exposed model. The exposed model
// is typed by the reference, so a case the reference cannot run is not localized.
// The first way alone (one engine run): cheap enough to group failures before shrinking them.
std::optional<Divergence> localizeExposed(const Isolated& engine, const TestCase& tc,
                                          const Tolerance& tol, const Isolated* expected = nullptr);

// nullopt when neither way finds a differing node (e.g. the engine fails on every variant).
std::optional<Divergence> localizeDivergence(const Isolated& engine, const TestCase& tc,
                                             const Tolerance& tol,
                                             const Isolated* expected = nullptr);

}  // namespace nncheck
