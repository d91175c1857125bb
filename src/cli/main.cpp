// nncheck: the command line. Subcommands live in their own files (run_command.cpp, ...).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "backends/process_tree.h"
#include "cli/commands.h"
#include "cli/engines.h"
#include "cli/interrupt.h"
#include "core/deadline.h"
#include "nncheck/engine.h"
#include "nncheck/reference.h"

namespace {
// The built-in engines' plug-ins: in engines/ beside the program in a build tree, and under the
// library folder once installed (NNCHECK_PLUGINS_FROM_BIN, relative to the program's folder).
void addBuiltInEngineFolders() {
  std::error_code ec;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return;  // no /proc: only engines named with --engine-lib
  const std::filesystem::path folder = program.parent_path();
  nncheck::addEnginePluginFolder((folder / "engines").string());
  nncheck::addEnginePluginFolder((folder / NNCHECK_PLUGINS_FROM_BIN).lexically_normal().string());
}
}  // namespace

namespace {
int run(int argc, char** argv);
}  // namespace

int main(int argc, char** argv) {
  // Nothing nncheck starts outlives it: orphans its workers leave come to it, and are ended with
  // the rest at its exit; a signal that ends it takes its temporary folders along.
  nncheck::adoptOrphans();
  nncheck::cli::removeTemporariesOnSignals();
  const int code = run(argc, argv);
  nncheck::killDescendantsOfThisProcess();
  return code;
}

namespace {
int run(int argc, char** argv) {
  addBuiltInEngineFolders();
  CLI::App app{"nncheck: property-based testing for deep-learning compilers"};
  app.set_version_flag("--version", std::string("nncheck ") + NNCHECK_VERSION);
  app.require_subcommand(1);
  // Options of the program as a whole, accepted after any subcommand too.
  app.fallthrough();
  app.add_option_function<int64_t>(
         "--memory-limit", [](int64_t mib) { nncheck::setMemoryLimit(mib << 20); },
         "MiB one run may hold, of the reference interpreter or of an engine's processes (and "
         "its reply); a case needing more is skipped as unsupported (default " +
             std::to_string(nncheck::kDefaultMemoryLimit >> 20) + ")")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->option_text("MIB");
  app.add_option_function<double>(
         "--reference-timeout",
         [](double s) {
           nncheck::setReferenceTimeLimit(nncheck::timeLimitFromSeconds("--reference-timeout", s));
         },
         "seconds one run of the reference interpreter may take; a case needing longer is "
         "skipped as unsupported (default " +
             std::to_string(nncheck::kDefaultReferenceTimeLimit.count() / 1000) +
             "; engines have their commands' --timeout)")
      ->option_text("SECONDS");
  nncheck::cli::addRunCommand(app);
  nncheck::cli::addGenCommand(app);
  nncheck::cli::addProbeCommand(app);
  nncheck::cli::addFuzzCommand(app);
  nncheck::cli::addReduceCommand(app);
  nncheck::cli::addEnginesCommand(app);
  nncheck::cli::addOraclesCommand(app);
  nncheck::cli::addShowCommand(app);
  nncheck::cli::addCorpusCommand(app);
  nncheck::cli::addReportCommand(app);
  nncheck::cli::addReproCommand(app);
  nncheck::cli::requireSoundNumbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    // Commands report nncheck's own errors; anything else still ends as a message, not abort().
    std::cerr << "nncheck: error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "nncheck: error: an exception that is no std::exception\n";
    return 1;
  }
  return nncheck::cli::exitCode();
}
}  // namespace
