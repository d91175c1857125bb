// The nncheck program's start: the wall time of a whole command, from spawning the program to
// its exit. `--version` loads no engine (each is a plug-in loaded when --backend names it);
// `engines` loads every engine's plug-in and libraries, which is what the engines cost.
//   ./build/bench/cli_start_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "run_program.h"

namespace {

// Runs the nncheck program with the arguments, its output discarded; throws when it fails.
void runProgram(std::vector<std::string> args) {
  args.insert(args.begin(), NNCHECK_CLI);
  nncheck::bench::runInto(args, {}, "/dev/null");
}

void BM_Version(benchmark::State& state) {
  for (auto _ : state) runProgram({"--version"});
}
BENCHMARK(BM_Version)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ListingEveryEngine(benchmark::State& state) {
  for (auto _ : state) runProgram({"engines"});
}
BENCHMARK(BM_ListingEveryEngine)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
