// nncheck::check() end to end, with deliberately buggy engines: each property fails, shrinks to
// exactly its pattern, is saved to the corpus, replays as failing, and passes on the reference.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <set>

#include "core/files.h"
#include "core/shell_words.h"
#include "doubles.h"
#include "doubles/optimizer.h"
#include "harness/conformance.h"
#include "harness/corpus_store.h"
#include "nncheck/gtest.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Glue : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("NNCHECK_CORPUS", corpus_.c_str(), 1);
    ::setenv("NNCHECK_SEED", "1", 1);
    ::setenv("NNCHECK_CASES", "100", 1);  // these tests' budget; the default is tested apart
  }
  void TearDown() override {
    ::unsetenv("NNCHECK_CORPUS");
    ::unsetenv("NNCHECK_SEED");
    ::unsetenv("NNCHECK_CASES");
  }

  // Runs check() and returns the failure messages it reported.
  std::vector<std::string> failuresOf(const rc::Gen<TestCase>& gen, const Property& p) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      check(gen, p);
    }
    std::vector<std::string> out;
    for (int i = 0; i < results.size(); ++i) out.push_back(results.GetTestPartResult(i).message());
    return out;
  }

  // The single saved case.
  fs::path savedCase() {
    std::vector<fs::path> cases;
    for (const auto& c : loadCorpus(corpus_)) cases.push_back(c.dir);
    EXPECT_EQ(cases.size(), 1u);
    return cases.empty() ? fs::path() : cases[0];
  }

  testing::TempDir tmp_{"check"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

// `timeout`: what counts as a hang. A crash needs a generous one under AddressSanitizer, whose
// handler takes a while to report the signal before the process dies.
Property matchesReference(Backend& engine, bool isolate,
                          std::chrono::milliseconds timeout = 300ms) {
  return [&engine, isolate, timeout](const TestCase& tc) {
    TensorMap want = runOn(reference(), tc);
    TensorMap got = isolate ? runOn(isolated(engine, timeout), tc) : runOn(engine, tc);
    assertAllClose(got, want);
  };
}

std::vector<std::string> opsOf(const TestCase& tc) {
  std::vector<std::string> ops;
  for (const Node& n : tc.model.graph.nodes) ops.push_back(n.opType);
  return ops;
}

GeneratorConfig config(std::vector<std::string> ops, std::map<std::string, double> weights) {
  GeneratorConfig cfg;
  cfg.nodes = 30;
  cfg.dtypes = {DType::Float32};
  cfg.ops = std::move(ops);
  cfg.opWeights = std::move(weights);
  return cfg;
}

TEST_F(Glue, MismatchIsShrunkSavedReportedAndReplayable) {
  testing::MatMulReluOddInner engine;
  auto failures = failuresOf(
      gen::testCase(config({"MatMul", "Relu", "Add", "Sigmoid", "Tanh", "Transpose", "Concat"},
                           {{"MatMul", 3}, {"Relu", 3}})),
      matchesReference(engine, false));
  ASSERT_EQ(failures.size(), 1u);
  const std::string& msg = failures[0];
  for (const char* needle :
       {"failed: mismatch", "worst abs error", "rtol=0.001", "MatMul(", "Relu(",
        "saved: ", "replay: NNCHECK_REPLAY=", "--gtest_filter=Glue.Mismatch"})
    EXPECT_NE(msg.find(needle), std::string::npos) << needle << "\n" << msg;
  EXPECT_NE(msg.find("to 2 nodes"), std::string::npos) << msg;
  std::cout << "what a user reads:\n" << msg;

  const fs::path dir = savedCase();
  TestCase saved = loadCase(dir);
  EXPECT_EQ(opsOf(saved), (std::vector<std::string>{"MatMul", "Relu"}));
  // The bug needs an odd inner dim and a negative product: one element does.
  for (const auto& [name, t] : saved.inputs) EXPECT_EQ(t.size(), 1) << modelToText(saved.model);
  auto json = readFile(dir / "nncheck.json");
  EXPECT_NE(json.find("\"failure_kind\": \"mismatch\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"nodes_after_shrinking\": 2"), std::string::npos) << json;
  // The saved case replays: still failing on the engine, passing on the reference.
  EXPECT_THROW(matchesReference(engine, false)(saved), PropertyFailure);
  EXPECT_NO_THROW(matchesReference(reference(), false)(saved));
  // And it is an ordinary backend-test folder: the reference's outputs are stored with it.
  ConformanceReport replay = runConformance({dir});
  EXPECT_EQ(replay.passed, 1);
}

TEST_F(Glue, ConcatWithInitializerShrinksToOneConcat) {
  testing::ConcatAxis0Initializer engine;
  auto failures = failuresOf(
      gen::testCase(config({"Concat", "Relu", "Add", "Transpose", "Sigmoid"}, {{"Concat", 4}})),
      matchesReference(engine, false));
  ASSERT_EQ(failures.size(), 1u);
  TestCase saved = loadCase(savedCase());
  ASSERT_EQ(opsOf(saved), (std::vector<std::string>{"Concat"})) << modelToText(saved.model);
  // Two operands, one an initializer, every dim 1 but the concatenated axis.
  const Node& concat = saved.model.graph.nodes[0];
  EXPECT_EQ(concat.inputs.size(), 2u) << modelToText(saved.model);
  EXPECT_TRUE(saved.model.graph.initializer(concat.inputs[0]) ||
              saved.model.graph.initializer(concat.inputs[1]));
  for (const Initializer& w : saved.model.graph.initializers)
    EXPECT_EQ(w.value.size(), 1) << modelToText(saved.model);
}

TEST_F(Glue, ACrashIsSavedAsACrashAndTheRunnerSurvives) {
  testing::SegfaultOnRank5Transpose engine;
  auto failures =
      failuresOf(gen::testCase(config({"Transpose", "Unsqueeze", "Relu", "Add", "Reshape"},
                                      {{"Transpose", 3}, {"Unsqueeze", 3}})),
                 matchesReference(engine, true, 10s));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("failed: crash"), std::string::npos) << failures[0];
  EXPECT_NE(failures[0].find("signal 11"), std::string::npos) << failures[0];
  const fs::path dir = savedCase();
  TestCase saved = loadCase(dir);
  ASSERT_EQ(opsOf(saved), (std::vector<std::string>{"Transpose"})) << modelToText(saved.model);
  EXPECT_EQ(runReferenceAllValues(saved.model, saved.inputs)
                .at(saved.model.graph.nodes[0].inputs[0])
                .rank(),
            5);
  EXPECT_EQ(loadCorpusCase(dir).kind, Outcome::Crash);
  EXPECT_NE(readFile(dir / "nncheck.json").find("\"signal\": 11"), std::string::npos);
  EXPECT_THROW(matchesReference(engine, true, 10s)(saved), PropertyFailure);
}

TEST_F(Glue, AHangIsSavedAsAHang) {
  testing::HangOnPowAfterSigmoid engine;
  auto failures = failuresOf(gen::testCase(config({"Pow", "Sigmoid", "Relu", "Add", "Tanh"},
                                                  {{"Pow", 3}, {"Sigmoid", 3}})),
                             matchesReference(engine, true));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("failed: hang"), std::string::npos) << failures[0];
  TestCase saved = loadCase(savedCase());
  EXPECT_EQ(opsOf(saved), (std::vector<std::string>{"Sigmoid", "Pow"})) << modelToText(saved.model);
  for (const auto& [name, t] : saved.inputs) EXPECT_EQ(t.size(), 1) << modelToText(saved.model);
}

// Issue 46, item 5: an engine whose set-up is broken (its runtime not installed) fails every
// case alike. Before, check() shrank and saved that as the engine's bug; now the test fails
// saying the engine does not work here, and nothing is saved.
struct NotInstalled : Backend {
  std::string name() const override { return "not-installed"; }
  TensorMap run(const Model&, const TensorMap&) override {
    throw Error("cannot load libruntime.so.3: no such file");
  }
};

TEST_F(Glue, AnEngineThatDoesNotWorkHereFailsTheTestAndNothingIsSaved) {
  NotInstalled engine;
  // Made once for the test, or once per case (the engine is then gone when the test is judged).
  for (const Property& property :
       std::vector<Property>{[&](const TestCase& tc) { assertMatchesReference(engine, tc); },
                             [](const TestCase& tc) {
                               NotInstalled perCase;
                               assertMatchesReference(perCase, tc);
                             }}) {
    auto failures = failuresOf(gen::testCase(config({"Relu", "Add"}, {})), property);
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_NE(failures[0].find("engine not-installed does not work here: a one-node Relu model "
                               "ended in error: cannot load libruntime.so.3"),
              std::string::npos)
        << failures[0];
    EXPECT_NE(failures[0].find("nothing was saved"), std::string::npos) << failures[0];
    EXPECT_TRUE(loadCorpus(corpus_).empty());
  }
}

TEST_F(Glue, TheReferencePassesAndNothingIsSaved) {
  ::setenv("NNCHECK_CASES", "30", 1);
  auto failures = failuresOf(gen::testCase(GeneratorConfig{}), matchesReference(reference(), true));
  ::setenv("NNCHECK_CASES", "100", 1);
  EXPECT_TRUE(failures.empty()) << failures[0];
  EXPECT_TRUE(loadCorpus(corpus_).empty());
}

// A wrong NNCHECK_* value fails the test before any case runs, naming the variable; it is never
// judged as the engine's failure, shrunk and saved. A seed is read to its last digit.
TEST_F(Glue, TheEnvironmentIsValidatedBeforeAnythingRuns) {
  const auto gen = gen::testCase(config({"Relu", "Add"}, {}));
  int runs = 0;
  const Property counted = [&runs](const TestCase&) { ++runs; };
  for (const auto& [variable, value, said] : std::vector<std::array<std::string, 3>>{
           {"NNCHECK_TIMEOUT", "abc", "NNCHECK_TIMEOUT='abc': expected a number of seconds"},
           // Before, these were taken, and every run "hung" and was saved as a hang.
           {"NNCHECK_TIMEOUT", "nan", "NNCHECK_TIMEOUT='nan': expected a number of seconds from"},
           {"NNCHECK_TIMEOUT", "1e-9", "NNCHECK_TIMEOUT='1e-9': expected a number of seconds"},
           {"NNCHECK_TIMEOUT", "1e308", "NNCHECK_TIMEOUT='1e308': expected a number of seconds"},
           {"NNCHECK_CASES", "0", "NNCHECK_CASES='0': expected a positive whole number"},
           {"NNCHECK_CASES", "2.5", "NNCHECK_CASES='2.5': expected a positive whole number"},
           {"NNCHECK_SEED", "-3", "NNCHECK_SEED='-3': expected a whole number"},
           {"NNCHECK_MAX_NODES", "0", "NNCHECK_MAX_NODES='0': expected a positive whole number"},
           {"NNCHECK_SHRINK_STEPS", "many", "NNCHECK_SHRINK_STEPS='many': expected"},
           {"NNCHECK_COVERAGE", "no", "NNCHECK_COVERAGE='no': expected on or off"}}) {
    const char* before = std::getenv(variable.c_str());
    const std::string kept = before ? before : "";
    ::setenv(variable.c_str(), value.c_str(), 1);
    const auto failures = failuresOf(gen, counted);
    if (before)
      ::setenv(variable.c_str(), kept.c_str(), 1);
    else
      ::unsetenv(variable.c_str());
    ASSERT_EQ(failures.size(), 1u) << variable << "=" << value;
    EXPECT_NE(failures[0].find(said), std::string::npos) << failures[0];
    EXPECT_NE(failures[0].find("nothing was run"), std::string::npos) << failures[0];
    EXPECT_EQ(runs, 0) << variable << "=" << value;
    EXPECT_TRUE(loadCorpus(corpus_).empty()) << variable << "=" << value;
  }
  // Two seeds above 2^53 that differ in the last digit are two runs (a double would merge them).
  auto firstCaseOf = [&](const char* seed) {
    ::setenv("NNCHECK_SEED", seed, 1);
    ::setenv("NNCHECK_CASES", "1", 1);
    uint64_t first = 0;
    EXPECT_TRUE(failuresOf(gen, [&first](const TestCase& tc) { first = tc.seed; }).empty());
    ::setenv("NNCHECK_SEED", "1", 1);
    ::setenv("NNCHECK_CASES", "100", 1);
    return first;
  };
  EXPECT_NE(firstCaseOf("5722590518704451689"), firstCaseOf("5722590518704451690"));
  // A misspelt variable is said, not silently ignored.
  ::setenv("NNCHECK_CASE", "5", 1);
  ::testing::internal::CaptureStderr();
  const auto typo = failuresOf(gen, counted);
  const std::string said = ::testing::internal::GetCapturedStderr();
  ::unsetenv("NNCHECK_CASE");
  EXPECT_TRUE(typo.empty());
  EXPECT_NE(said.find("NNCHECK_CASE is set but nncheck does not read it; NNCHECK_CASES is what"),
            std::string::npos)
      << said;
}

// NNCHECK_CORPUS_TEST's folder: beside the source file that names it, whatever the working
// directory; absolute folders, and files named relatively, as they are.
TEST(CorpusNextTo, IsTheFolderBesideTheSourceFile) {
  EXPECT_EQ(corpusNextTo("corpus", "/src/tests/props.cpp"), fs::path("/src/tests/corpus"));
  EXPECT_EQ(corpusNextTo("../corpus", "/src/tests/props.cpp"), fs::path("/src/corpus"));
  EXPECT_EQ(corpusNextTo("/data/corpus", "/src/tests/props.cpp"), fs::path("/data/corpus"));
  EXPECT_EQ(corpusNextTo("corpus", "tests/props.cpp"), fs::path("corpus"));
}

TEST_F(Glue, TheSameFailureIsSavedOnce) {
  TestCase tc = makeTestCase(GeneratorConfig{}, 3);
  FailureInfo info;
  auto a = saveFailure(corpus_, "S.T", tc, info);
  tc.seed = 99;
  tc.model.graph.name = "another name";
  auto b = saveFailure(corpus_, "S.T", tc, info);
  EXPECT_EQ(a, b);
  EXPECT_EQ(loadCorpus(corpus_).size(), 1u);
}

TEST_F(Glue, ReplayRunsTheSavedCaseAlone) {
  TestCase tc = makeTestCase(GeneratorConfig{}, 4);
  auto dir = saveFailure(corpus_, "S.T", tc, FailureInfo{});
  ::setenv("NNCHECK_REPLAY", dir.c_str(), 1);
  int runs = 0;
  auto failures = failuresOf(gen::testCase(GeneratorConfig{}), [&](const TestCase& t) {
    ++runs;
    EXPECT_EQ(serializeModel(t.model), serializeModel(tc.model));
    throw PropertyFailure(Outcome::Error, "still broken");
  });
  ::unsetenv("NNCHECK_REPLAY");
  EXPECT_EQ(runs, 1);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("still broken"), std::string::npos);
}

TEST_F(Glue, ShrinkingKeepsTheFirstFailureKind) {
  // Crashes (as an error) on any Sigmoid, mismatches on any Tanh: the shrunk case must still be
  // an error, even though cutting the Sigmoid would leave a (mismatching) Tanh.
  int calls = 0;
  auto failures =
      failuresOf(gen::testCase(config({"Sigmoid", "Tanh", "Add"}, {})), [&](const TestCase& tc) {
        ++calls;
        bool sig = false, tanh = false;
        for (const Node& n : tc.model.graph.nodes) {
          sig = sig || n.opType == "Sigmoid";
          tanh = tanh || n.opType == "Tanh";
        }
        if (sig) throw PropertyFailure(Outcome::Error, "Sigmoid unsupported");
        if (tanh) throw PropertyFailure(Outcome::Mismatch, "Tanh wrong");
      });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("failed: error"), std::string::npos) << failures[0];
  TestCase saved = loadCase(savedCase());
  EXPECT_EQ(opsOf(saved), (std::vector<std::string>{"Sigmoid"})) << modelToText(saved.model);
}

TEST_F(Glue, TheFailureNamesItsFirstDivergingNodeAndItsConfigurations) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  auto matches = [](Backend& engine) -> Property {
    return [&engine](const TestCase& tc) { assertMatchesReference(isolated(engine, 5s), tc); };
  };
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check(
        gen::testCase(
            config({"MatMul", "Relu", "Sigmoid", "Transpose"}, {{"MatMul", 3}, {"Relu", 3}})),
        matches(fused),
        {"double", "fusion=on", {{"fusion=on", matches(fused)}, {"fusion=off", matches(unfused)}}});
  }
  ASSERT_EQ(results.size(), 1);
  const std::string msg = results.GetTestPartResult(0).message();
  EXPECT_NE(msg.find("first diverging node: node '"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Relu)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[fusion=off: pass] [fusion=on: mismatch]"), std::string::npos) << msg;
  const CorpusCase saved = loadCorpusCase(savedCase());
  EXPECT_EQ(saved.kind, Outcome::Mismatch);
  EXPECT_EQ(saved.divergingOp, "Relu");
  EXPECT_EQ(saved.ops, (std::vector<std::string>{"MatMul", "Relu"}));
  const std::string json = readFile(savedCase() / "nncheck.json");
  EXPECT_NE(json.find("\"fusion=off\": \"pass\""), std::string::npos) << json;
}

TEST_F(Glue, RejectedCasesAreNotFailuresButAllRejectedIsOne) {
  testing::RejectsTanh engine;
  auto property = [&](const TestCase& tc) { assertMatchesReference(isolated(engine, 5s), tc); };
  ::setenv("NNCHECK_CASES", "40", 1);
  auto some = failuresOf(gen::testCase(config({"Tanh", "Relu", "Add"}, {})), property);
  EXPECT_TRUE(some.empty()) << some[0];
  auto all = failuresOf(gen::testCase(config({"Tanh"}, {})), property);
  ::setenv("NNCHECK_CASES", "100", 1);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_NE(all[0].find("all 40 cases were rejected or skipped (40 rejected by the engine)"),
            std::string::npos)
      << all[0];
  EXPECT_TRUE(loadCorpus(corpus_).empty());
}

TEST_F(Glue, AKnownFailureMustKeepFailingTheSameWay) {
  testing::MatMulReluOddInner buggy;
  Property onBuggy = [&](const TestCase& tc) { assertMatchesReference(isolated(buggy, 5s), tc); };
  Property onReference = [](const TestCase& tc) {
    assertMatchesReference(isolated(reference(), 5s), tc);
  };
  TestCase tc;
  tc.model.opsets = {{"", 14}};
  tc.model.graph.name = "g";
  tc.model.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 3})};
  tc.model.graph.initializers = {{"w", Tensor::fromVector<float>({3, 1}, {1, 1, 1}), ""}};
  tc.model.graph.nodes = {Node::make("MatMul", {"x", "w"}, {"p"}, "mm"),
                          Node::make("Relu", {"p"}, {"r"}, "relu")};
  tc.model.graph.outputs = {ValueInfo::tensor("r", DType::Float32, {1, 1})};
  tc.inputs = {{"x", Tensor::fromVector<float>({1, 3}, {-1, -2, -3})}};
  FailureInfo info;
  info.knownFailures = {{"cpu", Outcome::Mismatch}};
  const fs::path dir = saveFailure(corpus_, "S.T", tc, info);
  auto failuresReplaying = [&](const Property& p, const std::string& config) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      replayCorpusCase(dir, p, config);
    }
    std::vector<std::string> out;
    for (int i = 0; i < results.size(); ++i) out.push_back(results.GetTestPartResult(i).message());
    return out;
  };
  // Still failing as recorded: passes.
  EXPECT_TRUE(failuresReplaying(onBuggy, "cpu").empty());
  // Fixed: the test says so.
  auto fixed = failuresReplaying(onReference, "cpu");
  ASSERT_EQ(fixed.size(), 1u);
  EXPECT_NE(fixed[0].find("known mismatch failure in cpu but now it passes"), std::string::npos)
      << fixed[0];
  // Failing another way: reported.
  auto other = failuresReplaying(
      [](const TestCase&) { throw PropertyFailure(Outcome::Crash, "boom"); }, "cpu");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("but now it fails with crash"), std::string::npos) << other[0];
  // A configuration without the mark must pass.
  EXPECT_EQ(failuresReplaying(onBuggy, "gpu").size(), 1u);
  EXPECT_TRUE(failuresReplaying(onReference, "gpu").empty());
}

}  // namespace
}  // namespace nncheck

namespace nncheck {
namespace {

// Runs the reference and leaves a file named by the pid of the process that ran it.
class RecordsItsProcess : public Backend {
 public:
  explicit RecordsItsProcess(fs::path dir) : dir_(std::move(dir)) {}
  std::string name() const override { return "records-its-process"; }
  TensorMap run(const Model& m, const TensorMap& in) override {
    std::ofstream(dir_ / std::to_string(::getpid())) << "ran";
    return runReference(m, in);
  }
  std::set<std::string> processes() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }

 private:
  fs::path dir_;
};

TEST_F(Glue, TheEngineRunsInOneIsolatedWorkerForAWholeCheck) {
  RecordsItsProcess engine(tmp_.path());
  ::setenv("NNCHECK_CASES", "20", 1);
  auto failures = failuresOf(gen::testCase(config({"Relu", "Add"}, {})),
                             [&](const TestCase& tc) { assertMatchesReference(engine, tc); });
  ::setenv("NNCHECK_CASES", "100", 1);
  EXPECT_TRUE(failures.empty()) << failures[0];
  const std::set<std::string> pids = engine.processes();
  ASSERT_EQ(pids.size(), 1u) << "expected one persistent worker for 20 cases";
  EXPECT_EQ(pids.count(std::to_string(::getpid())), 0u) << "the engine ran in the test process";
  // Outside check() there is no scope: each call isolates afresh.
  for (const auto& e : fs::directory_iterator(tmp_.path())) fs::remove(e.path());
  TestCase tc = makeTestCase(config({"Relu"}, {}), 1);
  assertMatchesReference(engine, tc);
  assertMatchesReference(engine, tc);
  EXPECT_EQ(engine.processes().size(), 2u);
}

TEST_F(Glue, TheFailureIsReportedAtTheLineThatCalledCheck) {
  testing::MatMulReluOddInner engine;
  ::testing::TestPartResultArray results;
  int line = 0;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    line = __LINE__ + 1;
    check(gen::testCase(config({"MatMul", "Relu"}, {})),
          [&](const TestCase& tc) { assertMatchesReference(engine, tc); });
  }
  ASSERT_EQ(results.size(), 1);
  EXPECT_STREQ(results.GetTestPartResult(0).file_name(), __FILE__);
  EXPECT_EQ(results.GetTestPartResult(0).line_number(), line);
}

TEST_F(Glue, SavedFailuresAreReplayedFirstAndAPatternIsSavedOnce) {
  // Fails on any Sigmoid, except on cases made from `spared` (a saved case keeps its seed).
  uint64_t spared = 0;
  int runs = 0;
  Property property = [&](const TestCase& tc) {
    ++runs;
    for (const Node& n : tc.model.graph.nodes)
      if (n.opType == "Sigmoid" && tc.seed != spared)
        throw PropertyFailure(Outcome::Mismatch, "Sigmoid wrong");
  };
  const auto gen = gen::testCase(config({"Sigmoid", "Relu", "Add"}, {}));
  ASSERT_EQ(failuresOf(gen, property).size(), 1u);
  const fs::path first = savedCase();

  // The next run replays the saved case before anything else: one run, and it fails.
  runs = 0;
  auto again = failuresOf(gen, property);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(runs, 1);
  EXPECT_NE(again[0].find("a saved failure still fails (replayed before generating)"),
            std::string::npos)
      << again[0];
  EXPECT_NE(again[0].find(first.string()), std::string::npos) << again[0];

  // Once the saved case passes, generation finds the same bug from other seeds, and its
  // minimized pattern is already saved: reported, not saved twice.
  spared = loadCase(first).seed;
  ::setenv("NNCHECK_SEED", "2", 1);
  auto other = failuresOf(gen, property);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("an earlier run saved the same minimized pattern"), std::string::npos)
      << other[0];
  EXPECT_EQ(savedCase(), first);
}

// Two check() processes (ctest -j over seeds) that find one pattern at the same moment save it
// once: each reaches the save only after the other has reached it too (a barrier in the
// configuration triage, which runs just before the save), and their shrunk cases differ in
// shape, so only the pattern's claim keeps the second out.
TEST_F(Glue, TwoProcessesSavingOnePatternAtOnceSaveItOnce) {
  int toA[2], toB[2];
  ASSERT_EQ(::pipe(toA), 0);
  ASSERT_EQ(::pipe(toB), 0);
  const auto gen = gen::testCase(config({"Sigmoid", "Relu", "Add"}, {}));
  auto child = [&](const char* seed, int64_t atLeast, int tell, int wait, const fs::path& out) {
    ::setenv("NNCHECK_SEED", seed, 1);
    // Fails on a Sigmoid of at least `atLeast` elements: the two shrink to different shapes.
    Property property = [atLeast](const TestCase& tc) {
      for (const Node& n : tc.model.graph.nodes)
        if (n.opType == "Sigmoid" &&
            runReferenceAllValues(tc.model, tc.inputs).at(n.inputs[0]).size() >= atLeast)
          throw PropertyFailure(Outcome::Mismatch, "Sigmoid wrong");
    };
    Property barrier = [tell, wait](const TestCase&) {
      const char byte = 1;
      char got = 0;
      if (::write(tell, &byte, 1) != 1) _exit(3);
      pollfd p{wait, POLLIN, 0};
      if (::poll(&p, 1, 60000) != 1 || ::read(wait, &got, 1) != 1) _exit(4);
    };
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      check(gen, property, {.triage = {{"barrier", barrier}}});
    }
    std::string text;
    for (int i = 0; i < results.size(); ++i) text += results.GetTestPartResult(i).message();
    writeFileAtomic(out, text);
    _exit(results.size() == 1 ? 0 : 5);
  };
  const fs::path outA = tmp_.path() / "a.txt", outB = tmp_.path() / "b.txt";
  const pid_t a = ::fork();
  if (a == 0) child("1", 2, toB[1], toA[0], outA);
  const pid_t b = ::fork();
  if (b == 0) child("2", 3, toA[1], toB[0], outB);
  int statusA = 0, statusB = 0;
  ::waitpid(a, &statusA, 0);
  ::waitpid(b, &statusB, 0);
  for (int fd : {toA[0], toA[1], toB[0], toB[1]}) ::close(fd);
  ASSERT_TRUE(WIFEXITED(statusA) && WEXITSTATUS(statusA) == 0) << statusA;
  ASSERT_TRUE(WIFEXITED(statusB) && WEXITSTATUS(statusB) == 0) << statusB;
  const fs::path saved = savedCase();
  const std::string reportA = readFile(outA), reportB = readFile(outB);
  EXPECT_NE(reportA.find("saved: " + saved.string()), std::string::npos) << reportA;
  EXPECT_NE(reportB.find("saved: " + saved.string()), std::string::npos) << reportB;
  EXPECT_NE((reportA + reportB).find("an earlier run saved the same minimized pattern"),
            std::string::npos)
      << reportA << reportB;
}

// The equivalence oracle in GoogleTest: the variants come with RapidCheck's cases and shrink with
// them, to the fused pair and the fewest rewrites that still break it apart; a passing run says
// which rewrites it applied.
TEST_F(Glue, EquivalentVariantsFindTheFusionAndShrinkToThePairAndFewRewrites) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  GeneratorConfig cfg = config({"MatMul", "Relu", "Add", "Sigmoid", "Tanh", "Transpose"},
                               {{"MatMul", 3}, {"Relu", 3}});
  cfg.blockShare = cfg.constantShare = 0;
  cfg.rewrites = 3;
  ::setenv("NNCHECK_CASES", "300", 1);
  auto failures = failuresOf(gen::testCase(cfg),
                             [&](const TestCase& tc) { assertEquivalentVariantsAgree(fused, tc); });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("(the variant: "), std::string::npos) << failures[0];
  const TestCase saved = loadCase(savedCase());
  EXPECT_EQ(opsOf(saved), (std::vector<std::string>{"MatMul", "Relu"}));
  EXPECT_GE(saved.rewrites.size(), 1u);
  EXPECT_LE(saved.rewrites.size(), 2u) << describeRewrites(saved.rewrites);

  ::testing::internal::CaptureStdout();
  const auto none = failuresOf(
      gen::testCase(cfg), [&](const TestCase& tc) { assertEquivalentVariantsAgree(unfused, tc); });
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(none.empty()) << none[0];
  EXPECT_NE(out.find("equivalence rewrites applied (cases): "), std::string::npos) << out;
}

TEST_F(Glue, TheReportReplaysFromAnyFolderWithTheSettingsOfTheRun) {
  testing::MatMulReluOddInner engine;
  ::setenv("NNCHECK_MAX_NODES", "12", 1);
  auto failures = failuresOf(gen::testCase(config({"MatMul", "Relu"}, {})),
                             [&](const TestCase& tc) { assertMatchesReference(engine, tc); });
  ::unsetenv("NNCHECK_MAX_NODES");
  ASSERT_EQ(failures.size(), 1u);
  const std::string& msg = failures[0];
  const std::string replay = msg.substr(msg.find("replay: "));
  EXPECT_NE(replay.find("NNCHECK_REPLAY=" + shellQuote(fs::absolute(savedCase()).string())),
            std::string::npos)
      << msg;
  EXPECT_NE(replay.find("NNCHECK_MAX_NODES=12"), std::string::npos) << msg;
  EXPECT_NE(replay.find(" /"), std::string::npos) << "the binary's path is absolute\n" << msg;
  EXPECT_NE(msg.find("rerun:  "), std::string::npos) << msg;
}

TEST_F(Glue, APassingRunSaysWhatItCoveredAndWhatItNeverReached) {
  ::setenv("NNCHECK_CASES", "30", 1);
  ::testing::internal::CaptureStdout();
  auto failures = failuresOf(gen::testCase(config({"Relu", "Add", "Tanh"}, {{"Tanh", 1e-9}})),
                             [](const TestCase&) {});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::setenv("NNCHECK_CASES", "100", 1);
  EXPECT_TRUE(failures.empty());
  EXPECT_NE(out.find(": 30 cases, 0 not tests"), std::string::npos) << out;
  EXPECT_NE(out.find("ops seen: 2 of 3 usable"), std::string::npos) << out;
  EXPECT_NE(out.find("never generated: Tanh"), std::string::npos) << out;
  EXPECT_NE(out.find("Relu->"), std::string::npos) << out;
}

// The README's idiom against an engine compiled with SanitizerCoverage (the optimizer double):
// cases reaching new edges are kept and mutated, the statistics say so, and the double's
// Transpose-merge bug is found with no op or pair weights and shrunk to its two nodes. The cases
// stay inside the double's capabilities, as a compiler team's would inside its compiler's.
TEST_F(Glue, CasesAreCoverageGuidedWhenTheEngineIsInstrumented) {
#ifndef NNCHECK_INSTRUMENTED_DOUBLE
  GTEST_SKIP() << "this build has no instrumented double (NNCHECK_FUZZ)";
#endif
  testing::Optimizer correct, buggy(testing::Optimizer::TransposeMergeOrder);
  ::setenv("NNCHECK_CASES", "200", 1);
  ::testing::internal::CaptureStdout();
  const GeneratorConfig inside = configFor(correct.capabilities());
  auto failures = failuresOf(gen::testCase(inside),
                             [&](const TestCase& tc) { assertMatchesReference(correct, tc); });
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
  EXPECT_NE(out.find("coverage-guided: "), std::string::npos) << out;
  ::setenv("NNCHECK_COVERAGE", "off", 1);
  ::testing::internal::CaptureStdout();
  failuresOf(gen::testCase(inside),
             [&](const TestCase& tc) { assertMatchesReference(correct, tc); });
  out = ::testing::internal::GetCapturedStdout();
  ::unsetenv("NNCHECK_COVERAGE");
  EXPECT_EQ(out.find("coverage-guided: "), std::string::npos) << out;

  // One search trajectory: cases to the bug vary with the seed (bench/bug_finding_bench
  // measures them over all ops).
  ::setenv("NNCHECK_CASES", "3000", 1);
  failures = failuresOf(gen::testCase(inside),
                        [&](const TestCase& tc) { assertMatchesReference(buggy, tc); });
  ::setenv("NNCHECK_CASES", "100", 1);
  ASSERT_EQ(failures.size(), 1u);
  TestCase saved = loadCase(savedCase());
  EXPECT_EQ(opsOf(saved), (std::vector<std::string>{"Transpose", "Transpose"}))
      << modelToText(saved.model);
}

TEST_F(Glue, AnUnreadableSavedCaseFailsItsOwnTestNamingTheFile) {
  const fs::path dir = corpus_ / "S.T" / "broken";
  fs::create_directories(dir / "test_data_set_0");
  std::ofstream(dir / "model.onnx") << "not a model";
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    replayCorpusCase(dir, [](const TestCase&) {});
  }
  ASSERT_EQ(results.size(), 1);
  EXPECT_NE(std::string(results.GetTestPartResult(0).message()).find((dir / "model.onnx").string()),
            std::string::npos)
      << results.GetTestPartResult(0).message();
}

// The budget: NNCHECK_CASES, else the measured default (RapidCheck reads RC_PARAMS's max_success
// once per process, so that one is not set here).
TEST(CheckBudget, ComesFromTheEnvironmentElseTheMeasuredDefault) {
  ::unsetenv("NNCHECK_CASES");
  if (const char* rc = std::getenv("RC_PARAMS");
      rc && std::string(rc).find("max_success") != std::string::npos)
    GTEST_SKIP() << "RC_PARAMS sets max_success";
  EXPECT_EQ(detail::casesToGenerate(), kDefaultCases);
  ::setenv("NNCHECK_CASES", "7", 1);
  EXPECT_EQ(detail::casesToGenerate(), 7);
  ::unsetenv("NNCHECK_CASES");
}

TEST_F(Glue, RapidCheckTagsOfAPassingRunAreShown) {
  ::setenv("NNCHECK_CASES", "20", 1);
  ::testing::internal::CaptureStdout();
  auto failures = failuresOf(gen::testCase(config({"Relu", "Add"}, {})), [](const TestCase& tc) {
    RC_TAG(tc.model.graph.nodes.size() > 1 ? "several nodes" : "one node");
  });
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::setenv("NNCHECK_CASES", "100", 1);
  EXPECT_TRUE(failures.empty());
  EXPECT_NE(out.find("% \"several nodes\""), std::string::npos) << out;
}

TEST_F(Glue, AWrongValueDoesNotShrinkIntoAWrongShape) {
  // Wrong values on any Sigmoid, and a wrong shape instead once every input is a single element
  // (another bug, which smaller cases would otherwise slip into). Generated dims are at least 2,
  // so the first failure is the one with wrong values.
  GeneratorConfig cfg = config({"Sigmoid", "Add", "Relu"}, {});
  cfg.minDim = 2;
  auto failures = failuresOf(gen::testCase(cfg), [](const TestCase& tc) {
    bool sigmoid = false, tiny = true;
    for (const Node& n : tc.model.graph.nodes) sigmoid |= n.opType == "Sigmoid";
    for (const auto& [name, t] : tc.inputs) tiny &= t.size() == 1;
    if (!sigmoid) return;
    PropertyFailure f(Outcome::Mismatch, tiny ? "shape differs" : "values differ");
    f.verdict.shapeOnly = tiny;
    throw f;
  });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("values differ"), std::string::npos) << failures[0];
  int64_t largest = 0;
  for (const auto& [name, t] : loadCase(savedCase()).inputs) largest = std::max(largest, t.size());
  EXPECT_EQ(largest, 2) << "the smallest case that still has wrong values";
}

// The reference as an engine whose optimizer names one rewrite, FoldA, after every run, of the
// two it may apply.
class NamesFoldA : public Backend {
 public:
  std::string name() const override { return "names-fold-a"; }
  TensorMap run(const Model& m, const TensorMap& in) override {
    return ReferenceBackend().run(m, in);
  }
  std::vector<std::string> optimizationsApplied() const override { return {"FoldA"}; }
  std::vector<std::string> optimizations() const override { return {"FoldA", "FoldB"}; }
};

// A passing run names the optimizations no case triggered, as campaigns do.
TEST_F(Glue, APassingRunNamesTheOptimizationsNeverTriggered) {
  NamesFoldA engine;
  ::setenv("NNCHECK_CASES", "10", 1);
  ::testing::internal::CaptureStdout();
  CheckOptions options;
  options.optimizations = engine.optimizations();
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check(
        gen::testCase(config({"Relu", "Add"}, {})),
        [&](const TestCase& tc) { assertMatchesReference(engine, tc); }, options);
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::setenv("NNCHECK_CASES", "100", 1);
  EXPECT_EQ(results.size(), 0);
  EXPECT_NE(out.find("optimizations that changed a model: 1 (cases: FoldA 10)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("optimizations never triggered: 1 of 2: FoldB"), std::string::npos) << out;
}

// A passing run names the functions of an engine compiled with a pc-table that no case reached.
TEST_F(Glue, APassingRunNamesTheEngineFunctionsNeverReached) {
#ifndef NNCHECK_PC_TABLE_FIXTURE
  GTEST_SKIP() << "this build has no module with a pc-table (no clang, or NNCHECK_FUZZ)";
#else
  testing::ReachesOneFixtureFunction engine;
  ::setenv("NNCHECK_CASES", "10", 1);
  ::testing::internal::CaptureStdout();
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check(gen::testCase(config({"Relu", "Add"}, {})),
          [&](const TestCase& tc) { assertMatchesReference(engine, tc); });
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(results.size(), 0);
  EXPECT_NE(out.find("engine functions never reached: 3 of 4 ("), std::string::npos) << out;
  EXPECT_NE(out.find("largest first: pc_table_fixture::"), std::string::npos) << out;
#endif
}

// An engine with four named passes whose outputs are off by one when A and C are both on.
class TwoPassBug : public Backend {
 public:
  explicit TwoPassBug(std::vector<std::string> disabled) : off_(disabled.begin(), disabled.end()) {}
  // Named by what is off: check()'s engine scope keeps one worker per engine name.
  std::string name() const override {
    std::string n = "two-pass bug without";
    for (const std::string& p : off_) n += " " + p;
    return n;
  }
  TensorMap run(const Model& m, const TensorMap& in) override {
    TensorMap out = ReferenceBackend().run(m, in);
    if (!off_.count("A") && !off_.count("C"))
      for (auto& [name, t] : out)
        for (float& x : t.span<float>()) x += 1;
    return out;
  }

 private:
  std::set<std::string> off_;
};

TEST_F(Glue, AFailureNamesTheOptimizationsItNeeds) {
  CheckOptions options;
  options.optimizations = {"A", "B", "C", "D"};
  options.without = [](const std::vector<std::string>& disabled) -> Property {
    return [disabled](const TestCase& tc) {
      TwoPassBug engine(disabled);
      assertMatchesReference(engine, tc);
    };
  };
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check(gen::testCase(config({"Relu"}, {})), options.without({}), options);
  }
  ASSERT_EQ(results.size(), 1);
  const std::string message = results.GetTestPartResult(0).message();
  EXPECT_NE(message.find("culprit: fails with only A and C enabled; passes with them disabled"),
            std::string::npos)
      << message;
  const CorpusCase saved = loadCorpusCase(savedCase());
  ASSERT_TRUE(saved.culprit);
  EXPECT_EQ(saved.culprit->needed, (std::vector<std::string>{"A", "C"}));
}

}  // namespace
}  // namespace nncheck
