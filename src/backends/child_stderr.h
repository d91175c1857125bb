// What a child process that ran an engine's code (an isolated run, a library tried before it is
// loaded) wrote to its stderr says about its end: a sanitizer's or glibc's report of memory
// corruption, a signal a sanitizer caught and exited on, or its last lines.
//
//   const std::string err = stderrTail(errFd, 64 * 1024);
//   if (int signal = signalCaughtBySanitizer(err)) ...   // as if it died of `signal`
//   message += stderrDetail(err);                          // "; stderr: ..." and the like
#pragma once

#include <sys/types.h>

#include <string>

namespace nncheck {

// The tail of what the child wrote to its stderr file: at most `bytes`, trailing blanks dropped.
std::string stderrTail(int fd, off_t bytes);

// What the child's stderr says about its death, as the end of a message ("; the engine corrupted
// its heap (...)", "; stderr: a | b | c"), or "" when it wrote nothing.
std::string stderrDetail(const std::string& text);

// The signal a sanitizer caught, reported and then exited on (AddressSanitizer handles SIGSEGV,
// SIGBUS, SIGFPE and SIGILL itself: "ERROR: AddressSanitizer: SEGV on unknown address"), or 0.
int signalCaughtBySanitizer(const std::string& text);

}  // namespace nncheck
