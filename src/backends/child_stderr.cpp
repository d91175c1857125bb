// What a child process that ran an engine's code wrote to its stderr says about its end.
#include "backends/child_stderr.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace nncheck {
namespace {

// The last `lines` lines of `text`, joined by " | ".
std::string lastLines(const std::string& text, int lines) {
  std::vector<std::string> out;
  size_t end = text.size();
  while (end > 0 && static_cast<int>(out.size()) < lines) {
    size_t begin = text.rfind('\n', end - 1);
    begin = begin == std::string::npos ? 0 : begin + 1;
    if (end > begin) out.insert(out.begin(), text.substr(begin, end - begin));
    if (begin == 0) break;
    end = begin - 1;
  }
  std::string joined;
  for (const std::string& l : out) joined += (joined.empty() ? "" : " | ") + l;
  return joined;
}

// The line of `text` holding `marker`, from the marker on; the last such line, or "".
std::string lineFrom(const std::string& text, std::string_view marker) {
  const size_t at = text.rfind(marker);
  if (at == std::string::npos) return "";
  const size_t end = text.find('\n', at);
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

// The tail of what the child wrote to its stderr file: at most `bytes`, trailing blanks dropped.
std::string stderrTail(int fd, off_t bytes) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return "";
  const off_t from = std::max<off_t>(0, size - bytes);
  std::string text(static_cast<size_t>(size - from), '\0');
  if (::pread(fd, text.data(), text.size(), from) <= 0) return "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// What the child's stderr says about its death, as the end of the crash message. The child
// runs only the engine and nncheck's decoding and encoding of tensors, so memory corruption
// found there is the engine's, even when it is detected later, in a free() of nncheck's: a
// sanitizer's report or glibc's heap check is said to be the engine's. Otherwise, the last
// lines the engine wrote.
std::string stderrDetail(const std::string& text) {
  if (text.empty()) return "";
  for (std::string_view sanitizer :
       {"AddressSanitizer", "LeakSanitizer", "MemorySanitizer", "ThreadSanitizer"}) {
    const std::string error = lineFrom(text, "ERROR: " + std::string(sanitizer) + ":");
    if (error.empty()) continue;
    const std::string summary = lineFrom(text, "SUMMARY: " + std::string(sanitizer) + ":");
    const bool heap = error.find("heap") != std::string::npos ||
                      error.find("free") != std::string::npos ||
                      error.find("alloc") != std::string::npos;
    return std::string("; ") +
           (heap ? "the engine corrupted its heap" : "the engine failed a memory check") + " (" +
           (summary.empty() ? error : summary) + ")";
  }
  if (const std::string ub = lineFrom(text, "runtime error:"); !ub.empty())
    return "; the engine's code has undefined behaviour (UndefinedBehaviorSanitizer: " + ub + ")";
  // glibc's malloc checks: "free(): double free detected in tcache 2", "malloc(): corrupted top
  // size", "corrupted size vs. prev_size", "munmap_chunk(): invalid pointer", ...
  for (std::string_view glibc :
       {"free(): ", "malloc(): ", "realloc(): ", "munmap_chunk(): ", "double free or corruption",
        "corrupted size vs. prev_size", "corrupted double-linked list", "malloc_consolidate(): "})
    if (const std::string line = lineFrom(text, glibc); !line.empty())
      return "; the engine corrupted its heap (glibc: " + line + ")";
  return "; stderr: " + lastLines(text, 3);
}

// The signal a sanitizer caught, reported and then exited on (AddressSanitizer handles SIGSEGV,
// SIGBUS, SIGFPE and SIGILL itself: "ERROR: AddressSanitizer: SEGV on unknown address"), or 0.
int signalCaughtBySanitizer(const std::string& text) {
  static constexpr std::pair<const char*, int> kCaught[] = {
      {"SEGV", SIGSEGV}, {"BUS", SIGBUS}, {"FPE", SIGFPE}, {"ILL", SIGILL}};
  for (const auto& [name, signal] : kCaught)
    if (text.find(std::string("Sanitizer: ") + name + " on ") != std::string::npos) return signal;
  return 0;
}

}  // namespace nncheck
