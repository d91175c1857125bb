// The campaign report: the time to write the page for 40 distinct failures (each failure's
// picture drawn, Chart.js inlined; the Time column) and the page's size (KiB), for failures
// shrunk to 2 nodes (what campaigns mostly save) and unshrunk 10-node ones.
//   ./build/bench/report_bench
#include <benchmark/benchmark.h>

#include "harness/report.h"
#include "nncheck/generator.h"

namespace {

using namespace nncheck;

void BM_ReportOf40Failures(benchmark::State& state) {
  GeneratorConfig cfg;
  cfg.nodes = static_cast<int>(state.range(0));
  CampaignStats s;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Finding f;
    f.minimized = makeTestCase(cfg, seed);
    f.info.kind = Outcome::Mismatch;
    f.info.message = "output 'y': 3 of 24 elements differ beyond tolerance";
    f.info.maxAbsError = 0.25;
    f.info.maxRelError = 1.5;
    f.info.pattern = "mismatch: case " + std::to_string(seed);
    f.info.triage = {{"fusion=on", Outcome::Mismatch}, {"fusion=off", Outcome::Pass}};
    f.hits = 1;
    s.findings.push_back(std::move(f));
  }
  for (int t = 0; t <= 60; ++t) s.timeline.push_back({double(t), t * 500, t * 400, t * 60, 0, t});
  for (const char* op : {"Add", "Conv", "MatMul", "Relu", "Reshape", "Softmax", "Transpose"})
    s.opCases[op] = 1000;
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string page = reportHtml(campaignReport(s, {}, "opencv"));
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.counters["KiB"] = static_cast<double>(bytes) / 1024.0;
}
BENCHMARK(BM_ReportOf40Failures)->Arg(2)->Arg(10)->ArgName("nodes")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
