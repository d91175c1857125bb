// nncheck in GoogleTest: properties over generated models, run with RapidCheck, every failure
// shrunk (keeping its failure kind, within a budget), saved to the corpus and reported with
// the one command that replays it. Link nncheck::gtest.
//
//   class MyProps : public nncheck::PropertyTest<int> {};
//   TEST_P(MyProps, MatchesReference) {
//     MyCompiler compiler(GetParam());
//     check(nncheck::gen::testCase(compiler.capabilities()), [&](const nncheck::TestCase& tc) {
//       NNCHECK_ASSERT_ALLCLOSE(nncheck::runOn(nncheck::isolated(compiler), tc),
//                               nncheck::runOn(nncheck::reference(), tc));
//     });
//   }
//   INSTANTIATE_TEST_SUITE_P(OptLevels, MyProps, ::testing::Values(0, 1, 2, 3));
//   NNCHECK_CORPUS_TEST(MyCorpus, "tests/corpus", [](const nncheck::TestCase& tc) { ... });
//
// Environment: NNCHECK_SEED, NNCHECK_CASES (default 100), NNCHECK_MAX_NODES, NNCHECK_CORPUS
// (default ./nncheck-corpus), NNCHECK_SHRINK_SECONDS (default 60), NNCHECK_SHRINK_STEPS
// (default 2000), NNCHECK_TIMEOUT (isolation), NNCHECK_REPLAY (a saved case folder: run the
// property on it alone); RapidCheck's RC_PARAMS still applies where these are unset.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/gen.h"
#include "nncheck/nncheck.h"

namespace nncheck {

using Property = std::function<void(const TestCase&)>;

struct CheckOptions {
  std::string backend;        // for nncheck.json
  std::string configuration;  // e.g. the TEST_P parameter
  // Configuration triage: the shrunk failure is run under each of these properties (one per
  // configuration of the engine), and which pass and which fail is reported and saved.
  std::vector<std::pair<std::string, Property>> triage;
};

// Runs the property on generated cases; a failure fails the current GoogleTest test with the
// shrunk model, the error figures, the failure kind, the saved path and the replay command.
void check(const rc::Gen<TestCase>& gen, const Property& property,
           const CheckOptions& options = {});

// A fixture for TEST_P suites over an engine's configurations.
template <class Param>
class PropertyTest : public ::testing::TestWithParam<Param> {
 protected:
  void check(const rc::Gen<TestCase>& gen, const Property& property, std::string backend = "",
             std::vector<std::pair<std::string, Property>> triage = {}) {
    ::nncheck::check(
        gen, property,
        {std::move(backend), ::testing::PrintToString(this->GetParam()), std::move(triage)});
  }
};

// Registers one test per case saved under `corpus` (Suite.<case folder>): it fails while the
// property still fails on the case, with the same report as check(). A case whose nncheck.json
// lists a known failure for `configuration` (known_failures: {"<configuration>": "mismatch"})
// must fail exactly that way instead: the test fails when it passes (fixed? remove the entry)
// or fails another way.
void registerCorpusTests(const std::string& suite, const std::filesystem::path& corpus,
                         Property property, const std::string& configuration = "");

// What each of those tests does with its case.
void replayCorpusCase(const std::filesystem::path& dir, const Property& property,
                      const std::string& configuration = "");

}  // namespace nncheck

// A plain property test: NNCHECK_PROPERTY(Suite, Name, gen, tc) { ... uses tc ... }
#define NNCHECK_PROPERTY(Suite, Name, Gen, tc)                                       \
  static void Suite##_##Name##_nncheck_property(const ::nncheck::TestCase& tc);      \
  TEST(Suite, Name) { ::nncheck::check((Gen), &Suite##_##Name##_nncheck_property); } \
  static void Suite##_##Name##_nncheck_property(const ::nncheck::TestCase& tc)

// Every case saved under Dir, replayed as its own test of suite Suite; an optional fourth
// argument names the configuration whose known failures apply.
#define NNCHECK_CORPUS_TEST(Suite, Dir, Property, ...)                        \
  static const bool Suite##_nncheck_corpus_registered = [] {                  \
    ::nncheck::registerCorpusTests(#Suite, (Dir), (Property), ##__VA_ARGS__); \
    return true;                                                              \
  }()
