// The campaign's progress line: redrawn on a terminal, plain periodic lines elsewhere, with an
// ETA when the number of cases is known.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli_runner.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::runCli;

std::vector<std::string> progressLines(const std::string& output) {
  std::vector<std::string> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("[0:", 0) == 0) out.push_back(line);
  return out;
}

TEST(Progress, OffATerminalItPrintsPlainLinesWithAnETA) {
  testing::TempDir tmp("progress");
  auto o = runCli("fuzz --backend opencv --cases 200 --seed 3 --progress-every 0.2 --corpus " +
                  (tmp.path() / "c").string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(o.output.find('\r'), std::string::npos) << "no carriage returns in a log";
  const std::vector<std::string> lines = progressLines(o.output);
  ASSERT_GE(lines.size(), 2u) << o.output;
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("/200 cases"), std::string::npos) << line;
    EXPECT_NE(line.find("ETA "), std::string::npos) << line;
  }
  // Time-boxed: no ETA, no planned count.
  auto timed = runCli("fuzz --backend reference --seconds 1 --progress-every 0.2 --corpus " +
                      (tmp.path() / "d").string());
  ASSERT_EQ(timed.status, 0) << timed.output;
  const std::vector<std::string> timedLines = progressLines(timed.output);
  ASSERT_GE(timedLines.size(), 2u) << timed.output;
  EXPECT_EQ(timedLines.front().find("ETA"), std::string::npos) << timedLines.front();
}

TEST(Progress, OnATerminalOneLineIsRedrawn) {
  testing::TempDir tmp("progress_tty");
  // script(1) gives the command a terminal.
  auto o = testing::runCommand("script -qfec \"" + std::string(NNCHECK_CLI) +
                               " fuzz --backend reference --seconds 1.5 --progress-every 0.2 "
                               "--corpus " +
                               (tmp.path() / "c").string() + "\" /dev/null");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("\r[0:0"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("\033[K"), std::string::npos) << "the rest of the line is cleared";
}

}  // namespace
}  // namespace nncheck
