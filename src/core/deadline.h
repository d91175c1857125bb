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
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nncheck {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  // A limit `within` from now, in force on this thread until the object is destroyed.
  explicit Deadline(Clock::duration within);
  explicit Deadline(Clock::time_point at);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  friend void pollDeadline(int64_t);
  Clock::time_point at_;
  const Deadline* outer_;
  const Deadline* earliest_;  // this or an enclosing limit, whichever ends first
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

// A time limit given in seconds by a person (an option, an environment variable), as a duration:
// from 1 ms to one week. NaN, infinities, 0, negatives and anything that rounds to 0 ms throw
// nncheck::Error naming `what` ("--timeout", "NNCHECK_TIMEOUT='nan'").
//   std::chrono::milliseconds t = timeLimitFromSeconds("--timeout", 2.5);   // 2500 ms
std::chrono::milliseconds timeLimitFromSeconds(const std::string& what, double seconds);

}  // namespace nncheck
