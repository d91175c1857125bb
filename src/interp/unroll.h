// Control flow unrolled, for value search: a model's run on given inputs, with each If, Loop and
// Scan replaced by the nodes its run executed. Each run of a body is its nodes again under fresh
// output names; a scan slice is a Gather, stacked outputs are Unsqueeze and Concat, iteration
// numbers and conditions are initializers. Graph inputs and initializers keep their names, and so
// do bodies' initializers where no other value of the model has the name, so gradients found on
// the unrolled model name the values to move. Value-domain checks and reverse-mode gradients see
// inside bodies with no machinery of their own. The unrolled model holds for these inputs only:
// other values may take another branch or run another number of iterations.
//
//   Unrolled u = unrollControlFlow(tc.model, tc.inputs);
//   Gradients g = backpropagate(u.model, u.values, seeds);   // seeds on u's value names
#pragma once

#include "nncheck/graph.h"
#include "nncheck/reference.h"

namespace nncheck {

struct Unrolled {
  Model model;       // no node has a subgraph
  TensorMap values;  // every value of model's run
};

Unrolled unrollControlFlow(const Model& model, const TensorMap& inputs);

}  // namespace nncheck
