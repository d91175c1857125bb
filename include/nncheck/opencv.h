// The OpenCV DNN engine (nncheck::opencv, built when OpenCV's DNN module is found): loads the model
// from memory with readNetFromONNX, sets the inputs, runs forward on the graph outputs.
//
//   nncheck::opencv::Backend cv({.fusion = false, .target = nncheck::opencv::Target::Cpu});
//   nncheck::TensorMap out = cv.run(model, inputs);   // throws nncheck::Error when OpenCV does
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::opencv {

enum class Target { Cpu, OpenCL };

struct Config {
  bool fusion = true;  // Net::enableFusion
  Target target = Target::Cpu;
  std::string describe() const;  // "cpu, fusion on"
  std::string key() const;       // "target=cpu,fusion=on", what parse() reads back
  // "fusion=off", "target=opencl,fusion=on", ...: keys fusion (on|off) and target
  // (cpu|opencl); throws nncheck::Error naming what is wrong.
  static Config parse(const std::string& text);
  bool operator==(const Config&) const = default;
};

// GoogleTest prints a TEST_P parameter with this: "target=cpu,fusion=on".
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.key(); }

// Every configuration this machine can run: fusion on and off on the CPU, and on OpenCL when an
// OpenCL device is present (PoCL).
std::vector<Config> configurations();

class Backend final : public nncheck::Backend {
 public:
  explicit Backend(Config config = {});
  std::string name() const override;
  // Measured: the ops of opencv_capabilities.inc (rebuilt by `nncheck probe --backend opencv
  // --write-table`), weighted by the share of single-op models OpenCV ran.
  Capabilities capabilities() const override;
  // float32, opset 13, weights and shape operands as initializers: what probing starts from.
  static Capabilities baseCapabilities();
  // float32 only; an OpenCV exception (an unsupported layer, a failed shape check) becomes an
  // nncheck::Error naming OpenCV's message.
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  // {"fusion"} when fusion is on: OpenCV's one switch of optimizations (Net::enableFusion),
  // which OpenCV does not say it applied: searched for a culprit, not counted as reach.
  std::vector<std::string> unreportedOptimizations() const override;
  const Config& config() const { return config_; }

 private:
  Config config_;
};

}  // namespace nncheck::opencv
