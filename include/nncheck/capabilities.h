// What an engine accepts (ops, dtypes, opset, where weights live); the generator stays inside
// it. An engine declares them, or `nncheck probe` measures them (harness/probe.h).
//
//   nncheck::Capabilities caps;
//   caps.ops = {"Conv", "Relu", "MatMul"};
//   caps.dtypes = {nncheck::DType::Float32};
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/dtype.h"

namespace nncheck {

struct Capabilities {
  std::vector<std::string> ops;  // empty: any registered op
  std::vector<DType> dtypes;     // empty: the generator's defaults
  int64_t opset = 17;
  bool weightsMustBeInitializers = true;
  // Reshape's shape, Slice's starts and the like: an engine that needs them before running and
  // does not fold a constant subexpression computing them keeps this true.
  bool shapeOperandsMustBeInitializers = true;
  // Relative frequency per op, e.g. the share of an op's models the engine accepts (see
  // harness/probe.h), so the generator spends little on what the engine mostly rejects.
  std::map<std::string, double> opWeights;

  // These capabilities with the ops of a probed table (the rows `nncheck probe --write-table`
  // writes, {"Abs", 1.00}), each weighted by its share.
  Capabilities withProbedOps(const std::vector<std::pair<std::string, double>>& table) const {
    Capabilities c = *this;
    for (const auto& [op, share] : table) {
      c.ops.push_back(op);
      c.opWeights[op] = share;
    }
    return c;
  }
};

}  // namespace nncheck
