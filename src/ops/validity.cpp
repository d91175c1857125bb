#include "nncheck/validity.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "ops/infer.h"
#include "ops/rule.h"

namespace nncheck {
namespace {

std::string typeString(DType dt, const Shape& s) {
  return std::string(dtypeName(dt)) + shapeToString(s);
}

// ONNX's inferred (or declared) type of every value, when fully known.
std::map<std::string, ops::TensorType> onnxTypes(const onnx::GraphProto& g) {
  std::map<std::string, ops::TensorType> out;
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    ops::TensorType t{static_cast<DType>(v.type().tensor_type().elem_type()), {}};
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      t.shape.push_back(d.dim_value());
    }
    out[v.name()] = t;
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& v : g.output()) add(v);
  return out;
}

using Facts = std::map<std::string, ops::InputFacts>;

// The node's inputs as `facts` know them; an input no one defines is an error naming it.
std::vector<ops::InputFacts> inputFacts(const Node& node, size_t n, const Facts& facts,
                                        const std::string& where) {
  std::vector<ops::InputFacts> ins;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      ins.push_back({});
      continue;
    }
    auto it = facts.find(name);
    if (it == facts.end())
      throw Error(where + node.label(n) + ": input '" + name + "' is undefined");
    ins.push_back(it->second);
  }
  return ins;
}

// Our rule for the node, its errors naming it; records its outputs in `facts`.
std::vector<ops::TensorType> inferInto(const ops::OpSpec& spec, const Node& node, size_t n,
                                       const std::vector<ops::InputFacts>& ins, Facts& facts,
                                       const std::string& where) {
  std::vector<ops::TensorType> out;
  try {
    out = ops::inferNode(spec, node, ins);
  } catch (const Unsupported&) {
    throw;
  } catch (const ops::UnknownShapeOperand& e) {  // keeps its type: a body may skip the rest
    throw ops::UnknownShapeOperand(where + node.label(n) + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(where + node.label(n) + ": " + e.what());
  }
  ops::recordOutputs(spec, node, ins, out, facts);
  return out;
}

// Our rules over a node's bodies, in the scope of the graph it is in (`facts`): each body's
// nodes from its declared input types, and each output against its declared type, which the
// node's own rule took on trust. A body with an input or output of unknown shape (ONNX allows
// them; the generator never makes them) is left to ONNX's checks.
void checkBodies(const Node& node, size_t n, const Facts& facts, int64_t opset,
                 const std::string& where) {
  for (const Graph* body : node.subgraphs()) {
    auto declared = [](const ValueInfo& v) { return v.isTensor() && v.shape().has_value(); };
    if (!std::all_of(body->inputs.begin(), body->inputs.end(), declared) ||
        !std::all_of(body->outputs.begin(), body->outputs.end(), declared))
      continue;
    const std::string in = where + node.label(n) + ", subgraph '" + body->name + "': ";
    Facts scope = facts;
    for (const ValueInfo& v : body->inputs) scope[v.name] = {true, v.dtype, *v.shape(), nullptr};
    for (const Initializer& i : body->initializers)
      scope[i.name] = {true, i.value.dtype(), i.value.shape(), &i.value};
    try {
      for (size_t b = 0; b < body->nodes.size(); ++b) {
        const Node& inner = body->nodes[b];
        const ops::OpSpec& spec = ops::specFor(inner, opset);
        // A shape operand computed from the iteration number (test_loop11's Slice) is known
        // only when the body runs: the rest of the body is left to the interpreter's checks.
        inferInto(spec, inner, b, inputFacts(inner, b, scope, in), scope, in);
        checkBodies(inner, b, scope, opset, in);
      }
    } catch (const ops::UnknownShapeOperand&) {
      continue;
    }
    for (const ValueInfo& v : body->outputs) {
      auto it = scope.find(v.name);
      if (it == scope.end()) throw Error(in + "output '" + v.name + "' is never computed");
      if (it->second.dtype != v.dtype || it->second.shape != *v.shape())
        throw Error(in + "output '" + v.name + "' is declared " + typeString(v.dtype, *v.shape()) +
                    ", nncheck's rules give " + typeString(it->second.dtype, it->second.shape));
    }
  }
}

// Each value of `g` and of the graphs nested in it is defined once (ONNX's static single
// assignment): no node writes a value a graph input, an initializer or another node of the
// same graph defines. A second writer would make engines and the reference disagree on which
// value is meant, which is no engine's bug. `where` names the graph for messages.
void checkSingleAssignment(const Graph& g, const std::string& where) {
  std::map<std::string, std::string> definedBy;
  for (const ValueInfo& v : g.inputs) definedBy.emplace(v.name, where + "input");
  for (const Initializer& i : g.initializers) definedBy.emplace(i.name, where + "initializer");
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      auto [it, fresh] = definedBy.emplace(out, where + node.label(n));
      if (!fresh)
        throw Error(where + node.label(n) + " writes '" + out + "', which " + it->second +
                    " defines too: each value may be defined once");
    }
    for (const Graph* body : node.subgraphs())
      checkSingleAssignment(*body, where + node.label(n) + ", body '" + body->name + "': ");
  }
}

}  // namespace

void checkStructure(const Model& model) {
  // A version past what this ONNX knows, or no default-domain import (ONNX's training ops), is
  // no fault of the model: nncheck does not support it.
  if (model.irVersion > onnx::IR_VERSION)
    throw Unsupported("ir version", "ir_version " + std::to_string(model.irVersion) +
                                        " is newer than this ONNX's " +
                                        std::to_string(static_cast<int>(onnx::IR_VERSION)));
  const int64_t newest =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  const int64_t opset = model.defaultOpset();
  if (opset < 1 || opset > newest)
    throw Unsupported("op version", "opset " + std::to_string(opset) +
                                        " of the default domain is outside 1.." +
                                        std::to_string(newest) + ", what this ONNX knows");
  const Graph& g = model.graph;
  std::set<std::string> inputs, seen;
  for (const ValueInfo& v : g.inputs)
    if (!inputs.insert(v.name).second) throw Error("graph input '" + v.name + "' is listed twice");
  for (const Initializer& i : g.initializers)
    if (!seen.insert(i.name).second) throw Error("initializer '" + i.name + "' is listed twice");
  seen.clear();
  for (const ValueInfo& v : g.outputs) {
    if (!seen.insert(v.name).second) throw Error("graph output '" + v.name + "' is listed twice");
    if (inputs.count(v.name) && !g.initializer(v.name))
      throw Error("graph output '" + v.name + "' is also a graph input");
  }
  checkSingleAssignment(g, "");
}

void checkValid(const Model& model) {
  checkStructure(model);
  // Our own rules first, with initializer values known: ONNX's shape inference is only handed
  // models they accept (Debian's ONNX 1.12 crashes on some malformed ones, e.g. a ConvTranspose
  // whose ranks disagree, found by fuzz/model_loader_fuzz).
  std::map<std::string, ops::InputFacts> facts;
  for (const Initializer& i : model.graph.initializers)
    facts[i.name] = {true, i.value.dtype(), i.value.shape(), &i.value};
  for (const ValueInfo& v : model.graph.inputs) {
    if (facts.count(v.name)) continue;
    auto shape = v.shape();
    if (!shape) throw Error("graph input '" + v.name + "' has no fully known shape");
    facts[v.name] = {true, v.dtype, *shape, nullptr};
  }
  const int64_t opset = model.defaultOpset();
  std::vector<std::vector<ops::TensorType>> ours(model.graph.nodes.size());
  // Values whose shape follows from a shape operand the graph computes (Shape -> Reshape) or from
  // an op ONNX 1.12 infers only the rank of (Einsum): ONNX's static inference may give up on
  // them, which is not a disagreement.
  std::set<std::string> unknownToOnnx;
  std::vector<bool> onnxMayNotKnow(model.graph.nodes.size(), false);
  for (size_t n = 0; n < model.graph.nodes.size(); ++n) {
    const Node& node = model.graph.nodes[n];
    const ops::OpSpec& spec = ops::specFor(node, opset);
    const std::vector<ops::InputFacts> ins = inputFacts(node, n, facts, "");
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (!node.inputs[i].empty() &&
          (unknownToOnnx.count(node.inputs[i]) ||
           (ins[i].folded && spec.inputSpec(i).role != ops::InputRole::Data)))
        onnxMayNotKnow[n] = true;
    if (spec.onnxLeavesDimsUnknown) onnxMayNotKnow[n] = true;
    if (onnxMayNotKnow[n])
      for (const std::string& o : node.outputs) unknownToOnnx.insert(o);
    checkBodies(node, n, facts, opset, "");
    ours[n] = inferInto(spec, node, n, ins, facts, "");
  }

  onnx::ModelProto proto = modelToProto(model);
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    throw Error(std::string("onnx::checker rejects the model: ") + e.what());
  }
  try {
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    throw Error(std::string("ONNX strict shape inference fails: ") + e.what());
  }
  const auto theirs = onnxTypes(proto.graph());
  for (size_t n = 0; n < model.graph.nodes.size(); ++n) {
    const Node& node = model.graph.nodes[n];
    for (size_t i = 0; i < node.outputs.size() && i < ours[n].size(); ++i) {
      const std::string& name = node.outputs[i];
      if (name.empty()) continue;
      const ops::TensorType& mine = ours[n][i];
      auto it = theirs.find(name);
      if (it == theirs.end() && onnxMayNotKnow[n]) continue;
      if (it == theirs.end())
        throw Error(node.label(n) + ": ONNX infers no static shape for output '" + name +
                    "' (ours: " + typeString(mine.dtype, mine.shape) + ")");
      if (!(it->second == mine))
        throw Error(node.label(n) + ": output '" + name + "': ONNX infers " +
                    typeString(it->second.dtype, it->second.shape) + ", nncheck's rule gives " +
                    typeString(mine.dtype, mine.shape));
    }
  }
}

std::optional<std::string> whyInvalid(const Model& model) {
  try {
    checkValid(model);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

}  // namespace nncheck
