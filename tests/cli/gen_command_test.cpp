// nncheck gen, run as a user runs it: determinism across processes, replay, stats, errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "harness/conformance.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

using testing::runCli;

class GenCommand : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"gen_cli"};
  fs::path dir_ = tmp_.path();
};

// Every file of a case, relative path -> bytes.
std::map<std::string, std::string> caseFiles(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = readFile(e.path());
  return out;
}

TEST_F(GenCommand, SameSeedGivesIdenticalFilesInAnotherProcessAtAnotherPosition) {
  testing::CliOutcome a =
      runCli("gen --seed 100 --count 3 --nodes 12 --out " + (dir_ / "a").string());
  testing::CliOutcome b =
      runCli("gen --seed 97 --count 6 --nodes 12 --out " + (dir_ / "b").string());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  for (int s = 100; s < 103; ++s) {
    const std::string name = "seed_" + std::to_string(s);
    auto fa = caseFiles(dir_ / "a" / name), fb = caseFiles(dir_ / "b" / name);
    ASSERT_FALSE(fa.empty());
    EXPECT_TRUE(fa.count("model.onnx") && fa.count("test_data_set_0/input_0.pb"));
    EXPECT_EQ(fa, fb) << name;
  }
  EXPECT_NE(caseFiles(dir_ / "a" / "seed_100"), caseFiles(dir_ / "a" / "seed_101"));
}

TEST_F(GenCommand, WrittenCasesReplayWithNncheckRun) {
  testing::CliOutcome g = runCli("gen --seed 7 --count 20 --nodes 8 --out " + dir_.string());
  ASSERT_EQ(g.status, 0) << g.output;
  EXPECT_NE(g.output.find("wrote 20 cases"), std::string::npos) << g.output;
  // Not a terminal: no progress line rewritten in place ("generated 12/20wrote 20 cases").
  EXPECT_EQ(g.output.find('\r'), std::string::npos) << g.output;
  // Every file was renamed into place whole: no temporaries are left (made durable once, at
  // the end, by BulkWrite).
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  ConformanceReport r = runConformance({dir_});
  EXPECT_EQ(r.passed, 20);
  EXPECT_EQ(r.failed, 0);
  for (const auto& c : r.cases) EXPECT_EQ(c.outcome, Outcome::Pass) << c.dir << c.message;
}

TEST_F(GenCommand, StatsReportOpsPairsRanksDtypesAndRate) {
  testing::CliOutcome o = runCli("gen --seed 1 --count 50 --nodes 10 --stats --check");
  EXPECT_EQ(o.status, 0) << o.output;
  for (const char* needle :
       {"models/s", "op pairs (producer -> consumer)", "distinct three-node chains",
        "ranks of graph inputs", "dtypes of graph inputs", "z3:", "invalid models (--check): 0"})
    EXPECT_NE(o.output.find(needle), std::string::npos) << needle << "\n" << o.output;
}

// With vulnerable ops weighted up, random inputs break most models; the generated values none.
TEST_F(GenCommand, StatsReportNonFiniteModelsBeforeAndAfterValueSearch) {
  const char* flags =
      "gen --seed 1 --count 30 --nodes 12 --dtypes float32 --stats "
      "--op-weights Log=4,Sqrt=4,Asin=4,Acos=4,Pow=4";
  testing::CliOutcome o = runCli(flags);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("of 30 on random inputs, 0 after search"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("value search:"), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find(" 0 of 30 on random inputs"), std::string::npos) << o.output;
  // Grown blind, search afterwards cannot fix them all.
  std::string blind = flags;
  blind += " --no-finite-values";  // appended: GCC 12 -O1 warns on string + literal
  o = runCli(blind);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(o.output.find(", 0 after search"), std::string::npos) << o.output;
}

TEST_F(GenCommand, BadOptionsAreErrorsNamingTheOption) {
  testing::CliOutcome o = runCli("gen --ops Conv,Frob --count 1");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("Frob"), std::string::npos) << o.output;
  o = runCli("gen --dtypes float33 --count 1");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("--dtypes: "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("float33"), std::string::npos) << o.output;
  o = runCli("gen --opset 8 --count 1");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("opset 8"), std::string::npos) << o.output;
  for (const char* bad : {"MatMul>Frob=3", "MatMulAdd=3", "MatMul>Add=x", "MatMul>Add"}) {
    o = runCli(std::string("gen --count 1 --pair-weights '") + bad + "'");
    EXPECT_EQ(o.status, 2) << bad;
    EXPECT_NE(o.output.find("pair"), std::string::npos) << bad << ": " << o.output;
  }
  o = runCli("gen --count 1 --seeds " + (dir_ / "nowhere").string());
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("--seeds: "), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("nowhere"), std::string::npos) << o.output;
}

TEST_F(GenCommand, PairWeightsAndSeedsSteerWhatIsGenerated) {
  const auto count = [](const std::string& out, const std::string& pair) {
    const size_t at = out.find(pair);
    return at == std::string::npos
               ? 0
               : std::atoi(out.c_str() + out.find_first_of("0123456789", at + pair.size()));
  };
  // Without the prior's blocks, which form MatMul -> Add without weights.
  testing::CliOutcome blind = runCli("gen --count 300 --stats --block-share 0");
  testing::CliOutcome directed =
      runCli("gen --count 300 --stats --block-share 0 --pair-weights 'MatMul>Add=50'");
  ASSERT_EQ(directed.status, 0) << directed.output;
  const std::string matmulAdd = "MatMul               -> Add";
  EXPECT_GE(count(directed.output, matmulAdd), 10) << directed.output;
  EXPECT_GT(count(directed.output, matmulAdd), 3 * count(blind.output, matmulAdd));
  // Seeds: the node tests' MatMul case planted in half the models.
  testing::CliOutcome seeded = runCli("gen --count 100 --stats --seeds " +
                                      (testing::nodeTestDir() / "test_matmul_2d").string());
  ASSERT_EQ(seeded.status, 0) << seeded.output;
  EXPECT_NE(seeded.output.find("MatMul"), std::string::npos) << seeded.output;
}

}  // namespace
}  // namespace nncheck
