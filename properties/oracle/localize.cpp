#include "nncheck/localize.h"

#include <set>

#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

ValueInfo typedLike(const std::string& name, const TensorMap& values) {
  const Tensor& t = values.at(name);
  return ValueInfo::tensor(name, t.dtype(), t.shape());
}

struct Difference {
  std::string output, message;
  bool layout = false;
};

// The first output of `node` (graph order) that differs, with the comparison's message.
std::optional<Difference> differingOutput(const Node& node, const TensorMap& got,
                                          const TensorMap& want, const Tolerance& tol) {
  for (const std::string& out : node.outputs) {
    if (out.empty() || !want.count(out)) continue;
    auto it = got.find(out);
    if (it == got.end()) return Difference{out, "missing from the engine", true};
    Comparison c = compareTensors(it->second, want.at(out), tol);
    if (!c.ok) return Difference{out, c.message, c.layoutDiffers};
  }
  return std::nullopt;
}

}  // namespace

std::string Divergence::describe() const {
  std::string s = "node '" + name + "' (" + opType + "), output '" + output + "'";
  if (!exposed) s += " [differs only with its inputs kept internal: fusion?]";
  return s + ": " + detail;
}

Model exposeAllValues(const Model& model, const TensorMap& values) {
  Model m = model;
  std::set<std::string> outputs;
  for (const ValueInfo& o : m.graph.outputs) outputs.insert(o.name);
  for (const Node& n : model.graph.nodes)
    for (const std::string& out : n.outputs)
      if (!out.empty() && values.count(out) && outputs.insert(out).second)
        m.graph.outputs.push_back(typedLike(out, values));
  return m;
}

namespace {

Divergence found(const Graph& g, size_t i, const Difference& diff, bool exposed) {
  return Divergence{i,       g.nodes[i].name, g.nodes[i].opType, diff.output, diff.message,
                    exposed, diff.layout};
}

// The first way: one run with every value exposed, against the reference's values `want`.
std::optional<Divergence> exposedDivergence(const Isolated& engine, const TestCase& tc,
                                            const TensorMap& want, const Tolerance& tol) {
  RunOutcome all = engine.run(exposeAllValues(tc.model, want), tc.inputs);
  if (all.kind != Outcome::Pass) return std::nullopt;
  return firstDivergence(tc.model.graph, all.outputs, want, tol);
}

}  // namespace

std::optional<Divergence> firstDivergence(const Graph& g, const TensorMap& got,
                                          const TensorMap& want, const Tolerance& tol) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (auto diff = differingOutput(g.nodes[i], got, want, tol)) return found(g, i, *diff, true);
  return std::nullopt;
}

namespace {

// Every value of the case as the reference computes it, or as `expected` does (nullopt when
// that engine does not run the exposed model).
std::optional<TensorMap> expectedValues(const TestCase& tc, const Isolated* expected) {
  TensorMap values;
  try {
    values = runReferenceAllValues(tc.model, tc.inputs);
  } catch (const Error&) {
    if (!expected) throw;
    return std::nullopt;  // a model the reference does not compute (a custom op): not typed
  }
  if (!expected) return values;
  RunOutcome r = expected->run(exposeAllValues(tc.model, values), tc.inputs);
  if (r.kind != Outcome::Pass) return std::nullopt;
  return std::move(r.outputs);
}

}  // namespace

std::optional<Divergence> localizeExposed(const Isolated& engine, const TestCase& tc,
                                          const Tolerance& tol, const Isolated* expected) {
  const std::optional<TensorMap> want = expectedValues(tc, expected);
  if (!want) return std::nullopt;
  return exposedDivergence(engine, tc, *want, tol);
}

std::optional<Divergence> localizeDivergence(const Isolated& engine, const TestCase& tc,
                                             const Tolerance& tol, const Isolated* expected) {
  const std::optional<TensorMap> expectedAll = expectedValues(tc, expected);
  if (!expectedAll) return std::nullopt;
  const TensorMap& want = *expectedAll;
  if (auto d = exposedDivergence(engine, tc, want, tol)) return d;
  const Graph& g = tc.model.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    TestCase sub = subModelFor(tc, i, want);
    RunOutcome r = engine.run(sub.model, sub.inputs);
    if (r.kind != Outcome::Pass) continue;
    if (auto diff = differingOutput(g.nodes[i], r.outputs, want, tol))
      return found(g, i, *diff, false);
  }
  return std::nullopt;
}

}  // namespace nncheck
