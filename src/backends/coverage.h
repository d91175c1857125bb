// Which code of an engine a run reached, from SanitizerCoverage: nncheck defines the callbacks
// that instrumented code calls, so an engine compiled with
//   -fsanitize-coverage=trace-pc              (GCC or clang: blocks hashed into 64K counters)
//   -fsanitize-coverage=trace-pc-guard        (clang: one counter per edge)
//   -fsanitize-coverage=inline-8bit-counters  (clang: the engine's own counters; with pc-table)
// reports its edges to the process that runs it: an isolated child sends them back with its
// outputs (RunOutcome::coverage). A build with NNCHECK_FUZZ leaves the callbacks to libFuzzer.
// With pc-table as well (clang), the features of many runs tell which of the engine's functions
// no run reached (Reached::functions).
//
//   coverage::reset();
//   engine.run(model, inputs);
//   std::vector<uint32_t> features = coverage::collect();   // empty: nothing instrumented ran
//   coverage::Reached all;
//   all.add(features);
//   std::string line = all.functions().summary();  // "engine functions never reached: ..."
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nncheck::coverage {

// Zeroes every counter.
void reset();

// The features reached since reset(), sorted: the index of each counter that is not zero.
// Edges, not how often they ran: unlike libFuzzer's byte strings, a model's loop counts follow
// its sizes more than its structure, and counting them buried the rewrites' edges under noise.
std::vector<uint32_t> collect();

// Adds to `features` (and keeps them sorted, once each) one feature per named optimization that
// changed a run's model (Backend::optimizationsApplied) and one per pair of them: an engine
// whose optimizer names what it did guides generation as if its code were instrumented, and a
// case that makes two rewrites meet is kept like one that makes a new rewrite fire. The features
// are hashes of the names in the upper half of the 32-bit range, far above the counters'.
void addOptimizationFeatures(const std::vector<std::string>& applied,
                             std::vector<uint32_t>& features);

// The functions of the instrumented modules compiled with a pc-table
// (-fsanitize-coverage=inline-8bit-counters,pc-table or trace-pc-guard,pc-table), by whether
// any run reached one of their blocks. Only modules some run entered count: one no run entered
// is other code of the process, not the engine's. Nor does code of the C++ library or of
// nncheck's headers that the engine's module instantiates (function_names.h).
struct FunctionReach {
  struct Function {
    std::string name;  // symbolized and demangled (function_names.h)
    size_t blocks = 0;
  };
  size_t functions = 0, blocks = 0;  // in the modules with a pc-table that runs entered
  size_t reachedFunctions = 0, reachedBlocks = 0;
  std::vector<Function> unreached;  // largest first (most blocks), then by name

  // "engine functions never reached: 2 of 3 (9 of 11 blocks), largest first: big(int) 8
  // blocks, ..." naming up to `shown`; empty when no module has a pc-table.
  std::string summary(size_t shown = 10) const;
};

// The features of many runs (collect()'s, as isolated children send them back), gathered.
// The modules, and so the pc-tables, are this process's: an isolated engine runs in a fork of it.
class Reached {
 public:
  void add(const std::vector<uint32_t>& features);
  FunctionReach functions() const;

 private:
  std::vector<bool> counters_;  // by feature, those of counters only (not optimizations')
};

}  // namespace nncheck::coverage
