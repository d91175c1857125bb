// The subcommands of the nncheck command line; each adds itself to the CLI11 app and sets the
// exit code through setExitCode when it runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace nncheck::cli {

void addRunCommand(CLI::App& app);
void addGenCommand(CLI::App& app);
void addProbeCommand(CLI::App& app);
void addFuzzCommand(CLI::App& app);
void addReduceCommand(CLI::App& app);   // reduce_command.cpp
void addEnginesCommand(CLI::App& app);  // engines.cpp
void addOraclesCommand(CLI::App& app);  // engines.cpp
void addShowCommand(CLI::App& app);     // show_command.cpp
void addCorpusCommand(CLI::App& app);   // corpus_command.cpp
void addReportCommand(CLI::App& app);   // report_command.cpp
void addReproCommand(CLI::App& app);    // repro_command.cpp

// Every number option of `app` and its subcommands refuses what CLI11 would let through: NaN,
// infinities, integers past their type's range, negative unsigned ones (number_options.cpp).
void requireSoundNumbers(CLI::App& app);

void setExitCode(int code);
int exitCode();

// Says on stderr what a scan of case folders passed over ("nncheck <command>: left out <path>:
// why"), escaped for the terminal (run_command.cpp).
void sayLeftOut(const std::string& command, const std::vector<std::string>& leftOut);

}  // namespace nncheck::cli
