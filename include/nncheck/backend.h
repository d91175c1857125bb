// Backends: an engine under test (or the reference) behind one interface, and process
// isolation that turns a crash or a hang into a reported failure instead of a dead runner.
//
//   class MyCompiler : public nncheck::Backend {
//     std::string name() const override { return "mycompiler"; }
//     nncheck::TensorMap run(const nncheck::Model& m, const nncheck::TensorMap& in) override;
//   };
//   nncheck::RunOutcome r = nncheck::isolated(compiler).run(model, inputs);
//   if (r.kind == nncheck::OutcomeKind::Crash) std::cerr << "signal " << r.signal << "\n";
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "nncheck/generator.h"
#include "nncheck/reference.h"

namespace nncheck {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // What the engine accepts; the generator stays inside it.
  virtual Capabilities capabilities() const { return {}; }
  // Runs the model; throws to report an error (a rejected model, a failed compile...).
  virtual TensorMap run(const Model& model, const TensorMap& inputs) = 0;
};

// nncheck's reference interpreter as a backend.
class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  TensorMap run(const Model& model, const TensorMap& inputs) override {
    return runReference(model, inputs);
  }
};
Backend& reference();

// Unsupported: the engine rejected the model (it threw nncheck::Unsupported), which is a limit
// of the engine, not a bug; Error: it threw anything else.
enum class OutcomeKind { Ok, Unsupported, Error, Crash, Hang };
std::string_view outcomeKindName(OutcomeKind k);  // "ok", "unsupported", "error", "crash", "hang"

struct RunOutcome {
  OutcomeKind kind = OutcomeKind::Ok;
  TensorMap outputs;    // Ok
  std::string message;  // Unsupported, Error: the exception's message; Crash: the signal's name
  int signal = 0;       // Crash
  double seconds = 0;
};

// How the isolated engine's process lives. ForkPerRun: a fresh child per run, nothing carried
// over. Persistent: one child serves run after run (no fork per case, so campaigns are fast);
// it is replaced when it dies, and a crash or hang is confirmed in a fresh child before it is
// reported, so state left by an earlier case cannot be blamed on this one.
enum class Isolation { ForkPerRun, Persistent };

// Runs a backend in a forked child with a time limit. The child's outputs come back through a
// socket as TensorProtos; a signal is a Crash, running past the limit a Hang (the child is
// killed), an exception an Error. Fresh children are forked by a small helper process forked
// at the first run (so this process forks once, not once per run): they see the backend as it
// was then; later changes to it in this process reach only a persistent worker's replacement.
class Isolated {
 public:
  Isolated(Backend& backend, std::chrono::milliseconds timeout,
           Isolation mode = Isolation::ForkPerRun);
  RunOutcome run(const Model& model, const TensorMap& inputs) const;
  Backend& backend() const { return backend_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  Isolation mode() const { return worker_ ? Isolation::Persistent : Isolation::ForkPerRun; }

  class Server;  // a child serving runs: the worker, the spawner; copies of an Isolated share it

 private:
  Backend& backend_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<Server> spawner_;
  std::shared_ptr<Server> worker_;
};

// The time limit from NNCHECK_TIMEOUT (seconds, may be fractional), else 10 s.
std::chrono::milliseconds defaultTimeout();
Isolated isolated(Backend& backend, std::chrono::milliseconds timeout = defaultTimeout(),
                  Isolation mode = Isolation::ForkPerRun);

}  // namespace nncheck
