// Process isolation. A child process runs the backend; its report travels back as one framed
// message (a u64 length, then a status byte and length-prefixed records), its tensors as raw
// bytes sent straight from the engine's outputs and read into the outputs here.
#include "nncheck/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "backends/child_stderr.h"
#include "backends/coverage.h"
#include "backends/engine_process.h"
#include "backends/process_tree.h"
#include "backends/wire.h"
#include "core/deadline.h"
#include "core/temporary_folders.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using wire::Ending;
using wire::putBytes;

// The spawner's own work around a run (fork, wait) past the run's time limit.
constexpr std::chrono::seconds kSpawnerGrace{5};

// A report's first byte. The engine's process writes Ok, Error or Unsupported; Crash and Hang
// come from whoever watched it die (the spawner, or this process).
constexpr char kOk = 'O', kError = 'E', kUnsupported = 'U', kCrash = 'C', kHang = 'H';

// What a report from an engine's process may take: the memory its processes may hold.
uint64_t maxReportBytes() { return static_cast<uint64_t>(memoryLimit()); }

// --- what a run did: the engine's process writes it, the watcher reads it ---

// The status, the coverage features the run reached (backends/coverage.h; none when the engine
// is not instrumented), the optimizations that changed the model, then the outputs or the
// message. The outputs are held here until sent.
struct RunReport {
  char status = kOk;
  std::vector<uint32_t> features;
  std::string applied;  // one name per line
  TensorMap outputs;
  std::string message;

  bool send(int fd) const {
    wire::Message m;
    std::string head(1, status);
    putBytes(head, std::string_view(reinterpret_cast<const char*>(features.data()),
                                    features.size() * sizeof(uint32_t)));
    putBytes(head, applied);
    if (status != kOk) putBytes(head, message);
    m.own(std::move(head));
    if (status == kOk)
      for (const auto& [name, t] : outputs) wire::putTensor(m, name, t);
    return m.send(fd);
  }
};

RunReport runAndReport(Backend& backend, const Model& model, const TensorMap& inputs) {
  RunReport r;
  coverage::reset();
  try {
    r.outputs = backend.run(model, inputs);
  } catch (const std::bad_alloc&) {  // past the kernel's limit (limitMemoryFromNow)
    r.status = kUnsupported;
    r.message = "memory: the engine could not allocate within the memory limit of " +
                std::to_string(memoryLimit() >> 20) + " MiB (--memory-limit); the case is skipped";
  } catch (const Unsupported& e) {
    r.status = kUnsupported;
    r.message = e.what();
  } catch (const std::exception& e) {
    r.status = kError;
    r.message = e.what();
  } catch (...) {
    r.status = kError;
    r.message = "unknown exception";
  }
  if (r.status != kOk) r.outputs.clear();
  r.features = coverage::collect();
  try {
    for (const std::string& name : backend.optimizationsApplied()) r.applied += name + '\n';
  } catch (...) {  // the engine cannot tell: nothing known
    r.applied.clear();
  }
  return r;
}

// A report the watcher writes for an engine it stopped or saw die: a status with no coverage,
// no optimizations and the message (a crash's signal first).
std::string watcherReport(char status, const std::string& message, int signal = 0) {
  std::string report(1, status);
  if (status == kCrash) {
    putBytes(report, std::to_string(signal));
  } else if (status != kHang) {
    putBytes(report, "");  // no coverage: the run was cut short
    putBytes(report, "");  // and no optimizations known
  }
  putBytes(report, message);
  return report;
}

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The report of a run its watcher stopped for memory (what its processes held, or what their
// reply claimed, `bytes`, past `limit`); none when it ended otherwise.
std::optional<std::string> memoryReport(Ending ending, int64_t bytes, int64_t limit) {
  if (ending != Ending::OverMemory && ending != Ending::TooLarge) return std::nullopt;
  return watcherReport(kUnsupported,
                       "memory: the engine's processes " +
                           std::string(ending == Ending::OverMemory ? "held " : "replied with ") +
                           mib(bytes) + ", past the memory limit of " + mib(limit) +
                           " (--memory-limit); the case is skipped");
}

RunOutcome decodeReport(wire::Reader& in) {
  RunOutcome r;
  const char status = in.get<char>();
  if (status == kOk || status == kError || status == kUnsupported) {
    const std::string_view features = in.bytes();
    if (features.size() % sizeof(uint32_t) != 0)
      throw Error("isolated run: truncated coverage in the report from the engine's process");
    r.coverage.resize(features.size() / sizeof(uint32_t));
    if (!features.empty())  // (memcpy from an empty vector's null data is undefined)
      std::memcpy(r.coverage.data(), features.data(), features.size());
    const std::string applied(in.bytes());
    for (size_t from = 0; from < applied.size();) {
      const size_t to = applied.find('\n', from);
      r.optimizations.push_back(applied.substr(from, to - from));
      from = to == std::string::npos ? applied.size() : to + 1;
    }
    coverage::addOptimizationFeatures(r.optimizations, r.coverage);
  }
  switch (status) {
    case kOk:
      while (in.left() > 0) {
        std::string name;
        Tensor t = wire::takeTensor(in, name);
        r.outputs[name] = std::move(t);
      }
      return r;
    case kError:
    case kUnsupported:
    case kHang:
      r.kind = status == kError  ? Outcome::Error
               : status == kHang ? Outcome::Hang
                                 : Outcome::Unsupported;
      r.message = std::string(in.bytes());
      return r;
    case kCrash:
      r.kind = Outcome::Crash;
      r.signal = std::atoi(std::string(in.bytes()).c_str());
      r.message = std::string(in.bytes());
      return r;
    default:
      throw Error("isolated run: a report of unknown status from the engine's process");
  }
}

RunOutcome decodeReport(std::string_view report) {
  wire::Reader in(report, "isolated run");
  RunOutcome r = decodeReport(in);
  if (in.left() > 0) throw Error("isolated run: a report holds bytes past its end");
  return r;
}

// --- the engine's processes' folders ---

// Every process an engine runs in works in an empty folder of its own, removed once the process
// is gone, so that nothing a model names by a relative path reaches nncheck's folder or the
// user's, and nothing an engine leaves there stays. They sit in one folder per Isolated, a
// temporary folder <TMPDIR>/nncheck-engines-<pid>-XXXXXX (core/temporary_folders.h) made at its
// first run and removed with its last copy, or by a signal that ends this process; one a killed
// process left is removed by the next that makes one.
class EngineFolders {
 public:
  EngineFolders() = default;
  EngineFolders(const EngineFolders&) = delete;
  EngineFolders& operator=(const EngineFolders&) = delete;
  ~EngineFolders() {
    if (!root_.empty()) removeTemporaryFolder(root_);
  }
  const std::string& root() {
    if (root_.empty()) root_ = makeTemporaryFolder("nncheck-engines");
    return root_;
  }

 private:
  std::string root_;
};

// A new empty folder for one engine process, inside `root`.
std::string newProcessFolder(const std::string& root) {
  std::string pattern = root + "/process-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error("isolated run: cannot make a folder for the engine's process in " + root + ": " +
                std::strerror(errno));
  return pattern;
}

void removeFolder(const std::string& folder) {
  std::error_code ec;
  if (!folder.empty()) fs::remove_all(folder, ec);
}

// In a freshly forked engine process: into its own folder, and, unless its parent already is,
// into a process group of its own, so that the terminal's Ctrl-C reaches the campaign (which
// stops and reports) and not the engine (whose death would be a crash). Only async-signal-safe
// calls: the process forking it may have threads.
// engineProcessFolder(): set in the engine's process alone, by a copy (no allocation after fork).
char engineFolder[4096] = {};

void becomeEngineProcess(const std::string& folder, bool newGroup) {
  if (newGroup) ::setpgid(0, 0);
  // What it starts ends with it (a worker's children, and the orphans they leave), and what it
  // allocates stays within the memory limit, which the kernel enforces.
  adoptOrphans();
  limitMemoryFromNow(memoryLimit());
  if (folder.size() < sizeof engineFolder)
    std::memcpy(engineFolder, folder.c_str(), folder.size() + 1);
  if (::chdir(folder.c_str()) != 0) {
    constexpr char kWhy[] = "nncheck: cannot enter the engine process's folder\n";
    (void)!::write(STDERR_FILENO, kWhy, sizeof kWhy - 1);
    ::_exit(125);
  }
}

// --- a child's death ---

int waitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// The report of a child that died with `status`, having written `err` to its stderr.
std::string deathReport(int status, const std::string& err) {
  const std::string detail = stderrDetail(err);
  auto signalText = [](int signal) {
    return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  };
  if (WIFSIGNALED(status))
    return watcherReport(kCrash, "killed by " + signalText(WTERMSIG(status)) + detail,
                         WTERMSIG(status));
  // A sanitizer that ends the process at an allocation past the kernel's memory limit
  // (limitMemoryFromNow) says so: the case's size, not the engine's crash.
  if (err.find("Sanitizer") != std::string::npos && saysOutOfMemory(err))
    return watcherReport(kUnsupported,
                         "memory: the engine could not allocate within the memory "
                         "limit of " +
                             mib(memoryLimit()) + " (--memory-limit)" + detail);
  // The same crash in a sanitized build: the signal, not the sanitizer's exit status.
  if (const int signal = signalCaughtBySanitizer(err))
    return watcherReport(kCrash, signalText(signal) + ", caught by a sanitizer" + detail, signal);
  return watcherReport(kCrash, "the engine exited with status " +
                                   std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                   " without a result" + detail);
}

std::string hangReport(std::chrono::milliseconds timeout, const std::string& detail) {
  return watcherReport(kHang,
                       "no result within " + std::to_string(timeout.count()) + " ms" + detail);
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

// Forks a child of this process that runs the backend once, in a folder of its own inside
// `root`; returns its report, or a crash, hang or memory report with the last lines the child
// wrote to stderr. `alsoClose`: a descriptor the child must not keep (the spawner's socket, so
// that the spawner's death is seen at once). `newGroup`: the child leaves this process's group
// (this process is not the spawner, which left it already).
std::string runInChild(Backend& backend, const Model& model, const TensorMap& inputs,
                       std::chrono::milliseconds timeout, int alsoClose, const std::string& root,
                       bool newGroup) {
  const std::string folder = newProcessFolder(root);
  int fds[2];
  socketPairOrThrow(fds);
  // The child's stderr (glibc's "corrupted size" and the like) goes into the crash report
  // instead of the terminal; its tail alone is kept, whatever it writes.
  ChildStderr stderrOf(64 * 1024);
  const auto start = Clock::now();
  pid_t pid = forkOrThrow(fds);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a hanging child does not outlive its watcher
    if (alsoClose >= 0) ::close(alsoClose);
    if (stderrOf.writeEnd() >= 0) ::dup2(stderrOf.writeEnd(), STDERR_FILENO);
    ::close(fds[0]);
    becomeEngineProcess(folder, newGroup);
    runAndReport(backend, model, inputs).send(fds[1]);
    ::close(fds[1]);
    killDescendantsOfThisProcess();  // a worker the engine started, and what that started
    std::_Exit(0);  // no atexit handlers or static destructors of the parent's state
  }
  stderrOf.started();
  ::close(fds[1]);
  const wire::ProcessWatch watch{pid, memoryLimit()};
  wire::Frame f;
  try {
    f = wire::readFrame(fds[0], start + timeout, maxReportBytes(), &watch);
  } catch (...) {  // the time box or an interrupt: the run is abandoned
    ::close(fds[0]);
    killProcessTree(pid);
    waitFor(pid);
    removeFolder(folder);
    throw;
  }
  ::close(fds[0]);
  // A child that sent its report ends at once; one that does not is stopped like a hang's.
  std::optional<int> exited =
      f.ending == Ending::Whole ? waitForExit(pid, Clock::now() + kSpawnerGrace) : std::nullopt;
  if (!exited) {
    killProcessTree(pid);
    exited = waitFor(pid);
  }
  const int status = *exited;
  removeFolder(folder);
  const std::string err = stderrOf.take();
  const bool died = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  if (std::optional<std::string> memory = memoryReport(f.ending, f.bytes, watch.limit))
    return *memory;
  if (f.ending == Ending::Late) return hangReport(timeout, stderrDetail(err));
  if (f.ending == Ending::Whole && !died) return std::move(f.body);
  return deathReport(status, err);
}

// Requests, each one framed message: 'R' then the configuration, the model and its inputs as
// records (run it: the answer is a report), or 'W' (spawner only: start a worker; the answer is
// its pid, and its socket comes with it as SCM_RIGHTS). The configuration's record is empty for
// the engine the server was made with, else '@' and the configuration (Isolated::at).
constexpr char kRunRequest = 'R', kWorkerRequest = 'W';

std::string runRequest(const std::optional<std::string>& configuration, const Model& model,
                       const TensorMap& inputs) {
  std::string request(1, kRunRequest);
  putBytes(request, configuration ? "@" + *configuration : std::string());
  putBytes(request, serializeModel(model));
  for (const auto& [name, t] : inputs) {
    putBytes(request, name);
    putBytes(request, serializeTensor(t, name));
  }
  return request;
}

}  // namespace

// The maker of an Isolated's other configurations, and those made in this process (a server's
// copy, after the fork, makes its own the first time a run names one).
struct Isolated::Others {
  EngineMaker make;
  std::map<std::string, std::shared_ptr<Backend>> made;

  Backend& at(const std::string& configuration) {
    std::shared_ptr<Backend>& engine = made[configuration];
    if (!engine) engine = make(configuration);
    if (!engine)
      throw Error("isolated: no engine made for the configuration '" + configuration + "'");
    return *engine;
  }
};

namespace {

// The engine a run request names: the server's own, or another configuration made by `others`.
Backend& engineFor(Backend& own, Isolated::Others* others,
                   const std::optional<std::string>& configuration) {
  if (!configuration) return own;
  if (!others || !others->make) throw Error("isolated: no maker of other configurations");
  return others->at(*configuration);
}

// Answers run requests on `fd` with answer(configuration, model, inputs, fd), which sends the
// report itself, until the other side goes away. `other(request)` answers the rest.
template <class Answer, class Other>
[[noreturn]] void serve(int fd, Answer answer, Other other) {
  // Crashes are re-run in a fresh child, which reports the stderr; here it would only leak.
  if (int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDERR_FILENO);
  // Its parent gone (the socket closed): so are the processes it started, then it.
  const auto end = [] {
    killDescendantsOfThisProcess();
    std::_Exit(0);
  };
  for (;;) {
    wire::Frame request = wire::readFrame(fd, Clock::time_point::max(), UINT64_MAX);
    if (request.ending != Ending::Whole || request.body.empty()) end();
    if (request.body[0] != kRunRequest) {
      other(request.body);
      continue;
    }
    bool sent = false;
    try {
      wire::Reader in(std::string_view(request.body).substr(1), "isolated request");
      const std::string_view named = in.bytes();
      std::optional<std::string> configuration;
      if (!named.empty()) configuration = std::string(named.substr(1));
      Model model = parseModel(std::string(in.bytes()), "isolated request");
      TensorMap inputs;
      while (in.left() > 0) {
        const std::string name(in.bytes());
        inputs[name] = parseTensor(std::string(in.bytes()), "isolated request");
      }
      sent = answer(configuration, model, inputs, fd);
    } catch (const std::exception& e) {
      sent =
          wire::sendFrame(fd, watcherReport(kError, std::string("isolated worker: ") + e.what()));
    }
    if (!sent) end();
  }
}

[[noreturn]] void serveAsWorker(int fd, Backend& backend, Isolated::Others* others) {
  serve(
      fd,
      [&](const std::optional<std::string>& configuration, const Model& m, const TensorMap& in,
          int to) {
        return runAndReport(engineFor(backend, others, configuration), m, in).send(to);
      },
      [](const std::string&) { std::_Exit(1); });
}

// A server process, this process's end of the socket to it, and the folder it works in (its
// remover's to remove once it is gone).
struct Child {
  pid_t pid = -1;
  int fd = -1;
  bool ours = true;  // this process waits for it (a worker the spawner started is the spawner's)
  std::string folder;
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
  return {pid, fds[0], true, ""};
}

// A worker of `backend` (and of the configurations `others` makes), forked here, working in a
// folder of its own inside `root`.
Child forkWorker(Backend& backend, Isolated::Others* others, const std::string& root, int alsoClose,
                 bool newGroup) {
  const std::string folder = newProcessFolder(root);
  Child worker = forkServing([&](int workerFd) {
    if (alsoClose >= 0) ::close(alsoClose);
    becomeEngineProcess(folder, newGroup);
    serveAsWorker(workerFd, backend, others);
  });
  worker.folder = folder;
  return worker;
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
// waits for its children; workers the parent killed are collected between requests, and their
// folders removed. It leaves the terminal's process group: its children are engine processes.
[[noreturn]] void serveAsSpawner(int fd, Backend& backend, Isolated::Others* others,
                                 std::chrono::milliseconds timeout, const std::string& root) {
  ::setpgid(0, 0);
  adoptOrphans();  // what an engine's process left behind is the spawner's to end
  std::map<pid_t, std::string> workerFolders;
  auto reap = [&] {
    for (pid_t pid; (pid = ::waitpid(-1, nullptr, WNOHANG)) > 0;)
      if (auto it = workerFolders.find(pid); it != workerFolders.end()) {
        removeFolder(it->second);
        workerFolders.erase(it);
      }
  };
  serve(
      fd,
      [&](const std::optional<std::string>& configuration, const Model& m, const TensorMap& in,
          int to) {
        reap();
        std::string report;
        try {  // (made here, before the fork: each later child has it made)
          Backend& engine = engineFor(backend, others, configuration);
          report = runInChild(engine, m, in, timeout, fd, root, false);
        } catch (const Error& e) {
          report = watcherReport(kError, std::string("isolated spawner: ") + e.what());
        }
        return wire::sendFrame(to, report);
      },
      [&](const std::string& request) {
        if (request[0] != kWorkerRequest) std::_Exit(1);
        reap();
        const Child worker = forkWorker(backend, others, root, fd, false);
        workerFolders[worker.pid] = worker.folder;
        // The worker's socket travels as ancillary data of the pid's record.
        std::string framed;
        putBytes(framed, std::to_string(worker.pid));
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
  wire::Reader in(std::string_view(data, static_cast<size_t>(n)), "the spawner");
  try {
    worker.pid = static_cast<pid_t>(std::atol(std::string(in.bytes()).c_str()));
  } catch (const Error&) {
    ::close(worker.fd);
    return std::nullopt;
  }
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
  // `watched`: the server runs the engine itself (a worker), so its memory is watched here.
  Server(std::function<Child()> launch, bool watched)
      : launch_(std::move(launch)), watched_(watched) {}
  ~Server() { stop(); }

  // What the run a request asked for did, read as it arrives; nullopt when the server died, did
  // not answer by the deadline or (a worker) went past the memory limit: it is then stopped, and
  // the next request starts a new one. A server started for this request has `startTime` more.
  std::optional<RunOutcome> ask(const std::string& request, Clock::time_point deadline,
                                std::chrono::milliseconds startTime) {
    try {
      return askOnce(request, deadline, startTime);
    } catch (...) {
      stop();  // what it was sending is no longer read: the next request needs a fresh one
      throw;
    }
  }

  // A worker started by this spawner; nullopt when the spawner cannot.
  std::optional<Child> startWorker(Clock::time_point deadline) {
    if (child_.pid <= 0) child_ = launch_();
    std::optional<Child> worker;
    if (wire::sendFrame(child_.fd, std::string(1, kWorkerRequest)))
      worker = receiveWorker(child_.fd, deadline);
    if (!worker) stop();
    return worker;
  }

 private:
  std::optional<RunOutcome> askOnce(const std::string& request, Clock::time_point deadline,
                                    std::chrono::milliseconds startTime) {
    if (child_.pid <= 0) {
      child_ = launch_();
      deadline += startTime;
    }
    std::optional<wire::ProcessWatch> watch;
    if (watched_) watch = wire::ProcessWatch{child_.pid, memoryLimit()};
    const wire::ProcessWatch* watching = watch ? &*watch : nullptr;
    // A spawner's answer is the report of a child it watched itself, at most that large.
    const uint64_t most = maxReportBytes() + (watched_ ? 0 : 1 << 20);
    wire::Length length;
    length.ending = Ending::Gone;
    if (wire::sendFrame(child_.fd, request))
      length = wire::readLength(child_.fd, deadline, most, watching);
    if (length.ending == Ending::Whole && length.value > 0) {
      wire::Reader in(child_.fd, length.value, deadline, watching, "isolated run");
      // An Error (what it sent is no report) goes up through ask(), which stops the server, so
      // that the rest of it is never read as the next report.
      try {
        RunOutcome r = decodeReport(in);
        if (in.left() > 0) throw Error("isolated run: a report holds bytes past its end");
        return r;
      } catch (const wire::CutShort&) {  // as below
      }
    }
    // Died, late, or past the memory limit: judged again in a fresh process, which the spawner
    // watches alone (a worker's memory may be what earlier cases left, as its crashes may).
    stop();
    return std::nullopt;
  }

  void stop() {
    if (child_.pid <= 0) return;
    ::close(child_.fd);
    killProcessTree(child_.pid);  // with the engine's processes and what they started
    if (child_.ours) {
      waitFor(child_.pid);
      removeFolder(child_.folder);
    }
    child_ = {};
  }

  std::function<Child()> launch_;
  bool watched_;
  Child child_;
};

const char* engineProcessFolder() { return engineFolder[0] ? engineFolder : nullptr; }

std::chrono::milliseconds defaultTimeout() {
  if (const char* s = std::getenv("NNCHECK_TIMEOUT")) {
    char* end = nullptr;
    const double secs = std::strtod(s, &end);
    const std::string what = std::string("NNCHECK_TIMEOUT='") + s + "'";
    if (end == s || *end != '\0') throw Error(what + ": expected a number of seconds");
    return timeLimitFromSeconds(what, secs);
  }
  return std::chrono::seconds(10);
}

// The engine processes' folders of one Isolated and its copies (see EngineFolders).
struct Isolated::Folders : EngineFolders {};

Isolated::Isolated(Backend& backend, std::chrono::milliseconds timeout, Isolation mode,
                   EngineMaker others)
    : backend_(&backend),
      name_(backend.name()),
      capabilities_(backend.capabilities()),
      timeout_(timeout),
      startTime_(backend.startTime()),
      folders_(std::make_shared<Folders>()),
      others_(std::make_shared<Others>(Others{std::move(others), {}})) {
  // The servers hold the folders too: they are removed after the last server's processes end.
  spawner_ = std::make_shared<Server>(
      // Each of the spawner's children starts the engine afresh.
      [&backend, timeout = timeout + startTime_, folders = folders_, others = others_] {
        const std::string root = folders->root();
        return forkServing(
            [&](int fd) { serveAsSpawner(fd, backend, others.get(), timeout, root); });
      },
      false);
  if (mode == Isolation::Persistent)
    worker_ = std::make_shared<Server>(
        [spawner = spawner_, &backend, folders = folders_, others = others_] {
          if (std::optional<Child> w = spawner->startWorker(Clock::now() + kSpawnerGrace))
            return *w;
          // No spawner: forked here.
          return forkWorker(backend, others.get(), folders->root(), -1, true);
        },
        true);
}

Isolated Isolated::at(const std::string& configuration) const {
  if (!others_->make)
    throw Error(name_ + ": isolated with no maker of other configurations, so not at '" +
                configuration + "'");
  Isolated other = *this;
  other.backend_ = &others_->at(configuration);
  other.name_ = other.backend_->name();
  other.capabilities_ = other.backend_->capabilities();
  other.startTime_ = other.backend_->startTime();
  other.configuration_ = configuration;
  return other;
}

Isolated isolated(Backend& backend, std::chrono::milliseconds timeout, Isolation mode,
                  EngineMaker others) {
  return Isolated(backend, timeout, mode, std::move(others));
}

RunOutcome Isolated::run(const Model& model, const TensorMap& inputs) const {
  // No model handed to an engine refers to a file, whoever made it. (Not named by the engine:
  // this process may no longer have the engine its children run, only they do.)
  refuseFileReferences(model, "isolated run");
  const auto start = Clock::now();
  const std::string request = runRequest(configuration_, model, inputs);
  std::optional<RunOutcome> r;
  if (worker_) r = worker_->ask(request, start + timeout_, startTime_);
  // No worker, or it died or hung: the case alone, in a fresh child.
  if (!r) r = spawner_->ask(request, Clock::now() + timeout_ + startTime_ + kSpawnerGrace, {});
  // The spawner died too: a child of this process.
  if (!r)
    r = decodeReport(
        runInChild(*backend_, model, inputs, timeout_ + startTime_, -1, folders_->root(), true));
  r->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return std::move(*r);
}

}  // namespace nncheck
