// The engines the command line drives: the registry's (nncheck/engine.h), plus shared libraries
// named by --engine-lib or NNCHECK_ENGINE_LIBS; and the options every engine command shares.
//
//   EngineSelection sel;
//   addEngineSelection(cmd, sel, "opencv");
//   auto engine = makeEngine(sel, "fusion=off");   // loads the libraries first; throws Error
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/error.h"

namespace nncheck::cli {

struct EngineSelection {
  std::string backend;
  std::vector<std::string> libraries;  // --engine-lib, repeatable
  std::string worker;                  // --engine-worker: a command line
  std::string workerError;             // why the worker's engine could not be registered
};

// --backend (default `defaultBackend`), --engine-lib and --engine-worker on a subcommand. The
// worker named is started once when the command line is read, for its facts: its engine is
// registered under the name they give, which --backend then defaults to.
void addEngineSelection(CLI::App* cmd, EngineSelection& s, const std::string& defaultBackend);

// Loads NNCHECK_ENGINE_LIBS and the selection's libraries (each once), then builds the engine;
// an unknown name, a bad configuration, a library that does not load or a worker that does not
// answer is an nncheck::Error naming it.
std::unique_ptr<Backend> makeEngine(const EngineSelection& s, const std::string& config = "");

// Every configuration of the engine this machine can run (the first is the default); {""} for
// an engine without configurations. Loads the libraries like makeEngine.
std::vector<std::string> engineConfigurations(const EngineSelection& s);

// Says that the engine does not work here (what it said, and how to install what it needs,
// EngineInfo::install) on stderr, for `nncheck <command>`; returns the exit status, 2.
int reportSetUpError(const std::string& command, const SetUpError& e, const std::string& backend);

// nncheck engines: the registered engines, their configurations and descriptions.
void addEnginesCommand(CLI::App& app);

}  // namespace nncheck::cli
