// Runs the nncheck command as a user runs it, capturing its exit status and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace nncheck::testing {

struct CliOutcome {
  int status = -1;     // exit status, -1 when killed by a signal
  std::string output;  // stdout and stderr
};

// Runs a shell command line, capturing its exit status, stdout and stderr.
inline CliOutcome runCommand(const std::string& command) {
  CliOutcome o;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) o.output.append(buf.data(), n);
  int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

inline CliOutcome runCli(const std::string& args) {
  // Appended, not concatenated: GCC 12 at -O1 warns -Warray-bounds on `string + "x" + string`.
  std::string command = NNCHECK_CLI;
  command += ' ';
  command += args;
  return runCommand(command);
}

}  // namespace nncheck::testing
