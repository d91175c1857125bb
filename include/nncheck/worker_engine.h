// Engines in any language: a program that speaks nncheck's worker protocol
// (docs/worker-protocol.md), such as an engine written with the Python SDK
// (python/nncheck_engine). Its facts (name, configurations, optimizations, capabilities) come
// from the program itself; it runs as a child of the engine's isolated process.
//
//   // the command line's --engine-worker 'python3 my_engine.py':
//   std::string name = nncheck::addWorkerEngine("python3 my_engine.py");
//   auto engine = nncheck::engines().make(name, "O2");
//   // in a check() property:
//   nncheck::WorkerBackend opt(nncheck::WorkerCommand::parse("python3 my_engine.py"), "O2");
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/engine.h"

namespace nncheck {

// A worker's command. Every worker nncheck starts has nncheck's Python SDK on its PYTHONPATH.
struct WorkerCommand {
  std::vector<std::string> argv;  // argv[0]: a path, or a name on PATH
  std::vector<std::pair<std::string, std::string>> environment;  // set for the worker
  std::string install;  // how to install what it needs, for the error when it does not start
  // A built-in engine's part on the host, if it has one: the run request's `options` (a JSON
  // object) for a model, such as the model translated to the language the worker runs (the
  // inductor engine's PyTorch source). May throw nncheck::Unsupported for a model it cannot
  // express. Empty: "{}".
  std::function<std::string(const Model&)> options;
  // The same engine's part of a standalone reproducer, if it has one: source put before the
  // worker's own code for a model (the model in the worker's language, which reads no ONNX).
  std::function<std::string(const Model&)> reproducerModel;

  // A command line split into words as a POSIX shell does (quotes and backslashes; no
  // expansion); throws nncheck::Error for an empty line or an unclosed quote. A word naming a
  // file by a relative path is made absolute (the worker runs in a folder of its own).
  static WorkerCommand parse(const std::string& commandLine);
  // The command line, each word shell-quoted: what a printed replay command shows.
  std::string line() const;
};

// An engine served by a worker, at one of its configurations: with ",disable=A+B" appended, the
// named optimizations switched off too (what the culprit search asks). The engines of one
// command in a process share one running worker, whose requests name their configuration.
class WorkerBackend : public Backend {
 public:
  // Starts the worker once to read its facts (unless this process has them already); throws
  // nncheck::Error naming the worker when it does not answer them, and for a configuration or
  // optimization its facts do not name.
  WorkerBackend(WorkerCommand command, const std::string& configuration = "");
  ~WorkerBackend() override;
  std::string name() const override;
  Capabilities capabilities() const override;
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  std::vector<std::string> optimizationsApplied() const override { return applied_; }
  std::vector<std::string> optimizations() const override;
  std::vector<std::string> unreportedOptimizations() const override;
  std::chrono::milliseconds startTime() const override;  // the facts' start_seconds
  // The same engine with each run served by a fork of a worker that imported the engine and ran
  // nothing (NNCHECK_WORKER_FRESH_FORKS): as fresh as a new worker, without the program's start
  // (LiteRT's import of TensorFlow, 3 s). Null unless the worker's facts say `fresh_forks`.
  std::unique_ptr<WorkerBackend> servedByFreshForks() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::vector<std::string> applied_;
};

// The EngineInfo of the engine a worker serves: `fixed`'s name, description, baseline and
// install, the rest (configurations, canonical texts, capabilities, switching optimizations off,
// the shared stage)
// from the worker's facts, read when first needed. What a built-in engine run by a worker
// registers (src/backends/tvm).
EngineInfo workerEngine(WorkerCommand command, EngineInfo fixed);

// Registers the engine a worker serves under the name its facts give (an EngineInfo whose
// configurations, baseline and optimizations are the facts'), and returns that name. The name
// follows the registry's rules: a worker may not take a built-in engine's name. Registering the
// same command line again is a no-op.
std::string addWorkerEngine(const std::string& commandLine);

// The command line of a registered worker engine, shell-quoted; "" for any other engine.
std::string workerEngineCommand(const std::string& engine);

}  // namespace nncheck
