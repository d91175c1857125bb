// nncheck: the command line. Subcommands live in their own files (run_command.cpp, ...).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"nncheck: property-based testing for deep-learning compilers"};
  app.set_version_flag("--version", std::string("nncheck ") + NNCHECK_VERSION);
  app.require_subcommand(1);
  nncheck::cli::addRunCommand(app);
  nncheck::cli::addGenCommand(app);
  nncheck::cli::addProbeCommand(app);
  nncheck::cli::addFuzzCommand(app);
  nncheck::cli::addReduceCommand(app);
  nncheck::cli::addEnginesCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    // Commands report nncheck's own errors; anything else still ends as a message, not abort().
    std::cerr << "nncheck: error: " << e.what() << "\n";
    return 1;
  }
  return nncheck::cli::exitCode();
}
