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

inline CliOutcome runCli(const std::string& args) {
  CliOutcome o;
  FILE* p = popen((std::string(NNCHECK_CLI) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) o.output.append(buf.data(), n);
  int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

}  // namespace nncheck::testing
