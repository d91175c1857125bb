// Bug-finding power: for each planted rewrite bug of the optimizing double
// (tests/doubles/optimizer.h, compiled with SanitizerCoverage), the cases and seconds until a
// campaign first fails on it, and the failure's node count after shrinking, under three kinds of
// generation over every op with default settings:
// - blind: fresh cases only (coverage guidance off);
// - pattern-directed: fresh cases with the bug's producer>consumer pair weighted 10;
// - coverage-guided: the default, mutating cases that reached new edges of the double.
// Each runs a campaign of at most 60 s (BUG_FINDING_SECONDS) that stops at the first failure;
// cases = -1 when it found none.
//   taskset -c 0 ./build/bench/bug_finding_bench
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "doubles/optimizer.h"
#include "nncheck/campaign.h"

namespace {

using nncheck::testing::Optimizer;

enum class Generation { Blind, PatternDirected, CoverageGuided };

std::pair<std::string, std::string> patternOf(Optimizer::Bug bug) {
  switch (bug) {
    case Optimizer::MatMulAddColumn:
      return {"MatMul", "Add"};
    case Optimizer::TransposeMergeOrder:
      return {"Transpose", "Transpose"};
    case Optimizer::ReshapeMergeZero:
      return {"Reshape", "Reshape"};
    case Optimizer::PadConvMode:
      return {"Pad", "Conv"};
    case Optimizer::CastRoundTrip:
      return {"Cast", "Cast"};
    default:
      return {"Squeeze", "Unsqueeze"};
  }
}

void BM_FirstFailure(benchmark::State& state, Optimizer::Bug bug, Generation how) {
  const char* env = std::getenv("BUG_FINDING_SECONDS");
  for (auto _ : state) {
    Optimizer engine(bug);
    nncheck::CampaignOptions o;
    o.seed = 1;
    o.seconds = env ? std::atof(env) : 60;
    o.maxFindings = 1;
    o.coverageGuided = how == Generation::CoverageGuided;
    if (how == Generation::PatternDirected) o.generator.pairWeights = {{patternOf(bug), 10}};
    const nncheck::CampaignStats s = nncheck::runCampaign({{"bug", &engine}}, o);
    const bool found = !s.findings.empty();
    state.counters["cases"] = found ? static_cast<double>(s.findings[0].firstCase + 1) : -1;
    state.counters["seconds"] = found ? s.findings[0].firstSeconds : -1;
    state.counters["nodes"] = found ? s.findings[0].info.nodesAfter : -1;
    state.counters["features"] = static_cast<double>(s.coverage.features);
    state.SetLabel(found ? s.findings[0].info.pattern : "not found");
  }
}

void registerAll() {
  for (Optimizer::Bug bug : Optimizer::allBugs())
    for (auto [how, name] : {std::pair{Generation::Blind, "blind"},
                             std::pair{Generation::PatternDirected, "pattern-directed"},
                             std::pair{Generation::CoverageGuided, "coverage-guided"}})
      benchmark::RegisterBenchmark(
          ("BM_FirstFailure/" + Optimizer::bugName(bug) + "/" + name).c_str(), BM_FirstFailure, bug,
          how)
          ->Iterations(1)
          ->Unit(benchmark::kSecond);
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
