// Engines served by workers (nncheck/worker_engine.h): command lines, the Python SDK's example
// engine under a property, and deliberately broken workers (tests/backends/workers), each of
// which must end in a clear error naming it, and a worker started afresh for the next case.
#include "nncheck/worker_engine.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "backends/broken_worker.h"
#include "core/shell_words.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

TEST(ShellWords, SplitsAsAShellDoesAndQuotesBackToTheSameWords) {
  EXPECT_EQ(splitShellWords("python3  'my engine.py' \"a \\\"b\\\"\" c\\ d ''"),
            (std::vector<std::string>{"python3", "my engine.py", "a \"b\"", "c d", ""}));
  EXPECT_EQ(splitShellWords(" \t"), std::vector<std::string>{});
  for (const std::string word : {"plain", "it's", "a b", "", "$HOME", "x;y"})
    EXPECT_EQ(splitShellWords(shellQuote(word)), std::vector<std::string>{word}) << word;
  EXPECT_NE(testing::errorOf([] { splitShellWords("python3 'open"); }).find("leaves a quote (')"),
            std::string::npos);
}

TEST(WorkerCommand, MakesARelativeFileAbsoluteAndRefusesAnEmptyLine) {
  const WorkerCommand c = WorkerCommand::parse("python3 tests/../CMakeLists.txt -x");
  ASSERT_EQ(c.argv.size(), 3u);
  EXPECT_EQ(c.argv[0], "python3");  // a program on PATH stays a name
  EXPECT_EQ(c.argv[2], "-x");
  if (fs::exists("CMakeLists.txt")) {
    EXPECT_TRUE(fs::path(c.argv[1]).is_absolute()) << c.argv[1];
  }
  EXPECT_NE(testing::errorOf([] { WorkerCommand::parse("  "); }).find("empty"), std::string::npos);
}

#ifdef NNCHECK_SDK_PYTHON

class BrokenWorker : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"broken_worker"};
  // Misbehaves as `mode` says on the first run only; the next runs are answered.
  WorkerCommand onFirstRun(const std::string& mode) {
    return testing::brokenWorker(mode, "1 " + (tmp_.path() / "runs").string());
  }
  // The first run ends as `kind` with a message naming the worker and saying `what`; the next
  // is answered, by a fresh worker.
  void misbehavesOnceThenIsReplaced(const std::string& mode, Outcome kind,
                                    const std::string& what) {
    WorkerBackend engine(onFirstRun(mode), "plain");
    const Isolated isolated(engine, std::chrono::seconds(30), Isolation::Persistent);
    const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
    EXPECT_EQ(r.kind, kind) << r.message;
    EXPECT_NE(r.message.find("worker '"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("broken_worker.py " + mode), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(what), std::string::npos) << r.message;
    const RunOutcome next = isolated.run(testing::identityModel(), testing::kIdentityInputs);
    ASSERT_EQ(next.kind, Outcome::Pass) << next.message;
    EXPECT_TRUE(next.outputs.at("y") == testing::kIdentityInputs.at("x"));
  }
};

TEST_F(BrokenWorker, OneThatDiesIsAnErrorNamingItAndTheNextRunHasAFreshOne) {
  misbehavesOnceThenIsReplaced("dies", Outcome::Error, "exited with status 3 before replying");
}

TEST_F(BrokenWorker, OneThatCrashesIsTheEnginesCrash) {
  WorkerBackend engine(testing::brokenWorker("crashes"), "plain");
  const Isolated isolated(engine, std::chrono::seconds(30), Isolation::Persistent);
  const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
  EXPECT_EQ(r.kind, Outcome::Crash) << r.message;
  EXPECT_EQ(r.signal, SIGSEGV);
}

TEST_F(BrokenWorker, OneThatHangsIsAHang) {
  // (A hang is confirmed in a fresh process, with a fresh worker, before it is reported.)
  WorkerBackend engine(testing::brokenWorker("hangs"), "plain");
  const Isolated isolated(engine, std::chrono::seconds(2), Isolation::Persistent);
  const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
  EXPECT_EQ(r.kind, Outcome::Hang) << r.message;
}

TEST_F(BrokenWorker, OneThatWritesGarbageIsAnErrorNamingItAndIsReplaced) {
  misbehavesOnceThenIsReplaced("garbage", Outcome::Error,
                               "a message of kind 90, which the worker protocol has not");
}

TEST_F(BrokenWorker, OneThatWritesAnOversizedReplyIsRefusedUnreadAndReplaced) {
  misbehavesOnceThenIsReplaced("oversized", Outcome::Unsupported, "past the memory limit");
}

TEST_F(BrokenWorker, OneThatAsksToBeRestartedEveryNRunsIs) {
  WorkerBackend engine(testing::brokenWorker("restarts"), "plain");
  const Isolated isolated(engine, std::chrono::seconds(30), Isolation::Persistent);
  std::vector<float> served;
  for (int i = 0; i < 5; ++i) {
    const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
    ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
    served.push_back(r.outputs.at("y").span<float>()[0] - 1);  // x[0] is 1
  }
  EXPECT_EQ(served, (std::vector<float>{1, 2, 1, 2, 1})) << "a fresh worker every 2 runs";
}

// The engines of one worker command in a process share one running worker, each request naming
// its configuration: the engine at another configuration (a failure's triage, its culprit
// search) starts no second worker. Before, each engine started its own.
TEST_F(BrokenWorker, EveryConfigurationOfACommandInAProcessSharesOneWorker) {
  WorkerBackend plain(testing::brokenWorker("counts"), "plain");
  const Isolated worker(plain, std::chrono::seconds(30), Isolation::Persistent,
                        [](const std::string& c) -> std::shared_ptr<Backend> {
                          return std::make_shared<WorkerBackend>(testing::brokenWorker("counts"),
                                                                 c);
                        });
  const Isolated tenfold = worker.at("tenfold");
  std::vector<float> ys;
  for (const Isolated* engine : {&worker, &tenfold, &worker, &tenfold}) {
    const RunOutcome r = engine->run(testing::identityModel(), testing::kIdentityInputs);
    ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
    ys.push_back(r.outputs.at("y").span<float>()[0]);  // x[0] is 1
  }
  EXPECT_EQ(ys, (std::vector<float>{2, 12, 4, 14})) << "x (times 10) + the runs one worker served";
}

TEST_F(BrokenWorker, OneOfAnotherProtocolVersionIsRefusedAtHello) {
  const std::string e =
      testing::errorOf([] { WorkerBackend engine(testing::brokenWorker("version")); });
  EXPECT_NE(e.find("broken_worker.py version'"), std::string::npos) << e;
  EXPECT_NE(e.find("speaks the worker protocol version 2; this nncheck speaks version 1"),
            std::string::npos)
      << e;
}

TEST_F(BrokenWorker, AConfigurationOrOptimizationItsFactsDoNotNameIsAnError) {
  const std::string e =
      testing::errorOf([] { WorkerBackend engine(testing::brokenWorker("good"), "fast"); });
  EXPECT_NE(e.find("no configuration 'fast' (its configurations: 'plain')"), std::string::npos)
      << e;
  const std::string d = testing::errorOf(
      [] { WorkerBackend engine(testing::brokenWorker("good"), "plain,disable=Fold"); });
  EXPECT_NE(d.find("names no optimization 'Fold'"), std::string::npos) << d;
}

TEST_F(BrokenWorker, AnOptimizationItNamesButCannotSwitchOffCountsAsReachOnly) {
  EXPECT_EQ(WorkerBackend(testing::brokenWorker("good")).optimizations(),
            std::vector<std::string>{"Simplify"});
  const std::string d = testing::errorOf(
      [] { WorkerBackend engine(testing::brokenWorker("good"), "plain,disable=Simplify"); });
  EXPECT_NE(d.find("cannot switch off 'Simplify' (the engine names it as applied only)"),
            std::string::npos)
      << d;
}

// The Python SDK's example optimizer (examples/python_engine), its bug planted.
const std::string kExample =
    std::string(NNCHECK_SDK_PYTHON) + " " + NNCHECK_SOURCE_DIR "/examples/python_engine/engine.py";

class PlantedBug : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("NNCHECK_EXAMPLE_BUG", "1", 1); }
  void TearDown() override { ::unsetenv("NNCHECK_EXAMPLE_BUG"); }
};

TEST_F(PlantedBug, TheExampleEnginesFactsAndOptimizationsComeFromItsClass) {
  WorkerBackend o1(WorkerCommand::parse(kExample), "O1"), o0(WorkerCommand::parse(kExample), "O0");
  EXPECT_EQ(o1.name(), "pyopt (O1)");
  EXPECT_EQ(o1.optimizations(),
            (std::vector<std::string>{"CancelNegPair", "FuseReluPair", "RemoveIdentity"}));
  EXPECT_TRUE(o0.optimizations().empty());
  EXPECT_EQ(o1.capabilities().dtypes, std::vector<DType>{DType::Float32});
  WorkerBackend without(WorkerCommand::parse(kExample), "O1,disable=CancelNegPair");
  EXPECT_EQ(without.optimizations(), (std::vector<std::string>{"FuseReluPair", "RemoveIdentity"}));
  const std::string name = addWorkerEngine(kExample);
  EXPECT_EQ(engines().key(name, "O1,disable=RemoveIdentity+CancelNegPair"),
            "O1,disable=CancelNegPair+RemoveIdentity");
  EXPECT_EQ(engines().key(name, ""), "O1") << "the default is the first configuration";
  const std::string e = testing::errorOf([&] { engines().key(name, "disable=FuseReluPair,O1"); });
  EXPECT_NE(e.find("disable=FuseReluPair,O1"), std::string::npos) << e;
}

#endif  // NNCHECK_SDK_PYTHON

}  // namespace
}  // namespace nncheck
