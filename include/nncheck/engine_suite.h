// A compiler team's suite over one registered engine's configurations, in a few lines: which
// configurations, where the corpus of its known bugs is, and which ops to generate. It makes
// the pieces a TEST_P suite over those configurations needs (examples/tvm, iree, ...):
//
//   const nncheck::EngineSuite kIree{"iree", {"opt=O0", "opt=O3"}, IREE_CORPUS,
//                                    nncheck::visionOps()};
//   class Iree : public nncheck::PropertyTest<std::string> {};
//   TEST_P(Iree, MatchesReference) {
//     check(kIree.cases(GetParam()), kIree.matchesReference(GetParam()),
//           kIree.make(GetParam())->name(), kIree.triage());
//   }
//   INSTANTIATE_TEST_SUITE_P(Levels, Iree, ::testing::ValuesIn(kIree.configurations),
//                            nncheck::EngineSuite::paramName);
//   const bool registered = kIree.registerCorpusTests("IreeCorpus");
//
// The engine is made lazily, at a test's first case: a suite is a global, built during static
// initialization, when the engine's own registration may not have run yet.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/gtest.h"

namespace nncheck {

struct EngineSuite {
  std::string engine;                       // its registered name
  std::vector<std::string> configurations;  // those the suite tests
  std::filesystem::path corpus;             // its known bugs (nncheck.json known_failures)
  std::set<std::string> ops;                // the ops generated, of those the engine takes

  // The engine at `configuration`.
  std::shared_ptr<Backend> make(const std::string& configuration) const;
  // The registry's baseline configuration of the engine (what the others agree with).
  std::string baseline() const;
  // Float32 cases of `ops` the engine takes at `configuration`, less the ops of its known
  // failures there: green while the known bugs are open, red on anything new.
  rc::Gen<TestCase> cases(const std::string& configuration) const;
  // The case's outputs at `configuration` match the reference (the engine made at the first case).
  Property matchesReference(const std::string& configuration) const;
  // matchesReference at each configuration, to triage a failure across them.
  std::vector<std::pair<std::string, Property>> triage() const;
  // The corpus replayed at each configuration, as tests <prefix>_<testName>.corpus/<case>.
  bool registerCorpusTests(const std::string& prefix) const;

  // A configuration as GoogleTest takes a name: "opt=O3+opt-in" is O3_opt_in.
  static std::string testName(const std::string& configuration);
  // The same, as INSTANTIATE_TEST_SUITE_P's name generator.
  static std::string paramName(const ::testing::TestParamInfo<std::string>& info);
};

// The float32 ops of the vision models (ResNet- and MobileNet-like) nncheck's example suites
// generate; a team with other models lists its own.
const std::set<std::string>& visionOps();

}  // namespace nncheck
