#include "cli/engines.h"

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/oracle.h"
#include "nncheck/worker_engine.h"

namespace nncheck::cli {
namespace {

void loadLibraries(const std::vector<std::string>& libraries) {
  loadEngineLibrariesFromEnvironment();
  for (const std::string& lib : libraries) loadEngineLibrary(lib);
}

void loadSelection(const EngineSelection& s) {
  if (!s.workerError.empty()) throw Error(s.workerError);
  loadLibraries(s.libraries);
}

std::string availableNames() {
  std::string s;
  for (const std::string& n : engines().available()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

void addEngineSelection(CLI::App* cmd, EngineSelection& s, const std::string& defaultBackend) {
  s.backend = defaultBackend;
  cmd->add_option("--backend", s.backend,
                  "engine, by its registered name (built in: " + availableNames() +
                      "; `nncheck engines` lists them)")
      ->capture_default_str();
  cmd->add_option("--engine-lib", s.libraries,
                  "a shared library of engines to load (repeatable; also NNCHECK_ENGINE_LIBS, "
                  "separated by ':')")
      ->allow_extra_args(false);  // one value each time: a positional after it stays one
  cmd->add_option("--engine-worker", s.worker,
                  "a program serving an engine over nncheck's worker protocol, as one "
                  "shell-quoted command line ('python3 my_engine.py'; docs/worker-protocol.md); "
                  "--backend defaults to the name it gives")
      ->option_text("COMMAND");
  const CLI::Option* backend = cmd->get_option("--backend");
  cmd->parse_complete_callback([&s, backend] {
    if (s.worker.empty()) return;
    try {
      loadLibraries(s.libraries);  // first: a library's engine may not be named by a worker
      const std::string name = addWorkerEngine(s.worker);
      if (backend->count() == 0)
        s.backend = name;
      else if (s.backend != name)
        s.workerError = "--engine-worker '" + s.worker + "' serves the engine '" + name +
                        "', but --backend names '" + s.backend + "'";
    } catch (const Error& e) {
      s.workerError = std::string("--engine-worker: ") + e.what();
    }
  });
}

std::unique_ptr<Backend> makeEngine(const EngineSelection& s, const std::string& config) {
  loadSelection(s);
  try {
    return engines().make(s.backend, config);
  } catch (const Error& e) {
    throw Error("--backend " + s.backend + (config.empty() ? "" : " --config " + config) + ": " +
                e.what());
  }
}

std::vector<std::string> engineConfigurations(const EngineSelection& s) {
  loadSelection(s);
  try {
    return engines().configurations(s.backend);
  } catch (const Error& e) {
    throw Error("--backend " + s.backend + ": " + e.what());
  }
}

int reportSetUpError(const std::string& command, const SetUpError& e, const std::string& backend) {
  std::cerr << "nncheck " << command << ": error: " << printable(e.what()) << "\n";
  std::string install;
  try {
    install = engines().at(backend).install;
  } catch (const Error&) {  // an engine of no registered name says nothing more
  }
  if (!install.empty() && std::string(e.what()).find(install) == std::string::npos)
    std::cerr << "nncheck " << command << ": install what it needs with " << printable(install)
              << "\n";
  std::cerr << "nncheck " << command << ": nothing was run or saved\n";
  return 2;
}

void addEnginesCommand(CLI::App& app) {
  auto libraries = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "engines", "List the engines this nncheck can drive, with their configurations.");
  cmd->add_option("--engine-lib", *libraries,
                  "a shared library of engines to load first (repeatable)")
      ->allow_extra_args(false);
  cmd->callback([libraries] {
    try {
      loadLibraries(*libraries);
      // Every engine is listed, each loaded in turn; one whose plug-in does not load is named
      // with the reason, and the others are still listed.
      int status = 0;
      for (const std::string& name : engines().available()) {
        try {
          const EngineInfo& e = engines().at(name);
          std::printf("%-12s %s\n", printable(name).c_str(), printable(e.description).c_str());
          std::string configs;
          for (const std::string& c : engines().configurations(name))
            if (!c.empty()) configs += (configs.empty() ? "" : "  ") + c;
          if (!configs.empty())
            std::printf("%-12s configurations here: %s\n", "", printable(configs).c_str());
        } catch (const Error& e) {
          std::fflush(stdout);
          std::cerr << "nncheck engines: error: " << printable(e.what()) << "\n";
          status = 2;
        }
      }
      setExitCode(status);
    } catch (const Error& e) {
      std::cerr << "nncheck engines: error: " << printable(e.what()) << "\n";
      setExitCode(2);
    }
  });
}

void addOraclesCommand(CLI::App& app) {
  auto libraries = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "oracles",
      "List the oracles cases can be judged against (--oracle of fuzz, reduce and "
      "corpus check).");
  cmd->add_option("--engine-lib", *libraries,
                  "a shared library of engines and oracles to load first (repeatable)")
      ->allow_extra_args(false);
  cmd->callback([libraries] {
    try {
      loadLibraries(*libraries);
      for (const std::string& name : oracles().names()) {
        const OracleInfo& o = oracles().at(name);
        std::printf("%-14s %s%s\n", name.c_str(), o.description.c_str(),
                    o.needsBaseline ? " (needs the engine's baseline configuration)" : "");
      }
      setExitCode(0);
    } catch (const Error& e) {
      std::cerr << "nncheck oracles: error: " << printable(e.what()) << "\n";
      setExitCode(2);
    }
  });
}

}  // namespace nncheck::cli
