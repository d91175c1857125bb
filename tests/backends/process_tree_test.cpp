// What an engine starts ends with it: a tree of processes, one of them in a session of its own
// and one an orphan the killed process adopted, all end with killProcessTree; and the kernel
// holds a process to its memory limit.
#include "backends/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

namespace nncheck {
namespace {

bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST(ProcessTree, EveryProcessBelowEndsWithIt) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t top = ::fork();
  ASSERT_GE(top, 0);
  if (top == 0) {
    adoptOrphans();
    ::close(fds[0]);
    for (int kind = 0; kind < 3; ++kind) {
      if (::fork() != 0) continue;
      if (kind == 1) ::setsid();                 // a session of its own
      if (kind == 2 && ::fork() != 0) _exit(0);  // an orphan, adopted by `top`
      const pid_t self = ::getpid();
      (void)!::write(fds[1], &self, sizeof self);
      ::pause();
      _exit(0);
    }
    ::pause();
    _exit(0);
  }
  ::close(fds[1]);
  std::vector<pid_t> below;
  for (pid_t p; below.size() < 3 && ::read(fds[0], &p, sizeof p) == sizeof p;) below.push_back(p);
  ::close(fds[0]);
  ASSERT_EQ(below.size(), 3u);
  for (int i = 0; i < 100 && descendantsOf(top).size() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the orphan's adoption
  EXPECT_GE(descendantsOf(top).size(), 3u);
  killProcessTree(top);
  EXPECT_TRUE(waitForExit(top, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
  for (pid_t p : below) {
    for (int i = 0; i < 100 && running(p); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(running(p)) << p << " outlived the tree";
  }
}

TEST(ProcessTree, AChildThatHasExitedIsSeenWithoutBeingReaped) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(7);
  EXPECT_TRUE(exitsBy(child, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
  EXPECT_TRUE(hasExited(child)) << "still there to reap";
  const std::optional<int> status = waitForExit(child, std::chrono::steady_clock::now());
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 7);
  EXPECT_FALSE(hasExited(::getpid())) << "no child of this process";
}

TEST(ProcessTree, TheKernelHoldsAProcessToItsMemoryLimit) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    limitMemoryFromNow(int64_t{64} << 20);
    // (Volatile: a compiler may take an allocation whose pointer is only tested to succeed.)
    void* volatile fits = std::malloc(size_t{16} << 20);
    void* volatile past = std::malloc(size_t{256} << 20);
    _exit(fits && !past ? 0 : 1);
  }
  const std::optional<int> status =
      waitForExit(child, std::chrono::steady_clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 0) << "16 MiB fit and 256 MiB must not";
  EXPECT_TRUE(saysOutOfMemory("RuntimeError: std::bad_alloc"));
  EXPECT_TRUE(saysOutOfMemory("MemoryError: Unable to allocate 2.00 GiB"));
  EXPECT_FALSE(saysOutOfMemory("Gather: index out of range"));
}

}  // namespace
}  // namespace nncheck
