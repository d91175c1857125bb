// What a child process that runs an engine's code (an isolated run, a worker, a library tried
// before it is loaded) writes to its stderr: kept bounded, whatever it writes, and read for what
// it says about the child's end: a sanitizer's or glibc's report of memory corruption, a signal a
// sanitizer caught and exited on, or its last lines.
//
//   ChildStderr err(64 * 1024);             // before the fork
//   if (pid == 0) { ::dup2(err.writeEnd(), 2); ... }
//   err.started();                          // in the parent, after the fork
//   const std::string text = err.take();    // what it wrote since the last take (its tail)
//   if (int signal = signalCaughtBySanitizer(text)) ...   // as if it died of `signal`
//   message += stderrDetail(text);                         // "; stderr: ..." and the like
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace nncheck {

// A pipe a child writes its stderr into, read as it comes by a thread of this process into a
// buffer that keeps the last `kept` bytes (with a count of those left out), so that a child that
// floods its stderr costs this process neither memory nor disk, and never blocks on a full pipe.
class ChildStderr {
 public:
  explicit ChildStderr(size_t kept);
  ~ChildStderr();
  ChildStderr(const ChildStderr&) = delete;
  ChildStderr& operator=(const ChildStderr&) = delete;

  // The descriptor the child makes its stderr (-1 when no pipe could be made: it then writes
  // nowhere). Close-on-exec: dup2 it.
  int writeEnd() const { return write_; }
  // Called in the parent once the child is forked: closes the write end here and starts reading.
  void started();
  // What the child wrote since the last take (all it wrote before anything it then said on
  // another descriptor, which this waits for), its tail when there was more than `kept`,
  // trailing blanks dropped.
  std::string take();

 private:
  void drain();
  size_t kept_;
  int read_ = -1, write_ = -1, wake_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable flushed_;
  std::string text_;
  uint64_t dropped_ = 0, flushes_ = 0, asked_ = 0;
  bool done_ = false, stopping_ = false;
};

// What the child's stderr says about its death, as the end of a message ("; the engine corrupted
// its heap (...)", "; stderr: a | b | c"), or "" when it wrote nothing.
std::string stderrDetail(const std::string& text);

// The signal a sanitizer caught, reported and then exited on (AddressSanitizer handles SIGSEGV,
// SIGBUS, SIGFPE and SIGILL itself: "ERROR: AddressSanitizer: SEGV on unknown address"), or 0.
int signalCaughtBySanitizer(const std::string& text);

}  // namespace nncheck
