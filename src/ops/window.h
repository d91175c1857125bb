// The concrete sliding window of Conv, ConvTranspose, MaxPool and AveragePool, as the kernels
// use it: auto_pad resolved into pads, defaults filled in, output dims. For engine adapters that
// must restate ONNX's geometry in another framework's terms.
//
//   WindowGeometry w = windowGeometry(node, 14, facts);   // w.padsBegin, w.padsEnd, w.out
#pragma once

#include "ops/infer.h"

namespace nncheck::ops {

struct WindowGeometry {
  Shape kernel, strides, dilations, padsBegin, padsEnd, out;  // per spatial axis
};

// Throws Unsupported for another op, and like inferNode when the node does not hold.
WindowGeometry windowGeometry(const Node& node, int64_t opset,
                              const std::vector<InputFacts>& inputs);

}  // namespace nncheck::ops
