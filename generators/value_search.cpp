#include "nncheck/value_search.h"

#include <chrono>
#include <cmath>
#include <set>

#include "generators/values.h"
#include "interp/gradients.h"
#include "ops/infer.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// The hinge losses of one forward run: how far values are outside their domains, with the
// derivative of that distance as the seed of the backward pass.
struct Evaluation {
  double loss = 0;
  int64_t violations = 0;
  Gradients seeds;
};

class Evaluator {
 public:
  explicit Evaluator(const TensorMap& values) : values_(values) {}

  // x must be >= lo, <= hi and |x| >= away: loss and seed for element i of `name`.
  void range(const std::string& name, const ops::SafeRange& r) {
    forEach(name, [&](double x) -> double {
      if (x < r.lo) return add(r.lo - x, -1);
      if (x > r.hi) return add(x - r.hi, 1);
      if (std::fabs(x) < r.awayFromZero) return add(r.awayFromZero - std::fabs(x), x < 0 ? 1 : -1);
      return 0;
    });
  }

  // |v| <= bound.
  void bounded(const std::string& name, double bound) {
    forEach(name, [&](double v) -> double {
      return std::fabs(v) > bound ? add(std::fabs(v) - bound, v > 0 ? 1 : -1) : 0;
    });
  }

  Evaluation take() { return std::move(e_); }

 private:
  double add(double loss, double slope) {
    e_.loss += loss;
    ++e_.violations;
    return slope;
  }

  template <class F>
  void forEach(const std::string& name, F f) {
    auto it = values_.find(name);
    if (it == values_.end() || !isFloatDType(it->second.dtype())) return;
    const Tensor& t = it->second;
    std::vector<double>* seed = nullptr;
    for (int64_t i = 0; i < t.size(); ++i) {
      const double v = t.toDouble(i);
      if (!std::isfinite(v)) {
        ++e_.violations;  // no direction from here; the producers' domains give one
        continue;
      }
      const double slope = f(v);
      if (slope == 0) continue;
      if (!seed) {
        seed = &e_.seeds[name];
        if (seed->empty()) seed->assign(static_cast<size_t>(t.size()), 0.0);
      }
      (*seed)[static_cast<size_t>(i)] += slope;
    }
  }

  const TensorMap& values_;
  Evaluation e_;
};

Evaluation evaluate(const Model& m, const TensorMap& values, const ValueSearchOptions& o) {
  Evaluator ev(values);
  const int64_t opset = m.defaultOpset();
  for (const Node& node : m.graph.nodes) {
    const ops::OpSpec& spec = ops::specFor(node, opset);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ops::InputSpec& is = spec.inputs[std::min(i, spec.inputs.size() - 1)];
      if (is.safe && !node.inputs[i].empty()) ev.range(node.inputs[i], *is.safe);
    }
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      ev.bounded(out, spec.outputBound ? std::min(*spec.outputBound, o.valueBound) : o.valueBound);
    }
  }
  return ev.take();
}

// The values search may move: float graph inputs, and float initializers every consumer reads
// as data (weights; not Resize's scales or other operands read for their contents).
std::vector<std::string> searchable(const Model& m) {
  std::set<std::string> notData;
  const int64_t opset = m.defaultOpset();
  for (const Node& node : m.graph.nodes) {
    const ops::OpSpec& spec = ops::specFor(node, opset);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (spec.inputs[std::min(i, spec.inputs.size() - 1)].role != ops::InputRole::Data)
        notData.insert(node.inputs[i]);
  }
  std::vector<std::string> out;
  for (const ValueInfo* in : m.graph.feedInputs())
    if (isFloatDType(in->dtype) && !notData.count(in->name)) out.push_back(in->name);
  for (const Initializer& w : m.graph.initializers)
    if (isFloatDType(w.value.dtype()) && !notData.count(w.name)) out.push_back(w.name);
  return out;
}

Tensor* valueOf(TestCase& tc, const std::string& name) {
  if (auto it = tc.inputs.find(name); it != tc.inputs.end()) return &it->second;
  for (Initializer& w : tc.model.graph.initializers)
    if (w.name == name) return &w.value;
  return nullptr;
}

}  // namespace

ValueSearchResult searchValues(TestCase& tc, const ValueSearchOptions& o) {
  const auto start = Clock::now();
  ValueSearchResult r;
  const std::vector<std::string> params = searchable(tc.model);
  for (int attempt = 0;; ++attempt) {
    for (int step = 0;; ++step) {
      const TensorMap values = runReferenceAllValues(tc.model, tc.inputs);
      Evaluation e = evaluate(tc.model, values, o);
      r.violations = e.violations;
      if (e.violations == 0) {
        r.finite = true;
        if (attempt == 0 && step == 0) r.wasFinite = true;
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return r;
      }
      if (step == o.maxSteps || e.seeds.empty()) break;
      ++r.steps;
      const Gradients grads = backpropagate(tc.model, values, std::move(e.seeds));
      for (const std::string& name : params) {
        auto g = grads.find(name);
        if (g == grads.end()) continue;
        double largest = 0;
        for (double d : g->second)
          if (std::isfinite(d)) largest = std::max(largest, std::fabs(d));
        if (largest == 0) continue;
        Tensor* t = valueOf(tc, name);
        Tensor x = castTensor(*t, DType::Float64);
        auto xs = x.span<double>();
        for (size_t i = 0; i < xs.size(); ++i)
          if (std::isfinite(g->second[i])) xs[i] -= o.stepSize * g->second[i] / largest;
        *t = castTensor(x, t->dtype());
      }
    }
    if (attempt == o.restarts) break;
    // Resample: fresh inputs, weights pulled toward 0 (keeping their signs, so positive
    // variances stay positive).
    ++r.restarts;
    TensorMap fresh = randomInputs(tc.model, tc.seed * 0x9E3779B97F4A7C15ull + attempt + 1);
    for (const std::string& name : params) {
      Tensor* t = valueOf(tc, name);
      if (auto it = fresh.find(name); it != fresh.end()) {
        *t = it->second;
        continue;
      }
      Tensor x = castTensor(*t, DType::Float64);
      for (double& v : x.span<double>()) v *= 0.5;
      *t = castTensor(x, t->dtype());
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace nncheck
