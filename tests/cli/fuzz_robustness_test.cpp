// nncheck fuzz under what careless users and machines do to it (issue 46, the third hostile
// probe): an engine whose set-up does not work, two campaigns of one seed on one corpus, a
// worker killed, Ctrl-C, a full temporary folder. Driven by the tests' optimizing double as a
// plug-in (tests/backends/plugins), so that no engine's install is needed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cli/cli_runner.h"
#include "core/backend_test.h"
#include "nncheck/corpus.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCommand;

using testing::has;

// `nncheck <command> --engine-lib <the double> --backend buggy-double <args>`.
std::string onDouble(const std::string& command, const std::string& args) {
  std::string line = NNCHECK_CLI;
  line += " " + command + " --engine-lib ";
  line += NNCHECK_TEST_PLUGINS;
  line += "/libbuggy_double.so --backend buggy-double " + args;
  return line;
}

class FuzzRobustness : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"fuzz_robustness"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

// Before, a broken set-up (onnxruntime-node missing, NNCHECK_NODE naming a program that exits)
// made every case an engine error: `fuzz` saved them as findings and exited 0.
TEST_F(FuzzRobustness, AnEngineThatDoesNotWorkHereStopsTheRunAndSavesNothing) {
  for (const std::string jobs : {"1", "2"}) {
    auto o = runCommand(onDouble(
        "fuzz", "--config broken --cases 50 --jobs " + jobs + " --corpus " + corpus_.string()));
    EXPECT_EQ(o.status, 2) << o.output;
    EXPECT_TRUE(has(o.output,
                    "nncheck fuzz: error: engine buggy-double (broken) does not work "
                    "here: a one-node Relu model ended in error: buggy-double: cannot "
                    "load its runtime"))
        << o.output;
    EXPECT_TRUE(has(o.output, "install what it needs with the tests' build")) << o.output;
    EXPECT_FALSE(fs::exists(corpus_)) << "nothing is saved\n" << o.output;
  }
  // The commands that replay cases stop alike, before any case.
  auto run = runCommand(
      onDouble("run", "--config broken " + testing::nodeTestDir().string() + "/test_relu"));
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(has(run.output, "nncheck run: error: engine buggy-double (broken) does not work"))
      << run.output;
  auto check = runCommand(
      onDouble("corpus check", "--config broken " NNCHECK_SOURCE_DIR "/examples/opencv/corpus"));
  EXPECT_EQ(check.status, 2) << check.output;
  EXPECT_TRUE(has(check.output, "does not work here")) << check.output;
}

// Before, one of two campaigns of one seed on one corpus died with "cannot move the case into
// place: Directory not empty" (rc 1) and its summary was lost.
TEST_F(FuzzRobustness, TwoCampaignsOfOneSeedOnOneCorpusBothEndWithTheirSummaries) {
  for (const std::string jobs : {"1", "2"}) {
    const std::string fuzz = onDouble("fuzz", "--config bugs --cases 300 --seed 3 --jobs " + jobs +
                                                  " --corpus " + corpus_.string());
    testing::CliOutcome first;
    std::thread other([&] { first = runCommand(fuzz); });
    testing::CliOutcome second = runCommand(fuzz);
    other.join();
    for (const testing::CliOutcome* o : {&first, &second}) {
      EXPECT_EQ(o->status, 0) << "--jobs " << jobs << "\n" << o->output;
      EXPECT_TRUE(has(o->output, "distinct failures:")) << o->output;
    }
  }
  std::map<std::string, int> folders;
  for (const CorpusCase& c : loadCorpus(corpus_ / "fuzz-buggy-double")) ++folders[c.pattern];
  ASSERT_FALSE(folders.empty());
  for (const auto& [pattern, n] : folders) EXPECT_EQ(n, 1) << pattern;
}

// A shell line that starts the campaign `command` in a session of its own (as a terminal starts a
// job), waits until it reports progress (which, with --jobs, it does once every worker is
// forked), runs `then` with $p its pid, and prints its exit status and output. It waits up to two
// minutes: on a loaded machine a signal sent before the campaign installs its handlers is lost
// (a background job ignores SIGINT), and the campaign then runs its whole time.
std::string whileRunning(const std::string& command, const std::string& then) {
  return "setsid " + command + " --progress-every 0.2 > out.txt 2>&1 & p=$!; " +
         "for i in $(seq 2400); do grep -q ' cases (' out.txt 2>/dev/null && break; sleep 0.05; " +
         "done; sleep 0.5; " + then + "; wait $p; echo \"exit=$?\"; cat out.txt";
}

// Before, one --jobs worker killed (as the OOM killer would) cost the whole summary and report,
// the healthy workers' results with it.
TEST_F(FuzzRobustness, AKilledWorkerIsNamedAndTheOthersResultsAreReported) {
  const std::string fuzz = onDouble("fuzz", "--config fixed --seconds 10 --jobs 2 --corpus " +
                                                corpus_.string() + " --report report.html");
  auto o = runCommand("cd " + tmp_.path().string() + " || exit 1; " +
                      whileRunning(fuzz, "kill -KILL $(pgrep -P $p | head -1)"));
  EXPECT_TRUE(has(o.output, "exit=1")) << o.output;
  EXPECT_TRUE(has(o.output, "of 2 was killed by signal 9 (Killed) after")) << o.output;
  EXPECT_TRUE(has(o.output, "\ncampaign: ")) << "the other worker's summary\n" << o.output;
  EXPECT_TRUE(has(o.output, "report: report.html")) << o.output;
  EXPECT_TRUE(fs::exists(tmp_.path() / "report.html"));
}

// Before, Ctrl-C ended `fuzz` without a summary or a report (rc 130), and with --jobs left
// /tmp/nncheck-jobs-* behind. Now it stops after the case in progress, reports what ran and
// leaves nothing in the temporary folder; the engines, outside the terminal's process group,
// never see the signal (their deaths would be crashes).
TEST_F(FuzzRobustness, CtrlCStopsTheCampaignWithItsSummaryAndReportAndLeavesNothing) {
  for (const std::string jobs : {"1", "2"}) {
    const fs::path tmpdir = tmp_.path() / ("tmp" + jobs);
    fs::create_directories(tmpdir);
    const std::string fuzz =
        onDouble("fuzz", "--config bugs --seconds 120 --jobs " + jobs + " --corpus " +
                             corpus_.string() + " --report report" + jobs + ".html");
    const auto start = std::chrono::steady_clock::now();
    // To the whole process group, as a terminal's Ctrl-C.
    auto o =
        runCommand("cd " + tmp_.path().string() + " || exit 1; export TMPDIR=" + tmpdir.string() +
                   "; " + whileRunning(fuzz, "kill -INT -$p"));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(has(o.output, "exit=130")) << o.output;
    EXPECT_LT(seconds, 60) << o.output;
    EXPECT_TRUE(has(o.output, "stopping: the case in progress is left")) << o.output;
    EXPECT_TRUE(has(o.output, "interrupted: what ran before the stop")) << o.output;
    EXPECT_TRUE(has(o.output, "report: report" + jobs + ".html")) << o.output;
    EXPECT_FALSE(has(o.output, "crash")) << "an engine saw the signal\n" << o.output;
    EXPECT_TRUE(fs::exists(tmp_.path() / ("report" + jobs + ".html")));
    EXPECT_TRUE(fs::is_empty(tmpdir)) << "left behind in " << tmpdir;
  }
}

#ifdef NNCHECK_SDK_PYTHON
// `--engine-worker '<python> broken_worker.py MODE'` (tests/backends/workers).
std::string brokenWorkerOption(const std::string& mode) {
  return "--engine-worker '" NNCHECK_SDK_PYTHON " " NNCHECK_SOURCE_DIR
         "/tests/backends/workers/broken_worker.py " +
         mode + "'";
}

// A shell loop that waits (up to ten seconds) until the broken worker runs in nncheck's session,
// $p, and sets $w to its pid. (nncheck's own command line names the worker too: left out.)
std::string waitForWorker() {
  return "for i in $(seq 200); do w=$(pgrep -s $p -f broken_worker.py | grep -vx $p | head -1); "
         "[ -n \"$w\" ] && break; sleep 0.05; done; ";
}

// Before, Ctrl-C, SIGTERM and the time box waited while the engines started: an Inductor
// campaign stopped 93 s after Ctrl-C. Here the engine's first run (the check that it works here)
// hangs until its --timeout of 120 s: Ctrl-C ends the start-up at once, and so does the time box.
TEST_F(FuzzRobustness, CtrlCAndTheTimeBoxEndTheEnginesStartUp) {
  const std::string fuzz = std::string(NNCHECK_CLI) + " fuzz " + brokenWorkerOption("hangs") +
                           " --timeout 120 --corpus " + corpus_.string();
  // Ctrl-C to the process group once the worker runs (its facts are read; the check's run hangs).
  auto interrupted = runCommand("cd " + tmp_.path().string() + " || exit 1; setsid " + fuzz +
                                " --seconds 600 > out.txt 2>&1 & p=$!; " + waitForWorker() +
                                "sleep 1; kill -INT -$p; wait $p; echo \"exit=$?\"; cat out.txt");
  EXPECT_TRUE(has(interrupted.output, "exit=130")) << interrupted.output;
  EXPECT_TRUE(has(interrupted.output, "campaign: 0 cases")) << interrupted.output;
  EXPECT_TRUE(has(interrupted.output, "interrupted: what ran before the stop"))
      << interrupted.output;
  auto boxed = runCommand(fuzz + " --seconds 3");
  EXPECT_EQ(boxed.status, 0) << boxed.output;
  EXPECT_TRUE(has(boxed.output, "campaign: 0 cases")) << boxed.output;
}

// Before, the folder of a worker started in nncheck's own process (to read its facts) stayed in
// TMPDIR when a signal ended nncheck, as did the worker. Now the signal removes it, the worker
// dies with nncheck, and a folder a killed nncheck left is removed by the next that starts one.
TEST_F(FuzzRobustness, ASignalThatEndsNncheckTakesItsTemporaryFoldersAndWorkersAlong) {
  const fs::path tmpdir = tmp_.path() / "tmp";
  fs::create_directories(tmpdir / "nncheck-worker-999999999-left");  // of a process long gone
  const std::string fuzz = std::string(NNCHECK_CLI) + " fuzz " + brokenWorkerOption("sleeps") +
                           " --seconds 600 --corpus " + corpus_.string();
  // The worker sleeps at hello, in nncheck's own process: SIGTERM comes meanwhile.
  auto o =
      runCommand("export TMPDIR=" + tmpdir.string() + "; setsid " + fuzz +
                 " > /dev/null 2>&1 & p=$!; " + waitForWorker() +
                 "sleep 0.5; kill -TERM $p; wait $p; echo \"exit=$?\"; sleep 0.5; "
                 "case $(ps -o stat= -p $w) in ''|Z*) echo 'no worker left' ;; *) echo \"worker $w "
                 "left\" ;; esac");  // (a zombie is gone: it waits to be reaped)
  EXPECT_TRUE(has(o.output, "exit=143")) << o.output;
  EXPECT_TRUE(has(o.output, "no worker left")) << o.output;
  EXPECT_TRUE(fs::is_empty(tmpdir)) << "left behind in " << tmpdir;
}
#endif

// Before, with TMPDIR on a full disk every case ran, then "worker N of M: ended without its
// results" came with no reason and the summary was lost: the workers handed their results
// back through files there. Needs a small file system of its own (a user namespace's tmpfs).
TEST_F(FuzzRobustness, AFullTemporaryFolderCostsNoSummary) {
  const fs::path full = tmp_.path() / "full";
  fs::create_directories(full);
  const std::string fuzz =
      onDouble("fuzz", "--config fixed --cases 60 --jobs 2 --corpus " + corpus_.string());
  auto o =
      runCommand("unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs " + full.string() +
                 " || exit 77; dd if=/dev/zero of=" + full.string() +
                 "/filler bs=4k count=64 2>/dev/null; TMPDIR=" + full.string() + " " + fuzz + "'");
  if (o.status == 77 || has(o.output, "unshare: "))
    GTEST_SKIP() << "no user namespace to mount a small file system in: " << o.output;
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(has(o.output, "campaign: 60 cases")) << o.output;
}

// Before, `reduce` printed node and value names raw, and the "replay:" line the --engine-lib
// path, so a case's terminal escapes reached the terminal (`show`, `run` and `corpus check`
// escaped them already).
TEST_F(FuzzRobustness, ReducePrintsNoTerminalEscapeFromACaseOrALibraryPath) {
  // Two Transposes of rank 3 whose merge the double composes in the wrong order, every name an
  // escape sequence, and the library at a path holding one.
  const std::string clear = "\x1b[2J", title = "\x1b]0;pwned\x07";
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor(clear + "x", DType::Float32, {2, 3, 4})};
  m.graph.nodes = {Node::make("Transpose", {clear + "x"}, {title + "t"}, clear + "first"),
                   Node::make("Transpose", {title + "t"}, {clear + "y"}, title + "second")};
  m.graph.nodes[0].attributes = {Attribute::ofInts("perm", {1, 0, 2})};
  m.graph.nodes[1].attributes = {Attribute::ofInts("perm", {0, 2, 1})};
  m.graph.outputs = {ValueInfo::tensor(clear + "y", DType::Float32, {3, 4, 2})};
  Tensor x(DType::Float32, {2, 3, 4});
  for (int64_t i = 0; i < x.size(); ++i) x.span<float>()[static_cast<size_t>(i)] = float(i);
  const fs::path c = tmp_.path() / "case";
  saveBackendTestCase(c, m, {{clear + "x", x}}, {});
  const fs::path library = tmp_.path() / (title + "lib") / "libdouble.so";
  fs::create_directories(library.parent_path());
  fs::copy_file(std::string(NNCHECK_TEST_PLUGINS) + "/libbuggy_double.so", library);
  auto o = runCommand(std::string(NNCHECK_CLI) + " reduce " + c.string() + " --engine-lib '" +
                      library.string() + "' --backend buggy-double --config bugs --corpus " +
                      corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(has(o.output, "mismatch")) << o.output;
  EXPECT_TRUE(has(o.output, "replay: ")) << o.output;
  EXPECT_EQ(o.output.find('\x1b'), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find('\x07'), std::string::npos) << o.output;
}

#ifdef NNCHECK_HAS_ORT_ENGINE
// The probe's own examples on ONNX Runtime: Node.js that exits at once, or crashes, or
// onnxruntime-node missing. Each stops with exit 2 and the install command; nothing is saved.
TEST_F(FuzzRobustness, ABrokenOrtSetUpStopsTheCampaign) {
  const fs::path crashing = tmp_.path() / "crashing-node";
  { std::ofstream(crashing) << "#!/bin/sh\nkill -SEGV $$\n"; }
  fs::permissions(crashing, fs::perms::owner_all);
  for (const auto& [environment, said] : std::vector<std::pair<std::string, std::string>>{
           {"NNCHECK_NODE=/bin/false", "worker '/bin/false --no-warnings "},
           {"NNCHECK_NODE=" + crashing.string(), "ended in crash"},
           {"NNCHECK_ORT_NODE_MODULES=" + tmp_.path().string(), "cannot load onnxruntime-node"}}) {
    auto o = runCommand(environment + " " + NNCHECK_CLI +
                        " fuzz --backend ort --cases 30 --corpus " + corpus_.string());
    EXPECT_EQ(o.status, 2) << environment << "\n" << o.output;
    EXPECT_TRUE(has(o.output, "does not work here")) << environment << "\n" << o.output;
    EXPECT_TRUE(has(o.output, said)) << environment << "\n" << o.output;
    EXPECT_TRUE(has(o.output, "install what it needs with scripts/install-deps.sh")) << o.output;
    EXPECT_FALSE(fs::exists(corpus_)) << environment << "\n" << o.output;
  }
}
#endif

}  // namespace
}  // namespace nncheck
