// Generator speed: models per second at 10 and 20 nodes, float32, all ops, default limits;
// z3 checks and contexts per model as counters.
//   ./build/bench/generator_bench
#include <benchmark/benchmark.h>

#include "nncheck/generator.h"

namespace {

void BM_GenerateFloat32(benchmark::State& state) {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  cfg.dtypes = {nncheck::DType::Float32};
  nncheck::GenerationStats stats;
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(nncheck::generateModel(cfg, seed++, &stats));
  state.counters["models/s"] = benchmark::Counter(static_cast<double>(seed), benchmark::Counter::kIsRate);
  state.counters["z3_checks/model"] = static_cast<double>(stats.z3Checks) / static_cast<double>(seed);
  state.counters["z3_contexts/model"] = static_cast<double>(stats.z3Contexts) / static_cast<double>(seed);
}
BENCHMARK(BM_GenerateFloat32)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

// The default dtypes (float32, int64, bool): more ops usable, bool and int paths included.
void BM_GenerateDefaultDTypes(benchmark::State& state) {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  nncheck::GenerationStats stats;
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(nncheck::generateModel(cfg, seed++, &stats));
  state.counters["models/s"] = benchmark::Counter(static_cast<double>(seed), benchmark::Counter::kIsRate);
  state.counters["z3_checks/model"] = static_cast<double>(stats.z3Checks) / static_cast<double>(seed);
}
BENCHMARK(BM_GenerateDefaultDTypes)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond)->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
