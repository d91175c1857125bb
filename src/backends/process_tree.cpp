#include "backends/process_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace nncheck {
namespace {

std::vector<pid_t> childrenOf(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;) out.push_back(child);
  }
  return out;
}

// The number after `key` in a /proc status text, in kB; -1 when absent. No allocation.
int64_t statusField(const char* text, const char* key) {
  const char* at = std::strstr(text, key);
  if (!at) return -1;
  at += std::strlen(key);
  while (*at == ' ' || *at == '\t') ++at;
  int64_t v = 0;
  for (; *at >= '0' && *at <= '9'; ++at) v = v * 10 + (*at - '0');
  return v;
}

}  // namespace

std::vector<pid_t> descendantsOf(pid_t pid) {
  std::vector<pid_t> out;
  std::vector<pid_t> frontier{pid};
  // A tree deeper or wider than this is no engine's: the walk stops there.
  constexpr size_t kMost = 4096;
  while (!frontier.empty() && out.size() < kMost) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    for (pid_t c : childrenOf(p)) {
      out.push_back(c);
      frontier.push_back(c);
    }
  }
  return out;
}

void killProcessTree(pid_t pid) {
  if (pid <= 0) return;
  // Stopped first, round by round, so that none forks past the walk (a stopped process forks
  // nothing, and a child it forked before is in its list on the next round); then killed.
  std::set<pid_t> stopped{pid};
  ::kill(pid, SIGSTOP);
  for (int round = 0; round < 16; ++round) {
    bool more = false;
    for (pid_t p : descendantsOf(pid))
      if (stopped.insert(p).second) {
        ::kill(p, SIGSTOP);
        more = true;
      }
    if (!more) break;
  }
  for (pid_t p : stopped) {
    if (::getpgid(p) == p) ::kill(-p, SIGKILL);  // a group it leads: what it started there too
    ::kill(p, SIGKILL);
  }
}

void killDescendantsOfThisProcess() {
  for (pid_t child : childrenOf(::getpid())) killProcessTree(child);
  // Those killed are this process's children now (it adopted the orphans): reaped here. A child
  // someone else here waits for is reaped with them; its waiter then sees ECHILD, which every
  // wait in nncheck takes for "gone".
  for (pid_t p; (p = ::waitpid(-1, nullptr, WNOHANG)) > 0;) {
  }
}

void adoptOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

std::optional<int> waitForExit(pid_t child, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) return status;
    if (done < 0 && errno != EINTR) return -1;  // no child of this process (reaped elsewhere)
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool hasExited(pid_t child) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return false;
  return info.si_pid == child;
}

bool exitsBy(pid_t child, std::chrono::steady_clock::time_point deadline) {
  while (!hasExited(child)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

namespace {

void limitData(rlim_t wanted) {
  rlimit now{};
  if (::getrlimit(RLIMIT_DATA, &now) != 0) return;
  const rlim_t limit = now.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, now.rlim_max);
  const rlimit set{limit, limit};  // the hard limit too: what runs below cannot raise it
  ::setrlimit(RLIMIT_DATA, &set);
}

}  // namespace

void limitMemoryFromNow(int64_t bytes) {
  char text[8192];
  int64_t heldKiB = 0;
  if (const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC); fd >= 0) {
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    text[n > 0 ? n : 0] = '\0';
    heldKiB = std::max<int64_t>(0, statusField(text, "VmData:"));
  }
  limitData(static_cast<rlim_t>((heldKiB << 10) + bytes));
}

void limitMemoryOfProgram(int64_t bytes) { limitData(static_cast<rlim_t>(bytes)); }

bool saysOutOfMemory(const std::string& message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* said : {"memoryerror", "bad_alloc", "cannot allocate memory", "out of memory",
                           "unable to allocate", "can't allocate memory", "failed to allocate"})
    if (lower.find(said) != std::string::npos) return true;
  return false;
}

}  // namespace nncheck
