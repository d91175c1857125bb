// What a node's emission sees and writes: its inputs as typed SSA values (every shape is
// known), its attributes with ONNX's defaults, and a builder of TOSA, arith and math ops in MLIR's
// generic form, which broadcasts, reshapes and casts the way TOSA's verifier wants. Each op is
// one emitter; each file of emitters registers a family.
//
//   void emitExp(NodeEmit& e) { e.assign(0, e.unary("tosa.exp", e.in(0))); }
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/node_reading.h"
#include "nncheck/graph.h"
#include "ops/infer.h"

namespace nncheck::mlir {

// An SSA value of the function being built.
struct Value {
  std::string ssa;  // "%3"
  DType dtype = DType::Undefined;
  Shape shape;
  size_t rank() const { return shape.size(); }
};

// The element types an emission takes, by family (NodeEmit::requireTypes).
inline const std::vector<DType> kFloatTypes{DType::Float32, DType::Float64};
inline const std::vector<DType> kNumberTypes{DType::Float32, DType::Float64, DType::Int32,
                                             DType::Int64};
inline const std::vector<DType> kAllTypes{DType::Float32, DType::Float64, DType::Int32,
                                          DType::Int64, DType::Bool};

// The function body: one op per line, in MLIR's generic form.
class Body {
 public:
  // An op with these operands and one result; props is the text inside <{...}>, if any.
  Value op(const std::string& name, const std::vector<Value>& operands, DType dtype,
           const Shape& shape, const std::string& props = "");
  // A tosa.const holding t's exact bits.
  Value constant(const Tensor& t);
  // A tosa.const of the given shape with every element v (converted as nncheck's kernels do).
  Value splat(DType t, double v, const Shape& shape);
  // v, or a fresh local (tosa.reshape) with v's elements in this shape.
  Value reshape(const Value& v, const Shape& shape);
  // v with leading 1s up to `rank` (TOSA's elementwise ops want equal ranks).
  Value toRank(const Value& v, size_t rank);
  // v broadcast to `shape` the ONNX way: leading 1s, then tosa.tile of the 1-sized dims.
  Value broadcastTo(const Value& v, const Shape& shape);
  Value transpose(const Value& v, const std::vector<int64_t>& perm);
  // v padded with `fill` (a rank-0 value; zeros if null): pads per axis, all begins then all
  // ends as ONNX's Pad lists them, each >= 0.
  Value pad(const Value& v, const std::vector<int64_t>& pads, const Value* fill = nullptr);
  Value slice(const Value& v, const Shape& start, const Shape& size);
  // Elements [from, from + n) of v along axis.
  Value sliceAxis(const Value& v, int64_t axis, int64_t from, int64_t n);
  // A TOSA reduction (tosa.reduce_sum, _max, ...) over each of the axes, each kept as size 1.
  Value reduce(const std::string& op, Value v, const std::vector<int64_t>& axes);
  Value cast(const Value& v, DType t);  // tosa.cast; the caller handles its rounding
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
  int next_ = 0;
};

// ONNX's multidirectional broadcast of two shapes (both valid: the rules checked them).
Shape broadcastShape(const Shape& a, const Shape& b);
// "array<i64: 1, 2>", TOSA's dense integer array attributes.
std::string i64Array(const std::vector<int64_t>& v);
bool isFloat(DType t);
bool isInteger(DType t);  // signed integers (bool is not)

class NodeEmit : public NodeReading {
 public:
  NodeEmit(const Node& node, int64_t opset, std::vector<Value> in,
           std::vector<ops::InputFacts> facts, std::vector<ops::InputFacts> outs,
           std::vector<bool> wanted, Body& body, std::vector<Value>& results);

  size_t inputCount() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && !in_[i].ssa.empty(); }
  const Value& in(size_t i) const;  // Unsupported when absent
  DType dtype(size_t i) const { return in(i).dtype; }
  const Shape& shape(size_t i) const { return in(i).shape; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(shape(i).size()); }

  // Whether the graph reads output k (unread outputs need not be emitted).
  bool wantsOutput(size_t k) const { return wanted_.at(k); }

  // Output k is v; an Error (the emitter's bug) when v's type is not the output's.
  void assign(size_t k, const Value& v);
  // Unsupported unless every input present has one of these dtypes.
  void requireTypes(const std::vector<DType>& allowed) const;

  Body& body() { return body_; }
  // One-result ops over the inputs' types, for the common shapes of emitters:
  Value unary(const std::string& op, const Value& x);  // same type out
  // A TOSA elementwise op: operands brought to equal rank, the result broadcast.
  Value binary(const std::string& op, const Value& a, const Value& b, DType out);
  // An arith or math op on tensors: operands broadcast to the full result shape (these ops
  // take equal shapes only).
  Value pointwise(const std::string& op, const std::vector<Value>& operands, DType out);
  Value splatLike(double v, const Value& like);  // rank-equal, 1-sized constant
  Value splat(DType t, double v, size_t rank);   // shape [1] * rank

 private:
  std::vector<Value> in_;
  std::vector<bool> wanted_;
  Body& body_;
  std::vector<Value>& results_;
};

using Emitter = std::function<void(NodeEmit&)>;
using EmitterTable = std::map<std::string, Emitter>;

// The one table of every op's emitter, filled by the families below.
const EmitterTable& emitters();
void addElementwiseEmitters(EmitterTable& t);
void addNeuralEmitters(EmitterTable& t);  // Conv, pools, normalization, Softmax, MatMul, Gemm
void addShapeEmitters(EmitterTable& t);   // reshaping, slicing, indexing, reductions

// A float value as integer type t the way nncheck's kernels convert (ops/kernels.h fromDouble):
// truncated toward zero, NaN as 0, saturated at t's limits.
Value floatToInteger(NodeEmit& e, const Value& f, DType t);

}  // namespace nncheck::mlir
