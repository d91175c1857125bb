// nncheck probe: what an engine accepts, measured with single-op models of every op in the
// library under the engine's base capabilities, each run isolated and compared with the
// reference; --write-table rebuilds the table a backend compiles in.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/engines.h"
#include "core/deadline.h"
#include "core/files.h"
#include "harness/probe.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck::cli {
namespace {

struct ProbeCliOptions {
  EngineSelection engine;
  std::string config;
  ProbeOptions probe;
  double timeout = 10;
  std::string writeTable;
};

int run(const ProbeCliOptions& o) {
  std::unique_ptr<Backend> engine;
  std::chrono::milliseconds timeout;
  try {
    engine = makeEngine(o.engine, o.config);
    timeout = timeLimitFromSeconds("--timeout", o.timeout);
    if (o.probe.perOp < 1) throw Error("--per-op: expected a positive number of models");
    if (!o.writeTable.empty()) checkOutputFile(o.writeTable);  // now, not after the probe
  } catch (const Error& e) {
    std::cerr << "nncheck probe: error: " << e.what() << "\n";
    return 2;
  }
  const Isolated isolatedEngine = isolated(*engine, timeout, Isolation::Persistent);
  std::printf("%-22s %6s %5s %8s %11s %5s %5s %5s  %s\n", "op", "models", "match", "mismatch",
              "unsupported", "error", "crash", "hang", "first problem");
  std::vector<ProbeRow> rows;
  try {
    rows = probe(isolatedEngine, engines().baseCapabilities(o.engine.backend), o.probe,
                 [](const ProbeRow& r) {
                   std::string problem = r.firstProblem.substr(0, r.firstProblem.find('\n'));
                   if (problem.size() > 110) problem = problem.substr(0, 110) + "...";
                   std::printf("%-22s %6d %5d %8d %11d %5d %5d %5d  %s\n", r.op.c_str(), r.models,
                               r.count(Outcome::Pass), r.count(Outcome::Mismatch),
                               r.count(Outcome::Unsupported), r.count(Outcome::Error),
                               r.count(Outcome::Crash), r.count(Outcome::Hang), problem.c_str());
                   std::fflush(stdout);
                 });
  } catch (const Error& e) {
    std::cerr << "nncheck probe: error: " << e.what() << "\n";
    return 1;
  }
  int accepted = 0;
  for (const ProbeRow& r : rows) accepted += r.acceptedShare() > 0;
  std::printf("\n%s: %d of %zu ops accepted (ran on at least one model)\n", engine->name().c_str(),
              accepted, rows.size());
  if (!o.writeTable.empty()) {
    try {
      writeOutputFile(o.writeTable, probeTableSource(rows, engine->name(), o.probe));
    } catch (const std::exception& e) {
      std::cerr << "nncheck probe: error: --write-table " << o.writeTable << ": " << e.what()
                << "\n";
      return 1;
    }
    std::printf("table written to %s\n", o.writeTable.c_str());
  }
  return 0;
}

}  // namespace

void addProbeCommand(CLI::App& app) {
  auto o = std::make_shared<ProbeCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Measure what an engine accepts: single-op models of every op, run isolated and compared "
      "with the reference.");
  addEngineSelection(cmd, o->engine, "opencv");
  cmd->add_option("--config", o->config, "engine configuration, e.g. fusion=off,target=cpu");
  cmd->add_option("--per-op", o->probe.perOp, "models per op")->capture_default_str();
  cmd->add_option("--seed", o->probe.seed, "seed of the first model per op")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "seconds per run before it counts as a hang")
      ->capture_default_str();
  cmd->add_option("--write-table", o->writeTable,
                  "write the accepted ops and their shares as C++ rows (for opencv: "
                  "src/backends/opencv/opencv_capabilities.inc)");
  cmd->callback([o] { setExitCode(run(*o)); });
}

}  // namespace nncheck::cli
