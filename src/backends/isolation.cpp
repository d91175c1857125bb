// Process isolation. A child process runs the backend; its report travels back as
// length-prefixed records (a status byte, then the outputs as TensorProtos or the message).
#include "nncheck/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "backends/coverage.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// A report's first byte. The engine's process writes Ok, Error or Unsupported; Crash and Hang
// come from whoever watched it die (the spawner, or this process).
// The spawner's own work around a run (fork, wait) past the run's time limit.
constexpr std::chrono::seconds kSpawnerGrace{5};

constexpr char kOk = 'O', kError = 'E', kUnsupported = 'U', kCrash = 'C', kHang = 'H';

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

// Runs the backend and encodes what happened: the status, the coverage features the run
// reached (backends/coverage.h; none when the engine is not instrumented), then the outputs or
// the message.
std::string runAndReport(Backend& backend, const Model& model, const TensorMap& inputs) {
  char status = kOk;
  std::string rest;
  coverage::reset();
  try {
    TensorMap out = backend.run(model, inputs);
    for (const auto& [name, t] : out) {
      putRecord(rest, name);
      putRecord(rest, serializeTensor(t, name));
    }
  } catch (const Unsupported& e) {
    status = kUnsupported;
    rest.clear();
    putRecord(rest, e.what());
  } catch (const std::exception& e) {
    status = kError;
    rest.clear();
    putRecord(rest, e.what());
  } catch (...) {
    status = kError;
    rest.clear();
    putRecord(rest, "unknown exception");
  }
  const std::vector<uint32_t> features = coverage::collect();
  std::string report(1, status);
  std::string bytes(features.size() * sizeof(uint32_t), '\0');
  if (!features.empty()) std::memcpy(bytes.data(), features.data(), bytes.size());
  putRecord(report, bytes);
  std::string applied;
  try {
    for (const std::string& name : backend.optimizationsApplied()) applied += name + '\n';
  } catch (...) {  // the engine cannot tell: nothing known
    applied.clear();
  }
  putRecord(report, applied);
  return report + rest;
}

void decodeReport(const std::string& report, RunOutcome& r) {
  size_t pos = 1;
  if (report[0] == kOk || report[0] == kError || report[0] == kUnsupported) {
    std::string features;
    if (!getRecord(report, pos, features) || features.size() % sizeof(uint32_t) != 0)
      throw Error("isolated run: truncated coverage in the report from the engine's process");
    r.coverage.resize(features.size() / sizeof(uint32_t));
    if (!features.empty())  // (memcpy from an empty vector's null data is undefined)
      std::memcpy(r.coverage.data(), features.data(), features.size());
    std::string applied;
    if (!getRecord(report, pos, applied))
      throw Error("isolated run: truncated optimizations in the report from the engine's process");
    for (size_t from = 0; from < applied.size();) {
      const size_t to = applied.find('\n', from);
      r.optimizations.push_back(applied.substr(from, to - from));
      from = to == std::string::npos ? applied.size() : to + 1;
    }
    coverage::addOptimizationFeatures(r.optimizations, r.coverage);
  }
  if (report[0] == kError || report[0] == kUnsupported || report[0] == kHang) {
    r.kind = report[0] == kError         ? Outcome::Error
             : report[0] == kUnsupported ? Outcome::Unsupported
                                         : Outcome::Hang;
    if (!getRecord(report, pos, r.message)) r.message = "(truncated error message)";
    return;
  }
  if (report[0] == kCrash) {
    std::string signal;
    r.kind = Outcome::Crash;
    if (!getRecord(report, pos, signal) || !getRecord(report, pos, r.message))
      throw Error("isolated run: truncated crash report");
    r.signal = std::atoi(signal.c_str());
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

int waitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string crashReport(int signal, const std::string& message) {
  std::string report(1, kCrash);
  putRecord(report, std::to_string(signal));
  putRecord(report, message);
  return report;
}

// The report of a child that died with `status`, having written `err` to its stderr.
std::string deathReport(int status, const std::string& err) {
  const std::string detail = stderrDetail(err);
  auto signalText = [](int signal) {
    return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  };
  if (WIFSIGNALED(status))
    return crashReport(WTERMSIG(status), "killed by " + signalText(WTERMSIG(status)) + detail);
  // The same crash in a sanitized build: the signal, not the sanitizer's exit status.
  if (const int signal = signalCaughtBySanitizer(err))
    return crashReport(signal, signalText(signal) + ", caught by a sanitizer" + detail);
  return crashReport(0, "the engine exited with status " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                            " without a result" + detail);
}

std::string hangReport(std::chrono::milliseconds timeout, const std::string& detail) {
  std::string report(1, kHang);
  putRecord(report, "no result within " + std::to_string(timeout.count()) + " ms" + detail);
  return report;
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

// A length-prefixed record is all in.
bool wholeRecord(const std::string& b) {
  uint64_t n = 0;
  if (b.size() < sizeof n) return false;
  std::memcpy(&n, b.data(), sizeof n);
  return b.size() >= sizeof n + n;
}

// Reads one length-prefixed record by the deadline; nullopt when the other side is gone or late.
std::optional<std::string> readRecord(int fd, Clock::time_point deadline) {
  std::string buffer, record;
  size_t pos = 0;
  if (!readUntil(fd, deadline, buffer, wholeRecord) || !getRecord(buffer, pos, record))
    return std::nullopt;
  return record;
}

bool sendRecord(int fd, const std::string& record) {
  std::string framed;
  putRecord(framed, record);
  return sendAll(fd, framed);
}

// Forks a child of this process that runs the backend once; returns its report, or a crash or
// hang report with the last lines the child wrote to stderr. `alsoClose`: a descriptor the child
// must not keep (the spawner's socket, so that the spawner's death is seen at once).
std::string runInChild(Backend& backend, const Model& model, const TensorMap& inputs,
                       std::chrono::milliseconds timeout, int alsoClose) {
  int fds[2];
  socketPairOrThrow(fds);
  // The child's stderr (glibc's "corrupted size" and the like) goes into the crash report
  // instead of the terminal.
  const int errFd = ::memfd_create("nncheck-child-stderr", MFD_CLOEXEC);
  const auto start = Clock::now();
  pid_t pid = forkOrThrow(fds);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a hanging child does not outlive its watcher
    if (alsoClose >= 0) ::close(alsoClose);
    if (errFd >= 0) ::dup2(errFd, STDERR_FILENO);
    ::close(fds[0]);
    sendAll(fds[1], runAndReport(backend, model, inputs));
    ::close(fds[1]);
    std::_Exit(0);  // no atexit handlers or static destructors of the parent's state
  }
  ::close(fds[1]);
  std::string report;
  const bool inTime =
      readUntil(fds[0], start + timeout, report, [](const std::string&) { return false; });
  ::close(fds[0]);
  if (!inTime) ::kill(pid, SIGKILL);
  const int status = waitFor(pid);
  const bool died =
      WIFSIGNALED(status) || report.empty() || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  if (!inTime || died) {
    const std::string err = errFd >= 0 ? stderrTail(errFd, 64 * 1024) : "";
    report = inTime ? deathReport(status, err) : hangReport(timeout, stderrDetail(err));
  }
  if (errFd >= 0) ::close(errFd);
  return report;
}

// Requests, each one record: 'R' then the model and its inputs as records (run it: the answer
// is a report), or 'W' (spawner only: start a worker; the answer is its pid, and its socket
// comes with it as SCM_RIGHTS).
constexpr char kRunRequest = 'R', kWorkerRequest = 'W';

std::string runRequest(const Model& model, const TensorMap& inputs) {
  std::string request(1, kRunRequest);
  putRecord(request, serializeModel(model));
  for (const auto& [name, t] : inputs) {
    putRecord(request, name);
    putRecord(request, serializeTensor(t, name));
  }
  return request;
}

// Answers run requests on `fd` with answer(model, inputs) until the other side goes away.
// `other(request)` answers the rest.
template <class Answer, class Other>
[[noreturn]] void serve(int fd, Answer answer, Other other) {
  // Crashes are re-run in a fresh child, which reports the stderr; here it would only leak.
  if (int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
  for (;;) {
    std::optional<std::string> request = readRecord(fd, Clock::time_point::max());
    if (!request || request->empty()) std::_Exit(0);  // the parent is gone
    if ((*request)[0] != kRunRequest) {
      other(*request);
      continue;
    }
    std::string report;
    try {
      size_t at = 1;
      std::string modelBytes, name, bytes;
      getRecord(*request, at, modelBytes);
      Model model = parseModel(modelBytes, "isolated request");
      TensorMap inputs;
      while (getRecord(*request, at, name) && getRecord(*request, at, bytes))
        inputs[name] = parseTensor(bytes, "isolated request");
      report = answer(model, inputs);
    } catch (const std::exception& e) {
      report.assign(1, kError);
      putRecord(report, "");  // no coverage: the engine did not run
      putRecord(report, "");  // and no optimizations
      putRecord(report, std::string("isolated worker: ") + e.what());
    }
    if (!sendRecord(fd, report)) std::_Exit(0);
  }
}

[[noreturn]] void serveAsWorker(int fd, Backend& backend) {
  serve(
      fd, [&](const Model& m, const TensorMap& in) { return runAndReport(backend, m, in); },
      [](const std::string&) { std::_Exit(1); });
}

// A server process, and this process's end of the socket to it.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  bool ours = true;  // this process waits for it (a worker the spawner started is the spawner's)
};

// Forks a child of this process running serveOn(its end of the socket).
template <class Serve>
Child forkServing(Serve serveOn) {
  int fds[2];
  socketPairOrThrow(fds);
  pid_t pid = forkOrThrow(fds);
  if (pid == 0) {
    ::close(fds[0]);
    serveOn(fds[1]);
  }
  ::close(fds[1]);
  return {pid, fds[0], true};
}

// A message of `size` bytes at `data` with room for one descriptor (SCM_RIGHTS).
struct DescriptorMessage {
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  DescriptorMessage(void* data, size_t size) : iov{data, size} {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage&) = delete;  // msg points into itself
};

// The spawner: forks a fresh child per run request (runInChild), and workers on request. It
// waits for its children; workers the parent killed are collected between requests.
[[noreturn]] void serveAsSpawner(int fd, Backend& backend, std::chrono::milliseconds timeout) {
  serve(
      fd,
      [&](const Model& m, const TensorMap& in) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        return runInChild(backend, m, in, timeout, fd);
      },
      [&](const std::string& request) {
        if (request[0] != kWorkerRequest) std::_Exit(1);
        Child worker = forkServing([&](int workerFd) {
          ::close(fd);
          serveAsWorker(workerFd, backend);
        });
        // The worker's socket travels as ancillary data of the pid's record.
        std::string framed;
        putRecord(framed, std::to_string(worker.pid));
        DescriptorMessage m(framed.data(), framed.size());
        cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &worker.fd, sizeof(int));
        const bool sent =
            ::sendmsg(fd, &m.msg, MSG_NOSIGNAL) == static_cast<ssize_t>(framed.size());
        ::close(worker.fd);
        if (!sent) std::_Exit(0);
      });
}

// Receives the record and descriptor serveAsSpawner sends for a worker request.
std::optional<Child> receiveWorker(int fd, Clock::time_point deadline) {
  pollfd p{fd, POLLIN, 0};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) != 1) return std::nullopt;
  char data[64];
  DescriptorMessage m(data, sizeof data);
  const ssize_t n = ::recvmsg(fd, &m.msg, MSG_CMSG_CLOEXEC);
  cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr;
  if (!c || c->cmsg_type != SCM_RIGHTS) return std::nullopt;
  Child worker;
  std::memcpy(&worker.fd, CMSG_DATA(c), sizeof(int));
  worker.ours = false;
  // The pid's record came whole with the descriptor (a short message, one send).
  std::string buffer(data, static_cast<size_t>(n)), pid;
  size_t pos = 0;
  if (!getRecord(buffer, pos, pid)) {
    ::close(worker.fd);
    return std::nullopt;
  }
  worker.pid = static_cast<pid_t>(std::atol(pid.c_str()));
  return worker;
}

}  // namespace

// A process answering this one's requests over a socket, one at a time: the spawner, forked from
// this process at its first use, forks a fresh child per run; the persistent worker, started by
// the spawner, runs case after case itself. So this process, large and busy, forks once: after
// a fork every page it writes faults again (copy on write), and on some machines (13 us a fault
// here) that cost campaigns more than the engine's runs did.
class Isolated::Server {
 public:
  explicit Server(std::function<Child()> launch) : launch_(std::move(launch)) {}
  ~Server() { stop(); }

  // The answer to a request; nullopt when the server died or did not answer by the deadline (it
  // is then stopped, and the next request starts a new one).
  std::optional<std::string> ask(const std::string& request, Clock::time_point deadline) {
    if (child_.pid <= 0) child_ = launch_();
    std::optional<std::string> answer;
    if (sendRecord(child_.fd, request)) answer = readRecord(child_.fd, deadline);
    if (!answer || answer->empty()) {
      stop();
      return std::nullopt;
    }
    return answer;
  }

  // A worker started by this spawner; nullopt when the spawner cannot.
  std::optional<Child> startWorker(Clock::time_point deadline) {
    if (child_.pid <= 0) child_ = launch_();
    std::optional<Child> worker;
    if (sendRecord(child_.fd, std::string(1, kWorkerRequest)))
      worker = receiveWorker(child_.fd, deadline);
    if (!worker) stop();
    return worker;
  }

 private:
  void stop() {
    if (child_.pid <= 0) return;
    ::close(child_.fd);
    ::kill(child_.pid, SIGKILL);
    if (child_.ours) waitFor(child_.pid);
    child_ = {};
  }

  std::function<Child()> launch_;
  Child child_;
};

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
  spawner_ = std::make_shared<Server>([&backend, timeout] {
    return forkServing([&](int fd) { serveAsSpawner(fd, backend, timeout); });
  });
  if (mode == Isolation::Persistent)
    worker_ = std::make_shared<Server>([spawner = spawner_, &backend] {
      if (std::optional<Child> w = spawner->startWorker(Clock::now() + kSpawnerGrace)) return *w;
      return forkServing([&](int fd) { serveAsWorker(fd, backend); });  // no spawner: fork here
    });
}

Isolated isolated(Backend& backend, std::chrono::milliseconds timeout, Isolation mode) {
  return Isolated(backend, timeout, mode);
}

RunOutcome Isolated::run(const Model& model, const TensorMap& inputs) const {
  const auto start = Clock::now();
  const std::string request = runRequest(model, inputs);
  std::optional<std::string> report;
  if (worker_) report = worker_->ask(request, start + timeout_);
  // No worker, or it died or hung: the case alone, in a fresh child.
  if (!report) report = spawner_->ask(request, Clock::now() + timeout_ + kSpawnerGrace);
  // The spawner died too: a child of this process.
  if (!report) report = runInChild(backend_, model, inputs, timeout_, -1);
  RunOutcome r;
  decodeReport(*report, r);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace nncheck
