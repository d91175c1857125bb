// nncheck in GoogleTest: properties over generated models, run with RapidCheck, every failure
// shrunk (keeping its failure kind, within a budget), saved to the corpus and reported at the
// line of the test that called check(), with the commands that replay it. Link nncheck::gtest.
//
//   class MyProps : public nncheck::PropertyTest<int> {};
//   TEST_P(MyProps, MatchesReference) {
//     MyCompiler compiler(GetParam());
//     check(nncheck::gen::testCase(compiler.capabilities()), [&](const nncheck::TestCase& tc) {
//       nncheck::assertMatchesReference(compiler, tc);   // isolated, one worker per check()
//     });
//   }
//   INSTANTIATE_TEST_SUITE_P(OptLevels, MyProps, ::testing::Values(0, 1, 2, 3));
//   NNCHECK_CORPUS_TEST(MyCorpus, "corpus", [](const nncheck::TestCase& tc) {  // beside this file
//     MyCompiler compiler(3);
//     nncheck::assertMatchesReference(compiler, tc);
//   });
//
// check() first replays the failures saved for this test (a known bug fails fast, before any
// generation), then generates NNCHECK_CASES cases; a passing run prints what it covered (cases,
// ops seen of those usable, the most frequent op pairs, rejected cases) and names ops it never
// or rarely generated. Failures are saved under <corpus>/<test name>/<hash>, once per minimized
// pattern, where <corpus> is NNCHECK_CORPUS, else the folder of the binary's NNCHECK_CORPUS_TEST
// (so the corpus test replays them), else ./nncheck-corpus. When an engine is compiled with
// SanitizerCoverage, the cases of gen::testCase are coverage-guided: the ones that reach new
// edges are kept and mutated (nncheck/coverage_guide.h), and the statistics say so.
//
// Environment: NNCHECK_SEED, NNCHECK_CASES (default kDefaultCases), NNCHECK_MAX_NODES,
// NNCHECK_CORPUS, NNCHECK_SHRINK_SECONDS (default 60), NNCHECK_SHRINK_STEPS (default 2000),
// NNCHECK_TIMEOUT (isolation), NNCHECK_REPLAY (a saved case folder: run the property on it alone),
// NNCHECK_COVERAGE=off (no coverage guidance); RapidCheck's
// RC_PARAMS still applies where these are unset.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nncheck/gen.h"
#include "nncheck/nncheck.h"

namespace nncheck {

using Property = std::function<void(const TestCase&)>;

// Where check() was called, for GoogleTest to report a failure there: a defaulted argument
// takes its caller's file and line. (Not std::source_location, which Debian 12's clang 14
// cannot compile.)
struct CallSite {
  CallSite(const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : file(file), line(line) {}
  const char* file;
  int line;
};

struct CheckOptions {
  std::string backend{};        // for nncheck.json
  std::string configuration{};  // e.g. the TEST_P parameter; selects known failures on replay
  // Configuration triage: the shrunk failure is run under each of these properties (one per
  // configuration of the engine), and which pass and which fail is reported and saved.
  std::vector<std::pair<std::string, Property>> triage{};
  // The culprit search (harness/culprit.h): the optimizations of the configuration under test
  // (Backend::optimizations and unreportedOptimizations), and the property with some of them
  // switched off. With both, a failure names the optimizations it needs and the workaround.
  std::vector<std::string> optimizations{};
  std::function<Property(const std::vector<std::string>& disabled)> without{};
};

// Runs the property on the test's saved failures, then on generated cases; a failure fails the
// current GoogleTest test at `where` (the caller) with the shrunk model, the error figures, the
// failure kind, the saved path and the replay commands. Engines the property asserts on through
// the Backend& assertions run in one persistent isolated worker each (an EngineScope).
void check(const rc::Gen<TestCase>& gen, const Property& property, const CheckOptions& options = {},
           CallSite where = {});

// The cases a check() generates unless NNCHECK_CASES (or RC_PARAMS's max_success) says, chosen
// by measurement (bench/bug_finding_bench over 5 seeds): with it, every one of the 8 planted bugs
// of the optimizing test double fails its property on at least 4 of the 5; with RapidCheck's
// 100, 2 of them did. About 15 s against that double (1.5 ms a case); a team whose engine takes
// longer per case sets CASES in nncheck_add_tests.
inline constexpr int kDefaultCases = 10000;

namespace detail {
// The cases check() generates under this environment.
int casesToGenerate();
}  // namespace detail

// A fixture for TEST_P suites over an engine's configurations: check() records the parameter
// as the configuration.
template <class Param>
class PropertyTest : public ::testing::TestWithParam<Param> {
 protected:
  void check(const rc::Gen<TestCase>& gen, const Property& property, std::string backend = "",
             std::vector<std::pair<std::string, Property>> triage = {}, CallSite where = {}) {
    ::nncheck::check(gen, property,
                     {std::move(backend), parameterText(this->GetParam()), std::move(triage)},
                     where);
  }

 private:
  // The configuration as its name: a string parameter as it is ("O2", not "\"O2\""), so it
  // matches the engine's own configuration names in `nncheck corpus check`.
  static std::string parameterText(const Param& p) {
    if constexpr (std::is_convertible_v<const Param&, std::string_view>)
      return std::string(std::string_view(p));
    else
      return ::testing::PrintToString(p);
  }
};

// Registers one test per case saved under `corpus`, named <suite>.corpus/<case folder relative
// to corpus>: it fails while the property still fails on the case, with the same report as
// check(). A case that cannot be read is a failing test naming the file; the others still run.
// A case whose nncheck.json lists a known failure for `configuration` (known_failures:
// {"<configuration>": "mismatch"}) must fail exactly that way instead: the test fails when it
// passes (fixed? remove the entry) or fails another way. The first corpus registered becomes
// where check() saves failures when NNCHECK_CORPUS is unset.
void registerCorpusTests(const std::string& suite, const std::filesystem::path& corpus,
                         Property property, const std::string& configuration = "");

// The corpus folder NNCHECK_CORPUS_TEST names: a relative `dir` is taken from the folder of the
// source file that names it (CMake compiles with absolute paths), so "corpus" is the same
// folder from any working directory; an absolute one, or one named from a source file whose path
// is relative (the working directory then), is taken as it is.
std::filesystem::path corpusNextTo(const std::filesystem::path& dir, const char* sourceFile);

// What each of those tests does with its case.
void replayCorpusCase(const std::filesystem::path& dir, const Property& property,
                      const std::string& configuration = "");

}  // namespace nncheck

// A plain property test: NNCHECK_PROPERTY(Suite, Name, gen, tc) { ... uses tc ... }
#define NNCHECK_PROPERTY(Suite, Name, Gen, tc)                                       \
  static void Suite##_##Name##_nncheck_property(const ::nncheck::TestCase& tc);      \
  TEST(Suite, Name) { ::nncheck::check((Gen), &Suite##_##Name##_nncheck_property); } \
  static void Suite##_##Name##_nncheck_property(const ::nncheck::TestCase& tc)

// Every case saved under Dir (relative: to this source file's folder, see corpusNextTo),
// replayed as its own test <Suite>.corpus/<case folder>; an optional fourth argument names the
// configuration whose known failures apply.
#define NNCHECK_CORPUS_TEST(Suite, Dir, Property, ...)                                           \
  static const bool Suite##_nncheck_corpus_registered = [] {                                     \
    ::nncheck::registerCorpusTests(#Suite, ::nncheck::corpusNextTo((Dir), __FILE__), (Property), \
                                   ##__VA_ARGS__);                                               \
    return true;                                                                                 \
  }()
