#include "nncheck/isolation.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "nncheck/compare.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

Model smallModel() {
  GeneratorConfig cfg;
  cfg.nodes = 4;
  cfg.dtypes = {DType::Float32};
  return generateModel(cfg, 3);
}

// Test doubles: engines that misbehave in each way isolation must survive.
struct Misbehaving : Backend {
  enum class How { Segfault, Abort, Hang, Throw, Reject, ExitSilently, CorruptHeap } how;
  explicit Misbehaving(How h) : how(h) {}
  std::string name() const override { return "misbehaving"; }
  TensorMap run(const Model&, const TensorMap&) override {
    switch (how) {
      case How::Segfault:
        ::raise(SIGSEGV);
        break;
      case How::Abort:
        std::abort();
      case How::Hang:
        for (;;) ::pause();
      case How::Throw:
        throw std::runtime_error("engine failed: out of device memory");
      case How::Reject:
        throw Unsupported("engine", "engine rejects the model: Conv needs kernel_shape");
      case How::ExitSilently:
        ::_exit(3);
      case How::CorruptHeap: {
        // A double free, hidden from the compiler's warnings: glibc or AddressSanitizer stops
        // the process, as when an engine's corruption is found in a later free of nncheck's.
        char* volatile block = static_cast<char*>(std::malloc(64));
        std::free(block);
        std::free(block);
        break;
      }
    }
    return {};
  }
};

class IsolatedIn : public ::testing::TestWithParam<Isolation> {};

TEST_P(IsolatedIn, ReferenceOutputsComeBackIntact) {
  Model m = smallModel();
  TensorMap in = randomInputs(m, 3);
  RunOutcome r = isolated(reference(), 5s, GetParam()).run(m, in);
  ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
  TensorMap direct = runReference(m, in);
  ASSERT_EQ(r.outputs.size(), direct.size());
  for (const auto& [name, t] : direct) EXPECT_TRUE(r.outputs.at(name) == t) << name;
}

TEST_P(IsolatedIn, ASegfaultIsACrashWithItsSignal) {
  Misbehaving engine(Misbehaving::How::Segfault);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Crash);
  // The same in a sanitized build, where AddressSanitizer catches the signal, reports it and
  // exits with status 1.
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
}

TEST_P(IsolatedIn, AnAbortIsACrash) {
  Misbehaving engine(Misbehaving::How::Abort);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Crash);
  EXPECT_EQ(r.signal, SIGABRT);
}

TEST_P(IsolatedIn, AHangIsKilledAtTheTimeLimit) {
  Misbehaving engine(Misbehaving::How::Hang);
  RunOutcome r = isolated(engine, 300ms, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Hang);
  EXPECT_GE(r.seconds, 0.29);
  EXPECT_LT(r.seconds, 5.0);
}

TEST_P(IsolatedIn, AnExceptionIsAnErrorWithItsMessage) {
  Misbehaving engine(Misbehaving::How::Throw);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Error);
  EXPECT_EQ(r.message, "engine failed: out of device memory");
}

TEST_P(IsolatedIn, ARejectedModelIsUnsupportedWithItsMessage) {
  Misbehaving engine(Misbehaving::How::Reject);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Unsupported);
  EXPECT_EQ(r.message, "engine rejects the model: Conv needs kernel_shape");
}

TEST_P(IsolatedIn, ExitingWithoutAResultIsACrash) {
  Misbehaving engine(Misbehaving::How::ExitSilently);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Crash);
  EXPECT_NE(r.message.find("status 3"), std::string::npos) << r.message;
}

TEST_P(IsolatedIn, AHeapCorruptedByTheEngineIsSaidToBeTheEngines) {
  // Before, the message was glibc's last line ("free(): double free detected in tcache 2") or
  // AddressSanitizer's "ABORTING", which read as nncheck's own fault.
  Misbehaving engine(Misbehaving::How::CorruptHeap);
  RunOutcome r = isolated(engine, 5s, GetParam()).run(smallModel(), {});
  EXPECT_EQ(r.kind, Outcome::Crash);
  EXPECT_NE(r.message.find("the engine corrupted its heap"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("double"), std::string::npos) << r.message;
}

INSTANTIATE_TEST_SUITE_P(Modes, IsolatedIn,
                         ::testing::Values(Isolation::ForkPerRun, Isolation::Persistent),
                         [](const auto& info) {
                           return info.param == Isolation::Persistent ? "Persistent" : "ForkPerRun";
                         });

// An engine that reports the process it runs in, and crashes on its second run in a process
// (state an earlier case left behind).
struct ProcessReporter : Backend {
  int runsHere = 0;
  std::string name() const override { return "process reporter"; }
  TensorMap run(const Model&, const TensorMap&) override {
    if (++runsHere == 2 && crashOnSecondRun) ::raise(SIGSEGV);
    return {{"pid", Tensor::scalar<int64_t>(::getpid())},
            {"ppid", Tensor::scalar<int64_t>(::getppid())}};
  }
  bool crashOnSecondRun = false;
};

TEST(Isolated, APersistentWorkerServesManyRunsInOneProcess) {
  ProcessReporter engine;
  Isolated worker = isolated(engine, 5s, Isolation::Persistent);
  EXPECT_EQ(worker.mode(), Isolation::Persistent);
  std::set<int64_t> pids;
  for (int i = 0; i < 5; ++i) {
    RunOutcome r = worker.run(smallModel(), {});
    ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
    pids.insert(r.outputs.at("pid").toInt64(0));
  }
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_NE(*pids.begin(), ::getpid());
  // Fork per run: a new process each time.
  Isolated perRun = isolated(engine, 5s);
  EXPECT_NE(perRun.run(smallModel(), {}).outputs.at("pid").toInt64(0),
            perRun.run(smallModel(), {}).outputs.at("pid").toInt64(0));
}

TEST(Isolated, ACrashCausedByAnEarlierCaseIsNotBlamedOnThisOne) {
  ProcessReporter engine;
  engine.crashOnSecondRun = true;
  Isolated worker = isolated(engine, 5s, Isolation::Persistent);
  RunOutcome first = worker.run(smallModel(), {});
  ASSERT_EQ(first.kind, Outcome::Pass) << first.message;
  // The worker dies on its second run; the case, run alone in a fresh child, is fine.
  RunOutcome second = worker.run(smallModel(), {});
  ASSERT_EQ(second.kind, Outcome::Pass) << second.message;
  EXPECT_NE(second.outputs.at("pid").toInt64(0), first.outputs.at("pid").toInt64(0));
  // A replacement worker serves the next run.
  RunOutcome third = worker.run(smallModel(), {});
  ASSERT_EQ(third.kind, Outcome::Pass) << third.message;
  EXPECT_NE(third.outputs.at("pid").toInt64(0), first.outputs.at("pid").toInt64(0));
}

// This process forks once (the spawner); fresh children and workers are the spawner's, so
// that this process's pages are not made copy-on-write again at every run.
TEST(Isolated, RunsAreForkedByOneHelperNotByThisProcess) {
  ProcessReporter engine;
  engine.crashOnSecondRun = true;
  Isolated fresh = isolated(engine, 5s);
  std::set<int64_t> pids, parents;
  for (int i = 0; i < 3; ++i) {
    RunOutcome r = fresh.run(smallModel(), {});
    ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
    pids.insert(r.outputs.at("pid").toInt64(0));
    parents.insert(r.outputs.at("ppid").toInt64(0));
  }
  EXPECT_EQ(pids.size(), 3u);
  ASSERT_EQ(parents.size(), 1u);
  EXPECT_NE(*parents.begin(), ::getpid());
  // The worker and its replacement (after the crash) come from a spawner too.
  Isolated worker = isolated(engine, 5s, Isolation::Persistent);
  RunOutcome first = worker.run(smallModel(), {});
  RunOutcome crashed = worker.run(smallModel(), {});  // confirmed in a fresh child: passes
  RunOutcome third = worker.run(smallModel(), {});
  for (const RunOutcome* r : {&first, &crashed, &third}) {
    ASSERT_EQ(r->kind, Outcome::Pass) << r->message;
    EXPECT_NE(r->outputs.at("ppid").toInt64(0), ::getpid());
  }
  EXPECT_NE(first.outputs.at("pid").toInt64(0), third.outputs.at("pid").toInt64(0));
}

TEST(Isolated, TimeoutComesFromTheEnvironment) {
  ::setenv("NNCHECK_TIMEOUT", "0.25", 1);
  EXPECT_EQ(defaultTimeout(), 250ms);
  ::setenv("NNCHECK_TIMEOUT", "soon", 1);
  EXPECT_THROW(defaultTimeout(), Error);
  ::unsetenv("NNCHECK_TIMEOUT");
  EXPECT_EQ(defaultTimeout(), 10s);
}

}  // namespace
}  // namespace nncheck
