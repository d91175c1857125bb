// Time limits on long work in this process: the earliest limit in force is the one polled, a
// limit's owner recognizes its own expiry, and an outer limit passes through inner code.
#include "core/deadline.h"

#include <gtest/gtest.h>

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// Polls until a limit passes; the limit that passed.
DeadlineExceeded expiry() {
  for (;;) {
    try {
      pollDeadline(1'000'000);
    } catch (const DeadlineExceeded& e) {
      return e;
    }
  }
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

TEST(Deadline, ALargeStepIsCheckedAtOnce) {
  Deadline passed(Deadline::Clock::now() - 1s);
  EXPECT_THROW(pollDeadline(100'000), DeadlineExceeded);
}

}  // namespace
}  // namespace nncheck
