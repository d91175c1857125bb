// Campaign speed against ONNX Runtime 1.30 (the figure: cases per second on one core in
// the default mix of levels): the whole loop (generate, reference, isolated engine run in its
// Node.js worker, compare; shrink, localize, triage and dedup of failures) over 10-node models,
// the four levels taking the cases in turn as `nncheck fuzz --backend ort` does; and the cost of
// one isolated run per level on the persistent worker.
//   taskset -c 0 ./build/bench/ort_campaign_bench
#include <benchmark/benchmark.h>

#include <filesystem>

#include "nncheck/campaign.h"
#include "nncheck/ort.h"

namespace {

void BM_CampaignAgainstOrt(benchmark::State& state) {
  std::vector<std::unique_ptr<nncheck::ort::Backend>> levels;
  std::vector<nncheck::CampaignEngine> engines;
  for (const nncheck::ort::Config& c : nncheck::ort::configurations()) {
    levels.push_back(std::make_unique<nncheck::ort::Backend>(c));
    engines.push_back({c.key(), levels.back().get()});
  }
  nncheck::CampaignOptions o;
  o.generator = nncheck::configFor(levels.front()->capabilities(), 10);
  o.maxCases = state.range(0);
  o.seconds = 1e9;
  o.roundRobin = true;
  o.coverageGuided = state.range(1) != 0;
  o.corpus = std::filesystem::temp_directory_path() / "nncheck_ort_campaign_bench";
  std::filesystem::remove_all(o.corpus);
  int64_t cases = 0, failures = 0, unsupported = 0;
  double shrinking = 0;
  for (auto _ : state) {
    const nncheck::CampaignStats s = nncheck::runCampaign(engines, o);
    o.seed += static_cast<uint64_t>(o.maxCases);
    cases += s.cases;
    unsupported += s.unsupported;
    for (const auto& [kind, n] : s.failures) failures += n;
    shrinking += s.shrinkSeconds;
  }
  std::filesystem::remove_all(o.corpus);
  const double n = static_cast<double>(cases);
  state.counters["cases/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["accepted"] = (n - static_cast<double>(unsupported)) / n;
  state.counters["failing"] = static_cast<double>(failures) / n;
  state.counters["shrink_share"] = benchmark::Counter(shrinking, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CampaignAgainstOrt)
    ->ArgNames({"cases", "guided"})
    ->Args({2000, 0})
    ->Args({2000, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

// One isolated run of a 10-node model on the persistent worker, per level.
void BM_IsolatedOrtRun(benchmark::State& state) {
  const nncheck::ort::Config config = nncheck::ort::configurations().at(state.range(0));
  nncheck::ort::Backend engine(config);
  const nncheck::Isolated isolated =
      nncheck::isolated(engine, std::chrono::seconds(30), nncheck::Isolation::Persistent);
  nncheck::GeneratorConfig cfg = nncheck::configFor(engine.capabilities(), 10);
  std::vector<nncheck::TestCase> cases;
  for (uint64_t seed = 0; seed < 64; ++seed) cases.push_back(nncheck::makeTestCase(cfg, seed));
  size_t i = 0;
  for (auto _ : state) {
    const nncheck::TestCase& tc = cases[i++ % cases.size()];
    benchmark::DoNotOptimize(isolated.run(tc.model, tc.inputs));
  }
  state.SetLabel(config.key());
  state.counters["runs/s"] =
      benchmark::Counter(static_cast<double>(i), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IsolatedOrtRun)
    ->ArgNames({"level"})
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
