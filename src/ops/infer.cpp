#include "ops/infer.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace nncheck::ops {
namespace {

std::string label(const OpSpec& spec, const Node& node) {
  return node.name.empty() ? spec.type : spec.type + " '" + node.name + "'";
}

void checkDTypes(const OpSpec& spec, const Node& node, const std::vector<InputFacts>& inputs) {
  std::map<std::string, DType> bound;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    const InputSpec& is = spec.inputSpec(i);
    const TypeVarSpec* tv = spec.typeVar(is.typeVar);
    if (!tv) throw std::logic_error(spec.type + ": input " + is.name + " names no type variable");
    DType dt = inputs[i].dtype;
    if (std::find(tv->allowed.begin(), tv->allowed.end(), dt) == tv->allowed.end())
      throw Unsupported("dtype", label(spec, node) + ": input " + std::to_string(i) + " (" +
                                     is.name + ") has dtype " + std::string(dtypeName(dt)) +
                                     ", unsupported for type " + tv->name);
    if (is.heterogeneous) continue;
    auto [it, fresh] = bound.emplace(tv->name, dt);
    if (!fresh && it->second != dt)
      throw ShapeError(label(spec, node) + ": inputs of type " + tv->name +
                       " disagree: " + std::string(dtypeName(it->second)) + " vs " +
                       std::string(dtypeName(dt)) + " at input " + std::to_string(i));
  }
}

void checkAttributes(const OpSpec& spec, const Node& node) {
  for (const Attribute& a : node.attributes) {
    const AttrSpec* as = spec.attrSpec(a.name);
    if (!as)
      throw Unsupported("attribute",
                        label(spec, node) + ": attribute '" + a.name + "' is not in the op's spec");
    if (a.kind != as->kind)
      throw ShapeError(label(spec, node) + ": attribute '" + a.name + "' is " +
                       std::string(attributeKindName(a.kind)) + ", expected " +
                       std::string(attributeKindName(as->kind)));
    if (!as->choices.empty() &&
        std::find(as->choices.begin(), as->choices.end(), a.s) == as->choices.end())
      throw Unsupported("attribute",
                        label(spec, node) + ": " + attributeToString(a) + " is unsupported");
    if (!as->intChoices.empty() &&
        std::find(as->intChoices.begin(), as->intChoices.end(), a.i) == as->intChoices.end())
      throw Unsupported("attribute",
                        label(spec, node) + ": " + attributeToString(a) + " is unsupported");
  }
  for (const AttrSpec& as : spec.attrs)
    if (as.required && !node.attribute(as.name))
      throw ShapeError(label(spec, node) + ": required attribute '" + as.name + "' is missing");
}

template <class T>
std::optional<std::vector<T>> valuesOf(const InputFacts& f, auto convert) {
  if (!f.value) return std::nullopt;
  std::vector<T> out;
  for (int64_t k = 0; k < f.value->size(); ++k) out.push_back(convert(*f.value, k));
  return out;
}

}  // namespace

int64_t schemaVersion(const Node& node, int64_t opset) {
  // ONNX's registry lookup is slow next to a small kernel; value search asks thousands of times.
  thread_local std::map<std::tuple<std::string, std::string, int64_t>, int64_t> cache;
  auto key = std::make_tuple(node.domain, node.opType, opset);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (opset < 1 || opset > std::numeric_limits<int>::max()) return cache[key] = 0;  // no such
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.opType, static_cast<int>(opset),
                                                      node.domain == "ai.onnx" ? "" : node.domain);
  return cache[key] = schema ? schema->SinceVersion() : 0;
}

const OpSpec& specFor(const Node& node, int64_t opset) {
  if (!node.domain.empty() && node.domain != "ai.onnx")
    throw Unsupported("op not registered",
                      "op " + node.domain + "::" + node.opType + " is not registered");
  // An op ONNX does not know is a malformed model, not a gap in the op library.
  int64_t v = schemaVersion(node, opset);
  if (v == 0)
    throw Error("unknown op '" + node.opType + "': not in ONNX opset " + std::to_string(opset));
  const OpSpec* spec = Registry::instance().find(node.opType);
  if (!spec) throw Unsupported("op not registered", "op " + node.opType + " is not registered");
  if (v < spec->minVersion)
    throw Unsupported("op version", "op " + node.opType + " version " + std::to_string(v) +
                                        " (opset " + std::to_string(opset) +
                                        ") is older than the supported version " +
                                        std::to_string(spec->minVersion));
  return *spec;
}

Rule<int64_t> concreteRule(const OpSpec& spec, const Node& node,
                           const std::vector<InputFacts>& inputs) {
  std::vector<Rule<int64_t>::Input> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputFacts& f = inputs[i];
    Rule<int64_t>::Input in;
    in.present = f.present;
    in.dtype = f.dtype;
    in.dims = f.shape;
    if (f.present && f.value) {
      switch (spec.inputSpec(i).role) {
        case InputRole::Data:
          break;
        case InputRole::ShapeValues:
          in.values = f.value->toInt64s();
          break;
        case InputRole::AxesValues:
          in.axes = f.value->toInt64s();
          break;
        case InputRole::FloatValues:
          in.floats = valuesOf<double>(f, [](const Tensor& t, int64_t k) { return t.toDouble(k); });
          break;
      }
    }
    ins.push_back(std::move(in));
  }
  return Rule<int64_t>(spec, node, std::move(ins), {});
}

Rule<int64_t> concreteRule(const KernelCall& k) {
  std::vector<InputFacts> facts;
  for (size_t i = 0; i < k.inputCount(); ++i) {
    if (!k.has(i)) {
      facts.push_back({});
      continue;
    }
    const Tensor& t = k.in(i);
    facts.push_back({true, t.dtype(), t.shape(), &t});
  }
  return concreteRule(k.spec(), k.node(), facts);
}

std::vector<TensorType> inferNode(const OpSpec& spec, const Node& node,
                                  const std::vector<InputFacts>& inputs) {
  size_t present = inputs.size();
  while (present > 0 && !inputs[present - 1].present) --present;
  if (present < spec.minInputs() || inputs.size() > spec.maxInputs())
    throw ShapeError(label(spec, node) + ": has " + std::to_string(inputs.size()) +
                     " inputs, expected " + std::to_string(spec.minInputs()) + " to " +
                     (spec.isVariadic() ? std::string("any") : std::to_string(spec.maxInputs())));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].present && !spec.inputSpec(i).optional)
      throw ShapeError(label(spec, node) + ": required input " + std::to_string(i) + " is absent");
  checkDTypes(spec, node, inputs);
  checkAttributes(spec, node);

  Rule<int64_t> rule = concreteRule(spec, node, inputs);
  spec.ruleConcrete(rule);

  std::vector<TensorType> outs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (i >= rule.outputs().size() || !rule.outputs()[i]) {
      if (node.outputs[i].empty()) {
        outs.push_back({});
        continue;
      }
      throw ShapeError(rule.context() + ": output " + std::to_string(i) +
                       " is not produced by this op");
    }
    const auto& o = *rule.outputs()[i];
    for (int64_t d : o.dims)
      if (d < 0)
        throw ShapeError(rule.context() + ": output " + std::to_string(i) +
                         " would have negative dim " + shapeToString(o.dims));
    outs.push_back({o.dtype, o.dims});
  }
  return outs;
}

namespace {

// The largest output static inference computes: shape operands are small, and a bound keeps
// inference cheap on models whose weights are all initializers.
constexpr int64_t kMaxFoldedElements = 4096;

// The contents of the node's outputs when they follow from what is known, else empty.
std::vector<std::shared_ptr<const Tensor>> foldOutputs(const OpSpec& spec, const Node& node,
                                                       const std::vector<InputFacts>& inputs,
                                                       const std::vector<TensorType>& outputs) {
  for (const TensorType& t : outputs)
    if (elementCount(t.shape) > kMaxFoldedElements) return {};
  if (spec.valueFromShapesFn) {
    std::vector<Shape> shapes;
    for (const InputFacts& f : inputs) shapes.push_back(f.shape);
    return {std::make_shared<const Tensor>(spec.valueFromShapesFn(node, shapes))};
  }
  std::vector<const Tensor*> in;
  for (const InputFacts& f : inputs) {
    if (f.present && !f.value) return {};
    in.push_back(f.present ? f.value : nullptr);
  }
  std::vector<Tensor> outs;
  for (const TensorType& t : outputs) outs.emplace_back(t.dtype, t.shape);
  KernelCall call(spec, node, std::move(in), std::move(outs));
  spec.kernelFn(call);
  std::vector<std::shared_ptr<const Tensor>> folded;
  for (Tensor& t : call.outputs()) folded.push_back(std::make_shared<const Tensor>(std::move(t)));
  return folded;
}

}  // namespace

void recordOutputs(const OpSpec& spec, const Node& node, const std::vector<InputFacts>& inputs,
                   const std::vector<TensorType>& outputs,
                   std::map<std::string, InputFacts>& facts) {
  std::vector<std::shared_ptr<const Tensor>> folded;
  try {
    folded = foldOutputs(spec, node, inputs, outputs);
  } catch (const std::exception&) {
    // A kernel that fails on these contents leaves them unknown: running the model reports it.
  }
  for (size_t o = 0; o < node.outputs.size() && o < outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    InputFacts& f = facts[node.outputs[o]] = {true, outputs[o].dtype, outputs[o].shape, nullptr};
    if (o < folded.size()) {
      f.folded = folded[o];
      f.value = f.folded.get();
    }
  }
}

std::map<std::string, InputFacts> inferGraph(const Graph& g,
                                             std::map<std::string, InputFacts> facts,
                                             int64_t opset) {
  std::set<std::string> own;
  for (const Initializer& i : g.initializers) {
    facts[i.name] = {true, i.value.dtype(), i.value.shape(), &i.value};
    own.insert(i.name);
  }
  for (const ValueInfo& v : g.inputs)
    if (!own.count(v.name)) facts[v.name] = {true, v.dtype, v.shape().value_or(Shape{}), nullptr};
  for (const Node& n : g.nodes) {
    std::vector<InputFacts> ins;
    for (const auto& name : n.inputs) ins.push_back(name.empty() ? InputFacts{} : facts.at(name));
    const OpSpec& spec = specFor(n, opset);
    recordOutputs(spec, n, ins, inferNode(spec, n, ins), facts);
  }
  return facts;
}

std::map<std::string, InputFacts> inferModel(const Model& model) {
  return inferGraph(model.graph, {}, model.defaultOpset());
}

std::map<std::string, InputFacts> inferStaticModel(const Model& model, const std::string& engine) {
  try {
    return inferModel(model);
  } catch (const UnknownShapeOperand& e) {
    throw Unsupported("shape operand", engine + " compiles static shapes: " + e.what());
  }
}

std::map<std::string, InputFacts> refreshOutputTypes(Model& model) {
  std::map<std::string, InputFacts> facts = inferModel(model);
  for (ValueInfo& o : model.graph.outputs)
    o = ValueInfo::tensor(o.name, facts.at(o.name).dtype, facts.at(o.name).shape);
  return facts;
}

void makeIndexOperandsValid(Model& model, TensorMap& inputs) {
  const std::map<std::string, InputFacts> facts = inferModel(model);
  auto tensorOf = [&](const std::string& name) -> Tensor* {
    for (Initializer& w : model.graph.initializers)
      if (w.name == name) return &w.value;
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  };
  for (const Node& node : model.graph.nodes) {
    const OpSpec& spec = specFor(node, model.defaultOpset());
    std::vector<Shape> shapes;
    for (const std::string& in : node.inputs)
      shapes.push_back(in.empty() ? Shape{} : facts.at(in).shape);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (spec.inputSpec(i).domain == ValueDomain::Indices && !node.inputs[i].empty())
        if (Tensor* t = tensorOf(node.inputs[i])) makeIndicesValid(spec, i, node, shapes, *t);
  }
}

}  // namespace nncheck::ops
