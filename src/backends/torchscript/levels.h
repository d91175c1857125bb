// What each TorchScript level switches in PyTorch's JIT, for the engine that runs it and the
// reproducer that writes the same run out as C++ (one decision, two uses).
//
//   torch::jit::setGraphExecutorOptimize(nncheck::torchscript::optimizesGraph(level));
#pragma once

#include "nncheck/torchscript.h"

namespace nncheck::torchscript {

// The graph executor's optimizations, on a frozen module (freeze, optimize_for_inference, NNC).
inline bool optimizesGraph(Level level) { return level != Level::Script && level != Level::Eager; }
// The NNC fuser (tensor expressions), and fusion on the CPU.
inline bool fusesWithNnc(Level level) { return level == Level::Nnc; }
// The profiling executor optimizes a graph after it has seen it run: the third run uses the
// optimized plan.
inline constexpr int kRunsBeforeOptimizedPlan = 2;

}  // namespace nncheck::torchscript
