// An ONNX model as TorchScript source: one statement or a few per node, each with ONNX's exact
// semantics at the model's opset (broadcasting, pads, defaults, integer and bool dtypes). The
// numbers a node reads as parameters (Reshape's shape, Slice's starts, Pad's pads) are written
// into the source, as a PyTorch user writes them; data initializers become buffers, which
// freezing folds.
//
//   Script s = translate(model);   // throws nncheck::Unsupported naming the node
//   module.define(s.source);       // then register s.buffers
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck::torchscript {

struct Script {
  std::string source;                                   // "def forward(self, ...):\n ..."
  std::vector<std::pair<std::string, Tensor>> buffers;  // self.<name> = the initializer
  std::vector<std::string> inputs;                      // forward's arguments, graph inputs
  std::vector<std::string> outputs;                     // the returned tuple, graph outputs
};

Script translate(const Model& model);

}  // namespace nncheck::torchscript
