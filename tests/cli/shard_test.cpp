// nncheck fuzz --shard: shards from the flag, GoogleTest's variables or a Kubernetes Indexed
// Job's index; two shards run as two processes find, merged, what one campaign finds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "cli/cli_runner.h"
#include "nncheck/corpus.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

// Sets environment variables for one scope (the child process inherits them).
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : vars_) ::unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

std::set<std::string> patternsIn(const fs::path& corpus) {
  std::set<std::string> out;
  for (const CorpusCase& c : loadCorpus(corpus)) out.insert(c.pattern);
  return out;
}

TEST(Shard, ComesFromTheFlagGoogleTestOrAnIndexedJob) {
  const std::string run = "fuzz --backend reference --cases 10 --nodes 4 --corpus /nonexistent/c";
  // The flag counts from 1: the first of three shards runs cases 0, 3, 6 and 9.
  auto flag = runCli(run + " --shard 1/3");
  EXPECT_EQ(flag.status, 0) << flag.output;
  EXPECT_NE(flag.output.find("seed 1, shard 1/3"), std::string::npos) << flag.output;
  EXPECT_NE(flag.output.find("campaign: 4 cases"), std::string::npos) << flag.output;
  auto last = runCli(run + " --shard 3/3");
  EXPECT_EQ(last.status, 0) << last.output;
  EXPECT_NE(last.output.find("campaign: 3 cases"), std::string::npos) << last.output;
  {
    // GoogleTest's index counts from 0: index 0 is the first shard.
    ScopedEnv env({{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "3"}});
    auto gtest = runCli(run);
    EXPECT_NE(gtest.output.find("shard 1/3"), std::string::npos) << gtest.output;
    EXPECT_NE(gtest.output.find("campaign: 4 cases"), std::string::npos) << gtest.output;
    auto overridden = runCli(run + " --shard 1/1");
    EXPECT_NE(overridden.output.find("campaign: 10 cases"), std::string::npos) << overridden.output;
  }
  {
    ScopedEnv env(std::map<std::string, std::string>{{"JOB_COMPLETION_INDEX", "2"}});
    auto job = runCli(run + " --shard-count 4");
    EXPECT_NE(job.output.find("shard 3/4"), std::string::npos) << job.output;
    EXPECT_NE(job.output.find("campaign: 2 cases"), std::string::npos) << job.output;
    auto noCount = runCli(run);
    EXPECT_EQ(noCount.status, 2);
    EXPECT_NE(noCount.output.find("JOB_COMPLETION_INDEX=2 is set"), std::string::npos)
        << noCount.output;
    EXPECT_NE(noCount.output.find("--shard-count N"), std::string::npos) << noCount.output;
  }
  for (const auto& [args, said] : std::map<std::string, std::string>{
           {"--shard 3/2", "--shard 3/2: expected K/N, shard K of N shards with 1 <= K <= N"},
           {"--shard 0/2",
            "--shard 0/2: expected K/N, shard K of N shards with 1 <= K <= N "
            "(K counts from 1)"},
           {"--shard x", "--shard x: expected K/N"},
           {"--shard 1/0", "--shard 1/0: expected"},
           {"--shard-count 3", "--shard-count 3: JOB_COMPLETION_INDEX is not set"}}) {
    auto bad = runCli(run + " " + args);
    EXPECT_EQ(bad.status, 2) << args;
    EXPECT_NE(bad.output.find(said), std::string::npos) << args << ": " << bad.output;
  }
  ScopedEnv env({{"GTEST_SHARD_INDEX", "5"}, {"GTEST_TOTAL_SHARDS", "2"}});
  auto badEnv = runCli(run);
  EXPECT_EQ(badEnv.status, 2);
  EXPECT_NE(badEnv.output.find("GTEST_SHARD_INDEX 5 of GTEST_TOTAL_SHARDS 2"), std::string::npos)
      << badEnv.output;
}

// The test: two shards, two processes at once on this machine, their corpora merged,
// against one unsharded campaign over the same seeds. Every failure is shrunk and op weights
// stay fixed, so what a case finds does not depend on the cases before it. CumSum is left out:
// OpenCV 4.6's CumSum is itself nondeterministic (the same case fails at one run, not another).
TEST(Shard, TwoShardsInTwoProcessesMergedFindWhatOneCampaignFinds) {
  testing::TempDir tmp("shards");
  const std::string run =
      "fuzz --backend opencv --cases 160 --seed 11 --no-learn --shrinks-per-key 0 "
      "--op-weights CumSum=0 --corpus ";
  const fs::path a = tmp.path() / "a", b = tmp.path() / "b", whole = tmp.path() / "whole",
                 merged = tmp.path() / "merged";
  testing::CliOutcome second;
  std::thread other([&] { second = runCli(run + b.string() + " --shard 2/2"); });
  const auto first = runCli(run + a.string() + " --shard 1/2");
  other.join();
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_EQ(second.status, 0) << second.output;
  const auto one = runCli(run + whole.string());
  ASSERT_EQ(one.status, 0) << one.output;
  const auto m =
      runCli("corpus merge " + a.string() + " " + b.string() + " --into " + merged.string());
  ASSERT_EQ(m.status, 0) << m.output;

  const std::set<std::string> expected = patternsIn(whole);
  ASSERT_GE(expected.size(), 3u) << "too few failures for the test to show anything";
  EXPECT_EQ(patternsIn(merged), expected) << m.output;
  EXPECT_EQ(loadCorpus(merged).size(), expected.size()) << "one case per pattern";
  EXPECT_FALSE(patternsIn(a).empty());
  EXPECT_FALSE(patternsIn(b).empty());
}

}  // namespace
}  // namespace nncheck
