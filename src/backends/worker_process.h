// An engine's worker (docs/worker-protocol.md): a program in any language, run as a child of
// the engine's process and spoken to over its standard input and output. Started at first use
// with its command line, greeted (its facts), asked run after run, and started again once it
// dies. It works in a folder of its own inside the engine process's (also its TMPDIR), which goes
// with that process. It runs in a process group of its own, and whatever it starts ends with it;
// what it allocates stays within the memory limit (enforced by the kernel); of what it writes to
// stderr, the last MiB since its last reply is kept, read after each reply. Every wait on it has
// a deadline; the time limit of a run comes from the isolation around the engine's process.
//
//   WorkerProcess w({.argv = {"python3", "engine.py"}, .install = "pip install ..."});
//   const worker::Facts& f = w.facts();              // throws naming the worker and the install
//   std::string log;
//   worker::Reply r = w.run({.configuration = "O2"}, model, inputs, log);
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/child_stderr.h"
#include "backends/worker_protocol.h"

namespace nncheck {

class WorkerProcess {
 public:
  struct Command {
    std::vector<std::string> argv;  // argv[0] is the program: a path, or a name on PATH
    std::vector<std::pair<std::string, std::string>> environment;  // set for it
    std::string install;  // how to install what it needs, for the error when it cannot start
  };
  explicit WorkerProcess(Command command);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // "worker 'python3 engine.py'": how errors name it.
  const std::string& who() const { return who_; }
  static std::string describe(const std::vector<std::string>& argv);

  // The engine's facts (started and greeted at first use). Throws nncheck::Error naming the
  // worker: it cannot start, exits, answers with no facts or another protocol version.
  const worker::Facts& facts();

  // Runs one request and returns the reply, read as it arrives (an output's bytes straight into
  // its tensor); `log` gets what the worker wrote to stderr meanwhile. Throws nncheck::Error
  // naming the worker when it exits or says what is not a reply (it is then stopped, and the
  // next run starts another), nncheck::Unsupported("memory") for a reply past the memory limit.
  // When a signal killed it (the engine crashed), this process dies of the same signal, so that
  // isolation reports the engine's crash as such.
  worker::Reply run(const worker::RunRequest& request, const std::string& model,
                    const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                    std::string& log);

  // Stops the worker; the next call starts another.
  void stop();

 private:
  void start();
  [[noreturn]] void died(const std::string& during);
  std::string takeLog();

  Command command_;
  std::string who_;
  std::optional<worker::Facts> facts_;
  pid_t pid_ = -1;
  int toWorker_ = -1, fromWorker_ = -1;
  std::unique_ptr<ChildStderr> log_;  // its stderr
  std::string folder_;                // its working folder and TMPDIR
};

}  // namespace nncheck
