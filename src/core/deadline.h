// Time limits on long work inside this process: a reference run (a valid model may loop for
// hours), a campaign's generation (its time box). Work that may run long calls pollDeadline()
// where stopping is safe; once the earliest limit in force on this thread has passed, it throws
// DeadlineExceeded, which names that limit, and the code that set the limit turns it into its
// own outcome (a case skipped for time, a campaign at its end).
//
//   Deadline run(std::chrono::seconds(60));
//   try { for (row...) { pollDeadline(rowLength); compute(row); } }
//   catch (const DeadlineExceeded& e) { if (!e.of(run)) throw; /* ran past 60 s */ }
//
// DeadlineExceeded is deliberately no std::exception: the many handlers that turn an Error into
// "this candidate does not work, try another" must not swallow the end of the time given.
//
// A limit may also be interruptible: requestInterrupt() (Ctrl-C, from a signal handler) ends it
// at once, as if it had passed. Waits on other processes (an engine's run, a worker's hello)
// look at the limits in force too (checkDeadline()), so a time box or an interrupt ends them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nncheck {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Interrupt { Ignored, Ends };
  // A limit `within` from now, in force on this thread until the object is destroyed; with
  // Interrupt::Ends, requestInterrupt() ends it too.
  explicit Deadline(Clock::duration within, Interrupt interrupt = Interrupt::Ignored);
  explicit Deadline(Clock::time_point at, Interrupt interrupt = Interrupt::Ignored);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  friend void pollDeadline(int64_t);
  friend void checkDeadline();
  friend bool limitInForce();
  Clock::time_point at_;
  const Deadline* outer_;
  const Deadline* earliest_;       // this or an enclosing limit, whichever ends first
  const Deadline* interruptible_;  // the innermost that an interrupt ends, or null
};

// Where a limit was exceeded: `where` is set by the code it passed through (the interpreter
// names the node that was running).
struct DeadlineExceeded {
  const Deadline* limit;
  std::string where;
  bool of(const Deadline& d) const { return limit == &d; }
};

// Throws DeadlineExceeded when the earliest limit in force on this thread has passed. `work` is
// roughly how many element operations the caller did since its last poll: the clock is read once
// about 100,000 of them have been done (a fraction of a millisecond), so polls cost nothing in
// inner loops and a long step is checked at once.
void pollDeadline(int64_t work = 1);

// pollDeadline with the clock read now: for a wait that looks every so often.
void checkDeadline();

// Whether a limit is in force on this thread (a wait should then look every so often).
bool limitInForce();

// Ends every interruptible limit in force, on every thread, at its next poll: for a signal
// handler (async-signal-safe). Until clearInterrupt().
void requestInterrupt();
bool interruptRequested();
void clearInterrupt();

// A time limit given in seconds by a person (an option, an environment variable), as a duration:
// from 1 ms to one week. NaN, infinities, 0, negatives and anything that rounds to 0 ms throw
// nncheck::Error naming `what` ("--timeout", "NNCHECK_TIMEOUT='nan'").
//   std::chrono::milliseconds t = timeLimitFromSeconds("--timeout", 2.5);   // 2500 ms
std::chrono::milliseconds timeLimitFromSeconds(const std::string& what, double seconds);

}  // namespace nncheck
