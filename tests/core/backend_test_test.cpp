// Finding backend-test cases in a folder tree: nested cases, unfinished saves, links, and
// folders that come and go while a campaign saves into the tree being scanned.
#include "core/backend_test.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// "s3" and the like (not "s" + to_string: GCC 12 warns falsely, -Wrestrict).
std::string numbered(const char* prefix, int i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

void makeCase(const fs::path& dir) {
  fs::create_directories(dir / "test_data_set_0");
  std::ofstream(dir / "model.onnx") << "m";
}

TEST(BackendTestScan, FindsNestedCasesSortedAndSkipsUnfinishedSaves) {
  testing::TempDir tmp("scan");
  const fs::path root = tmp.path();
  makeCase(root / "b" / "deep" / "case2");
  makeCase(root / "a" / "case1");
  makeCase(root / "a" / "case1.tmp.123");
  makeCase(root / "a" / "case1" / "inner");  // inside a case: not a case of its own
  fs::create_directories(root / "empty");
  EXPECT_EQ(findBackendTestCases(root),
            (std::vector<fs::path>{root / "a" / "case1", root / "b" / "deep" / "case2"}));
  EXPECT_EQ(findBackendTestCases(root / "a" / "case1"),
            std::vector<fs::path>{root / "a" / "case1"});
  EXPECT_TRUE(findBackendTestCases(root / "nowhere").empty());
  EXPECT_EQ(testDataSetDirs(root / "a" / "case1"),
            std::vector<fs::path>{root / "a" / "case1" / "test_data_set_0"});
}

TEST(BackendTestScan, LinksBelowTheRootAreNamedNotFollowed) {
  // A corpus from elsewhere (a CI artifact, a shared volume) may hold links out of itself: a
  // scan neither follows them nor loses them silently. Before, a linked folder counted as a
  // case, so merge copied and run read whatever it pointed to.
  testing::TempDir tmp("scan_links");
  const fs::path root = tmp.path();
  makeCase(root / "real");
  makeCase(root / "tree" / "own");
  fs::create_directory_symlink(root / "real", root / "tree" / "linked");
  fs::create_directory_symlink(root / "tree", root / "tree" / "loop");
  const CaseScan scan = scanBackendTestCases(root / "tree");
  EXPECT_EQ(scan.cases, std::vector<fs::path>{root / "tree" / "own"});
  ASSERT_EQ(scan.leftOut.size(), 2u);
  EXPECT_NE(scan.leftOut[0].find("tree/linked: a symbolic link"), std::string::npos)
      << scan.leftOut[0];
  EXPECT_NE(scan.leftOut[1].find("tree/loop: a symbolic link"), std::string::npos);
  // The root itself may be a link: the caller named it.
  fs::create_directory_symlink(root / "tree", root / "named");
  EXPECT_EQ(findBackendTestCases(root / "named"), std::vector<fs::path>{root / "named" / "own"});
  // A linked data set is none of the case's.
  fs::create_directory_symlink(root / "real" / "test_data_set_0",
                               root / "tree" / "own" / "test_data_set_1");
  EXPECT_EQ(testDataSetDirs(root / "tree" / "own"),
            std::vector<fs::path>{root / "tree" / "own" / "test_data_set_0"});
}

TEST(BackendTestScan, FoldersNestedTooDeepAreNamedNotSkippedSilently) {
  testing::TempDir tmp("scan_deep");
  fs::path deep = tmp.path();
  for (int i = 0; i < 70; ++i) deep /= "d";
  makeCase(deep);
  makeCase(tmp.path() / "shallow");
  const CaseScan scan = scanBackendTestCases(tmp.path());
  EXPECT_EQ(scan.cases, std::vector<fs::path>{tmp.path() / "shallow"});
  ASSERT_EQ(scan.leftOut.size(), 1u);
  EXPECT_NE(scan.leftOut[0].find("nested deeper than 64 folders"), std::string::npos)
      << scan.leftOut[0];
}

TEST(BackendTestLayout, OnlyTheLayoutsFilesAreCaseFiles) {
  for (const char* name :
       {"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_12/output_3.pb"})
    EXPECT_TRUE(isBackendTestFile(name)) << name;
  for (const char* name :
       {"notes.txt", "model.onnx/x", "test_data_set_0", "test_data_set_/input_0.pb",
        "test_data_set_0/input_.pb", "test_data_set_0/input_0.pbx", "test_data_set_x/input_0.pb",
        "a/test_data_set_0/input_0.pb", "test_data_set_0/../../etc/input_0.pb", "/model.onnx"})
    EXPECT_FALSE(isBackendTestFile(name)) << name;
}

TEST(BackendTestLayout, FilesOfACaseAreNeverReadThroughALink) {
  // loadCaseModel and loadTestDataSet refuse links, so that nothing a link in a corpus points
  // to (a secret, /dev/zero) is read, copied or printed.
  testing::TempDir tmp("case_links");
  const fs::path good = tmp.path() / "good", bad = tmp.path() / "bad";
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, Shape{2})};
  m.graph.nodes = {Node::make("Relu", {"x"}, {"y"})};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, Shape{2})};
  const Tensor x = Tensor::fromVector<float>({2}, {1, -1});
  saveBackendTestCase(good, m, {{"x", x}}, {{"y", Tensor::fromVector<float>({2}, {1, 0})}});
  EXPECT_EQ(loadCaseModel(good).graph.nodes.size(), 1u);
  fs::create_directories(bad / "test_data_set_0");
  fs::create_symlink(good / "model.onnx", bad / "model.onnx");
  fs::create_symlink(good / "test_data_set_0" / "input_0.pb",
                     bad / "test_data_set_0" / "input_0.pb");
  try {
    loadCaseModel(bad);
    ADD_FAILURE() << "a linked model.onnx was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad/model.onnx: is a symbolic link"), std::string::npos)
        << e.what();
  }
  try {
    loadTestDataSet(m, bad / "test_data_set_0");
    ADD_FAILURE() << "a linked input_0.pb was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input_0.pb: is a symbolic link"), std::string::npos)
        << e.what();
  }
}

TEST(BackendTestScan, FoldersVanishingDuringTheScanLoseNoOtherCase) {
  // A campaign saving into a corpus creates and removes folders (temporaries, sweeps) while
  // `nncheck run` scans it. Before, a folder that vanished between being listed and being
  // opened ended the whole walk (and, earlier still, threw and aborted the program), so the
  // cases after it were silently not run. Churn many nested folders while scanning repeatedly:
  // every scan must find every case that stayed.
  testing::TempDir tmp("scan_churn");
  const fs::path root = tmp.path();
  std::vector<fs::path> stable;
  for (int i = 0; i < 12; ++i) {
    const fs::path c = root / numbered("s", i) / "nested" / "case";
    makeCase(c);
    stable.push_back(c);
  }
  std::sort(stable.begin(), stable.end());
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (int k = 0; !stop; k = (k + 1) % 8) {
      const fs::path d = root / numbered("s", k) / numbered("churn", k);
      std::error_code ec;
      fs::create_directories(d / "x" / "y" / "z", ec);
      fs::remove_all(d, ec);
    }
  });
  int lossy = 0;
  for (int scan = 0; scan < 400; ++scan) {
    std::vector<fs::path> found;
    try {
      found = findBackendTestCases(root);
    } catch (const std::exception& e) {
      stop = true;
      churn.join();
      FAIL() << "scan " << scan << " threw: " << e.what();
    }
    if (found != stable) ++lossy;
  }
  stop = true;
  churn.join();
  EXPECT_EQ(lossy, 0) << "scans that missed a case out of 400";
}

}  // namespace
}  // namespace nncheck
