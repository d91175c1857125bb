// An ONNX model as PyTorch source, the `forward` of a module: one statement or a few per node,
// in the idiom of PyTorch user code and exporters, each with ONNX's exact
// semantics at the model's opset (broadcasting, pads, defaults, integer and bool dtypes). The
// numbers a node reads as parameters (Reshape's shape, Slice's starts, Pad's pads) are written
// into the source, as a PyTorch user writes them; data initializers become buffers, which
// freezing folds. One translation, two dialects that differ only in how a dtype and a
// torch.nn.functional function are named: TorchScript as libtorch's torch.jit compiles it from C++
// (the torchscript engine), and Python as users write it (torch.compile's engine runs it).
//
//   Script s = translate(model, "torchscript");   // throws nncheck::Unsupported naming the node
//   module.define(s.source);                      // then register s.buffers
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/python_source.h"
#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck::pytorch {

enum class Dialect { TorchScript, Python };

// self.<name>: an initializer of the model.
using Buffer = PythonWeight;

struct Script {
  std::string source;  // "def forward(self, ...):\n ..."
  std::vector<Buffer> buffers;
  std::vector<std::string> inputs;   // forward's arguments, graph inputs
  std::vector<std::string> outputs;  // the returned tuple, graph outputs
};

// `engine` is named in what the translation refuses ("torchscript: Loop node 'l' is not
// translated").
Script translate(const Model& model, const std::string& engine,
                 Dialect dialect = Dialect::TorchScript);

}  // namespace nncheck::pytorch
