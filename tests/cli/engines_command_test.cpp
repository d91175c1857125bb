// nncheck engines: the registered engines with their configurations; a library that does not
// load is named.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::runCli;

TEST(EnginesCommand, ListsTheBuiltInEnginesAndTheirConfigurations) {
  auto o = runCli("engines");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("reference    nncheck's reference interpreter"), std::string::npos)
      << o.output;
}

// A whole test per engine, not a part of one: scripts/test.sh runs a test the sanitized build
// (which has no engines) ran only there.
#ifdef NNCHECK_HAS_OPENCV_ENGINE
TEST(EnginesCommand, ListsOpenCVsConfigurationsHere) {
  auto o = runCli("engines");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("configurations here: target=cpu,fusion=on"), std::string::npos)
      << o.output;
}
#endif

TEST(EnginesCommand, ALibraryThatDoesNotLoadIsAnErrorNamingIt) {
  auto o = runCli("engines --engine-lib /nonexistent/libx.so");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("--engine-lib /nonexistent/libx.so: no such file"), std::string::npos)
      << o.output;
}

TEST(OraclesCommand, ListsTheBuiltInOraclesAndWhatEachNeeds) {
  auto o = runCli("oracles");
  ASSERT_EQ(o.status, 0) << o.output;
  for (const char* needle :
       {"reference ", "deterministic ", "baseline ", "(needs the engine's baseline configuration)"})
    EXPECT_NE(o.output.find(needle), std::string::npos) << needle << "\n" << o.output;
}

// --oracle is checked before any case runs: an unknown name lists the registered ones, and an
// oracle that needs a baseline needs an engine that names one.
TEST(OraclesCommand, AnUnknownOrUnusableOracleIsAnErrorNamingIt) {
  auto unknown = runCli("fuzz --backend reference --cases 1 --oracle nosuch");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--oracle unknown oracle 'nosuch' (known: baseline"),
            std::string::npos)
      << unknown.output;
  auto noBaseline = runCli("fuzz --backend reference --cases 1 --oracle baseline");
  EXPECT_EQ(noBaseline.status, 2) << noBaseline.output;
  EXPECT_NE(noBaseline.output.find(
                "--oracle baseline: engine 'reference' names no baseline configuration"),
            std::string::npos)
      << noBaseline.output;
}

#ifdef NNCHECK_HAS_OPENCV_ENGINE
// The baseline oracle on a real engine: OpenCV's fusion=on against its fusion=off, the reference
// out of the comparison; the baseline is no configuration under test.
TEST(OraclesCommand, TheBaselineOracleRunsOpenCVAgainstItsOwnBaseline) {
  testing::TempDir tmp("oracle_cli");
  auto o = runCli("fuzz --backend opencv --oracle baseline --cases 40 --corpus " +
                  (tmp.path() / "corpus").string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("(target=cpu,fusion=on) against the oracle baseline (baseline "
                          "target=cpu,fusion=off)"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("campaign: 40 cases"), std::string::npos) << o.output;
  auto own = runCli("fuzz --backend opencv --oracle baseline --cases 1 --config fusion=off");
  EXPECT_EQ(own.status, 2) << own.output;
  EXPECT_NE(own.output.find("the baseline configuration"), std::string::npos) << own.output;
}
#endif

}  // namespace
}  // namespace nncheck
