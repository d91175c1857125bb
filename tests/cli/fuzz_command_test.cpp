// nncheck fuzz and nncheck reduce, run as a user runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "cli/cli_runner.h"
#include "core/backend_test.h"
#include "harness/conformance.h"
#include "nncheck/corpus.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

class FuzzCommand : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"fuzz_cli"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

TEST_F(FuzzCommand, ACampaignAgainstOpenCVFindsSavesAndSummarizes) {
  auto o = runCli("fuzz --backend opencv --cases 300 --seed 1 --corpus " + corpus_.string());
  ASSERT_EQ(o.status, 0) << o.output;
  for (const char* needle :
       {"campaign: 300 cases", "passed", "unsupported",
        "distinct failures:", "configurations: target=cpu,fusion=off:", "saved: ",
        // Debian's OpenCV is not compiled with SanitizerCoverage.
        "coverage: none (the engine is not compiled with -fsanitize-coverage)"})
    EXPECT_NE(o.output.find(needle), std::string::npos) << needle << "\n" << o.output;
  // Each finding says whether the configuration that optimizes least shows it too.
  EXPECT_TRUE(o.output.find("passes at target=cpu,fusion=off: a bug of the optimizing") !=
                  std::string::npos ||
              o.output.find("fails at target=cpu,fusion=off too") != std::string::npos)
      << o.output;
  auto saved = loadCorpus(corpus_);
  EXPECT_GE(saved.size(), 1u) << o.output;
  for (const CorpusCase& c : saved) EXPECT_FALSE(c.configuration.empty()) << c.dir;
  // Same seed, same cases: the second run recognizes what the corpus holds. (OpenCV reads
  // uninitialized memory in some kernels, so a shrink may end elsewhere and add a pattern; a
  // pattern is never stored twice.)
  auto again = runCli("fuzz --backend opencv --cases 300 --seed 1 --corpus " + corpus_.string());
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("already in the corpus"), std::string::npos) << again.output;
  std::set<std::string> patterns;
  for (const CorpusCase& c : loadCorpus(corpus_))
    EXPECT_TRUE(patterns.insert(c.pattern).second) << "stored twice: " << c.pattern;

  // A saved case reduces against the engine it fails on, and not against the reference. (Some
  // OpenCV bugs read uninitialized memory and do not fail every time: any of the first cases
  // may be one, so the first that still fails is reduced.)
  bool reducedOne = false;
  for (size_t i = 0; i < saved.size() && i < 5 && !reducedOne; ++i) {
    auto reduced = runCli("reduce " + saved[i].dir.string() + " --backend opencv --corpus " +
                          (corpus_ / "reduced").string());
    if (reduced.status != 0) {
      EXPECT_NE(reduced.output.find("nothing to reduce"), std::string::npos) << reduced.output;
      continue;
    }
    EXPECT_NE(reduced.output.find("shrunk from"), std::string::npos) << reduced.output;
    reducedOne = true;
  }
  EXPECT_TRUE(reducedOne);
  auto passes = runCli("reduce " + saved.front().dir.string() + " --backend reference");
  EXPECT_EQ(passes.status, 1) << passes.output;
  EXPECT_NE(passes.output.find("does not fail on reference: nothing to reduce"), std::string::npos)
      << passes.output;
}

TEST_F(FuzzCommand, TheReferenceAgainstItselfFindsNothing) {
  auto o = runCli(
      "fuzz --backend reference --cases 100 --dtypes float32,float64,int64,bool "
      "--fail-on-new --corpus " +
      corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("distinct failures: 0"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(corpus_));
}

// Every core by default: one line says how many workers, and their cases add up to the budget.
TEST_F(FuzzCommand, WorkersShareTheBudgetAndTheSummary) {
  auto o = runCli("fuzz --backend reference --cases 60 --jobs 3 --corpus " + corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find(", 3 workers; corpus"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("campaign: 60 cases"), std::string::npos) << o.output;
  auto one = runCli("fuzz --backend reference --cases 60 --jobs 1 --corpus " + corpus_.string());
  EXPECT_NE(one.output.find(", 1 worker; corpus"), std::string::npos) << one.output;
}

TEST_F(FuzzCommand, BadArgumentsAreNamed) {
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"fuzz --backend nosuch", "--backend nosuch: unknown engine 'nosuch' (known: "},
           {"fuzz --engine-lib /nonexistent/lib.so",
            "--engine-lib /nonexistent/lib.so: no such file"},
           {"fuzz --config fusion=maybe", "cannot read 'fusion=maybe'"},
           {"fuzz --seconds 0", "--seconds"},
           {"fuzz --nodes 0", "--nodes"},
           {"fuzz --max-findings -1", "--max-findings"},
           {"fuzz --jobs -1", "--jobs: expected 1 to 1024"},
           {"fuzz --jobs 5000", "--jobs: expected 1 to 1024"},
           {"fuzz --pair-weights 'Relu>Frob=2'", "Relu>Frob"},
           {"fuzz --dtypes float32,float33", "--dtypes: "},
           {"reduce /nonexistent/case --backend reference", "/nonexistent/case"},
           // Before, NaN made every model LSTM-only and the campaign exit 0 with 50/50 unsupported.
           {"fuzz --op-weights LSTM=nan", "the weight of op 'LSTM' is nan, not a finite"},
           {"fuzz --op-weights LSTM=inf", "the weight of op 'LSTM' is inf, not a finite"},
           {"fuzz --pair-weights 'MatMul>Add=nan'", "MatMul>Add is not a finite"},
           // Before, 100,000 nodes ran a minute past --seconds 5 growing one model.
           {"fuzz --nodes 100000 --seconds 5", "--nodes must be from 1 to 1000, got 100000"},
           {"fuzz --timeout 1e300", "--timeout: expected a number of seconds from 0.001 to 604800"},
           // Checked before the campaign, not after it ("cannot rename ...: Success").
           {"fuzz --cases 1 --report " + tmp_.path().string(), "is a folder; name a file"}}) {
    auto o = runCli(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(needle), std::string::npos) << args << "\n" << o.output;
  }
}

TEST_F(FuzzCommand, NumbersOutsideTheirTypeAreRefusedNotClampedOrWrapped) {
  // CLI11 let these through: strtod reads "nan" and "inf", a number past int64 was clamped to
  // its largest value, and "-1" for an unsigned seed wrapped to 2^64 - 1.
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"fuzz --seconds nan", "--seconds: 'nan' is not a finite number"},
           {"fuzz --seconds inf", "--seconds: 'inf' is not a finite number"},
           {"fuzz --cases 99999999999999999999", "is past the largest number taken"},
           {"fuzz --seed -1", "--seed: '-1' is negative"},
           {"gen --seed -5", "--seed: '-5' is negative"},
           {"gen --count 1 --seed-share nan", "'nan' is not a finite number"}}) {
    auto o = runCli(args);
    EXPECT_NE(o.status, 0) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(needle), std::string::npos) << args << "\n" << o.output;
  }
}

TEST_F(FuzzCommand, AReferenceRunPastItsTimeLimitEndsReduceCheckAndSeedsClearly) {
  // Two nested Loops of 100,000 trips: before, `reduce`, `corpus check` and `fuzz --seeds` hung
  // on it. Each is run under `timeout`, so that a hang fails the test.
  const fs::path c = tmp_.path() / "cases" / "nested_loops";
  const Tensor x = Tensor::fromVector<float>({1}, {1});
  saveBackendTestCase(c, testing::nestedLoops(100000), {{"x", x}}, {{"y", x}});
  const std::string nncheck =
      "timeout -s KILL 120 " + std::string(NNCHECK_CLI) + " --reference-timeout 0.5 ";
  auto reduce = testing::runCommand(nncheck + "reduce " + c.string() +
                                    " --backend reference --corpus " + corpus_.string());
  EXPECT_EQ(reduce.status, 1) << reduce.output;
  EXPECT_NE(reduce.output.find("time limit of 500 ms"), std::string::npos) << reduce.output;
  auto check = testing::runCommand(nncheck + "corpus check " + c.parent_path().string());
  EXPECT_EQ(check.status, 1) << check.output;
  EXPECT_NE(check.output.find("Loop 'outer': the reference ran past its time limit"),
            std::string::npos)
      << check.output;
  auto seeds = testing::runCommand(nncheck + "fuzz --backend reference --cases 2 --seeds " +
                                   c.parent_path().string() + " --corpus " + corpus_.string());
  EXPECT_EQ(seeds.status, 2) << seeds.output;
  EXPECT_NE(seeds.output.find("not a usable seed pattern"), std::string::npos) << seeds.output;
  EXPECT_NE(seeds.output.find("time limit of 500 ms"), std::string::npos) << seeds.output;
}

TEST_F(FuzzCommand, ReduceReportsACaseThatIsNoTestInsteadOfAborting) {
  // A graph output no node computes: before, std::out_of_range escaped and reduce aborted (134).
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "relu")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2}),
                     ValueInfo::tensor("z", DType::Float32, {2})};
  const fs::path dir = tmp_.path() / "no_test";
  saveBackendTestCase(dir, m, {{"x", Tensor(DType::Float32, {2})}}, {});
  auto o = runCli("reduce " + dir.string() + " --backend reference --corpus " + corpus_.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("graph output 'z' is never computed"), std::string::npos) << o.output;
  // A repeatable option takes one value each time: the case after it is still the case.
  auto after = runCli("reduce --backend opencv --config target=cpu,fusion=on " + dir.string() +
                      " --corpus " + corpus_.string());
  EXPECT_EQ(after.status, 1) << after.output;
  EXPECT_NE(after.output.find("graph output 'z' is never computed"), std::string::npos)
      << after.output;
}

TEST_F(FuzzCommand, ABrokenSavedCaseIsSkippedNotFatal) {
  const fs::path broken = corpus_ / "fuzz-opencv" / "0000000000000000";
  fs::create_directories(broken);
  std::ofstream(broken / "model.onnx") << "truncated";
  auto o = runCli("fuzz --backend opencv --cases 20 --seed 3 --corpus " + corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("saved cases that could not be read, skipped: 1"), std::string::npos)
      << o.output;
}

TEST_F(FuzzCommand, TwoCampaignsOnOneCorpusSaveEachPatternOnce) {
  // Before: different seeds saved 59 folders for 39 patterns.
  const std::string common = " --backend opencv --cases 400 --corpus " + corpus_.string();
  std::thread other([&] { runCli("fuzz --seed 1" + common); });
  runCli("fuzz --seed 5000" + common);
  other.join();
  std::map<std::string, int> folders;
  for (const CorpusCase& c : loadCorpus(corpus_ / "fuzz-opencv")) ++folders[c.pattern];
  ASSERT_FALSE(folders.empty());
  for (const auto& [pattern, n] : folders) EXPECT_EQ(n, 1) << pattern;
}

TEST_F(FuzzCommand, CampaignsKilledAtAnyMomentLeaveACorpusThatLoadsAndReplays) {
  // SIGKILL at spread-out moments (saves happen often: OpenCV fails a case in eight).
  const std::string fuzz = std::string(NNCHECK_CLI) +
                           " fuzz --backend opencv --config fusion=on --seconds 30 --corpus " +
                           corpus_.string() + " > /dev/null 2>&1";
  int kills = 0;
  for (int i = 0; i < 8; ++i) {
    const double after =
        0.5 + 0.5 * i;  // up to 4 s: sanitized builds on a loaded machine start slowly
    const std::string killed = "timeout -s KILL " + std::to_string(after) + " " + fuzz +
                               " --seed " + std::to_string(100 * i);
    kills += std::system(killed.c_str()) != 0;
  }
  EXPECT_GT(kills, 0) << "no campaign was killed";
  // Every folder loads, and replays on the reference with the outputs saved beside it.
  std::vector<CorpusCase> saved;
  ASSERT_NO_THROW(saved = loadCorpus(corpus_));
  ASSERT_FALSE(saved.empty()) << "the killed campaigns saved nothing: the test shows nothing";
  ConformanceReport replay = runConformance({corpus_});
  EXPECT_EQ(replay.failed, 0);
  for (const CaseResult& c : replay.cases)
    EXPECT_EQ(c.dir.filename().string().find(".tmp."), std::string::npos) << c.dir;
  // And the next campaign starts and ends cleanly on that corpus.
  auto o = runCli("fuzz --backend opencv --cases 50 --seed 9 --corpus " + corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
}

}  // namespace
}  // namespace nncheck
