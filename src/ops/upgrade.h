// Models of older opsets: a PyTorch export of opset 6 holds op versions older than nncheck's ops
// take (Gemm-6, Reshape-5). Such a model is upgraded by ONNX's own version converter before it
// runs, and said so; a model nncheck takes as it is stays as it is (the IR's import is lossless).
//
//   std::string said = ops::upgradeOldOpset(model);   // "upgraded from opset 6 to 13 ..." or ""
#pragma once

#include <string>

#include "nncheck/graph.h"

namespace nncheck::ops {

// The opset the converter upgrades to: the oldest the generator makes.
inline constexpr int64_t kUpgradeOpset = 13;

// Upgrades `model` when one of its nodes has an op version older than nncheck's op takes; returns
// what was done ("upgraded from opset 6 to 13 by ONNX's version converter", or why the converter
// could not, the model left as it was), or "" when nothing needed it.
std::string upgradeOldOpset(Model& model);

}  // namespace nncheck::ops
