#include "nncheck/value_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "generators/value_domain.h"
#include "generators/values.h"
#include "interp/gradients.h"
#include "interp/run_node.h"
#include "interp/unroll.h"
#include "nncheck/generator.h"
#include "ops/infer.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// One forward run judged: how many elements break the rules of generators/value_domain.h, and
// the seeds of the backward pass.
struct Evaluation {
  int64_t violations = 0;
  Gradients seeds;
};

// Losses come from the broken nodes none of whose ancestors is broken: below a broken node the
// values are garbage, and their losses would pull the leaves in directions that mean nothing.
Evaluation evaluate(const Model& m, const std::vector<const ops::OpSpec*>& specs,
                    const TensorMap& values, const ValueSearchOptions& o) {
  Evaluation e;
  std::set<std::string> downstream;  // values computed from a broken node
  for (const ValueInfo* in : m.graph.feedInputs())
    if (auto v = values.find(in->name); v != values.end())
      e.violations += brokenElements(v->second, o.valueBound);
  for (size_t n = 0; n < m.graph.nodes.size(); ++n) {
    const Node& node = m.graph.nodes[n];
    bool tainted = false;
    for (const std::string& in : node.inputs) tainted |= downstream.count(in) > 0;
    const int64_t broken =
        checkNode(*specs[n], node, values, o.valueBound, tainted ? nullptr : &e.seeds);
    e.violations += broken;
    if (broken > 0 || tainted)
      for (const std::string& out : node.outputs) downstream.insert(out);
  }
  return e;
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

// The initializer of that name in g or, first found, in a body at any depth.
Tensor* initializerNamed(Graph& g, const std::string& name) {
  for (Initializer& w : g.initializers)
    if (w.name == name) return &w.value;
  for (Node& node : g.nodes)
    for (Attribute& a : node.attributes)
      for (Graph& body : a.graphs)
        if (Tensor* t = initializerNamed(body, name)) return t;
  return nullptr;
}

Tensor* valueOf(TestCase& tc, const std::string& name) {
  if (auto it = tc.inputs.find(name); it != tc.inputs.end()) return &it->second;
  return initializerNamed(tc.model.graph, name);
}

bool hasControlFlow(const Model& m) {
  return std::any_of(m.graph.nodes.begin(), m.graph.nodes.end(),
                     [](const Node& n) { return !n.subgraphs().empty(); });
}

// One forward run: the model's own, or, with control flow, its unrolled run (interp/unroll.h),
// so that nodes inside bodies are judged and gradients flow through them. Its leaves keep their
// names, so gradients on it move tc's values.
struct Run {
  const Model* source = nullptr;  // tc's model, when it has no control flow
  Unrolled unrolled;              // else its unrolled run (values moved to `values`)
  TensorMap values;
  std::vector<const ops::OpSpec*> specs;
  // What values, specs and gradients refer to.
  const Model& model() const { return source ? *source : unrolled.model; }
};

class Runner {
 public:
  explicit Runner(const TestCase& tc)
      : tc_(tc), unroll_(hasControlFlow(tc.model)), plain_(tc.model) {}
  Run run() {
    Run r;
    if (!unroll_) {
      r.source = &tc_.model;
      r.values = plain_.allValues(tc_.inputs);
      r.specs = plain_.specs();
      return r;
    }
    r.unrolled = unrollControlFlow(tc_.model, tc_.inputs);
    const int64_t opset = r.unrolled.model.defaultOpset();
    for (const Node& node : r.unrolled.model.graph.nodes)
      r.specs.push_back(&ops::specFor(node, opset));
    r.values = std::move(r.unrolled.values);
    return r;
  }

 private:
  const TestCase& tc_;
  bool unroll_;
  RepeatedRun plain_;
};

// Rprop: a step size per element that grows while its gradient keeps its sign and halves when
// the sign flips; only the sign of the gradient is used. Scale-free, which matters here: one
// leaf's gradient may be 1e-6 through a long chain and another's 1e6 through a Pow.
class Rprop {
 public:
  Rprop(TestCase& tc, const std::vector<std::string>& params, double initialStep, double bound)
      : initialStep_(initialStep), bound_(bound) {
    for (const std::string& name : params) {
      Tensor* t = valueOf(tc, name);
      if (t)
        state_.push_back({name, t, std::vector<double>(static_cast<size_t>(t->size()), 0),
                          std::vector<double>(static_cast<size_t>(t->size()), 0)});
    }
  }

  // False when no element moved: the gradient reaches none of the values searched.
  bool step(const Gradients& grads) {
    bool moved = false;
    for (Param& p : state_) {
      auto g = grads.find(p.name);
      if (g == grads.end()) continue;
      Tensor x = castTensor(*p.value, DType::Float64);
      auto xs = x.span<double>();
      for (size_t i = 0; i < xs.size(); ++i) {
        const double d = g->second[i];
        if (!std::isfinite(d) || d == 0) continue;
        double& delta = p.delta[i];
        const double s = d > 0 ? 1 : -1;
        if (delta == 0)
          delta = initialStep_ * std::max(std::fabs(xs[i]), 0.1);
        else if (s == p.sign[i])
          delta = std::min(delta * 2, kMaxStep * std::max(std::fabs(xs[i]), 1.0));
        else
          delta = std::max(delta * 0.5, 1e-9);
        p.sign[i] = s;
        xs[i] = std::clamp(xs[i] - s * delta, -bound_, bound_);
        moved = true;
      }
      *p.value = castTensor(x, p.value->dtype());
    }
    return moved;
  }

 private:
  static constexpr double kMaxStep = 10;
  struct Param {
    std::string name;
    Tensor* value;
    std::vector<double> delta, sign;
  };
  double initialStep_, bound_;
  std::vector<Param> state_;
};

}  // namespace

ValueSearchResult searchValues(TestCase& tc, const ValueSearchOptions& o) {
  const auto start = Clock::now();
  ValueSearchResult r;
  Runner runner(tc);
  std::vector<std::string> params;  // worked out at the first step: most models need none
  for (int attempt = 0;; ++attempt) {
    std::optional<Rprop> optimizer;
    int64_t fewest = std::numeric_limits<int64_t>::max();
    for (int step = 0, stale = 0;; ++step) {
      Run run = runner.run();
      const Model& model = run.model();
      Evaluation e = evaluate(model, run.specs, run.values, o);
      r.violations = e.violations;
      stale = e.violations < fewest ? 0 : stale + 1;
      fewest = std::min(fewest, e.violations);
      if (e.violations == 0) {
        r.finite = true;
        if (attempt == 0 && step == 0) r.wasFinite = true;
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return r;
      }
      if (step == o.maxSteps || stale > o.patience || e.seeds.empty()) break;
      ++r.steps;
      if (params.empty()) {
        // An unrolled body's initializer renamed apart (its name is not unique) stays as it is.
        params = searchable(model);
        std::erase_if(params, [&](const std::string& name) { return !valueOf(tc, name); });
      }
      if (!optimizer) optimizer.emplace(tc, params, o.stepSize, o.valueBound);
      if (!optimizer->step(backpropagate(model, run.values, std::move(e.seeds), &run.specs))) break;
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
