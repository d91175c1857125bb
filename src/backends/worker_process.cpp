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
#include "core/shell_words.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

// How long a worker may take to answer hello: importing a compiler (TVM, PyTorch) takes seconds.
constexpr std::chrono::seconds kHelloTime{120};
// What the facts may take.
constexpr uint64_t kMaxFactsBytes = 1 << 20;

// The contents of an unlinked file the worker appends to, which is then emptied.
std::string takeContents(int fd) {
  std::string out;
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size == 0) return out;
  out.resize(static_cast<size_t>(st.st_size));
  const ssize_t k = ::pread(fd, out.data(), out.size(), 0);
  out.resize(k > 0 ? static_cast<size_t>(k) : 0);
  if (::ftruncate(fd, 0) != 0) out += "\n(nncheck: could not empty the worker's log)";
  return out;
}

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
  // ends it; outside isolation, in TMPDIR, removed by stop().
  const char* engineFolder = engineProcessFolder();
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = engineFolder
                            ? std::string(engineFolder) + "/worker-XXXXXX"
                            : std::string(tmp && *tmp ? tmp : "/tmp") + "/nncheck-worker-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error(who_ + ": cannot make its folder " + pattern + ": " + std::strerror(errno));
  folder_ = pattern;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw Error(who_ + ": pipe: " + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error(who_ + ": pipe: " + std::strerror(errno));
  }
  log_ = ::open(folder_.c_str(), O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
  if (log_ < 0)
    throw Error(who_ + ": cannot make its log in " + folder_ + ": " + std::strerror(errno));
  // A write to a worker that died must fail, not kill this process with SIGPIPE: how the worker
  // died is what matters (died()).
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<char*> argv;
  for (std::string& a : command_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(who_ + ": cannot start: " + std::strerror(errno));
  if (pid == 0) {
    // It dies with the engine's process (a hang is ended by killing that process).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(log_, 2);
    if (::chdir(folder_.c_str()) != 0) ::_exit(126);
    ::setenv("TMPDIR", folder_.c_str(), 1);
    for (const auto& [k, v] : command_.environment) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(argv[0], argv.data());
    const std::string why =
        std::string("nncheck: cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, why.data(), why.size());
    ::_exit(127);
  }
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
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (log_ >= 0) ::close(log_);
  pid_ = toWorker_ = fromWorker_ = log_ = -1;
  std::error_code ec;
  if (!folder_.empty()) std::filesystem::remove_all(folder_, ec);
  folder_.clear();
}

std::string WorkerProcess::takeLog() { return takeContents(log_); }

void WorkerProcess::died(const std::string& during) {
  const std::string log = takeLog();
  int status = 0;
  ::close(toWorker_);
  toWorker_ = -1;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  stop();
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
  if (!wire::sendFrame(toWorker_, worker::helloBody())) died("before it was greeted");
  const wire::Frame f =
      wire::readFrame(fromWorker_, wire::Clock::now() + kHelloTime, kMaxFactsBytes);
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
  const wire::Length length =
      wire::readLength(fromWorker_, wire::Clock::time_point::max(), memoryLimit());
  if (length.ending == wire::Ending::Gone) died("before replying");
  if (length.ending == wire::Ending::TooLarge) {
    stop();
    throw Unsupported("memory", who_ + ": its reply holds " + std::to_string(length.bytes >> 20) +
                                    " MiB, past the memory limit of " +
                                    std::to_string(memoryLimit() >> 20) + " MiB (--memory-limit)");
  }
  wire::Reader in(fromWorker_, length.value, wire::Clock::time_point::max(), nullptr, who_);
  worker::Reply reply;
  try {
    reply = worker::takeReply(in);
  } catch (const wire::CutShort&) {
    died("while replying");
  } catch (const Error&) {
    log = takeLog();
    stop();  // the rest of what it said must not be read as the next reply
    throw;
  }
  log = takeLog();
  return reply;
}

}  // namespace nncheck
