// The OpenCV DNN backend (built when OpenCV's DNN module is found): loads the model from memory
// with readNetFromONNX, sets the inputs, runs forward on the graph outputs.
//
//   nncheck::opencv::Backend cv({.fusion = false, .target = nncheck::opencv::Target::Cpu});
//   nncheck::TensorMap out = cv.run(model, inputs);   // throws nncheck::Error when OpenCV does
#pragma once

#include <string>

#include "nncheck/backend.h"

namespace nncheck::opencv {

enum class Target { Cpu, OpenCL };

struct Config {
  bool fusion = true;  // Net::enableFusion
  Target target = Target::Cpu;
  std::string describe() const;  // "cpu, fusion on"
};

class Backend final : public nncheck::Backend {
 public:
  explicit Backend(Config config = {});
  std::string name() const override;
  Capabilities capabilities() const override;
  // float32 only; an OpenCV exception (an unsupported layer, a failed shape check) becomes an
  // nncheck::Error naming OpenCV's message.
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  const Config& config() const { return config_; }

 private:
  Config config_;
};

// Whether nncheck was built with OpenCV DNN.
bool available();

}  // namespace nncheck::opencv
