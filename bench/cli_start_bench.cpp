// The nncheck program's start: the wall time of a whole command, from spawning the program to
// its exit. `--version` loads no engine (each is a plug-in loaded when --backend names it);
// `engines` loads every engine's plug-in and libraries, which is what the engines cost.
//   ./build/bench/cli_start_bench
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Runs the nncheck program with the arguments, its output discarded; throws when it fails.
void runProgram(std::vector<std::string> args) {
  args.insert(args.begin(), NNCHECK_CLI);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, NNCHECK_CLI, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error(std::string("cannot run ") + NNCHECK_CLI);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(NNCHECK_CLI) + " " + args[1] + " failed");
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
