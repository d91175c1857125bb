// The engines the command line can drive, by name and configuration text.
//
//   auto engine = nncheck::cli::makeEngine("opencv", "fusion=off");   // throws nncheck::Error
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::cli {

// "reference" (no configuration) or "opencv" ("fusion=on|off,target=cpu|opencl"); an unknown
// name, a bad configuration or an engine this build lacks is an nncheck::Error naming it.
std::unique_ptr<Backend> makeEngine(const std::string& name, const std::string& config = "");

// Every configuration of the engine this machine can run, as configuration texts (the first is
// the default); {""} for an engine without configurations.
std::vector<std::string> engineConfigurations(const std::string& name);

// Parses a non-negative number of seconds for a time limit; throws naming the option.
std::chrono::milliseconds secondsOption(const std::string& option, double seconds);

}  // namespace nncheck::cli
