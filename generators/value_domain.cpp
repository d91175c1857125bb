#include "generators/value_domain.h"

#include <algorithm>
#include <cmath>

#include "generators/values.h"

namespace nncheck {
namespace {

// Counts the elements of `name` where slopeAt(v) is not 0 (or v is not finite, when
// `finiteToo`), adding the slopes to seeds[name].
template <class F>
int64_t visit(const std::string& name, const TensorMap& values, Gradients* seeds, bool finiteToo,
              F slopeAt) {
  auto it = name.empty() ? values.end() : values.find(name);
  if (it == values.end()) return 0;
  const Tensor& t = it->second;
  int64_t count = 0;
  std::vector<double>* seed = nullptr;
  forEachFloat(t, [&](int64_t i, double v) {
    if (!std::isfinite(v)) {
      count += finiteToo;  // no direction here; the producers' ranges give one
      return;
    }
    const double slope = slopeAt(v);
    if (slope == 0) return;
    ++count;
    if (!seeds) return;
    if (!seed) {
      seed = &(*seeds)[name];
      if (seed->empty()) seed->assign(static_cast<size_t>(t.size()), 0.0);
    }
    (*seed)[static_cast<size_t>(i)] += slope;
  });
  return count;
}

}  // namespace

int64_t checkNode(const ops::OpSpec& spec, const Node& node, const TensorMap& values, double bound,
                  Gradients* seeds) {
  int64_t count = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ops::InputSpec& is = spec.inputSpec(i);
    if (!is.safe) continue;
    const ops::SafeRange& r = *is.safe;
    count += visit(node.inputs[i], values, seeds, false, [&](double x) -> double {
      if (x < r.lo) return -1;
      if (x > r.hi) return 1;
      if (std::fabs(x) < r.awayFromZero) return x < 0 ? 1 : -1;
      return 0;
    });
  }
  if (spec.stabilityFn) {
    std::vector<const Tensor*> ins;
    for (const std::string& in : node.inputs) {
      auto it = in.empty() ? values.end() : values.find(in);
      ins.push_back(it == values.end() ? nullptr : &it->second);
    }
    ops::KernelCall kernel(spec, node, ins, {});
    ops::StabilityCall call(kernel, [&](size_t input, int64_t element, double direction) {
      ++count;
      if (!seeds) return;
      std::vector<double>& seed = (*seeds)[node.inputs[input]];
      if (seed.empty()) seed.assign(static_cast<size_t>(ins[input]->size()), 0.0);
      seed[static_cast<size_t>(element)] -= direction;  // the loss falls that way
    });
    spec.stabilityFn(call);
  }
  const double b = spec.outputBound ? std::min(*spec.outputBound, bound) : bound;
  for (const std::string& out : node.outputs)
    count += visit(out, values, seeds, true,
                   [&](double v) -> double { return std::fabs(v) > b ? (v > 0 ? 1 : -1) : 0; });
  return count;
}

}  // namespace nncheck
