// Shrinking speed: property runs and seconds to shrink a failing 30-node case of each buggy
// test double (tests/doubles.h) to its minimal pattern. One case per repetition; the median
// over repetitions is the figure that matters.
//   ./build/bench/shrink_bench
#include <benchmark/benchmark.h>

#include <chrono>

#include "doubles.h"
#include "nncheck/gen.h"
#include "nncheck/property.h"

namespace {

using namespace nncheck;
using namespace std::chrono_literals;

struct Scenario {
  std::vector<std::string> ops;
  std::map<std::string, double> weights;
  bool isolate;
};

bool fails(Backend& engine, bool isolate, const TestCase& tc) {
  try {
    TensorMap want = runOn(reference(), tc);
    TensorMap got = isolate ? runOn(isolated(engine, 100ms), tc) : runOn(engine, tc);
    assertAllClose(got, want);
    return false;
  } catch (const PropertyFailure&) {
    return true;
  }
}

template <class Engine>
void shrinkOne(benchmark::State& state, const Scenario& s) {
  Engine engine;
  GeneratorConfig cfg;
  cfg.nodes = 30;
  cfg.dtypes = {DType::Float32};
  cfg.ops = s.ops;
  cfg.opWeights = s.weights;
  static uint64_t seed = 0;  // each repetition shrinks another failing case
  int64_t runs = 0, nodesAfter = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TestCase cur;
    do cur = makeTestCase(cfg, seed++);
    while (!fails(engine, s.isolate, cur));
    state.ResumeTiming();
    // RapidCheck's search: take the first failing candidate, then shrink that, until none fails.
    ShrinkResult r = shrinkGreedily(std::move(cur),
                                    [&](const TestCase& c) { return fails(engine, s.isolate, c); },
                                    {1 << 30, 1e9});
    runs += r.steps;
    nodesAfter += static_cast<int64_t>(r.testCase.model.graph.nodes.size());
  }
  state.counters["property_runs"] = static_cast<double>(runs);
  state.counters["nodes_after"] = static_cast<double>(nodesAfter);
}

void BM_ShrinkMatMulRelu(benchmark::State& state) {
  shrinkOne<testing::MatMulReluOddInner>(
      state, {{"MatMul", "Relu", "Add", "Sigmoid", "Tanh", "Transpose", "Concat"},
              {{"MatMul", 3}, {"Relu", 3}},
              false});
}
void BM_ShrinkConcatAxis0Initializer(benchmark::State& state) {
  shrinkOne<testing::ConcatAxis0Initializer>(
      state, {{"Concat", "Relu", "Add", "Transpose", "Sigmoid"}, {{"Concat", 4}}, false});
}
void BM_ShrinkSegfaultRank5Transpose(benchmark::State& state) {
  shrinkOne<testing::SegfaultOnRank5Transpose>(
      state, {{"Transpose", "Unsqueeze", "Relu", "Add", "Reshape"},
              {{"Transpose", 3}, {"Unsqueeze", 3}},
              true});
}
void BM_ShrinkHangPowAfterSigmoid(benchmark::State& state) {
  shrinkOne<testing::HangOnPowAfterSigmoid>(
      state, {{"Pow", "Sigmoid", "Relu", "Add", "Tanh"}, {{"Pow", 3}, {"Sigmoid", 3}}, true});
}
BENCHMARK(BM_ShrinkMatMulRelu)
    ->Iterations(1)
    ->Repetitions(15)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ShrinkConcatAxis0Initializer)
    ->Iterations(1)
    ->Repetitions(15)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ShrinkSegfaultRank5Transpose)
    ->Iterations(1)
    ->Repetitions(15)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ShrinkHangPowAfterSigmoid)
    ->Iterations(1)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
