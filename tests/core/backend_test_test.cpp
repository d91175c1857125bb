// Finding backend-test cases in a folder tree: nested cases, unfinished saves, links, and
// folders that come and go while a campaign saves into the tree being scanned.
#include "nncheck/backend_test.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

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

TEST(BackendTestScan, ALinkedCaseCountsAndALinkCycleEnds) {
  testing::TempDir tmp("scan_links");
  const fs::path root = tmp.path();
  makeCase(tmp.path() / "real");
  fs::create_directories(root / "tree");
  fs::create_directory_symlink(root / "real", root / "tree" / "linked");
  fs::create_directory_symlink(root / "tree", root / "tree" / "loop");
  EXPECT_EQ(findBackendTestCases(root / "tree"), std::vector<fs::path>{root / "tree" / "linked"});
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
