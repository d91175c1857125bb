// What a node's translation to JAX source sees and writes: a Python emitter's (its inputs as
// expressions with their static types, its attributes with ONNX's defaults, the lines that assign
// its outputs) and JAX's names for dtypes. Each op is one emitter; each file registers a family.
//
//   t["Relu"] = [](JaxEmit& e) { e.assign(0, "jax.nn.relu(" + e.in(0) + ")"); };
#pragma once

#include <functional>
#include <map>
#include <string>

#include "backends/python_source.h"
#include "jax_source/translate.h"

namespace nncheck::jax {

class JaxEmit : public PythonEmit {
 public:
  using PythonEmit::PythonEmit;
  // "jnp.float32"; Unsupported for a dtype not translated.
  std::string dtypeName(DType t) const;
  bool isFloat(size_t i) const;  // input i is float32 or float64
};

using Emitter = std::function<void(JaxEmit&)>;
using EmitterTable = std::map<std::string, Emitter>;

// The one table of every op's emitter, filled by the families below.
const EmitterTable& emitters();
void addElementwiseEmitters(EmitterTable& t);
void addNeuralEmitters(EmitterTable& t);  // Conv, pools, normalization, Softmax, MatMul, Gemm
void addShapeEmitters(EmitterTable& t);   // reshaping, slicing, indexing, reductions, Resize

// A float64 expression as integer type t the way nncheck's kernels convert (ops/kernels.h
// fromDouble): truncated, saturated at t's limits, NaN as 0. XLA's convert of an out-of-range
// value is its own. Assigns output k.
void assignAsInteger(JaxEmit& e, size_t k, const std::string& f64, DType t);

}  // namespace nncheck::jax
