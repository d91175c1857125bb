// The deliberately broken worker of tests/backends/workers/broken_worker.py, as a command, and
// the one-node model and inputs the worker tests run on it.
//
//   WorkerBackend engine(brokenWorker("dies", "1 runs.txt"), "plain");
//   isolated(engine, 30s).run(identityModel(), kIdentityInputs);
#pragma once

#include <string>

#include "nncheck/graph.h"
#include "nncheck/worker_engine.h"

namespace nncheck::testing {

#ifdef NNCHECK_SDK_PYTHON
// The worker misbehaving as `mode` says (with `argument`, when the mode takes one).
inline WorkerCommand brokenWorker(const std::string& mode, const std::string& argument = "") {
  return WorkerCommand::parse(std::string(NNCHECK_SDK_PYTHON) +
                              " " NNCHECK_SOURCE_DIR "/tests/backends/workers/broken_worker.py " +
                              mode + (argument.empty() ? "" : " " + argument));
}
#endif

// y = Identity(x), x float32[2].
inline Model identityModel() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Identity", {"x"}, {"y"}, "id")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
  return m;
}

inline const TensorMap kIdentityInputs = {{"x", Tensor::fromVector<float>({2}, {1, -2})}};

}  // namespace nncheck::testing
