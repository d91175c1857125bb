// A test case: a model and the values of its graph inputs, plus the seed that made it; and what
// every layer does with one: print it, cut out the part that computes one node.
//
//   nncheck::TestCase tc = nncheck::makeTestCase(cfg, /*seed=*/7);   // nncheck/generator.h
//   std::cout << nncheck::modelToText(tc.model);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

// One semantics-preserving rewrite of a model (nncheck/variants.h): a rule of the table, the
// value it applies at (by name, which shrinking keeps), and which of the rule's forms.
struct Rewrite {
  std::string rule;
  std::string at;
  int64_t form = 0;
  bool operator==(const Rewrite&) const = default;
};

struct TestCase {
  Model model;
  TensorMap inputs;  // one per graph input that is not an initializer
  uint64_t seed = 0;
  // The rewrites whose variant the equivalence oracle compares the model with; drawn by the
  // generator when GeneratorConfig::rewrites asks, shrunk and saved with the case.
  std::vector<Rewrite> rewrites{};
};

// The model as readable text, one line per value and node:
//   input  x0: float32[2, 3]
//   v2 = MatMul(x0, w1)          # float32[2, 4]
//   output v3: float32[2, 4]
std::string modelToText(const Model& model);

// Text from a model or a file name made safe for a terminal: control characters (an ESC that
// would start a terminal sequence, a newline inside a name), C1 controls, invisible and
// bidirectional characters become \xNN or \uNNNN, and so does a byte that is no UTF-8.
std::string printable(std::string_view text);

// The sub-case computing node `node`'s outputs from graph inputs and initializers: the node and
// its ancestors, with the node's outputs as the graph outputs, typed from `values` (which holds
// at least those outputs, e.g. from runReferenceAllValues).
TestCase subModelFor(const TestCase& tc, size_t node, const TensorMap& values);

}  // namespace nncheck
