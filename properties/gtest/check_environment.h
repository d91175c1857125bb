// The NNCHECK_* variables check() and the corpus tests read, each validated before anything is
// generated or replayed: a wrong value is an error naming the variable, never a failure of the
// engine under test, and never a silent default.
//
//   const CheckEnvironment env = readCheckEnvironment();   // throws nncheck::Error
//   params.maxSuccess = env.cases;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nncheck {

struct CheckEnvironment {
  std::optional<uint64_t> seed;  // NNCHECK_SEED, exact to the last digit
  int cases = 0;                 // NNCHECK_CASES, else RC_PARAMS's max_success, else the default
  double shrinkSeconds = 60;     // NNCHECK_SHRINK_SECONDS
  int shrinkSteps = 2000;        // NNCHECK_SHRINK_STEPS
  bool coverage = true;          // NNCHECK_COVERAGE=on|off
  std::string replay;            // NNCHECK_REPLAY: a saved case folder, run alone
  // Variables named like one of ours but not one (NNCHECK_CASE): said, not fatal, since scripts
  // may set variables of their own.
  std::vector<std::string> warnings;
};

// Also checks NNCHECK_TIMEOUT and NNCHECK_MAX_NODES, which the engines' isolation and the
// generator read where they are used.
CheckEnvironment readCheckEnvironment();

// RapidCheck's own configuration (RC_PARAMS), read once and without the line it prints.
void loadRapidCheckConfigurationQuietly();

}  // namespace nncheck
