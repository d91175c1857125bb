// The engine under test behind one interface: an ONNX model and named inputs in, named outputs
// out. nncheck runs it isolated (nncheck/isolation.h) and compares it with the reference.
//
//   class MyCompiler : public nncheck::Backend {
//    public:
//     std::string name() const override { return "mycompiler"; }
//     nncheck::TensorMap run(const nncheck::Model& m, const nncheck::TensorMap& in) override;
//   };
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "nncheck/capabilities.h"
#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

// The contract of an engine:
// - run() returns one tensor per graph output, by name. A model the engine does not support
//   (an op, a dtype, an attribute it lacks) is a limit, not a bug: throw nncheck::Unsupported.
//   Any other exception is an error of the engine.
// - run() is called in a forked child of the process that constructed the backend (see
//   nncheck/isolation.h), possibly many times in one child. Create device contexts, thread
//   pools and JIT state lazily, inside run(), not in the constructor: state made before the
//   fork may not survive it.
// - name() and capabilities() are called in the test's own process.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // What the engine accepts; the generator stays inside it. Default: everything.
  virtual Capabilities capabilities() const { return {}; }
  virtual TensorMap run(const Model& model, const TensorMap& inputs) = 0;
  // The engine's optional optimizations (graph rewrites, passes) that changed the model in the
  // last run(), by name, for an engine that can tell: campaigns keep a case that makes a new one
  // fire, or a new pair, and count how many of them a campaign reached. Called in the engine's
  // process right after run(), whatever it returned or threw. Default: none known.
  virtual std::vector<std::string> optimizationsApplied() const { return {}; }
  // Every optimization this configuration may apply, by the names optimizationsApplied() uses:
  // what "optimizations triggered: N of M" counts. Called in the test's own process. Default:
  // none known.
  virtual std::vector<std::string> optimizations() const { return {}; }
  // Optimizations the configuration may apply and switch off whose firing the engine cannot
  // report (rewrites inside a pass it reports only as a whole): searched for a failure's culprit
  // (harness/culprit.h), not counted as reach. Default: none.
  virtual std::vector<std::string> unreportedOptimizations() const { return {}; }
  // How much longer than a case's time limit the first run in a fresh engine process may take:
  // what starting the engine costs once (a worker importing its compiler; Inductor compiling its
  // first kernel loads and probes its C++ toolchain), which no case is charged for as a hang.
  // Called in the test's own process. Default: nothing.
  virtual std::chrono::milliseconds startTime() const { return std::chrono::milliseconds(0); }
};

}  // namespace nncheck
