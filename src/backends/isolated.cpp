#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "nncheck/backend.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace {

// The child's report: a status byte, then length-prefixed records.
constexpr char kOk = 'O', kError = 'E';

void writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
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

[[noreturn]] void childMain(Backend& backend, const Model& model, const TensorMap& inputs, int fd) {
  std::string report;
  try {
    TensorMap out = backend.run(model, inputs);
    report.push_back(kOk);
    for (const auto& [name, t] : out) {
      putRecord(report, name);
      putRecord(report, serializeTensor(t, name));
    }
  } catch (const std::exception& e) {
    report.assign(1, kError);
    putRecord(report, e.what());
  } catch (...) {
    report.assign(1, kError);
    putRecord(report, "unknown exception");
  }
  writeAll(fd, report);
  ::close(fd);
  std::_Exit(0);  // no atexit handlers or static destructors of the parent's state
}

}  // namespace

std::string_view outcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::Ok:
      return "ok";
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

Isolated::Isolated(Backend& backend, std::chrono::milliseconds timeout)
    : backend_(backend), timeout_(timeout) {}

Isolated isolated(Backend& backend, std::chrono::milliseconds timeout) {
  return Isolated(backend, timeout);
}

RunOutcome Isolated::run(const Model& model, const TensorMap& inputs) const {
  using Clock = std::chrono::steady_clock;
  RunOutcome r;
  int fds[2];
  if (::pipe(fds) != 0)
    throw Error(std::string("isolated run: pipe failed: ") + std::strerror(errno));
  std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  const auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("isolated run: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    childMain(backend_, model, inputs, fds[1]);
  }
  ::close(fds[1]);
  std::string report;
  bool timedOut = false;
  char buf[65536];
  for (;;) {
    auto left =
        timeout_ - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timedOut = true;
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done or dead
    report.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timedOut) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (timedOut) {
    r.kind = OutcomeKind::Hang;
    r.message = "no result within " + std::to_string(timeout_.count()) + " ms";
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.kind = OutcomeKind::Crash;
    r.signal = WTERMSIG(status);
    r.message = std::string("killed by signal ") + std::to_string(r.signal) + " (" +
                strsignal(r.signal) + ")";
    return r;
  }
  size_t pos = 1;
  if (report.empty() || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
    r.kind = OutcomeKind::Crash;
    r.message = "the engine exited with status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without a result";
    return r;
  }
  if (report[0] == kError) {
    r.kind = OutcomeKind::Error;
    if (!getRecord(report, pos, r.message)) r.message = "(truncated error message)";
    return r;
  }
  std::string name, bytes;
  while (pos < report.size()) {
    if (!getRecord(report, pos, name) || !getRecord(report, pos, bytes))
      throw Error("isolated run: truncated report from the engine's process");
    r.outputs[name] = parseTensor(bytes, "output '" + name + "' of the isolated engine");
  }
  return r;
}

}  // namespace nncheck
