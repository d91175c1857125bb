// What If, Loop and Scan compute, written once over an executor, so that the kernel (which runs
// bodies on tensors) and the unroller (src/interp/unroll.h, which also records each step as
// plain nodes for value search) cannot disagree. An executor X has a value type X::Value and:
//   Value in(size_t i)                         // the node's input i
//   const Tensor& tensor(const Value&)
//   Value constant(Tensor)                     // an iteration number, a condition
//   std::vector<Value> runBody(const Graph&, std::vector<Value> inputs)
//   Value slice(const Value& x, int64_t axis, int64_t index)   // x's block at index, axis dropped
//   Value stack(std::vector<Value> parts, int64_t axis, DType, const Shape& part)
//   void output(size_t o, Value)
// The KernelCall gives the attributes and the inputs' tensors.
//
//   ops::runControlFlow(call, executor);   // by the node's op type
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_spec.h"

namespace nncheck::ops {

const Graph& subgraph(const Node& node, const char* attr);

// Past this, a Loop is taken for one that never ends: a case the reference does not compute,
// rather than a hang.
inline constexpr int64_t kMaxLoopIterations = 100000;

// Scan's attributes, per scan input or output (ONNX's defaults: axis 0, forward).
inline int64_t perItem(const KernelCall& k, const char* attr, size_t j) {
  if (!k.hasAttr(attr)) return 0;
  return k.attrInts(attr).at(j);
}

template <class X>
void runIf(const KernelCall& k, X& x) {
  const Graph& taken = subgraph(k.node(), k.in(0).toInt64(0) ? "then_branch" : "else_branch");
  auto out = x.runBody(taken, {});
  for (size_t o = 0; o < k.outputCount(); ++o) x.output(o, std::move(out.at(o)));
}

template <class X>
void runLoop(const KernelCall& k, X& x) {
  using V = typename X::Value;
  const Graph& body = subgraph(k.node(), "body");
  const size_t carried = k.inputCount() > 2 ? k.inputCount() - 2 : 0;
  std::vector<V> state;
  for (size_t i = 0; i < carried; ++i) state.push_back(x.in(2 + i));
  // No M: until the condition turns false.
  const int64_t trips = k.has(0) ? k.in(0).toInt64(0) : std::numeric_limits<int64_t>::max();
  bool cond = !k.has(1) || k.in(1).toInt64(0) != 0;
  const size_t scans = body.outputs.size() - 1 - carried;
  std::vector<std::vector<V>> scanned(scans);
  for (int64_t i = 0; i < trips && cond; ++i) {
    if (i == kMaxLoopIterations)
      throw Unsupported("loop", "Loop '" + k.node().name + "' runs past " +
                                    std::to_string(kMaxLoopIterations) +
                                    " iterations, the reference's limit (a loop that never ends?)");
    std::vector<V> in;
    in.push_back(x.constant(Tensor::scalar<int64_t>(i)));
    in.push_back(x.constant(Tensor::scalar<bool>(cond)));
    in.insert(in.end(), state.begin(), state.end());
    std::vector<V> out = x.runBody(body, std::move(in));
    cond = x.tensor(out[0]).toInt64(0) != 0;
    for (size_t s = 0; s < carried; ++s) state[s] = std::move(out[1 + s]);
    for (size_t j = 0; j < scans; ++j) scanned[j].push_back(std::move(out[1 + carried + j]));
  }
  for (size_t o = 0; o < k.outputCount(); ++o) {
    if (o < carried) {
      x.output(o, std::move(state[o]));
    } else {
      const ValueInfo& v = body.outputs[1 + o];
      x.output(o, x.stack(std::move(scanned[o - carried]), 0, v.dtype, *v.shape()));
    }
  }
}

template <class X>
void runScan(const KernelCall& k, X& x) {
  using V = typename X::Value;
  const Graph& body = subgraph(k.node(), "body");
  const size_t scanInputs = static_cast<size_t>(k.attrInt("num_scan_inputs"));
  const size_t states = k.inputCount() - scanInputs, scanOutputs = body.outputs.size() - states;
  std::vector<V> state;
  for (size_t s = 0; s < states; ++s) state.push_back(x.in(s));
  auto axisOf = [](int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; };
  const Tensor& first = k.in(states);
  const int64_t length =
      first.shape()[static_cast<size_t>(axisOf(perItem(k, "scan_input_axes", 0), first.rank()))];
  std::vector<V> scanned_inputs;
  for (size_t j = 0; j < scanInputs; ++j) scanned_inputs.push_back(x.in(states + j));
  std::vector<std::vector<V>> scanned(scanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<V> in = state;
    for (size_t j = 0; j < scanInputs; ++j) {
      const Tensor& xs = k.in(states + j);
      const int64_t at = perItem(k, "scan_input_directions", j) ? length - 1 - t : t;
      in.push_back(
          x.slice(scanned_inputs[j], axisOf(perItem(k, "scan_input_axes", j), xs.rank()), at));
    }
    std::vector<V> out = x.runBody(body, std::move(in));
    for (size_t s = 0; s < states; ++s) state[s] = std::move(out[s]);
    for (size_t j = 0; j < scanOutputs; ++j) scanned[j].push_back(std::move(out[states + j]));
  }
  for (size_t o = 0; o < k.outputCount(); ++o) {
    if (o < states) {
      x.output(o, std::move(state[o]));
      continue;
    }
    const size_t j = o - states;
    std::vector<V>& parts = scanned[j];
    if (perItem(k, "scan_output_directions", j)) std::reverse(parts.begin(), parts.end());
    const ValueInfo& v = body.outputs[o];
    const Shape part = *v.shape();
    x.output(
        o, x.stack(std::move(parts),
                   axisOf(perItem(k, "scan_output_axes", j), static_cast<int64_t>(part.size()) + 1),
                   v.dtype, part));
  }
}

// The node's run by its op type; false for an op without subgraphs.
template <class X>
bool runControlFlow(const KernelCall& k, X& x) {
  const std::string& op = k.node().opType;
  if (op == "If")
    runIf(k, x);
  else if (op == "Loop")
    runLoop(k, x);
  else if (op == "Scan")
    runScan(k, x);
  else
    return false;
  return true;
}

}  // namespace nncheck::ops
