// nncheck repro, run as a user runs it: what it writes for a saved case of OpenCV (the scripts of
// every engine's corpus are run by the Repro.* tests), and clear errors for a path that is no
// case, an engine that writes no reproducer and a folder it cannot write into.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

const fs::path kExamples = fs::path(NNCHECK_SOURCE_DIR) / "examples";

using testing::has;

TEST(ReproCommand, APathThatIsNoSavedFailureIsNamed) {
  auto missing = runCli("repro /nonexistent/case");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_TRUE(has(missing.output, "nncheck repro: error: ")) << missing.output;
  EXPECT_TRUE(has(missing.output, "/nonexistent/case")) << missing.output;
  testing::TempDir tmp("repro_cli");
  fs::copy(kExamples / "opencv/corpus/004236ac20577cc9", tmp.path(), fs::copy_options::recursive);
  fs::remove(tmp.path() / "nncheck.json");
  auto unrecorded = runCli("repro " + tmp.path().string());
  EXPECT_EQ(unrecorded.status, 2) << unrecorded.output;
  EXPECT_TRUE(has(unrecorded.output, "no nncheck.json: a reproducer needs a recorded failure"))
      << unrecorded.output;
}

#ifdef NNCHECK_HAS_OPENCV_ENGINE
TEST(ReproCommand, WritesTheScriptTheDraftTheModelAndItsPictureIntoTheFolderNamed) {
  testing::TempDir tmp("repro_cli");
  const fs::path out = tmp.path() / "report";
  auto o = runCli("repro " + (kExamples / "opencv/corpus/57cc19e47166a291").string() + " -o " +
                  out.string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(has(o.output, "OpenCV 4.6.0: CumSum returns wrong values (with exclusive)"))
      << o.output;
  EXPECT_TRUE(has(o.output, "at target=cpu,fusion=off, now: mismatch")) << o.output;
  for (const char* file : {"reproduce.cpp", "issue.md", "model.onnx", "model.svg"})
    EXPECT_TRUE(fs::is_regular_file(out / file)) << file << "\n" << o.output;
  EXPECT_TRUE(has(readFile(out / "issue.md"),
                  "fails at target=cpu,fusion=off (mismatch), "
                  "target=cpu,fusion=on (mismatch); passes at none"));
  // A folder it cannot write into (a file stands at its name) is named.
  std::ofstream(tmp.path() / "file") << "x";
  auto blocked = runCli("repro " + (kExamples / "opencv/corpus/57cc19e47166a291").string() +
                        " -o " + (tmp.path() / "file").string());
  EXPECT_EQ(blocked.status, 1) << blocked.output;
  EXPECT_TRUE(has(blocked.output, (tmp.path() / "file").string())) << blocked.output;
}

TEST(ReproCommand, WithoutTriageItRunsTheRecordedConfigurationAloneAndSaysSo) {
  testing::TempDir tmp("repro_cli");
  auto o = runCli("repro " + (kExamples / "opencv/corpus/57cc19e47166a291").string() +
                  " --no-triage -o " + tmp.path().string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(has(o.output, "at target=cpu,fusion=on, now: mismatch")) << o.output;
  const std::string draft = readFile(tmp.path() / "issue.md");
  EXPECT_TRUE(has(draft,
                  "fails at target=cpu,fusion=on (mismatch); not run at the other "
                  "configurations (--no-triage)"))
      << draft;
  EXPECT_FALSE(has(draft, "passes at")) << draft;
}
#endif

TEST(ReproCommand, AnEngineThatWritesNoReproducerSaysSo) {
  // The tests' double says nothing of reproducers: a case of it is found, then reproduced.
  testing::TempDir tmp("repro_cli");
  std::string double_ = " --engine-lib ";  // appended: GCC 12 warns falsely on a + chain
  double_.append(NNCHECK_TEST_PLUGINS).append("/libbuggy_double.so --backend buggy-double");
  auto found = runCli("fuzz" + double_ + " --cases 200 --seed 1 --no-known --corpus " +
                      (tmp.path() / "corpus").string());
  std::vector<fs::path> cases;
  for (const auto& e : fs::recursive_directory_iterator(tmp.path() / "corpus"))
    if (e.path().filename() == "nncheck.json") cases.push_back(e.path().parent_path());
  ASSERT_FALSE(cases.empty()) << found.output;
  auto o = runCli("repro" + double_ + " " + cases.front().string() + " -o " +
                  (tmp.path() / "out").string());
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(has(o.output, "buggy-double writes no standalone reproducer")) << o.output;
}

}  // namespace
}  // namespace nncheck
