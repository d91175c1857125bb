// MLIR's TOSA path: per 10-node model, the time to compile (parse and verify the emitted TOSA,
// run the pass pipeline, LLVM's optimization and codegen) and to run, as median and p95, at the
// baseline pipeline and the full one; the share of generated models the engine accepts; and the
// campaign's end-to-end cases per second with the cases taking every pipeline in turn.
//   taskset -c 0 ./build/bench/mlir_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>

#include "mlir/jit.h"
#include "mlir/translate.h"
#include "nncheck/campaign.h"
#include "nncheck/error.h"
#include "nncheck/mlir.h"

namespace {

constexpr int kModels = 100;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// Args: the baseline pipeline (0) or the full one (1); nodes per model.
void BM_CompileAndRunTenNodeModel(benchmark::State& state) {
  const nncheck::mlir::Config config =
      state.range(0) ? nncheck::mlir::Config{} : nncheck::mlir::configurations().front();
  const nncheck::mlir::Backend engine(config);
  const nncheck::GeneratorConfig cfg =
      nncheck::configFor(engine.capabilities(), static_cast<int>(state.range(1)));
  std::vector<nncheck::TestCase> cases;
  for (uint64_t seed = 1; cases.size() < kModels; ++seed)
    cases.push_back(nncheck::makeTestCase(cfg, seed));
  nncheck::mlir::Jit jit;
  std::vector<double> compile, run;
  int accepted = 0, tried = 0;
  size_t i = 0;
  for (auto _ : state) {
    const nncheck::TestCase& tc = cases[i++ % cases.size()];
    ++tried;
    try {
      const nncheck::mlir::Program p = nncheck::mlir::translate(tc.model);
      std::vector<const nncheck::Tensor*> args;
      for (const nncheck::mlir::Port& in : p.inputs) args.push_back(&tc.inputs.at(in.name));
      nncheck::mlir::JitTimes t;
      benchmark::DoNotOptimize(jit.run(p, config.pipeline(), config.llvmOpt, args, &t));
      compile.push_back(t.compileSeconds * 1e3);
      run.push_back(t.callSeconds * 1e3);
      ++accepted;
    } catch (const nncheck::Unsupported&) {
    }
  }
  state.counters["compile_median_ms"] = quantile(compile, 0.5);
  state.counters["compile_p95_ms"] = quantile(compile, 0.95);
  state.counters["run_median_ms"] = quantile(run, 0.5);
  state.counters["run_p95_ms"] = quantile(run, 0.95);
  state.counters["accepted"] = static_cast<double>(accepted) / tried;
}
BENCHMARK(BM_CompileAndRunTenNodeModel)
    ->ArgNames({"full", "nodes"})
    ->Args({0, 10})
    ->Args({1, 10})
    ->Args({1, 1})
    ->Iterations(kModels)
    ->Unit(benchmark::kMillisecond);

// The campaign as `nncheck fuzz --backend mlir` runs it: cases taking every pipeline in turn,
// failures shrunk, localized, triaged and deduplicated.
void BM_CampaignAgainstMlir(benchmark::State& state) {
  std::vector<std::unique_ptr<nncheck::mlir::Backend>> engines;
  std::vector<nncheck::CampaignEngine> configs;
  for (const nncheck::mlir::Config& c : nncheck::mlir::configurations()) {
    engines.push_back(std::make_unique<nncheck::mlir::Backend>(c));
    configs.push_back({c.key(), engines.back().get()});
  }
  nncheck::CampaignOptions o;
  o.generator = nncheck::configFor(engines.front()->capabilities(), 10);
  o.maxCases = state.range(0);
  o.seconds = 1e9;
  o.roundRobin = true;
  o.corpus = std::filesystem::temp_directory_path() / "nncheck_mlir_campaign_bench";
  std::filesystem::remove_all(o.corpus);
  int64_t cases = 0, unsupported = 0;
  double shrinking = 0;
  for (auto _ : state) {
    const nncheck::CampaignStats s = nncheck::runCampaign(configs, o);
    o.seed += static_cast<uint64_t>(o.maxCases);
    cases += s.cases;
    unsupported += s.unsupported;
    shrinking += s.shrinkSeconds;
  }
  std::filesystem::remove_all(o.corpus);
  state.counters["cases/s"] =
      benchmark::Counter(static_cast<double>(cases), benchmark::Counter::kIsRate);
  state.counters["unsupported"] = static_cast<double>(unsupported) / static_cast<double>(cases);
  state.counters["shrink_share"] = benchmark::Counter(shrinking, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CampaignAgainstMlir)
    ->ArgNames({"cases"})
    ->Arg(1000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
