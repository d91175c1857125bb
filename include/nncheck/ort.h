// ONNX Runtime as an engine (nncheck::ort, `--backend ort`): ONNX Runtime 1.30 through its
// official Node.js binding, onnxruntime-node, which scripts/install-deps.sh installs from the npm
// registry (no C header ships with it). Each engine process keeps one Node.js worker
// (src/backends/ort/worker.js) that creates a session per model at one graph optimization level
// and runs it. The graph transformers that changed the model are read from ORT's verbose log:
// optimizationsApplied() names them, so campaigns are guided by ORT's optimizer.
//
//   nncheck::ort::Backend ort({.level = nncheck::ort::Level::All});
//   nncheck::TensorMap out = ort.run(model, inputs);       // throws nncheck::Unsupported
//   std::vector<std::string> fired = ort.optimizationsApplied();  // {"MatMulAddFusion", ...}
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::ort {

// ORT's GraphOptimizationLevel.
enum class Level { Disabled, Basic, Extended, All };

struct Config {
  Level level = Level::All;
  int threads = 1;                      // intra-op threads
  std::vector<std::string> disabled{};  // graph transformers switched off, sorted
  std::string describe() const;         // "all", "all, 2 threads, without MatMulAddFusion"
  std::string key() const;              // "level=all,threads=1", what parse() reads back
  // "level=disabled|basic|extended|all,threads=N,disable=A+B"; throws nncheck::Error naming
  // what is wrong.
  static Config parse(const std::string& text);
  bool operator==(const Config&) const = default;
};

// GoogleTest prints a TEST_P parameter with this: "level=all,threads=1".
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.key(); }

// Every level on one thread, disabled first (the reference point of triage).
std::vector<Config> configurations();

// Where the worker finds onnxruntime-node (NNCHECK_ORT_NODE_MODULES, else the folder
// install-deps.sh filled when nncheck was configured) and which Node.js runs it (NNCHECK_NODE,
// else the one found then).
std::string nodeModulesFolder();
std::string nodeProgram();

class Backend final : public nncheck::Backend {
 public:
  explicit Backend(Config config = {});
  ~Backend() override;
  std::string name() const override;
  // Measured: the ops of ort_capabilities.inc (rebuilt by `nncheck probe --backend ort
  // --write-table`), weighted by the share of single-op models ORT ran.
  Capabilities capabilities() const override;
  // float32, int64 and bool; opset 17; weights may be computed values.
  static Capabilities baseCapabilities();
  // Unsupported when ORT cannot create a session for the model at its level; an error while
  // running, or a session that fails only once optimized, is an nncheck::Error with ORT's message.
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  // The graph transformers that changed the model (ORT's log) and, when a rule-based one did,
  // the rewrite rules inside it that fired, told apart by one more session that runs those
  // transformers alone and writes its optimized model (the rules are not in the log).
  std::vector<std::string> optimizationsApplied() const override;
  // The graph transformers of ort_optimizations.inc and the rewrite rules this level runs, less
  // those disabled.
  std::vector<std::string> optimizations() const override;
  // Every graph transformer the last run's log names, whether it changed the graph or not: what
  // the table behind optimizations() is checked against.
  const std::vector<std::string>& transformersRun() const { return run_; }
  const Config& config() const { return config_; }

 private:
  Config config_;
  struct Worker;
  std::unique_ptr<Worker> worker_;  // started by the first run(), in the engine's process
  std::vector<std::string> rulesFired(const Model& model, const TensorMap& inputs);
  std::vector<std::string> applied_, run_;
};

}  // namespace nncheck::ort
