// A child's stderr, however much it writes, costs this process its last bytes alone, and what it
// wrote before it said anything else is all there when read.
#include "backends/child_stderr.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace nncheck {
namespace {

TEST(ChildStderr, AFloodIsKeptAsItsTailAndWhatCameBeforeAReplyIsRead) {
  ChildStderr err(1024);
  int reply[2];
  ASSERT_EQ(::pipe(reply), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(err.writeEnd(), STDERR_FILENO);
    const std::string chunk(1 << 16, 'x');
    for (int i = 0; i < 1024; ++i) (void)!::write(STDERR_FILENO, chunk.data(), chunk.size());
    (void)!::write(STDERR_FILENO, "the end\n", 8);
    (void)!::write(reply[1], "r", 1);  // said after its stderr: take() must hold all before it
    ::pause();
    _exit(0);
  }
  err.started();
  ::close(reply[1]);
  char r;
  ASSERT_EQ(::read(reply[0], &r, 1), 1);
  const std::string text = err.take();
  EXPECT_NE(text.find("bytes of its stderr before these left out"), std::string::npos);
  EXPECT_LE(text.size(), 1200u) << "64 MiB kept as its tail";
  EXPECT_EQ(text.substr(text.size() - 7), "the end");
  EXPECT_EQ(err.take(), "") << "what is taken is gone";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(reply[0]);
}

}  // namespace
}  // namespace nncheck
