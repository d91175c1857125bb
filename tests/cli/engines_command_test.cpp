// nncheck engines: the registered engines with their configurations; a library that does not
// load is named.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"

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

}  // namespace
}  // namespace nncheck
