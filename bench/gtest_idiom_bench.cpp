// The cost per case of the GoogleTest path's documented idiom, against an engine that returns
// the reference's answer (so only nncheck's own work is measured): 10-node float32 models,
// generated beforehand.
// - Documented: assertMatchesReference(engine, tc) inside an EngineScope, as check() runs it:
//   one persistent isolated worker for the whole run.
// - ForkPerRun: the earlier idiom, the engine isolated afresh for every case.
// - Generation: making the case itself, for scale.
//   taskset -c 0 ./build/bench/gtest_idiom_bench
#include <benchmark/benchmark.h>

#include <vector>

#include "nncheck/generator.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"

namespace {

class ReturnsTheReference final : public nncheck::Backend {
 public:
  std::string name() const override { return "returns-the-reference"; }
  nncheck::TensorMap run(const nncheck::Model& m, const nncheck::TensorMap& in) override {
    return nncheck::runReference(m, in);
  }
};

nncheck::GeneratorConfig tenNodes() {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = 10;
  cfg.dtypes = {nncheck::DType::Float32};
  return cfg;
}

const std::vector<nncheck::TestCase>& cases() {
  static const std::vector<nncheck::TestCase> all = [] {
    std::vector<nncheck::TestCase> out;
    for (uint64_t seed = 1; seed <= 200; ++seed)
      out.push_back(nncheck::makeTestCase(tenNodes(), seed));
    return out;
  }();
  return all;
}

void BM_DocumentedIdiomPerCase(benchmark::State& state) {
  ReturnsTheReference engine;
  nncheck::EngineScope scope;
  size_t i = 0;
  for (auto _ : state) nncheck::assertMatchesReference(engine, cases()[i++ % cases().size()]);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DocumentedIdiomPerCase)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ForkPerRunIdiomPerCase(benchmark::State& state) {
  ReturnsTheReference engine;
  size_t i = 0;
  for (auto _ : state)
    nncheck::assertMatchesReference(nncheck::isolated(engine), cases()[i++ % cases().size()]);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ForkPerRunIdiomPerCase)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GenerateCase(benchmark::State& state) {
  uint64_t seed = 1000;
  for (auto _ : state) benchmark::DoNotOptimize(nncheck::makeTestCase(tenNodes(), seed++));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GenerateCase)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
