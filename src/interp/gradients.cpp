#include "interp/gradients.h"

#include <cmath>

#include "ops/infer.h"

namespace nncheck {

Gradients backpropagate(const Model& model, const TensorMap& values, Gradients grads,
                        const std::vector<const ops::OpSpec*>* specs) {
  const Graph& g = model.graph;
  const int64_t opset = model.defaultOpset();
  for (size_t n = g.nodes.size(); n-- > 0;) {
    const Node& node = g.nodes[n];
    const ops::OpSpec& spec = specs ? *(*specs)[n] : ops::specFor(node, opset);
    if (!spec.gradientFn) continue;
    std::vector<const Tensor*> outs;
    std::vector<const std::vector<double>*> dOuts;
    bool any = false;
    for (const std::string& o : node.outputs) {
      auto v = values.find(o);
      outs.push_back(v == values.end() ? nullptr : &v->second);
      auto d = o.empty() ? grads.end() : grads.find(o);
      dOuts.push_back(d == grads.end() ? nullptr : &d->second);
      any |= d != grads.end();
    }
    if (!any) continue;
    std::vector<const Tensor*> ins;
    std::vector<std::vector<double>*> dIns;
    // Each node adds into fresh buffers, merged below without its non-finite parts: a NaN
    // or infinity met on one path (a NaN operand of a Mul) must not erase what other paths
    // say about the same value. A value read twice (Add(x, x)) shares one buffer.
    std::map<std::string, std::vector<double>> local;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& name = node.inputs[i];
      auto v = name.empty() ? values.end() : values.find(name);
      ins.push_back(v == values.end() ? nullptr : &v->second);
      const ops::InputSpec& is = spec.inputs[std::min(i, spec.inputs.size() - 1)];
      // Bool values take gradients too, all of them proxies: how much the loss wants a truth
      // flipped (a comparison feeding a Where, a Cast to float feeding a Log).
      const bool takesGradient =
          v != values.end() && is.role == ops::InputRole::Data &&
          (isFloatDType(v->second.dtype()) || v->second.dtype() == DType::Bool);
      if (!takesGradient) {
        dIns.push_back(nullptr);
        continue;
      }
      auto [it, fresh] = local.try_emplace(name);
      if (fresh) it->second.assign(static_cast<size_t>(v->second.size()), 0.0);
      dIns.push_back(&it->second);
    }
    ops::KernelCall kernel(spec, node, std::move(ins), {});
    ops::GradCall call(kernel, std::move(outs), std::move(dOuts), std::move(dIns));
    spec.gradientFn(call);
    for (auto& [name, part] : local) {
      auto [it, fresh] = grads.try_emplace(name);
      if (fresh) it->second.assign(part.size(), 0.0);
      for (size_t e = 0; e < part.size(); ++e)
        if (std::isfinite(part[e])) it->second[e] += part[e];
    }
  }
  return grads;
}

}  // namespace nncheck
