// nncheck corpus list|check|merge, run as a user runs them, on a corpus an OpenCV campaign saved.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "nncheck/corpus.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

class CorpusCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("corpus_cli");
    // Without CumSum, whose bug in OpenCV 4.6 shows at some runs and not others, so that every
    // case saved behaves as recorded when checked.
    status_ = runCli("fuzz --backend opencv --cases 100 --seed 21 --op-weights CumSum=0 --corpus " +
                     corpus().string())
                  .status;
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path corpus() { return dir_->path() / "corpus"; }
  static testing::TempDir* dir_;
  static int status_;
};
testing::TempDir* CorpusCommand::dir_ = nullptr;
int CorpusCommand::status_ = -1;

TEST_F(CorpusCommand, ListShowsEveryCaseWithItsKindAndPattern) {
  ASSERT_EQ(status_, 0);
  const std::vector<CorpusCase> cases = loadCorpus(corpus());
  ASSERT_FALSE(cases.empty());
  auto o = runCli("corpus list " + corpus().string());
  ASSERT_EQ(o.status, 0) << o.output;
  for (const CorpusCase& c : cases) {
    EXPECT_NE(o.output.find(c.dir.lexically_relative(corpus()).string()), std::string::npos);
    EXPECT_NE(o.output.find(c.pattern), std::string::npos) << c.pattern;
  }
  EXPECT_NE(o.output.find(std::to_string(cases.size()) + " cases"), std::string::npos);
  auto missing = runCli("corpus list /nonexistent/corpus");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("/nonexistent/corpus: no such corpus folder"), std::string::npos);
}

TEST_F(CorpusCommand, CheckReplaysOnTheEngineAndNamesWhatChanged) {
  ASSERT_EQ(status_, 0);
  const fs::path copy = dir_->path() / "copy";
  ASSERT_EQ(runCli("corpus merge " + corpus().string() + " --into " + copy.string()).status, 0);
  auto same = runCli("corpus check " + copy.string() + " --backend opencv");
  const size_t n = loadCorpus(copy).size();
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_NE(same.output.find(std::to_string(n) + " cases: " + std::to_string(n) +
                             " as recorded, 0 behave otherwise, 0 do not load"),
            std::string::npos)
      << same.output;
  // A case whose saved files were damaged is named, and the check fails.
  const fs::path broken = loadCorpus(copy).front().dir;
  writeFileAtomic(broken / "model.onnx", "not a model");
  auto after = runCli("corpus check " + copy.string());
  EXPECT_EQ(after.status, 1) << after.output;
  EXPECT_NE(after.output.find(broken.lexically_relative(copy).string()), std::string::npos)
      << after.output;
  EXPECT_NE(after.output.find("1 do not load"), std::string::npos) << after.output;
}

TEST_F(CorpusCommand, MergeNamesItsArgumentsAndAddsNothingTwice) {
  ASSERT_EQ(status_, 0);
  const fs::path into = dir_->path() / "merged";
  auto once = runCli("corpus merge " + corpus().string() + " --into " + into.string());
  ASSERT_EQ(once.status, 0) << once.output;
  auto twice = runCli("corpus merge " + corpus().string() + " --into " + into.string());
  ASSERT_EQ(twice.status, 0) << twice.output;
  EXPECT_NE(twice.output.find("0 cases copied"), std::string::npos) << twice.output;
  EXPECT_EQ(loadCorpus(into).size(), loadCorpus(corpus()).size());
  auto bad = runCli("corpus merge /nonexistent/a --into " + into.string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("/nonexistent/a: no such corpus folder"), std::string::npos);
  auto noInto = runCli("corpus merge " + corpus().string());
  EXPECT_NE(noInto.status, 0);
  EXPECT_NE(noInto.output.find("--into"), std::string::npos) << noInto.output;
}

}  // namespace
}  // namespace nncheck
