// What a child process that runs an engine's code writes to its stderr, kept bounded, and what
// it says about its end.
#include "backends/child_stderr.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
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

ChildStderr::ChildStderr(size_t kept) : kept_(kept) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  read_ = fds[0];
  write_ = fds[1];
  // Only this end: the child's writes still block on a full pipe, its reader here never does.
  ::fcntl(read_, F_SETFL, ::fcntl(read_, F_GETFL) | O_NONBLOCK);
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

ChildStderr::~ChildStderr() {
  if (reader_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
    reader_.join();
  }
  for (int fd : {read_, write_, wake_})
    if (fd >= 0) ::close(fd);
}

void ChildStderr::started() {
  if (write_ >= 0) ::close(write_);
  write_ = -1;
  if (read_ >= 0 && wake_ >= 0) reader_ = std::thread([this] { drain(); });
}

// The reader: what the pipe holds, whenever it holds any or take() asks, into the tail.
void ChildStderr::drain() {
  char buf[64 * 1024];
  for (;;) {
    pollfd p[2] = {{read_, POLLIN, 0}, {wake_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    // The asks so far, after their wake-ups are taken (a later ask wakes the next poll): what
    // the pipe holds now is what they wait for.
    uint64_t woken, asked;
    (void)!::read(wake_, &woken, sizeof woken);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      asked = asked_;
    }
    bool ended = false;
    for (;;) {
      const ssize_t n = ::read(read_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ended = n == 0;  // every writer is gone (else EAGAIN: all there is, for now)
        break;
      }
      std::lock_guard lock(mutex_);
      text_.append(buf, static_cast<size_t>(n));
      if (text_.size() > 2 * kept_) {
        dropped_ += text_.size() - kept_;
        text_.erase(0, text_.size() - kept_);
      }
    }
    std::lock_guard lock(mutex_);
    flushes_ = std::max(flushes_, asked);
    done_ = ended;
    flushed_.notify_all();
    if (ended) return;
  }
  std::lock_guard lock(mutex_);
  done_ = true;
  flushed_.notify_all();
}

std::string ChildStderr::take() {
  std::unique_lock lock(mutex_);
  if (reader_.joinable() && !done_) {
    const uint64_t ask = ++asked_;
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
    // The reader answers at once; the bound only keeps a wedged machine from holding this up.
    flushed_.wait_for(lock, std::chrono::seconds(5), [&] { return flushes_ >= ask || done_; });
  }
  if (text_.size() > kept_) {
    dropped_ += text_.size() - kept_;
    text_.erase(0, text_.size() - kept_);
  }
  std::string out = std::move(text_);
  text_.clear();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (dropped_ > 0)
    out = "(" + std::to_string(dropped_) + " bytes of its stderr before these left out)\n" + out;
  dropped_ = 0;
  return out;
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
