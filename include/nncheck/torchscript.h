// PyTorch's TorchScript as an engine (nncheck::torchscript, built when CMake finds libtorch):
// each ONNX model is translated once into a TorchScript module with ONNX's exact semantics, then
// run at one of five levels, from ATen ops called one by one to the NNC fuser. A difference that
// only an optimizing level shows is a bug of PyTorch's compiler; one that eager shows too is a
// translation or ATen bug.
//
//   nncheck::torchscript::Backend torch({.level = nncheck::torchscript::Level::Freeze});
//   nncheck::TensorMap out = torch.run(model, inputs);   // throws nncheck::Unsupported
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::torchscript {

enum class Level {
  Eager,     // the module's graph, each ATen op called on its own, no graph executor
  Script,    // the graph executor with its optimizations off
  Freeze,    // torch::jit::freeze, then the profiling executor's passes
  Optimize,  // torch::jit::optimize_for_inference (oneDNN rewrites, in-place ops)
  Nnc,       // frozen, with the NNC TensorExpr fuser on the CPU (its IR interpreter)
};

struct Config {
  Level level = Level::Script;
  std::string describe() const;  // "freeze"
  std::string key() const;       // "level=freeze", what parse() reads back
  // "level=eager|script|freeze|optimize|nnc"; throws nncheck::Error naming what is wrong.
  static Config parse(const std::string& text);
  bool operator==(const Config&) const = default;
};

// GoogleTest prints a TEST_P parameter with this: "level=freeze".
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.key(); }

// Every level, eager first (the reference point of triage).
std::vector<Config> configurations();

class Backend final : public nncheck::Backend {
 public:
  explicit Backend(Config config = {});
  ~Backend() override;
  std::string name() const override;
  // Measured: the ops of torchscript_capabilities.inc (rebuilt by `nncheck probe --backend
  // torch --write-table`), weighted by the share of single-op models translated.
  Capabilities capabilities() const override;
  // float32, float64, int64 and bool; opset 14; weights may be computed values.
  static Capabilities baseCapabilities();
  // Unsupported when the translation cannot express a node exactly; a libtorch exception while
  // compiling or running becomes an nncheck::Error naming PyTorch's message.
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  const Config& config() const { return config_; }

 private:
  Config config_;
};

}  // namespace nncheck::torchscript
