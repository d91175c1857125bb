#include "core/deadline.h"

#include <pthread.h>

#include <csignal>

#include "nncheck/error.h"

namespace nncheck {
namespace {

thread_local const Deadline* innermost = nullptr;
volatile std::sig_atomic_t interrupted = 0;
thread_local int64_t workSinceClock = 0;
constexpr int64_t kWorkPerClockRead = 100'000;

// A forked child (an isolated engine's spawner or worker, forked in the middle of a campaign's
// case) starts without the limits of the thread that forked it: they bound the parent's work,
// and a child that kept them would find them passed in the middle of a later run.
[[maybe_unused]] const int forgetLimitsInChildren = ::pthread_atfork(nullptr, nullptr, [] {
  innermost = nullptr;
  workSinceClock = 0;
});

}  // namespace

Deadline::Deadline(Clock::duration within, Interrupt interrupt)
    : Deadline(Clock::now() + within, interrupt) {}

Deadline::Deadline(Clock::time_point at, Interrupt interrupt)
    : at_(at),
      outer_(innermost),
      earliest_(this),
      interruptible_(interrupt == Interrupt::Ends ? this
                     : outer_                     ? outer_->interruptible_
                                                  : nullptr) {
  if (outer_ && outer_->earliest_->at_ <= at_) earliest_ = outer_->earliest_;
  innermost = this;
}

Deadline::~Deadline() { innermost = outer_; }

void pollDeadline(int64_t work) {
  if (!innermost || (workSinceClock += work) < kWorkPerClockRead) return;
  workSinceClock = 0;
  if (interrupted && innermost->interruptible_)
    throw DeadlineExceeded{innermost->interruptible_, "interrupted"};
  const Deadline* d = innermost->earliest_;
  if (Deadline::Clock::now() >= d->at_) throw DeadlineExceeded{d, {}};
}

void checkDeadline() { pollDeadline(kWorkPerClockRead); }

bool limitInForce() { return innermost != nullptr; }

void requestInterrupt() { interrupted = 1; }
bool interruptRequested() { return interrupted != 0; }
void clearInterrupt() { interrupted = 0; }

std::chrono::milliseconds timeLimitFromSeconds(const std::string& what, double seconds) {
  constexpr double kWeek = 7 * 24 * 3600;
  // Written so that NaN fails too; 1 ms is the least a limit may be (1e-9 s would be 0 ms).
  if (!(seconds >= 0.001 && seconds <= kWeek))
    throw Error(what + ": expected a number of seconds from 0.001 to 604800 (a week)");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace nncheck
