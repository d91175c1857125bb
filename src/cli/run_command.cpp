// nncheck run: replays ONNX backend-test folders against a backend and reports per case.
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/engines.h"
#include "core/deadline.h"
#include "harness/conformance.h"
#include "harness/probe.h"
#include "nncheck/error.h"
#include "nncheck/test_case.h"

namespace nncheck::cli {
namespace {

int exitCodeValue = 0;

struct RunOptions {
  EngineSelection engine;
  std::string config;
  double timeout = 10;
  bool byOp = false;
  bool verbose = false;
  std::vector<std::string> paths;
};

struct OpRow {
  int passed = 0, failed = 0, skipped = 0;
};

void printByOp(const ConformanceReport& report) {
  std::map<std::string, OpRow> rows;
  for (const CaseResult& c : report.cases)
    for (const std::string& op : c.ops) {
      OpRow& row = rows[op];
      if (c.outcome == Outcome::Pass)
        ++row.passed;
      else if (isFailure(c.outcome))
        ++row.failed;
      else
        ++row.skipped;
    }
  std::printf("\n%-28s %7s %7s %8s\n", "op (cases using it)", "passed", "failed", "skipped");
  for (const auto& [op, row] : rows)
    std::printf("%-28s %7d %7d %8d\n", op.c_str(), row.passed, row.failed, row.skipped);
}

void printSkipReasons(const ConformanceReport& report) {
  std::map<std::string, int> reasons;
  for (const CaseResult& c : report.cases)
    if (c.outcome == Outcome::Unsupported) ++reasons[c.category];
  if (reasons.empty()) return;
  std::printf("\nskipped, by reason:\n");
  for (const auto& [reason, n] : reasons) std::printf("  %5d  %s\n", n, reason.c_str());
}

int run(const RunOptions& o) {
  std::unique_ptr<Backend> engine;
  std::optional<Isolated> isolatedEngine;
  try {
    if (o.engine.backend != "reference" || !o.config.empty() || !o.engine.libraries.empty() ||
        !o.engine.worker.empty()) {
      engine = makeEngine(o.engine, o.config);
      isolatedEngine.emplace(*engine, timeLimitFromSeconds("--timeout", o.timeout),
                             Isolation::Persistent);
      checkEngineSetUp(*isolatedEngine);
    }
  } catch (const SetUpError& e) {
    return reportSetUpError("run", e, o.engine.backend);
  } catch (const Error& e) {
    std::cerr << "nncheck run: error: " << printable(e.what()) << "\n";
    return 2;
  }
  std::vector<std::filesystem::path> paths(o.paths.begin(), o.paths.end());
  if (paths.empty()) {
    auto def = defaultNodeTestDir();
    if (def.empty()) {
      std::cerr << "nncheck run: error: no PATH given and ONNX's node tests are not installed "
                   "(apt-get install libonnx-testdata)\n";
      return 2;
    }
    paths.push_back(def);
  }
  ConformanceOptions options;
  if (isolatedEngine) options.engine = &*isolatedEngine;
  options.onCase = [&](const CaseResult& c) {
    if (isFailure(c.outcome))
      std::printf("FAIL  %s: %s\n", printable(c.dir.filename().string()).c_str(),
                  printable(c.message).c_str());
    else if (o.verbose && c.outcome == Outcome::Unsupported)
      std::printf("SKIP  %s: %s\n", printable(c.dir.filename().string()).c_str(),
                  printable(c.message).c_str());
    else if (o.verbose)
      std::printf("PASS  %s\n", printable(c.dir.filename().string()).c_str());
    if (o.verbose && !c.upgraded.empty())
      std::printf("      (model %s)\n", printable(c.upgraded).c_str());
    std::fflush(stdout);
  };
  ConformanceReport report;
  try {
    report = runConformance(paths, options);
  } catch (const Error& e) {
    std::cerr << "nncheck run: error: " << printable(e.what()) << "\n";
    return 2;
  }
  sayLeftOut("run", report.leftOut);
  if (o.byOp) printByOp(report);
  printSkipReasons(report);
  // Models of older opsets are upgraded as they are read: said, since what ran is not the file.
  int upgraded = 0, notUpgraded = 0;
  for (const CaseResult& c : report.cases)
    if (!c.upgraded.empty()) ++(c.upgraded.rfind("upgraded", 0) == 0 ? upgraded : notUpgraded);
  if (upgraded + notUpgraded > 0)
    std::printf("\n%d models of older opsets were upgraded by ONNX's version converter%s\n",
                upgraded,
                notUpgraded ? (", " + std::to_string(notUpgraded) +
                               " could not be (-v says why) and were taken as they are")
                                  .c_str()
                            : "");
  std::printf("\n%d passed, %d failed, %d skipped\n", report.passed, report.failed, report.skipped);
  return report.failed == 0 ? 0 : 1;
}

}  // namespace

void setExitCode(int code) { exitCodeValue = code; }
int exitCode() { return exitCodeValue; }

void sayLeftOut(const std::string& command, const std::vector<std::string>& leftOut) {
  for (const std::string& what : leftOut)
    std::cerr << "nncheck " << command << ": left out " << printable(what) << "\n";
}

void addRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Replay ONNX backend-test folders (model.onnx + test_data_set_*) against a backend and "
      "compare with ONNX's tolerances (rtol 1e-3, atol 1e-7; exact for integers and bool). "
      "With no PATH, runs the node tests of Debian's libonnx-testdata.");
  addEngineSelection(cmd, opts->engine, "reference");  // the reference runs in process
  cmd->add_option("--config", opts->config, "engine configuration, e.g. fusion=off");
  cmd->add_option("--timeout", opts->timeout, "seconds per isolated run before it is a hang")
      ->capture_default_str();
  cmd->add_flag("--by-op", opts->byOp, "print a per-op table of passed, failed and skipped cases");
  cmd->add_flag("-v,--verbose", opts->verbose, "print every case, with skip reasons");
  cmd->add_option("PATH", opts->paths, "test case folders, or folders holding them");
  cmd->callback([opts] { setExitCode(run(*opts)); });
}

}  // namespace nncheck::cli
