// Process isolation. A child process runs the backend; its report travels back as
// length-prefixed records (a status byte, then the outputs as TensorProtos or the message).
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kOk = 'O', kError = 'E', kUnsupported = 'U';

// Writes everything; false when the other side is gone (no SIGPIPE: sockets, MSG_NOSIGNAL).
bool sendAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void putRecord(std::string& out, const std::string& s) {
  uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += s;
}

bool getRecord(const std::string& in, size_t& pos, std::string& s) {
  uint64_t n = 0;
  if (pos + sizeof n > in.size()) return false;
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n > in.size()) return false;
  s.assign(in, pos, n);
  pos += n;
  return true;
}

// Runs the backend and encodes what happened.
std::string runAndReport(Backend& backend, const Model& model, const TensorMap& inputs) {
  std::string report;
  try {
    TensorMap out = backend.run(model, inputs);
    report.push_back(kOk);
    for (const auto& [name, t] : out) {
      putRecord(report, name);
      putRecord(report, serializeTensor(t, name));
    }
  } catch (const Unsupported& e) {
    report.assign(1, kUnsupported);
    putRecord(report, e.what());
  } catch (const std::exception& e) {
    report.assign(1, kError);
    putRecord(report, e.what());
  } catch (...) {
    report.assign(1, kError);
    putRecord(report, "unknown exception");
  }
  return report;
}

void decodeReport(const std::string& report, RunOutcome& r) {
  size_t pos = 1;
  if (report[0] == kError || report[0] == kUnsupported) {
    r.kind = report[0] == kError ? OutcomeKind::Error : OutcomeKind::Unsupported;
    if (!getRecord(report, pos, r.message)) r.message = "(truncated error message)";
    return;
  }
  std::string name, bytes;
  while (pos < report.size()) {
    if (!getRecord(report, pos, name) || !getRecord(report, pos, bytes))
      throw Error("isolated run: truncated report from the engine's process");
    r.outputs[name] = parseTensor(bytes, "output '" + name + "' of the isolated engine");
  }
}

// Reads until `done(buffer)` says a whole message is in, EOF, or the deadline. Returns false on
// timeout.
template <class Done>
bool readUntil(int fd, Clock::time_point deadline, std::string& buffer, Done done) {
  char buf[65536];
  while (!done(buffer)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EOF: the child is done or dead
    buffer.append(buf, static_cast<size_t>(n));
  }
  return true;
}

// The last `lines` lines (at most 1 KB) the child wrote to its stderr file, joined by " | ".
std::string lastLines(int fd, int lines) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return "";
  const off_t from = std::max<off_t>(0, size - 1024);
  std::string text(static_cast<size_t>(size - from), '\0');
  if (::pread(fd, text.data(), text.size(), from) <= 0) return "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
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

int waitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void describeDeath(int status, RunOutcome& r) {
  if (WIFSIGNALED(status)) {
    r.kind = OutcomeKind::Crash;
    r.signal = WTERMSIG(status);
    r.message = std::string("killed by signal ") + std::to_string(r.signal) + " (" +
                strsignal(r.signal) + ")";
    return;
  }
  r.kind = OutcomeKind::Crash;
  r.message = "the engine exited with status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without a result";
}

void describeHang(std::chrono::milliseconds timeout, RunOutcome& r) {
  r.kind = OutcomeKind::Hang;
  r.message = "no result within " + std::to_string(timeout.count()) + " ms";
}

pid_t forkOrThrow(int fds[2]) {
  std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("isolated run: fork failed: ") + std::strerror(errno));
  }
  return pid;
}

void socketPairOrThrow(int fds[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(std::string("isolated run: socketpair failed: ") + std::strerror(errno));
}

}  // namespace

// One long-lived child reading requests (model bytes, then name/tensor records), each answered
// with a length-prefixed report.
class Isolated::Worker {
 public:
  explicit Worker(Backend& backend) : backend_(backend) {}
  ~Worker() { stop(); }

  // nullopt: the child died or hung; the caller confirms in a fresh child.
  std::optional<RunOutcome> run(const Model& model, const TensorMap& inputs,
                                std::chrono::milliseconds timeout) {
    if (pid_ <= 0) start();
    const auto start = Clock::now();
    std::string request;
    putRecord(request, serializeModel(model));
    for (const auto& [name, t] : inputs) {
      putRecord(request, name);
      putRecord(request, serializeTensor(t, name));
    }
    std::string framed;
    putRecord(framed, request);
    if (!sendAll(fd_, framed)) {
      stop();
      return std::nullopt;
    }
    std::string buffer;
    auto whole = [](const std::string& b) {
      uint64_t n = 0;
      if (b.size() < sizeof n) return false;
      std::memcpy(&n, b.data(), sizeof n);
      return b.size() >= sizeof n + n;
    };
    const bool inTime = readUntil(fd_, start + timeout, buffer, whole);
    size_t pos = 0;
    std::string report;
    if (!inTime || !getRecord(buffer, pos, report) || report.empty()) {
      stop();
      return std::nullopt;
    }
    RunOutcome r;
    decodeReport(report, r);
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }

 private:
  void start() {
    int fds[2];
    socketPairOrThrow(fds);
    pid_t pid = forkOrThrow(fds);
    if (pid == 0) {
      ::close(fds[0]);
      serve(fds[1]);
    }
    ::close(fds[1]);
    pid_ = pid;
    fd_ = fds[0];
  }

  void stop() {
    if (pid_ <= 0) return;
    ::close(fd_);
    ::kill(pid_, SIGKILL);
    waitFor(pid_);
    pid_ = -1;
    fd_ = -1;
  }

  [[noreturn]] void serve(int fd) {
    // Crashes are re-run in a fresh child, which reports the stderr; here it would only leak.
    if (int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
    std::string buffer;
    for (;;) {
      uint64_t n = 0;
      auto whole = [&](const std::string& b) {
        if (b.size() < sizeof n) return false;
        std::memcpy(&n, b.data(), sizeof n);
        return b.size() >= sizeof n + n;
      };
      readUntil(fd, Clock::time_point::max(), buffer, whole);
      size_t pos = 0;
      std::string request;
      if (!getRecord(buffer, pos, request)) std::_Exit(0);  // the parent is gone
      buffer.erase(0, pos);
      std::string report;
      try {
        size_t at = 0;
        std::string modelBytes, name, bytes;
        getRecord(request, at, modelBytes);
        Model model = parseModel(modelBytes, "isolated request");
        TensorMap inputs;
        while (getRecord(request, at, name) && getRecord(request, at, bytes))
          inputs[name] = parseTensor(bytes, "isolated request");
        report = runAndReport(backend_, model, inputs);
      } catch (const std::exception& e) {
        report.assign(1, kError);
        putRecord(report, std::string("isolated worker: ") + e.what());
      }
      std::string framed;
      putRecord(framed, report);
      if (!sendAll(fd, framed)) std::_Exit(0);
    }
  }

  Backend& backend_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

std::string_view outcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::Ok:
      return "ok";
    case OutcomeKind::Unsupported:
      return "unsupported";
    case OutcomeKind::Error:
      return "error";
    case OutcomeKind::Crash:
      return "crash";
    case OutcomeKind::Hang:
      return "hang";
  }
  return "?";
}

Backend& reference() {
  static ReferenceBackend backend;
  return backend;
}

std::chrono::milliseconds defaultTimeout() {
  if (const char* s = std::getenv("NNCHECK_TIMEOUT")) {
    char* end = nullptr;
    double secs = std::strtod(s, &end);
    if (end == s || *end != '\0' || secs <= 0)
      throw Error(std::string("NNCHECK_TIMEOUT='") + s +
                  "': expected a positive number of seconds");
    return std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
  }
  return std::chrono::seconds(10);
}

Isolated::Isolated(Backend& backend, std::chrono::milliseconds timeout, Isolation mode)
    : backend_(backend), timeout_(timeout) {
  if (mode == Isolation::Persistent) worker_ = std::make_shared<Worker>(backend);
}

Isolated isolated(Backend& backend, std::chrono::milliseconds timeout, Isolation mode) {
  return Isolated(backend, timeout, mode);
}

RunOutcome Isolated::run(const Model& model, const TensorMap& inputs) const {
  if (worker_) {
    if (std::optional<RunOutcome> r = worker_->run(model, inputs, timeout_)) return *r;
    // The worker died or hung: judge the case alone, in a fresh child.
  }
  return runInFreshChild(model, inputs);
}

RunOutcome Isolated::runInFreshChild(const Model& model, const TensorMap& inputs) const {
  RunOutcome r;
  int fds[2];
  socketPairOrThrow(fds);
  // The child's stderr (glibc's "corrupted size" and the like) goes into the crash report
  // instead of the terminal.
  const int errFd = ::memfd_create("nncheck-child-stderr", MFD_CLOEXEC);
  const auto start = Clock::now();
  pid_t pid = forkOrThrow(fds);
  if (pid == 0) {
    if (errFd >= 0) ::dup2(errFd, STDERR_FILENO);
    ::close(fds[0]);
    sendAll(fds[1], runAndReport(backend_, model, inputs));
    ::close(fds[1]);
    std::_Exit(0);  // no atexit handlers or static destructors of the parent's state
  }
  ::close(fds[1]);
  std::string report;
  const bool inTime =
      readUntil(fds[0], start + timeout_, report, [](const std::string&) { return false; });
  ::close(fds[0]);
  if (!inTime) ::kill(pid, SIGKILL);
  const int status = waitFor(pid);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!inTime) {
    describeHang(timeout_, r);
  } else if (WIFSIGNALED(status) || report.empty() ||
             (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
    describeDeath(status, r);
  } else {
    decodeReport(report, r);
  }
  if (errFd >= 0) {
    if (r.kind == OutcomeKind::Crash || r.kind == OutcomeKind::Hang) {
      std::string err = lastLines(errFd, 3);
      if (!err.empty()) r.message += "; stderr: " + err;
    }
    ::close(errFd);
  }
  return r;
}

}  // namespace nncheck
