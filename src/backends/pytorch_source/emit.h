// What a node's translation to PyTorch source sees and writes: its inputs as expressions with their
// static types (every shape is known), its attributes with ONNX's defaults, and the lines that
// assign its outputs. Each op is one emitter; each file of emitters registers a family.
//
//   void emitRelu(NodeEmit& e) { e.assign(0, "torch.relu(" + e.in(0) + ")"); }
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/node_reading.h"
#include "nncheck/graph.h"
#include "ops/infer.h"
#include "pytorch_source/translate.h"

namespace nncheck::pytorch {

class NodeEmit : public NodeReading {
 public:
  NodeEmit(const Node& node, int64_t opset, std::vector<std::string> in,
           std::vector<ops::InputFacts> facts, std::vector<ops::InputFacts> outs,
           std::vector<std::string> outNames, std::vector<std::string>& lines, int& temps,
           const std::string& engine,  // named in what it refuses
           Dialect dialect);

  size_t inputCount() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && !in_[i].empty(); }
  const std::string& in(size_t i) const;  // the expression of input i
  DType dtype(size_t i) const { return facts(i).dtype; }
  const Shape& shape(size_t i) const { return facts(i).shape; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(shape(i).size()); }

  const std::string& out(size_t k) const { return outNames_.at(k); }

  // Output k = expr.
  void assign(size_t k, const std::string& expr);
  // A fresh local holding expr; returns its name.
  std::string let(const std::string& expr);

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
  const ops::InputFacts& facts(size_t i) const;
  std::vector<std::string> in_;
  std::vector<std::string> outNames_;
  std::vector<std::string>& lines_;
  int& temps_;
  Dialect dialect_;
};

using Emitter = std::function<void(NodeEmit&)>;
using EmitterTable = std::map<std::string, Emitter>;

// The one table of every op's emitter, filled by the families below.
const EmitterTable& emitters();
void addElementwiseEmitters(EmitterTable& t);
void addNeuralEmitters(EmitterTable& t);  // Conv, pools, normalization, Softmax, MatMul, Gemm
void addShapeEmitters(EmitterTable& t);   // reshaping, slicing, indexing, reductions

// Literals, the same in both dialects.
std::string pyFloat(double v);                      // "0.5", "1e-05", "float('inf')"
std::string pyInts(const std::vector<int64_t>& v);  // "[1, 2]"
// A float64 expression as integer type t the way nncheck's kernels convert (ops/kernels.h
// fromDouble): truncated, saturated at t's limits, NaN as 0. ATen's cast wraps instead. Assigns
// output k.
void assignAsInteger(NodeEmit& e, size_t k, const std::string& f64, DType t);
}  // namespace nncheck::pytorch
