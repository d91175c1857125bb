// Which code of an engine a run reached, from SanitizerCoverage: nncheck defines the callbacks
// that instrumented code calls, so an engine compiled with
//   -fsanitize-coverage=trace-pc              (GCC or clang: blocks hashed into 64K counters)
//   -fsanitize-coverage=trace-pc-guard        (clang: one counter per edge)
//   -fsanitize-coverage=inline-8bit-counters  (clang: the engine's own counters; with pc-table)
// reports its edges to the process that runs it: an isolated child sends them back with its
// outputs (RunOutcome::coverage). A build with NNCHECK_FUZZ leaves the callbacks to libFuzzer.
//
//   coverage::reset();
//   engine.run(model, inputs);
//   std::vector<uint32_t> features = coverage::collect();   // empty: nothing instrumented ran
#pragma once

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

}  // namespace nncheck::coverage
