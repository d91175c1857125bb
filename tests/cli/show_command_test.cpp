// nncheck show, run as a user runs it: a model file, a saved case with its divergence drawn, a
// file written by extension, and clear errors for a wrong path or format.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

const fs::path kCase = fs::path(NNCHECK_SOURCE_DIR) / "examples/opencv/corpus/004236ac20577cc9";

TEST(ShowCommand, DrawsAModelFileAsDotOrText) {
  auto dot = runCli("show " + (kCase / "model.onnx").string() + " --format dot");
  EXPECT_EQ(dot.status, 0) << dot.output;
  EXPECT_EQ(dot.output.rfind("digraph model {", 0), 0u) << dot.output;
  auto text = runCli("show " + (kCase / "model.onnx").string() + " --format text");
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_EQ(text.output.find("digraph"), std::string::npos);
}

TEST(ShowCommand, DrawsASavedCaseWithItsDivergenceIntoTheFileNamed) {
  testing::TempDir tmp("show_cli");
  const fs::path svg = tmp.path() / "case.svg";
  auto o = runCli("show " + kCase.string() + " -o " + svg.string());
  ASSERT_EQ(o.status, 0) << o.output;
  const std::string picture = readFile(svg);
  EXPECT_NE(picture.find("<svg"), std::string::npos);
  EXPECT_NE(picture.find("#f4a6a6"), std::string::npos) << "the first diverging node is red";
  auto png = runCli("show " + kCase.string() + " -o " + (tmp.path() / "case.png").string());
  ASSERT_EQ(png.status, 0) << png.output;
  EXPECT_EQ(readFile(tmp.path() / "case.png").substr(1, 3), "PNG");
}

TEST(ShowCommand, AModelTooLargeToDrawIsAClearErrorNotAHang) {
  // A 6,000-node case: before, `show` ran past 90 s at 1.5 GB inside Graphviz. The command is
  // run under `timeout`, so a hang fails the test rather than stalling it.
  testing::TempDir tmp("show_cli_large");
  const fs::path model = tmp.path() / "large.onnx";
  saveModel(testing::negChain(6000), model);
  auto o = testing::runCommand("timeout -s KILL 120 " + std::string(NNCHECK_CLI) + " show " +
                               model.string() + " -o " + (tmp.path() / "large.svg").string());
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("the drawing has 6002 boxes, more than the 1000 nncheck lays out"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(tmp.path() / "large.svg"));
  auto text = runCli("show " + model.string() + " --format text");  // a listing has no limit
  EXPECT_EQ(text.status, 0);
}

TEST(ShowCommand, APictureWrittenThroughALinkKeepsTheLink) {
  // Before, -o wrote beside the path and renamed over it: a link (to /proc/self/fd/1, say)
  // became a regular file of its own.
  testing::TempDir tmp("show_cli_link");
  const fs::path target = tmp.path() / "real.dot", link = tmp.path() / "picture.dot";
  fs::create_symlink(target, link);
  auto o = runCli("show " + (kCase / "model.onnx").string() + " --format dot -o " + link.string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(readFile(target).rfind("digraph model {", 0), 0u);
}

TEST(ShowCommand, AWrongPathOrFormatIsAClearError) {
  auto missing = runCli("show /nonexistent/model.onnx");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("/nonexistent/model.onnx: no such model file or case folder"),
            std::string::npos)
      << missing.output;
  auto format = runCli("show " + kCase.string() + " --format jpeg");
  EXPECT_EQ(format.status, 2);
  EXPECT_NE(format.output.find("'jpeg'"), std::string::npos) << format.output;
  testing::TempDir tmp("show_cli_bad");
  auto notACase = runCli("show " + tmp.path().string());
  EXPECT_EQ(notACase.status, 2);
  EXPECT_NE(notACase.output.find("without model.onnx"), std::string::npos) << notACase.output;
}

}  // namespace
}  // namespace nncheck
