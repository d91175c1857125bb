// nncheck's temporary folders: named by their process, removed when done, by a signal's handler
// (only this process's: a forked child inherits the list, not the folders), and, when their
// process is gone, by the next nncheck that makes one of that kind.
#include "core/temporary_folders.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

TEST(TemporaryFolders, ASignalsHandlerRemovesThisProcesssFoldersAndTheNextStartTheDeadOnes) {
  testing::TempDir tmp("temporary_folders");
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  fs::create_directories(tmp.path() / "nncheck-test-999999999-left" / "a");  // its process gone
  const std::string folder = makeTemporaryFolder("nncheck-test");
  EXPECT_FALSE(fs::exists(tmp.path() / "nncheck-test-999999999-left"));
  EXPECT_EQ(fs::path(folder).filename().string().rfind(
                "nncheck-test-" + std::to_string(::getpid()) + "-", 0),
            0u)
      << folder;
  fs::create_directories(fs::path(folder) / "deep" / "er");
  std::ofstream(fs::path(folder) / "deep" / "er" / "file") << "x";
  // A forked child's handler leaves its parent's folder alone.
  const pid_t child = ::fork();
  if (child == 0) {
    removeTemporaryFoldersNow();
    _exit(0);
  }
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(fs::exists(fs::path(folder) / "deep" / "er" / "file"));
  removeTemporaryFoldersNow();
  EXPECT_FALSE(fs::exists(folder));
  const std::string other = makeTemporaryFolder("nncheck-test");
  removeTemporaryFolder(other);
  EXPECT_FALSE(fs::exists(other));
  ::unsetenv("TMPDIR");
}

}  // namespace
}  // namespace nncheck
