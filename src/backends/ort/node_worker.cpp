#include "ort/node_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck::ort {
namespace {

void writeAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, data, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw Error("");  // the worker is gone; the caller finds out how
    data += k;
    n -= static_cast<size_t>(k);
  }
}

// False at end of file.
bool readAll(int fd, char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = ::read(fd, data, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// An unlinked file for the worker's stderr (or its fd 3), appended to by the worker and read by
// us.
int openUnlinkedFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string folder = dir && *dir ? dir : "/tmp";
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string name = folder + "/nncheck-ort-log.XXXXXX";
  fd = ::mkostemp(name.data(), O_APPEND | O_CLOEXEC);
  if (fd < 0) throw Error("ort: cannot make a log file in " + folder + ": " + std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

}  // namespace

NodeWorker::NodeWorker(std::string node, std::string script,
                       std::vector<std::pair<std::string, std::string>> environment)
    : node_(std::move(node)), script_(std::move(script)), environment_(std::move(environment)) {}

NodeWorker::~NodeWorker() { stop(); }

void NodeWorker::start() {
  if (::access(node_.c_str(), X_OK) != 0)
    throw Error("ort: Node.js is not at " + node_ +
                " (install Debian's nodejs, or run scripts/install-deps.sh; NNCHECK_NODE names "
                "another)");
  if (::access(script_.c_str(), R_OK) != 0)
    throw Error("ort: the worker program " + script_ + " cannot be read");
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw Error("ort: pipe: " + std::string(std::strerror(errno)));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error("ort: pipe: " + std::string(std::strerror(errno)));
  }
  log_ = openUnlinkedFile();
  file3_ = openUnlinkedFile();
  // A write to a worker that died must fail, not kill this process with SIGPIPE: how the worker
  // died is what matters (died()).
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("ort: cannot start Node.js: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // The worker dies with the engine's process (a hang is ended by killing that process).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(log_, 2);
    ::dup2(file3_, 3);
    for (const auto& [k, v] : environment_) ::setenv(k.c_str(), v.c_str(), 1);
    ::execl(node_.c_str(), node_.c_str(), "--no-warnings", script_.c_str(),
            static_cast<char*>(nullptr));
    const char msg[] = "nncheck: cannot run Node.js\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  pid_ = pid;
  toWorker_ = in[1];
  fromWorker_ = out[0];
}

void NodeWorker::stop() {
  if (toWorker_ >= 0) ::close(toWorker_);
  if (fromWorker_ >= 0) ::close(fromWorker_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (log_ >= 0) ::close(log_);
  if (file3_ >= 0) ::close(file3_);
  pid_ = toWorker_ = fromWorker_ = log_ = file3_ = -1;
}

namespace {
// The contents of an unlinked file the worker writes, which is then emptied.
std::string takeContents(int fd) {
  std::string out;
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size == 0) return out;
  out.resize(static_cast<size_t>(st.st_size));
  const ssize_t k = ::pread(fd, out.data(), out.size(), 0);
  out.resize(k > 0 ? static_cast<size_t>(k) : 0);
  // The worker appends (O_APPEND), so its next line lands at the new end.
  if (::ftruncate(fd, 0) != 0) out += "\n(nncheck: could not empty the worker's file)";
  return out;
}
}  // namespace

std::string NodeWorker::readLog() { return takeContents(log_); }

std::string NodeWorker::takeFile3() { return takeContents(file3_); }

void NodeWorker::died(const std::string& during) {
  std::string log = readLog();
  int status = 0;
  ::close(toWorker_);
  toWorker_ = -1;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  stop();
  if (log.size() > 4000) log = "..." + log.substr(log.size() - 4000);
  if (WIFSIGNALED(status)) {
    // ORT crashed: so does this process, with what ORT printed last on its stderr.
    const int sig = WTERMSIG(status);
    (void)!::write(2, log.data(), log.size());
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    ::_exit(128 + sig);
  }
  throw Error("ort: the Node.js worker exited with status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " " + during +
              (log.empty() ? "" : ": " + log));
}

NodeWorker::Reply NodeWorker::call(const std::string& request, std::string& log) {
  if (pid_ < 0) start();
  const uint32_t n = static_cast<uint32_t>(request.size());
  char head[4];
  std::memcpy(head, &n, 4);  // little-endian hosts only, as ORT's binaries
  try {
    writeAll(toWorker_, head, 4);
    writeAll(toWorker_, request.data(), request.size());
  } catch (const Error&) {
    died("while reading a request");
  }
  uint32_t length = 0;
  if (!readAll(fromWorker_, head, 4)) died("before replying");
  std::memcpy(&length, head, 4);
  // Bounded before anything is allocated for it: a reply past the memory limit is a case skipped.
  if (length > memoryLimit()) {
    stop();
    throw Unsupported("memory", "ort: the worker's reply holds " + std::to_string(length >> 20) +
                                    " MiB, past the memory limit of " +
                                    std::to_string(memoryLimit() >> 20) + " MiB (--memory-limit)");
  }
  log = readLog();  // complete: the worker logs as it makes and runs the session, before replying
  return Reply(*this, length);
}

void NodeWorker::Reply::read(void* to, size_t n) {
  if (n > left_) throw Error("ort: the worker's reply is cut short");
  if (!readAll(worker_.fromWorker_, static_cast<char*>(to), n)) worker_.died("while replying");
  left_ -= n;
}

NodeWorker::Reply::~Reply() {
  char sink[65536];
  while (left_ > 0 && worker_.fromWorker_ >= 0) {
    const size_t n = std::min(left_, sizeof sink);
    if (!readAll(worker_.fromWorker_, sink, n)) {
      worker_.stop();  // gone mid-reply: the next call starts it again
      return;
    }
    left_ -= n;
  }
}

}  // namespace nncheck::ort
