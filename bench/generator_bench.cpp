// Generator speed: models per second at 10 and 20 nodes, float32, all ops, default limits;
// z3 checks and contexts per model as counters.
//   ./build/bench/generator_bench
#include <benchmark/benchmark.h>

#include "nncheck/generator.h"

namespace {

// Models per second for nodes = range(0); float32 only when range(1) is 1, else the default
// dtypes (float32, int64, bool).
void BM_Generate(benchmark::State& state) {
  nncheck::GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  if (state.range(1)) cfg.dtypes = {nncheck::DType::Float32};
  nncheck::GenerationStats stats;
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(nncheck::generateModel(cfg, seed++, &stats));
  const double n = static_cast<double>(seed);
  state.counters["models/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["z3_checks/model"] = static_cast<double>(stats.z3Checks) / n;
  state.counters["z3_contexts/model"] = static_cast<double>(stats.z3Contexts) / n;
}
BENCHMARK(BM_Generate)
    ->ArgNames({"nodes", "float32_only"})
    ->Args({10, 1})
    ->Args({20, 1})
    ->Args({10, 0})
    ->Args({20, 0})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
