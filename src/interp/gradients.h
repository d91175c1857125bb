// Reverse mode through the reference interpreter, for value search: from dL/d(value) seeds on
// some values, dL/d(value) for every float or bool value the loss reaches backward through ops
// that declare a gradient (src/ops/gradients.h). Ops without one stop the flow. A bool's
// gradient is a proxy: positive means the loss falls if the value turns false.
//
//   TensorMap values = runReferenceAllValues(model, inputs);
//   Gradients g = backpropagate(model, values, {{"y", std::vector<double>(n, 1.0)}});
//   g["x"][i]   // dL/dx_i
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/reference.h"
#include "ops/op_spec.h"

namespace nncheck {

using Gradients = std::map<std::string, std::vector<double>>;

// `specs`, when given, are the nodes' ops (saves looking them up at every step of a search).
Gradients backpropagate(const Model& model, const TensorMap& values, Gradients seeds,
                        const std::vector<const ops::OpSpec*>* specs = nullptr);

}  // namespace nncheck
