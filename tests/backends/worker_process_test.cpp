// A worker that misbehaves around its process (tests/backends/workers/broken_worker.py): it may
// close its output and stay, leave a child holding its output, leave daemons, flood its stderr,
// allocate past the memory limit, or name more than an engine may. Each ends in a clear error or
// a skip, within its bounds, and leaves nothing running.
#include "backends/worker_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "backends/broken_worker.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "nncheck/worker_engine.h"
#include "test_util.h"

namespace nncheck {
namespace {

#ifdef NNCHECK_SDK_PYTHON

namespace fs = std::filesystem;

WorkerProcess::Command processOf(const WorkerCommand& c) {
  return {c.argv, {{"PYTHONPATH", NNCHECK_SOURCE_DIR "/python"}}, ""};
}

// Whether a process is running (a zombie is not: it only waits to be reaped).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Whether the process is gone within a few seconds (killing and reaping take a moment).
bool goneSoon(pid_t pid) {
  for (int i = 0; i < 100 && running(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !running(pid);
}

pid_t pidIn(const fs::path& file) {
  for (int i = 0; i < 100 && !fs::exists(file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  pid_t pid = 0;
  std::ifstream(file) >> pid;
  return pid;
}

// This process's peak resident memory, in MiB.
int64_t peakMiB() {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    int64_t kib = 0;
    if (key == "VmHWM:" && status >> kib) return kib >> 10;
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

// Before, nncheck waited for it for ever (waitpid with no deadline and no kill).
TEST(WorkerProcess, OneThatClosesItsOutputAndStaysIsStopped) {
  const std::string e =
      testing::errorOf([] { WorkerBackend engine(testing::brokenWorker("closes")); });
  EXPECT_NE(e.find("closed its output before it said its facts and did not exit within 2 s; it "
                   "was stopped"),
            std::string::npos)
      << e;
}

// Before, a child holding its output made nncheck wait 120 s and say it "did not answer hello",
// though it had exited 0; and the child lived on.
TEST(WorkerProcess, OneThatExitsWhileItsChildHoldsItsOutputIsSeenToExit) {
  testing::TempDir tmp("worker_holds");
  const fs::path pidFile = tmp.path() / "child";
  const std::string e = testing::errorOf(
      [&] { WorkerBackend engine(testing::brokenWorker("holds", pidFile.string())); });
  EXPECT_NE(e.find("exited with status 0 before it said its facts"), std::string::npos) << e;
  const pid_t child = pidIn(pidFile);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(goneSoon(child)) << "the worker's child " << child << " outlived it";
}

// Before, a daemon a worker left outlived nncheck. Now the engine's process adopts what the
// worker leaves, and it ends with it.
TEST(WorkerProcess, ADaemonTheWorkerLeavesEndsWithTheEngine) {
  testing::TempDir tmp("worker_orphans");
  const fs::path pidFile = tmp.path() / "daemon";
  pid_t daemon = 0;
  {
    WorkerBackend engine(testing::brokenWorker("orphans", pidFile.string()), "plain");
    const Isolated isolated(engine, std::chrono::seconds(30), Isolation::Persistent);
    const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
    ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
    daemon = pidIn(pidFile);
    ASSERT_GT(daemon, 0);
    EXPECT_TRUE(running(daemon)) << "the daemon never ran";
  }
  EXPECT_TRUE(goneSoon(daemon)) << "the worker's daemon " << daemon << " outlived the engine";
}

// Before, its stderr went to a file that grew without bound (2 GB in seconds) and was read into
// memory whole, at hello in nncheck's own process.
TEST(WorkerProcess, AFloodOfItsStderrCostsNeitherMemoryNorDisk) {
  const int64_t before = peakMiB();
  WorkerProcess w(processOf(testing::brokenWorker("floods", "768")));
  w.facts();
  std::string log;
  const worker::Reply reply =
      w.run({.configuration = "plain"}, serializeModel(testing::identityModel()),
            {{"x", &testing::kIdentityInputs.at("x")}}, log);
  EXPECT_EQ(reply.kind, worker::kOutputs);
  EXPECT_LE(log.size(), size_t{1} << 21) << "the log is its tail";
  EXPECT_NE(log.find("bytes of its stderr before these left out"), std::string::npos);
  EXPECT_LT(peakMiB() - before, 256) << "1.5 GiB of stderr held in memory";
}

// Before, 200 configurations started 521 processes; 20,000 were still starting after 10 min.
TEST(WorkerProcess, FactsNamingMoreThanAnEngineMayOrAPathAreRefused) {
  const std::string many =
      testing::errorOf([] { WorkerBackend engine(testing::brokenWorker("many")); });
  EXPECT_NE(many.find("its facts name 200 configurations; an engine may have at most 32"),
            std::string::npos)
      << many;
  const std::string path =
      testing::errorOf([] { WorkerBackend engine(testing::brokenWorker("badname")); });
  EXPECT_NE(path.find("its facts name the engine '../escape', which is no plain name"),
            std::string::npos)
      << path;
}

// Before, the memory limit was polled: a worker held 6.4 times it before the kill. Now the
// kernel refuses its allocation past the limit, and the case is skipped for memory.
TEST(WorkerProcess, AnAllocationPastTheMemoryLimitFailsAndTheCaseIsSkipped) {
  const int64_t before = setMemoryLimit(int64_t{512} << 20);
  WorkerBackend engine(testing::brokenWorker("grabs"), "plain");
  const Isolated isolated(engine, std::chrono::seconds(30), Isolation::Persistent);
  const RunOutcome r = isolated.run(testing::identityModel(), testing::kIdentityInputs);
  setMemoryLimit(before);
  EXPECT_EQ(r.kind, Outcome::Unsupported) << r.message;
  EXPECT_NE(r.message.find("could not allocate within the memory limit of 512 MiB"),
            std::string::npos)
      << r.message;
}

#endif  // NNCHECK_SDK_PYTHON

}  // namespace
}  // namespace nncheck
