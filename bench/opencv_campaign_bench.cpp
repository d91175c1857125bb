// Campaign speed against OpenCV DNN: end-to-end test cases per second of the whole loop
// (generate, reference, isolated engine run, compare, and shrink, localize, triage and dedup of
// failures), 10-node float32 models, one configuration run and two triaged; and the cost of one
// isolated engine run per isolation mode, which is why campaigns keep a persistent worker.
//   taskset -c 0 ./build/bench/opencv_campaign_bench
#include <benchmark/benchmark.h>

#include <filesystem>

#include "nncheck/campaign.h"
#include "nncheck/opencv.h"

namespace {

void BM_CampaignAgainstOpenCV(benchmark::State& state) {
  nncheck::opencv::Backend fused({true, nncheck::opencv::Target::Cpu});
  nncheck::opencv::Backend unfused({false, nncheck::opencv::Target::Cpu});
  nncheck::CampaignOptions o;
  o.generator = nncheck::configFor(fused.capabilities(), 10);
  o.maxCases = state.range(0);
  o.seconds = 1e9;
  o.corpus = std::filesystem::temp_directory_path() / "nncheck_campaign_bench";
  std::filesystem::remove_all(o.corpus);
  nncheck::CampaignStats s;
  int64_t cases = 0, failures = 0, unsupported = 0, nonfinite = 0;
  double shrinking = 0;
  for (auto _ : state) {
    s = nncheck::runCampaign({{"fusion=on", &fused}, {"fusion=off", &unfused}}, o);
    o.seed += static_cast<uint64_t>(o.maxCases);
    cases += s.cases;
    unsupported += s.unsupported;
    nonfinite += s.nonfinite;
    for (const auto& [kind, n] : s.failures) failures += n;
    shrinking += s.shrinkSeconds;
  }
  std::filesystem::remove_all(o.corpus);
  const double n = static_cast<double>(cases);
  state.counters["cases/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  // Cases that reached the engine (the rest: NaN/Inf in the reference, skipped before it).
  state.counters["engine_cases/s"] =
      benchmark::Counter(n - static_cast<double>(nonfinite), benchmark::Counter::kIsRate);
  state.counters["failing"] = failures / n;
  state.counters["unsupported"] = unsupported / n;
  state.counters["nonfinite"] = nonfinite / n;
  state.counters["shrink_share"] = benchmark::Counter(shrinking, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CampaignAgainstOpenCV)
    ->ArgNames({"cases"})
    ->Arg(5000)
    ->Unit(benchmark::kSecond)
    ->Iterations(3)
    ->UseRealTime();

// One isolated OpenCV run of a 10-node model: fork per run, or the persistent worker.
void BM_IsolatedOpenCVRun(benchmark::State& state) {
  nncheck::opencv::Backend cv;
  const auto mode =
      state.range(0) ? nncheck::Isolation::Persistent : nncheck::Isolation::ForkPerRun;
  const nncheck::Isolated engine = nncheck::isolated(cv, std::chrono::seconds(10), mode);
  nncheck::GeneratorConfig cfg = nncheck::configFor(cv.capabilities(), 10);
  std::vector<nncheck::TestCase> cases;
  for (uint64_t seed = 0; seed < 64; ++seed) cases.push_back(nncheck::makeTestCase(cfg, seed));
  size_t i = 0;
  for (auto _ : state) {
    const nncheck::TestCase& tc = cases[i++ % cases.size()];
    benchmark::DoNotOptimize(engine.run(tc.model, tc.inputs));
  }
  state.counters["runs/s"] =
      benchmark::Counter(static_cast<double>(i), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IsolatedOpenCVRun)
    ->ArgNames({"persistent"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
