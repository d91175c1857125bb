// MLIR in process: parses and verifies a Program's text, runs a pass pipeline on it, JIT-compiles
// the LLVM dialect with MLIR's ExecutionEngine and calls @forward through its C interface, with
// memref descriptors over nncheck's tensors. The only code that includes MLIR's headers.
//
//   Jit jit;   // in the process that runs the engine (a context per engine, reused)
//   std::vector<Tensor> outs = jit.run(program, config.pipeline(), 3, {&x});
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlir/translate.h"
#include "nncheck/tensor.h"

namespace nncheck::mlir {

// Where a run's time went, for benchmarks.
struct JitTimes {
  double compileSeconds = 0;  // parse and verify, the pipeline, LLVM's optimization and codegen
  double callSeconds = 0;     // @forward, and reading its results
};

class Jit {
 public:
  Jit();
  ~Jit();
  // The program's outputs, in order. Throws nncheck::Error naming the stage (parse, a pass, the
  // JIT, the call) and MLIR's diagnostics.
  std::vector<Tensor> run(const Program& program, const std::string& pipeline, int llvmOpt,
                          const std::vector<const Tensor*>& inputs, JitTimes* times = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nncheck::mlir
