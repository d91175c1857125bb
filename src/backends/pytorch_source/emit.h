// What a node's translation to PyTorch source sees and writes: a Python emitter's (its inputs as
// expressions with their static types, its attributes with ONNX's defaults, the lines that assign
// its outputs) and the dialect's names. Each op is one emitter; each file of emitters registers a
// family.
//
//   void emitRelu(NodeEmit& e) { e.assign(0, "torch.relu(" + e.in(0) + ")"); }
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/python_source.h"
#include "nncheck/graph.h"
#include "ops/infer.h"
#include "pytorch_source/translate.h"

namespace nncheck::pytorch {

class NodeEmit : public PythonEmit {
 public:
  NodeEmit(PythonSite site, Dialect dialect) : PythonEmit(std::move(site)), dialect_(dialect) {}

  Dialect dialect() const { return dialect_; }
  // Dtype t as the dialect writes it: "6" (ATen's ScalarType::Float) in TorchScript compiled from
  // C++, which has no torch.float32; "torch.float32" in Python, where 6 would be a device.
  // Unsupported for a dtype not translated.
  std::string torchType(DType t) const;
  // A function of torch.nn.functional as the dialect reaches it: "torch.leaky_relu" (the ATen
  // builtin, all TorchScript compiled from C++ resolves), "torch.nn.functional.leaky_relu" in
  // Python, as users write it. Only for functions whose positional parameters are ATen's.
  std::string functional(const std::string& name) const;

 private:
  Dialect dialect_;
};

using Emitter = std::function<void(NodeEmit&)>;
using EmitterTable = std::map<std::string, Emitter>;

// The one table of every op's emitter, filled by the families below.
const EmitterTable& emitters();
void addElementwiseEmitters(EmitterTable& t);
void addNeuralEmitters(EmitterTable& t);  // Conv, pools, normalization, Softmax, MatMul, Gemm
void addShapeEmitters(EmitterTable& t);   // reshaping, slicing, indexing, reductions

// A float64 expression as integer type t the way nncheck's kernels convert (ops/kernels.h
// fromDouble): truncated, saturated at t's limits, NaN as 0. ATen's cast wraps instead. Assigns
// output k.
void assignAsInteger(NodeEmit& e, size_t k, const std::string& f64, DType t);
}  // namespace nncheck::pytorch
