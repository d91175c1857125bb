// Coverage-guided generation. An engine compiled with SanitizerCoverage tells which of its
// edges each case reached (RunOutcome::coverage, Verdict::coverage); the guide keeps the cases
// that reached a feature no earlier case did, and grows the next cases mostly by mutating kept
// ones (nncheck::mutateTestCase: nodes added, removed or regrown, every mutant re-judged by the
// op rules), as libFuzzer does with byte strings. Until some case brings coverage (an engine
// that is not instrumented) every case is fresh, exactly makeTestCase's.
//
//   nncheck::CoverageGuide guide;
//   for (uint64_t i = 0; i < n; ++i) {
//     nncheck::TestCase tc = guide.next(cfg, seed + i);
//     nncheck::Verdict v = nncheck::judge(property, tc);
//     guide.observe(tc, v.coverage);
//   }
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "nncheck/generator.h"

namespace nncheck {

struct CoverageStats {
  int64_t features = 0;  // distinct features reached by all cases so far
  int64_t kept = 0;      // cases kept for reaching a new feature
  int64_t mutants = 0;   // cases made by mutating a kept one
  int64_t fresh = 0;     // cases generated afresh
};

class CoverageGuide {
 public:
  // The next case under `cfg`: a mutant of a kept case (of up to twice cfg.nodes nodes), or a
  // fresh case of `freshNodes` nodes (cfg.nodes when 0). RapidCheck's size bounds fresh cases;
  // a mutant is as large as its parent makes it. Deterministic in `seed` and the observations
  // so far. Asked again for a recent seed and size, it gives the same case: RapidCheck runs a
  // generator again to shrink what it made, which must be what it made.
  TestCase next(const GeneratorConfig& cfg, uint64_t seed, int freshNodes = 0);
  // What the case reached; true when it reached a feature no earlier case did (it is kept).
  bool observe(const TestCase& tc, const std::vector<uint32_t>& features);

  const CoverageStats& stats() const { return stats_; }
  bool guiding() const { return !kept_.empty(); }

 private:
  TestCase make(const GeneratorConfig& cfg, uint64_t seed, int freshNodes);
  struct Made {
    uint64_t seed;
    int nodes;
    TestCase testCase;
  };
  void reweigh();
  struct Kept {
    TestCase testCase;
    std::vector<uint32_t> features;
  };
  // By feature: how many cases reached it (features are sparse: optimizations' are hashes).
  std::unordered_map<uint32_t, uint32_t> hits_;
  std::vector<Kept> kept_;
  std::vector<double> weights_;  // of the kept, as parents (reweigh)
  int64_t sinceReweigh_ = 0;
  std::deque<Made> recent_;
  CoverageStats stats_;
};

}  // namespace nncheck
