// Process isolation: an engine runs in a forked child with a time limit, so a crash or a hang
// becomes a reported outcome instead of a dead test runner.
//
//   nncheck::Isolated engine = nncheck::isolated(compiler, std::chrono::seconds(10),
//                                                nncheck::Isolation::Persistent);
//   nncheck::RunOutcome r = engine.run(model, inputs);
//   if (r.kind == nncheck::Outcome::Crash) std::cerr << "signal " << r.signal << "\n";
//   // Given a maker of its configurations, the same worker runs another:
//   nncheck::Isolated o0 = nncheck::isolated(compiler, timeout, nncheck::Isolation::Persistent,
//       [](const std::string& c) { return nncheck::engines().make("mycompiler", c); }).at("O0");
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/outcome.h"

namespace nncheck {

// What one isolated run did. Pass: it returned outputs (not yet compared); Unsupported: the
// engine rejected the model (it threw nncheck::Unsupported), a limit of the engine, not a bug;
// Error: it threw anything else; Crash: a signal; Hang: past the time limit.
struct RunOutcome {
  Outcome kind = Outcome::Pass;
  TensorMap outputs;    // Pass
  std::string message;  // Unsupported, Error: the exception's message; Crash: the signal's name
  int signal = 0;       // Crash
  double seconds = 0;
  // Pass, Unsupported, Error: the coverage features the run reached in an engine compiled with
  // SanitizerCoverage (sorted; see docs/architecture.md); empty when it is not instrumented.
  std::vector<uint32_t> coverage;
  // Pass, Unsupported, Error: the engine's optimizations that changed the model
  // (Backend::optimizationsApplied), sorted; each, and each pair, is a feature in `coverage` too.
  std::vector<std::string> optimizations;
};

// How the isolated engine's process lives. ForkPerRun: a fresh child per run, nothing carried
// over. Persistent: one child serves run after run (no fork per case, so campaigns are fast);
// it is replaced when it dies, and a crash or hang is confirmed in a fresh child before it is
// reported, so state left by an earlier case cannot be blamed on this one.
enum class Isolation { ForkPerRun, Persistent };

// Makes the engine at a configuration (as EngineInfo::make does; throws for one it lacks): what
// Isolated::at runs. A maker may hand out an engine it does not own (a shared_ptr that deletes
// nothing) when that engine outlives every Isolated made with it.
using EngineMaker = std::function<std::shared_ptr<Backend>(const std::string& configuration)>;

// Runs a backend in a forked child with a time limit. The child's outputs come back through a
// socket as raw tensors; a signal is a Crash, running past the limit a Hang (the child is
// killed), an exception an Error. Fresh children are forked by a small helper process forked
// at the first run (so this process forks once, not once per run): they see the backend as it
// was then; later changes to it in this process reach only a persistent worker's replacement.
// Copies share the helper and the worker.
//
// What an engine may reach is bounded: every process it runs in works in an empty folder of its
// own under the system's temporary folder, removed when the process is gone, and outside the
// terminal's process group (Ctrl-C stops the caller, not the engine); the memory its processes
// hold, and what a run's reply may carry, stay within memoryLimit() (nncheck/reference.h,
// --memory-limit): past it the run is killed and Unsupported ("memory"), a case skipped rather
// than the machine's memory exhausted. run() refuses a model that refers to a file
// (refuseFileReferences, nncheck/onnx_io.h) with nncheck::Error.
class Isolated {
 public:
  Isolated(Backend& backend, std::chrono::milliseconds timeout,
           Isolation mode = Isolation::ForkPerRun, EngineMaker others = {});
  RunOutcome run(const Model& model, const TensorMap& inputs) const;
  // The same processes running the engine at another configuration: made by the maker here
  // (once per configuration; what it throws for one it lacks goes up) and in the engine's
  // process at its first run there. So one persistent worker serves every configuration a
  // failure is triaged at and every set of optimizations its culprit search switches off, as
  // it serves cases, and an engine served by a worker program keeps that one program (its
  // requests name their configuration). Throws nncheck::Error when no maker was given.
  Isolated at(const std::string& configuration) const;
  // The engine's name and capabilities as it gave them when isolated: what this process may ask
  // even after the engine object itself is gone (its children run their own copies).
  const std::string& engineName() const { return name_; }
  const Capabilities& engineCapabilities() const { return capabilities_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The configuration at() gave; none for the engine it was made with.
  const std::optional<std::string>& configuration() const { return configuration_; }
  Isolation mode() const { return worker_ ? Isolation::Persistent : Isolation::ForkPerRun; }

  class Server;    // a child serving runs: the worker, the spawner; copies of an Isolated share it
  struct Folders;  // where the engine's processes work; copies share them
  struct Others;   // the maker and the configurations made; copies share them

 private:
  Backend* backend_;  // this process's engine: the last resort when no server is left
  std::string name_;
  Capabilities capabilities_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds startTime_;       // the engine's (Backend::startTime)
  std::optional<std::string> configuration_;  // at(): what the engine's processes run instead
  std::shared_ptr<Folders> folders_;
  std::shared_ptr<Others> others_;
  std::shared_ptr<Server> spawner_;
  std::shared_ptr<Server> worker_;
};

// The time limit from NNCHECK_TIMEOUT (seconds, may be fractional), else 10 s.
std::chrono::milliseconds defaultTimeout();
Isolated isolated(Backend& backend, std::chrono::milliseconds timeout = defaultTimeout(),
                  Isolation mode = Isolation::ForkPerRun, EngineMaker others = {});

}  // namespace nncheck
