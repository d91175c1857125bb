// Value search with the vulnerable ops on (Pow, Sqrt, Log, Asin, Acos weighted x4, float32), at
// 10, 20 and 30 nodes:
// - BM_SearchAfterGeneration: models grown without looking at values (NNSmith's way), then
//   searchValues: the share whose every value is finite (and within 1e6) before and after, and
//   the median and 95th-percentile search time.
// - BM_FiniteGeneration: the default generator, which keeps values finite as the model grows:
//   the share of models finite (checked by a separate forward run), the time spent on values per
//   model (median, p95), nodes taken back per model, and the share of nodes that are vulnerable
//   ops (to see what keeping values finite costs the op mix; compare vulnerable_share of both).
//   taskset -c 0 ./build/bench/value_search_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <set>

#include "generators/value_domain.h"
#include "generators/values.h"
#include "nncheck/generator.h"
#include "nncheck/value_search.h"
#include "ops/infer.h"

namespace {

nncheck::GeneratorConfig vulnerableConfig(int nodes, bool finiteValues) {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = nodes;
  cfg.dtypes = {nncheck::DType::Float32};
  cfg.opWeights = {{"Pow", 4}, {"Sqrt", 4}, {"Log", 4}, {"Asin", 4}, {"Acos", 4}};
  cfg.finiteValues = finiteValues;
  return cfg;
}

// Every value finite, and every node inside its domain, by a run of its own.
bool allFinite(const nncheck::TestCase& tc) {
  const double bound = nncheck::ValueSearchOptions{}.valueBound;
  const nncheck::TensorMap values = nncheck::runReferenceAllValues(tc.model, tc.inputs);
  for (const auto& [name, t] : values)
    if (nncheck::brokenElements(t, bound) > 0) return false;
  for (const nncheck::Node& node : tc.model.graph.nodes)
    if (nncheck::checkNode(nncheck::ops::specFor(node, tc.model.defaultOpset()), node, values,
                           bound) > 0)
      return false;
  return true;
}

double vulnerableShare(const nncheck::Model& m) {
  static const std::set<std::string> vulnerable = {"Pow", "Sqrt", "Log", "Asin", "Acos"};
  double n = 0;
  for (const nncheck::Node& node : m.graph.nodes) n += vulnerable.count(node.opType);
  return n / static_cast<double>(m.graph.nodes.size());
}

void report(benchmark::State& state, std::vector<double> times, const char* name) {
  std::sort(times.begin(), times.end());
  state.counters[std::string(name) + "_median_ms"] = 1e3 * times[times.size() / 2];
  state.counters[std::string(name) + "_p95_ms"] =
      1e3 * times[std::min(times.size() - 1, times.size() * 95 / 100)];
}

void BM_SearchAfterGeneration(benchmark::State& state) {
  const auto cfg = vulnerableConfig(static_cast<int>(state.range(0)), false);
  uint64_t seed = 0;
  double models = 0, before = 0, after = 0, vulnerable = 0;
  std::vector<double> times;
  for (auto _ : state) {
    state.PauseTiming();
    nncheck::TestCase tc = nncheck::makeTestCase(cfg, seed++);
    vulnerable += vulnerableShare(tc.model);
    state.ResumeTiming();
    nncheck::ValueSearchResult r = nncheck::searchValues(tc);
    ++models;
    before += r.wasFinite;
    after += r.finite;
    times.push_back(r.seconds);
  }
  state.counters["finite_before"] = before / models;
  state.counters["finite_after"] = after / models;
  state.counters["vulnerable_share"] = vulnerable / models;
  report(state, times, "search");
}
BENCHMARK(BM_SearchAfterGeneration)
    ->ArgNames({"nodes"})
    ->Arg(10)
    ->Arg(20)
    ->Arg(30)
    ->Iterations(400)
    ->Unit(benchmark::kMillisecond);

void BM_FiniteGeneration(benchmark::State& state) {
  const auto cfg = vulnerableConfig(static_cast<int>(state.range(0)), true);
  uint64_t seed = 0;
  double models = 0, finite = 0, vulnerable = 0, searches = 0, takenBack = 0;
  std::vector<double> valueTimes;
  for (auto _ : state) {
    nncheck::GenerationStats stats;
    nncheck::TestCase tc = nncheck::makeTestCase(cfg, seed++, &stats);
    state.PauseTiming();
    ++models;
    finite += allFinite(tc);
    vulnerable += vulnerableShare(tc.model);
    searches += static_cast<double>(stats.valueSearches);
    takenBack += static_cast<double>(stats.valueRejected);
    valueTimes.push_back(stats.valueSeconds);
    state.ResumeTiming();
  }
  state.counters["finite"] = finite / models;
  state.counters["vulnerable_share"] = vulnerable / models;
  state.counters["searches_per_model"] = searches / models;
  state.counters["taken_back_per_model"] = takenBack / models;
  report(state, valueTimes, "values");
}
BENCHMARK(BM_FiniteGeneration)
    ->ArgNames({"nodes"})
    ->Arg(10)
    ->Arg(20)
    ->Arg(30)
    ->Iterations(400)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
