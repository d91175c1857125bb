// Value search: with the vulnerable ops on (Pow, Sqrt, Log, Asin, Acos weighted up, float32),
// the share of models whose every value is finite and inside its domain before and after
// search, at 10, 20 and 30 nodes, and the median and 95th-percentile search time.
//   taskset -c 0 ./build/bench/value_search_bench
#include <benchmark/benchmark.h>

#include <algorithm>

#include "nncheck/value_search.h"

namespace {

void BM_ValueSearch(benchmark::State& state) {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  cfg.dtypes = {nncheck::DType::Float32};
  cfg.opWeights = {{"Pow", 4}, {"Sqrt", 4}, {"Log", 4}, {"Asin", 4}, {"Acos", 4}};
  uint64_t seed = 0;
  int64_t models = 0, before = 0, after = 0;
  std::vector<double> times;
  for (auto _ : state) {
    state.PauseTiming();
    nncheck::TestCase tc = nncheck::makeTestCase(cfg, seed++);
    state.ResumeTiming();
    nncheck::ValueSearchResult r = nncheck::searchValues(tc);
    ++models;
    before += r.wasFinite;
    after += r.finite;
    times.push_back(r.seconds);
  }
  std::sort(times.begin(), times.end());
  const double n = static_cast<double>(models);
  state.counters["finite_before"] = before / n;
  state.counters["finite_after"] = after / n;
  state.counters["median_ms"] = 1e3 * times[times.size() / 2];
  state.counters["p95_ms"] = 1e3 * times[std::min(times.size() - 1, times.size() * 95 / 100)];
}
BENCHMARK(BM_ValueSearch)
    ->ArgNames({"nodes"})
    ->Arg(10)
    ->Arg(20)
    ->Arg(30)
    ->Iterations(400)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
