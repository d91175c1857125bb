#include "check_environment.h"

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "nncheck/error.h"
#include "nncheck/gen.h"
#include "nncheck/gtest.h"
#include "nncheck/isolation.h"

extern char** environ;

namespace nncheck {
namespace {

// Every variable check() and the corpus tests read (the CLI's and scripts' are not here).
constexpr std::array<std::string_view, 9> kVariables = {
    "NNCHECK_SEED",    "NNCHECK_CASES",          "NNCHECK_MAX_NODES",
    "NNCHECK_CORPUS",  "NNCHECK_SHRINK_SECONDS", "NNCHECK_SHRINK_STEPS",
    "NNCHECK_TIMEOUT", "NNCHECK_REPLAY",         "NNCHECK_COVERAGE"};

const char* variable(const char* name) {
  const char* s = std::getenv(name);
  return s && *s ? s : nullptr;
}

// A whole number from 1 (or 0) up to `max`, all of the text: "1e3", "2.5" and "-1" are not.
template <class T>
std::optional<T> wholeNumber(const char* name, T min, const char* what) {
  const char* s = variable(name);
  if (!s) return std::nullopt;
  T v{};
  const std::string_view text(s);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min)
    throw Error(std::string(name) + "='" + s + "': expected " + what);
  return v;
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<int> gen::maxNodesOverride() {
  return wholeNumber<int>("NNCHECK_MAX_NODES", 1, "a positive whole number of nodes");
}

void loadRapidCheckConfigurationQuietly() {
  // RapidCheck prints "Using configuration: seed=<random>" when it first reads RC_PARAMS; check()
  // chooses its own seed and prints it with every failure, so that line only misleads.
  static const bool loaded = [] {
    std::streambuf* err = std::cerr.rdbuf(nullptr);
    try {
      (void)rc::detail::configuration();
    } catch (...) {
      std::cerr.rdbuf(err);
      throw Error(std::string("RC_PARAMS='") + std::getenv("RC_PARAMS") +
                  "': RapidCheck cannot read it");
    }
    std::cerr.rdbuf(err);
    return true;
  }();
  (void)loaded;
}

CheckEnvironment readCheckEnvironment() {
  CheckEnvironment env;
  env.seed = wholeNumber<uint64_t>("NNCHECK_SEED", 0, "a whole number from 0 to 2^64 - 1");
  if (auto cases = wholeNumber<int>("NNCHECK_CASES", 1,
                                    "a positive whole number of cases (0 would test nothing)")) {
    env.cases = *cases;
  } else if (const char* rc = std::getenv("RC_PARAMS");
             rc && std::string(rc).find("max_success=") != std::string::npos) {
    loadRapidCheckConfigurationQuietly();
    env.cases = rc::detail::configuration().testParams.maxSuccess;
    if (env.cases < 1)
      throw Error(std::string("RC_PARAMS='") + rc + "': max_success 0 would test nothing");
  } else {
    env.cases = kDefaultCases;
  }
  if (const char* s = variable("NNCHECK_SHRINK_SECONDS")) {
    char* end = nullptr;
    env.shrinkSeconds = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(env.shrinkSeconds >= 0) || env.shrinkSeconds > 1e9)
      throw Error(std::string("NNCHECK_SHRINK_SECONDS='") + s +
                  "': expected a number of seconds, 0 or more");
  }
  env.shrinkSteps =
      wholeNumber<int>("NNCHECK_SHRINK_STEPS", 0, "a whole number of steps, 0 or more")
          .value_or(env.shrinkSteps);
  if (const char* c = variable("NNCHECK_COVERAGE")) {
    const std::string v(c);
    if (v != "on" && v != "off") throw Error("NNCHECK_COVERAGE='" + v + "': expected on or off");
    env.coverage = v == "on";
  }
  if (const char* r = variable("NNCHECK_REPLAY")) env.replay = r;
  (void)defaultTimeout();         // NNCHECK_TIMEOUT
  (void)gen::maxNodesOverride();  // NNCHECK_MAX_NODES
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (!name.starts_with("NNCHECK_")) continue;
    if (std::find(kVariables.begin(), kVariables.end(), name) != kVariables.end()) continue;
    for (std::string_view known : kVariables)
      if (editDistance(name, known) <= 2) {
        env.warnings.push_back(std::string(name) + " is set but nncheck does not read it; " +
                               std::string(known) + " is what it reads");
        break;
      }
  }
  return env;
}

}  // namespace nncheck
