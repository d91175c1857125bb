// nncheck probe: what an engine accepts, measured with single-op models of every op in the
// library (float32, weights as initializers), each run isolated and compared with the reference.
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "nncheck/error.h"
#include "nncheck/opencv.h"
#include "nncheck/property.h"

namespace nncheck::cli {
namespace {

struct ProbeOptions {
  std::string backend = "opencv";
  int perOp = 5;
  uint64_t seed = 1;
  bool fusion = true;
  double timeout = 10;
};

struct Row {
  int match = 0, mismatch = 0, rejected = 0, crash = 0, hang = 0;
  std::string firstMessage;
};

int run(const ProbeOptions& o) {
  std::unique_ptr<Backend> engine;
  if (o.backend == "opencv") {
    if (!opencv::available()) {
      std::cerr << "nncheck probe: error: this nncheck was built without OpenCV DNN\n";
      return 2;
    }
    engine = std::make_unique<opencv::Backend>(opencv::Config{o.fusion, opencv::Target::Cpu});
  } else if (o.backend == "reference") {
    engine = std::make_unique<ReferenceBackend>();
  } else {
    std::cerr << "nncheck probe: error: --backend " << o.backend
              << ": unknown backend (available: opencv, reference)\n";
    return 2;
  }
  if (o.perOp < 1 || o.timeout <= 0) {
    std::cerr << "nncheck probe: error: --per-op and --timeout must be positive\n";
    return 2;
  }
  GeneratorConfig base = configFor(engine->capabilities(), 1);
  std::vector<std::string> ops;
  try {
    ops = usableOps(base);
  } catch (const std::exception& e) {
    std::cerr << "nncheck probe: error: " << e.what() << "\n";
    return 2;
  }
  const Isolated isolatedEngine =
      isolated(*engine, std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000)));
  std::map<std::string, Row> rows;
  int accepted = 0;
  for (const std::string& op : ops) {
    GeneratorConfig cfg = base;
    cfg.ops = {op};
    Row& row = rows[op];
    for (int i = 0; i < o.perOp; ++i) {
      TestCase tc;
      try {
        tc = makeTestCase(cfg, o.seed + static_cast<uint64_t>(i));
      } catch (const Error&) {
        continue;  // no single-node model of this op under the engine's capabilities
      }
      try {
        assertAllClose(runOn(isolatedEngine, tc), runOn(reference(), tc));
        ++row.match;
      } catch (const PropertyFailure& f) {
        switch (f.kind()) {
          case FailureKind::Mismatch:
            ++row.mismatch;
            break;
          case FailureKind::Crash:
            ++row.crash;
            break;
          case FailureKind::Hang:
            ++row.hang;
            break;
          default:
            ++row.rejected;
            break;
        }
        if (row.firstMessage.empty()) row.firstMessage = std::string(f.what()).substr(0, 100);
      }
    }
    if (row.match + row.mismatch > 0) ++accepted;
    std::printf("%-22s match %2d  mismatch %2d  rejected %2d  crash %2d  hang %2d  %s\n",
                op.c_str(), row.match, row.mismatch, row.rejected, row.crash, row.hang,
                row.match == o.perOp ? "" : row.firstMessage.c_str());
    std::fflush(stdout);
  }
  std::printf("\n%s: %d of %zu ops accepted (ran on at least one model)\n", engine->name().c_str(),
              accepted, ops.size());
  return 0;
}

}  // namespace

void addProbeCommand(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Measure what an engine accepts: single-op models of every op (float32, weights as "
      "initializers), run isolated and compared with the reference.");
  cmd->add_option("--backend", o->backend, "engine to probe: opencv, reference")
      ->capture_default_str();
  cmd->add_option("--per-op", o->perOp, "models per op")->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the first model per op")->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "seconds per run before it counts as a hang")
      ->capture_default_str();
  cmd->add_flag(
      "--no-fusion", [o](int64_t) { o->fusion = false; }, "OpenCV: switch graph fusion off");
  cmd->callback([o] { setExitCode(run(*o)); });
}

}  // namespace nncheck::cli
