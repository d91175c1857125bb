// Drawing speed: the time to draw one case's picture (DOT text, laid out and rendered to SVG by
// Graphviz in process; the Time column), as every saved case and `nncheck show` pay it, at
// generated models of 5, 10 and 20 nodes (20 with control flow: bodies as clusters).
//   ./build/bench/picture_bench
#include <benchmark/benchmark.h>

#include "nncheck/generator.h"
#include "render/picture.h"

namespace {

using namespace nncheck;

void BM_DrawSvg(benchmark::State& state) {
  GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  cfg.controlFlow = state.range(1) != 0;
  std::vector<Model> models;
  for (uint64_t seed = 1; seed <= 20; ++seed) models.push_back(makeTestCase(cfg, seed).model);
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string svg = drawModel(models[i++ % models.size()], PictureFormat::Svg);
    bytes += svg.size();
    benchmark::DoNotOptimize(svg.data());
  }
  state.counters["KiB/case"] =
      static_cast<double>(bytes) / 1024.0 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_DrawSvg)
    ->ArgsProduct({{5, 10, 20}, {0}})
    ->Args({20, 1})
    ->ArgNames({"nodes", "control_flow"})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
