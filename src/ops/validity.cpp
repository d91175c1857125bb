#include "nncheck/validity.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <set>

#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "ops/infer.h"

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

}  // namespace

void checkStructure(const Model& model) {
  if (model.irVersion > onnx::IR_VERSION)
    throw Error("ir_version " + std::to_string(model.irVersion) + " is newer than this ONNX's " +
                std::to_string(static_cast<int>(onnx::IR_VERSION)));
  const int64_t newest =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  const int64_t opset = model.defaultOpset();
  if (opset < 1 || opset > newest)
    throw Error("opset " + std::to_string(opset) + " of the default domain is outside 1.." +
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
    std::vector<ops::InputFacts> ins;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& name = node.inputs[i];
      if (name.empty()) {
        ins.push_back({});
        continue;
      }
      auto it = facts.find(name);
      if (it == facts.end()) throw Error(node.label(n) + ": input '" + name + "' is undefined");
      ins.push_back(it->second);
      if (unknownToOnnx.count(name) ||
          (it->second.folded && spec.inputSpec(i).role != ops::InputRole::Data))
        onnxMayNotKnow[n] = true;
    }
    if (spec.onnxLeavesDimsUnknown) onnxMayNotKnow[n] = true;
    if (onnxMayNotKnow[n])
      for (const std::string& o : node.outputs) unknownToOnnx.insert(o);
    try {
      ours[n] = ops::inferNode(spec, node, ins);
    } catch (const Unsupported&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(node.label(n) + ": " + e.what());
    }
    ops::recordOutputs(spec, node, ins, ours[n], facts);
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
