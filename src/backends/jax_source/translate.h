// An ONNX model as JAX source: a pure function of its weights and inputs, one statement or a few
// per node, in the idiom JAX and Flax users write (jax.numpy, jax.nn, and lax where numpy has no
// word: convolutions, windows), each with ONNX's exact semantics at the model's opset. The
// numbers a node reads as parameters (Reshape's shape, Slice's starts, Pad's pads) are written
// into the source, as a JAX user writes them; data initializers are the function's first
// argument, a dict, as Flax passes its parameters.
//
//   Program p = translate(model, "xla");  // throws nncheck::Unsupported naming the node
//   // p.source: "def model(params, a0):\n    v0 = jax.nn.relu(a0)\n    return (v0,)\n"
#pragma once

#include <string>
#include <vector>

#include "backends/python_source.h"
#include "nncheck/graph.h"

namespace nncheck::jax {

struct Program {
  std::string source;                // "def model(params, a0, ...):\n ..."
  std::vector<PythonWeight> params;  // params['w0'], ...: the initializers they hold
  std::vector<std::string> inputs;   // the arguments after params: graph inputs, in order
  std::vector<std::string> outputs;  // the returned tuple: graph outputs, in order
};

// `engine` is named in what the translation refuses ("xla: Loop node 'l' is not translated").
// The source expects `jax`, `jnp` (jax.numpy) and `lax` (jax.lax) in scope, with 64-bit types
// enabled (jax_enable_x64), which ONNX's int64 and float64 need.
Program translate(const Model& model, const std::string& engine);

}  // namespace nncheck::jax
