// Time limits on long work in this process: the earliest limit in force is the one polled, a
// limit's owner recognizes its own expiry, and an outer limit passes through inner code.
#include "core/deadline.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// Polls until a limit passes: the limit that passed, or none after ten seconds (so that a
// broken limit fails the test rather than hanging it).
DeadlineExceeded expiry() {
  const auto giveUp = Deadline::Clock::now() + 10s;
  while (Deadline::Clock::now() < giveUp) {
    try {
      pollDeadline(1'000'000);
    } catch (const DeadlineExceeded& e) {
      return e;
    }
  }
  return {nullptr, "none passed"};
}

TEST(Deadline, WithoutALimitPollsNeverThrow) { EXPECT_NO_THROW(pollDeadline(int64_t{1} << 40)); }

TEST(Deadline, TheEarliestLimitInForceIsTheOneThatPasses) {
  Deadline outer(10ms);
  {
    Deadline inner(1h);  // ends later: the outer limit still applies inside
    const DeadlineExceeded e = expiry();
    EXPECT_TRUE(e.of(outer));
    EXPECT_FALSE(e.of(inner));
  }
  Deadline later(Deadline::Clock::now() + 1h);
  EXPECT_TRUE(expiry().of(outer));
}

TEST(Deadline, AnInnerLimitThatEndsFirstIsItsOwnAndEndsWithItsScope) {
  Deadline outer(1h);
  {
    Deadline inner(5ms);
    EXPECT_TRUE(expiry().of(inner));
  }
  EXPECT_NO_THROW(pollDeadline(int64_t{1} << 40)) << "the inner limit ended with its scope";
}

TEST(Deadline, AForkedChildStartsWithoutTheLimitsOfItsParent) {
  // An isolated engine's process is forked in the middle of a campaign's case: before, it kept
  // the campaign's time box, and a reference engine in it threw once the box had passed, in the
  // middle of shrinking.
  Deadline passed(Deadline::Clock::now() - 1s);
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      pollDeadline(int64_t{1} << 40);
      ::_exit(0);
    } catch (const DeadlineExceeded&) {
      ::_exit(1);
    }
  }
  int status = -1;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child kept the limit";
  EXPECT_THROW(pollDeadline(int64_t{1} << 40), DeadlineExceeded) << "the parent keeps it";
}

TEST(Deadline, ALargeStepIsCheckedAtOnce) {
  Deadline passed(Deadline::Clock::now() - 1s);
  EXPECT_THROW(pollDeadline(100'000), DeadlineExceeded);
}

// Ctrl-C asks a campaign to stop: it ends the limits that say an interrupt ends them (the time
// box), wherever they are polled, and leaves the others (a reference run's own limit) alone.
TEST(Deadline, AnInterruptEndsOnlyTheLimitsItMayEnd) {
  {
    const Deadline alone(1h);
    requestInterrupt();
    EXPECT_NO_THROW(checkDeadline()) << "no limit in force may be interrupted";
  }
  {
    const Deadline box(1h, Deadline::Interrupt::Ends);
    const Deadline inner(1h);  // a reference run's, inside the box
    try {
      checkDeadline();
      ADD_FAILURE() << "the interrupt ended nothing";
    } catch (const DeadlineExceeded& e) {
      EXPECT_TRUE(e.of(box));
      EXPECT_EQ(e.where, "interrupted");
    }
    clearInterrupt();
    EXPECT_NO_THROW(checkDeadline());
  }
  EXPECT_FALSE(limitInForce());
}

}  // namespace
}  // namespace nncheck
