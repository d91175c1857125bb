#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "ops/infer.h"

namespace nncheck {
namespace {

void checkFeed(const ValueInfo& declared, const Tensor& given) {
  if (declared.isTensor() && declared.dtype != DType::Undefined && declared.dtype != given.dtype())
    throw Error("input '" + declared.name + "' is declared " +
                std::string(dtypeName(declared.dtype)) + " but given " +
                std::string(dtypeName(given.dtype())));
  if (!declared.dims) return;
  bool ok = declared.dims->size() == given.shape().size();
  for (size_t a = 0; ok && a < given.shape().size(); ++a) {
    const Dim& d = (*declared.dims)[a];
    ok = !d.value || *d.value == given.shape()[a];
  }
  if (!ok)
    throw Error("input '" + declared.name + "' given shape " + shapeToString(given.shape()) +
                " does not match its declared shape");
}

TensorMap run(const Model& model, const TensorMap& inputs, bool keepAll) {
  const Graph& g = model.graph;
  const int64_t opset = model.defaultOpset();
  TensorMap values;
  for (const Initializer& init : g.initializers) values[init.name] = init.value;
  for (const ValueInfo* in : g.feedInputs()) {
    auto it = inputs.find(in->name);
    if (it == inputs.end()) throw Error("input '" + in->name + "' was not given");
    checkFeed(*in, it->second);
    values[in->name] = it->second;
  }
  for (const auto& [name, t] : inputs)
    if (!values.count(name) || g.initializer(name))
      throw Error("'" + name + "' is given but is not a graph input");

  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    const ops::OpSpec& spec = ops::specFor(node, opset);
    std::vector<ops::InputFacts> facts;
    std::vector<const Tensor*> ins;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        facts.push_back({});
        ins.push_back(nullptr);
        continue;
      }
      auto it = values.find(name);
      if (it == values.end())
        throw Error(node.label(n) + ": input '" + name + "' is not computed before this node");
      facts.push_back({true, it->second.dtype(), it->second.shape(), &it->second});
      ins.push_back(&it->second);
    }
    std::vector<ops::TensorType> types = ops::inferNode(spec, node, facts);
    std::vector<Tensor> outs;
    for (const auto& t : types)
      outs.push_back(t.dtype == DType::Undefined ? Tensor() : Tensor(t.dtype, t.shape));
    ops::KernelCall call(spec, node, std::move(ins), std::move(outs));
    try {
      spec.kernelFn(call);
    } catch (const Unsupported&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(node.label(n) + ": kernel failed: " + e.what());
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) values[node.outputs[i]] = std::move(call.out(i));
  }

  if (keepAll) return values;
  TensorMap out;
  for (const ValueInfo& o : g.outputs) {
    auto it = values.find(o.name);
    if (it == values.end()) throw Error("graph output '" + o.name + "' is never computed");
    out[o.name] = it->second;
  }
  return out;
}

}  // namespace

TensorMap runReference(const Model& model, const TensorMap& inputs) {
  return run(model, inputs, false);
}

TensorMap runReferenceAllValues(const Model& model, const TensorMap& inputs) {
  return run(model, inputs, true);
}

}  // namespace nncheck
