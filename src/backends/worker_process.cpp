#include "backends/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backends/engine_process.h"
#include "backends/process_tree.h"
#include "core/shell_words.h"
#include "core/temporary_folders.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

// How long a worker may take to answer hello: importing a compiler (TVM, PyTorch) takes seconds.
constexpr std::chrono::seconds kHelloTime{120};
// What the facts may take.
constexpr uint64_t kMaxFactsBytes = 1 << 20;
// What of a worker's stderr is kept between two replies: its last MiB (ORT's log of the graph
// transformers that ran is a few KiB a run).
constexpr size_t kLogKept = 1 << 20;
// How long a worker that closed its output, or was killed, may take to be gone.
constexpr std::chrono::seconds kExitTime{2};

std::string lastLines(std::string text, size_t bytes) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

}  // namespace

std::string WorkerProcess::describe(const std::vector<std::string>& argv) {
  std::string who = "worker '";  // (appended: GCC 12 warns falsely on `"a" + s + "b"`)
  who += shellLine(argv);
  who += '\'';
  return who;
}

WorkerProcess::WorkerProcess(Command command)
    : command_(std::move(command)), who_(describe(command_.argv)) {
  if (command_.argv.empty() || command_.argv[0].empty())
    throw Error("worker: no command to run (an empty command line)");
}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::start() {
  // Its folder: inside the engine process's, which isolation removes with that process whatever
  // ends it; outside isolation, a temporary folder of this process's (core/temporary_folders.h),
  // removed by stop(), by a signal that ends this process, or by the next nncheck.
  if (const char* engineFolder = engineProcessFolder()) {
    std::string pattern = std::string(engineFolder) + "/worker-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw Error(who_ + ": cannot make its folder " + pattern + ": " + std::strerror(errno));
    folder_ = pattern;
  } else {
    folder_ = makeTemporaryFolder("nncheck-worker");
  }
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw Error(who_ + ": pipe: " + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error(who_ + ": pipe: " + std::strerror(errno));
  }
  log_ = std::make_unique<ChildStderr>(kLogKept);
  // A write to a worker that died must fail, not kill this process with SIGPIPE: how the worker
  // died is what matters (died()).
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<char*> argv;
  for (std::string& a : command_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int64_t memory = memoryLimit();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(who_ + ": cannot start: " + std::strerror(errno));
  if (pid == 0) {
    // It dies with the engine's process (a hang is ended by killing that process), leads a
    // process group of its own (what it starts is killed with it), and allocates within the
    // memory limit.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    if (log_->writeEnd() >= 0) ::dup2(log_->writeEnd(), 2);
    if (::chdir(folder_.c_str()) != 0) ::_exit(126);
    ::setenv("TMPDIR", folder_.c_str(), 1);
    for (const auto& [k, v] : command_.environment) ::setenv(k.c_str(), v.c_str(), 1);
    limitMemoryOfProgram(memory);
    ::execvp(argv[0], argv.data());
    const std::string why =
        std::string("nncheck: cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, why.data(), why.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group is there
  log_->started();
  ::close(in[0]);
  ::close(out[1]);
  pid_ = pid;
  toWorker_ = in[1];
  fromWorker_ = out[0];
}

void WorkerProcess::stop() {
  if (toWorker_ >= 0) ::close(toWorker_);
  if (fromWorker_ >= 0) ::close(fromWorker_);
  if (pid_ > 0) {
    killProcessTree(pid_);
    // Killed, it goes at once; one the kernel holds longer (in an uninterruptible wait) is left
    // unreaped rather than waited for.
    waitForExit(pid_, std::chrono::steady_clock::now() + kExitTime);
  }
  log_.reset();
  pid_ = toWorker_ = fromWorker_ = -1;
  if (!folder_.empty()) removeTemporaryFolder(folder_);
  folder_.clear();
}

std::string WorkerProcess::takeLog() { return log_ ? log_->take() : ""; }

void WorkerProcess::died(const std::string& during) {
  ::close(toWorker_);
  toWorker_ = -1;
  // It closed its output: it has exited, or will within kExitTime, or is made to. A process it
  // started may hold the pipe still; the worker's own end is what counts. What it started goes
  // before it is reaped, while its pid and group still name them.
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const bool stopped = !exitsBy(pid_, now() + kExitTime);
  killProcessTree(pid_);
  const int status = waitForExit(pid_, now() + kExitTime).value_or(0);
  const std::string log = takeLog();
  pid_ = -1;
  stop();
  if (stopped) {
    std::string message = who_ + " closed its output " + during + " and did not exit within " +
                          std::to_string(kExitTime.count()) + " s; it was stopped";
    if (!log.empty()) message += ": " + lastLines(log, 4000);
    throw Error(message);
  }
  if (WIFSIGNALED(status)) {
    // The engine crashed: so does this process, with what it printed last on its stderr.
    const int sig = WTERMSIG(status);
    const std::string tail = lastLines(log, 4000);
    (void)!::write(2, tail.data(), tail.size());
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    ::_exit(128 + sig);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::string message = who_ + " exited with status " + std::to_string(code) + " " + during;
  if (!log.empty()) message += ": " + lastLines(log, 4000);
  if (!command_.install.empty())
    message += " (install what it needs with " + command_.install + ")";
  throw Error(message);
}

const worker::Facts& WorkerProcess::facts() {
  if (facts_ && pid_ > 0) return *facts_;
  if (pid_ < 0) start();
  wire::Frame f;
  try {
    if (!wire::sendFrame(toWorker_, worker::helloBody())) died("before it was greeted");
    // Its exit ends the wait, even while a process it started holds its output open.
    const wire::ProcessWatch watch{pid_};
    f = wire::readFrame(fromWorker_, wire::Clock::now() + kHelloTime, kMaxFactsBytes, &watch);
  } catch (const Error&) {
    throw;         // died() stopped it
  } catch (...) {  // the time box or an interrupt ended the wait: the worker goes with it
    stop();
    throw;
  }
  if (f.ending == wire::Ending::Gone) died("before it said its facts");
  if (f.ending != wire::Ending::Whole) {
    const std::string log = takeLog();
    stop();
    throw Error(who_ +
                (f.ending == wire::Ending::Late
                     ? " did not answer hello within " + std::to_string(kHelloTime.count()) + " s"
                     : " answered hello with a frame of " + std::to_string(f.bytes) +
                           " bytes, which is no facts") +
                (log.empty() ? "" : ": " + lastLines(log, 2000)));
  }
  try {
    facts_ = worker::readFacts(f.body, who_);
  } catch (const Error&) {
    stop();
    throw;
  }
  return *facts_;
}

worker::Reply WorkerProcess::run(const worker::RunRequest& request, const std::string& model,
                                 const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                                 std::string& log) {
  facts();
  wire::Message m;
  worker::putRun(m, request, model, inputs);
  if (!m.send(toWorker_)) died("while reading a request");
  const wire::ProcessWatch watch{pid_};
  worker::Reply reply;
  try {
    const wire::Length length =
        wire::readLength(fromWorker_, wire::Clock::time_point::max(), memoryLimit(), &watch);
    if (length.ending == wire::Ending::Gone) died("before replying");
    if (length.ending == wire::Ending::TooLarge) {
      stop();
      throw Unsupported("memory", who_ + ": its reply holds " + std::to_string(length.bytes >> 20) +
                                      " MiB, past the memory limit of " +
                                      std::to_string(memoryLimit() >> 20) +
                                      " MiB (--memory-limit)");
    }
    wire::Reader in(fromWorker_, length.value, wire::Clock::time_point::max(), &watch, who_);
    try {
      reply = worker::takeReply(in);
    } catch (const wire::CutShort&) {
      died("while replying");
    }
  } catch (const Error&) {
    if (pid_ > 0) {  // what it said was no reply: the rest of it must not be read as the next
      log = takeLog();
      stop();
    }
    throw;
  } catch (...) {  // the time box or an interrupt ended the wait
    stop();
    throw;
  }
  log = takeLog();
  return reply;
}

}  // namespace nncheck
