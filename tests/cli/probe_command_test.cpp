// nncheck probe, run as a user runs it.
#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_runner.h"

namespace nncheck {
namespace {

using testing::runCli;

TEST(ProbeCommand, TheReferenceAcceptsAndMatchesEveryOp) {
  auto o = runCli("probe --backend reference --per-op 2");
  ASSERT_EQ(o.status, 0) << o.output;
  // No op of the reference mismatches, is rejected, crashes or hangs against itself.
  std::regex bad(R"((mismatch|rejected|crash|hang)\s+[1-9])");
  EXPECT_FALSE(std::regex_search(o.output, bad)) << o.output;
  EXPECT_NE(o.output.find("reference: 76 of 76 ops accepted"), std::string::npos) << o.output;
}

TEST(ProbeCommand, OpenCVIsProbedAndAnUnknownBackendIsAnError) {
  auto o = runCli("probe --backend opencv --per-op 1");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("opencv (cpu, fusion on):"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("Conv "), std::string::npos) << o.output;
  auto bad = runCli("probe --backend nosuch");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("nosuch"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace nncheck
