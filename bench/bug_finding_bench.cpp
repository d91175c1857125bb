// Bug-finding power of the README's GoogleTest idiom, check(gen::testCase(engine.capabilities()),
// assertMatchesReference(engine, tc)), with default settings and no op weights: for each planted
// rewrite bug of the optimizing double (tests/doubles/optimizer.h, compiled with
// SanitizerCoverage), the cases and seconds until the property first fails, and the failure's
// node count after shrinking, under three kinds of generation:
// - blind: every case fresh (NNCHECK_COVERAGE=off);
// - pattern-directed: blind, with the bug's producer>consumer pair weighted 10;
// - coverage-guided: the default;
// - without-prior: coverage-guided with no constant subexpressions and no blocks (the
//   generator's constantShare and blockShare 0), as generation was before them;
// - equivalence: coverage-guided, judged with the reference switched off: the engine on each
//   model against the engine on an equivalent variant (the oracle's 6 rewrites drawn per case,
//   or BUG_FINDING_REWRITES; assertEquivalentVariantsAgree); `rewrites` counts those left after
//   shrinking.
// Each runs in a child process for at most BUG_FINDING_SECONDS (default 60) before the first
// failure; cases = -1 when it found none in that time. NNCHECK_SEED is BUG_FINDING_SEED
// (default 1): a guided search is one trajectory, so judge it over several seeds.
// BUG_FINDING_BLOCK_SHARE and BUG_FINDING_CONSTANT_SHARE set the generator's shares but
// without-prior's, to measure which share finds most.
// BM_NoBugPasses runs the idiom on the double with every bug off, under each oracle.
//   taskset -c 0 ./build/bench/bug_finding_bench
#include <benchmark/benchmark.h>
#include <gtest/gtest-spi.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "doubles/optimizer.h"
#include "nncheck/gtest.h"

namespace {

using nncheck::testing::Optimizer;
using Clock = std::chrono::steady_clock;

enum class Generation { Blind, PatternDirected, CoverageGuided, WithoutPrior, Equivalence };

struct FirstFailure {
  double cases = -1, seconds = -1, nodes = -1, rewrites = -1;
};

// The idiom's property under generation `how`: the reference, or the equivalent variants.
void assertIdiom(Optimizer& engine, Generation how, const nncheck::TestCase& tc) {
  if (how == Generation::Equivalence)
    nncheck::assertEquivalentVariantsAgree(engine, tc);
  else
    nncheck::assertMatchesReference(engine, tc);
}

// The equivalence rewrites per case: the oracle's (6), or BUG_FINDING_REWRITES to sweep it.
int rewritesPerCase() {
  const char* env = std::getenv("BUG_FINDING_REWRITES");
  return env ? std::atoi(env) : nncheck::oracles().at("equivalence").rewrites;
}

// In the child: runs the idiom, writes the case count and time of the first failure, then the
// shrunk case's node and rewrite counts, to `fd`.
[[noreturn]] void runIdiom(int fd, Optimizer::Bug bug, Generation how,
                           const std::filesystem::path& corpus) {
  ::setenv("NNCHECK_CORPUS", corpus.c_str(), 1);
  const char* seed = std::getenv("BUG_FINDING_SEED");
  ::setenv("NNCHECK_SEED", seed ? seed : "1", 1);
  ::setenv("NNCHECK_CASES", "100000000", 1);
  if (how == Generation::Blind || how == Generation::PatternDirected)
    ::setenv("NNCHECK_COVERAGE", "off", 1);
  Optimizer engine(bug);
  nncheck::GeneratorConfig cfg = nncheck::configFor(engine.capabilities());
  if (how == Generation::PatternDirected && !Optimizer::patternOf(bug).first.empty())
    cfg.pairWeights = {{Optimizer::patternOf(bug), 10}};
  if (how == Generation::WithoutPrior) cfg.constantShare = cfg.blockShare = 0;
  if (how == Generation::Equivalence) cfg.rewrites = rewritesPerCase();
  // The shares' sweep (which share finds most): BUG_FINDING_BLOCK_SHARE, _CONSTANT_SHARE.
  if (const char* share = std::getenv("BUG_FINDING_BLOCK_SHARE");
      share && how != Generation::WithoutPrior)
    cfg.blockShare = std::atof(share);
  if (const char* share = std::getenv("BUG_FINDING_CONSTANT_SHARE");
      share && how != Generation::WithoutPrior)
    cfg.constantShare = std::atof(share);
  double cases = 0;
  bool told = false;
  const auto start = Clock::now();
  auto property = [&](const nncheck::TestCase& tc) {
    ++cases;
    try {
      assertIdiom(engine, how, tc);
    } catch (const nncheck::PropertyFailure&) {
      if (!told) {
        const double first[2] = {cases,
                                 std::chrono::duration<double>(Clock::now() - start).count()};
        told = ::write(fd, first, sizeof first) == sizeof first;
      }
      throw;
    }
  };
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    nncheck::check(nncheck::gen::testCase(cfg), property);
  }
  double shrunk[2] = {-1, -1};  // nodes, rewrites
  for (const nncheck::CorpusCase& c : nncheck::loadCorpus(corpus))
    shrunk[0] = static_cast<double>(c.testCase.model.graph.nodes.size()),
    shrunk[1] = static_cast<double>(c.testCase.rewrites.size());
  (void)!::write(fd, shrunk, sizeof shrunk);
  std::_Exit(0);
}

// Reads `bytes` from `fd` by `deadline`; false when the child had nothing by then.
bool readBy(int fd, void* out, size_t bytes, Clock::time_point deadline) {
  size_t got = 0;
  while (got < bytes) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) return false;
    const ssize_t n = ::read(fd, static_cast<char*>(out) + got, bytes - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

FirstFailure measure(Optimizer::Bug bug, Generation how, double budget) {
  const std::filesystem::path corpus = std::filesystem::temp_directory_path() /
                                       ("nncheck_bug_finding_" + std::to_string(::getpid()));
  std::filesystem::remove_all(corpus);
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    runIdiom(fds[1], bug, how, corpus);
  }
  ::close(fds[1]);
  FirstFailure r;
  double first[2];
  const auto start = Clock::now();
  if (readBy(fds[0], first, sizeof first,
             start + std::chrono::milliseconds(static_cast<int64_t>(budget * 1000)))) {
    r.cases = first[0];
    r.seconds = first[1];
    double shrunk[2];
    if (readBy(fds[0], shrunk, sizeof shrunk, Clock::now() + std::chrono::seconds(120))) {
      r.nodes = shrunk[0];
      r.rewrites = shrunk[1];
    }
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(fds[0]);
  if (!std::getenv("BUG_FINDING_KEEP")) std::filesystem::remove_all(corpus);
  return r;
}

void BM_FirstFailure(benchmark::State& state, Optimizer::Bug bug, Generation how) {
  const char* env = std::getenv("BUG_FINDING_SECONDS");
  const double budget = env ? std::atof(env) : 60;
  for (auto _ : state) {
    const FirstFailure r = measure(bug, how, budget);
    state.counters["cases"] = r.cases;
    state.counters["seconds"] = r.seconds;
    state.counters["nodes"] = r.nodes;
    if (how == Generation::Equivalence) state.counters["rewrites"] = r.rewrites;
    state.SetLabel(r.cases < 0 ? "not found" : "found");
  }
}

// The double with no bug enabled under the idiom, BUG_FINDING_CLEAN_CASES cases (default
// 10,000), coverage-guided, judged as `how` judges: failures must be 0, or the double (or
// nncheck: a rewrite that is not exact) is wrong.
void BM_NoBugPasses(benchmark::State& state, Generation how) {
  const char* env = std::getenv("BUG_FINDING_CLEAN_CASES");
  const std::string cases = env ? env : "10000";
  const std::filesystem::path corpus = std::filesystem::temp_directory_path() /
                                       ("nncheck_bug_finding_clean_" + std::to_string(::getpid()));
  ::setenv("NNCHECK_CORPUS", corpus.c_str(), 1);
  ::setenv("NNCHECK_SEED", "1", 1);
  ::setenv("NNCHECK_CASES", cases.c_str(), 1);
  Optimizer engine;
  nncheck::GeneratorConfig cfg = nncheck::configFor(engine.capabilities());
  if (how == Generation::Equivalence) cfg.rewrites = rewritesPerCase();
  for (auto _ : state) {
    double cases = 0;
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter quiet(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      nncheck::check(nncheck::gen::testCase(cfg), [&](const nncheck::TestCase& tc) {
        ++cases;
        assertIdiom(engine, how, tc);
      });
    }
    state.counters["cases"] = cases;
    state.counters["failures"] = failures.size();
    for (int i = 0; i < failures.size(); ++i)
      std::fprintf(stderr, "%s\n", failures.GetTestPartResult(i).message());
  }
  std::filesystem::remove_all(corpus);
}

void registerAll() {
  for (auto [how, name] : {std::pair{Generation::CoverageGuided, "reference"},
                           std::pair{Generation::Equivalence, "equivalence"}})
    benchmark::RegisterBenchmark(("BM_NoBugPasses/" + std::string(name)).c_str(), BM_NoBugPasses,
                                 how)
        ->Iterations(1)
        ->Unit(benchmark::kSecond)
        ->UseRealTime();
  for (Optimizer::Bug bug : Optimizer::allBugs())
    for (auto [how, name] : {std::pair{Generation::Blind, "blind"},
                             std::pair{Generation::PatternDirected, "pattern-directed"},
                             std::pair{Generation::CoverageGuided, "coverage-guided"},
                             std::pair{Generation::WithoutPrior, "without-prior"},
                             std::pair{Generation::Equivalence, "equivalence"}})
      benchmark::RegisterBenchmark(
          ("BM_FirstFailure/" + Optimizer::bugName(bug) + "/" + name).c_str(), BM_FirstFailure, bug,
          how)
          ->Iterations(1)
          ->Unit(benchmark::kSecond)
          ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
