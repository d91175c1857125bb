#include "generators/mutations.h"

#include <algorithm>
#include <map>

#include "generators/attribute_draw.h"
#include "generators/values.h"
#include "nncheck/error.h"
#include "nncheck/value_search.h"
#include "ops/infer.h"
#include "solver/graph_encoding.h"

namespace nncheck::gen {
namespace {

// A mutation that z3 cannot settle quickly is cheaper to give up than to wait for: one node's
// budget for the whole graph.
constexpr unsigned kSolverBudget = 200000;

// Every value within the config (rank, dims at least 1, element count and dtype), the graph
// outputs' declared types refreshed.
bool withinLimits(const GeneratorConfig& cfg, Model& m) {
  for (const auto& [name, facts] : ops::refreshOutputTypes(m)) {
    if (!shapeWithinLimits(cfg, facts.shape)) return false;
    if (std::find(cfg.dtypes.begin(), cfg.dtypes.end(), facts.dtype) == cfg.dtypes.end() &&
        !m.graph.initializer(name))
      return false;
  }
  return true;
}

// The mutant, checked by every node's rule and the config's limits, with values that keep it
// finite when the config asks for them.
std::optional<TestCase> finished(const GeneratorConfig& cfg, TestCase tc) {
  try {
    if (!withinLimits(cfg, tc.model)) return std::nullopt;
    ops::makeIndexOperandsValid(tc.model, tc.inputs);  // an attribute or dim they index changed
  } catch (const Error&) {
    return std::nullopt;  // a rule no longer holds
  }
  if (cfg.finiteValues && !searchValues(tc, {.maxSteps = 10, .restarts = 1}).finite)
    return std::nullopt;
  return tc;
}

// What a leaf's first reader expects of its values, for a leaf refilled at a new shape.
// Indices are drawn small and made valid by GraphEncoding::apply.
ops::ValueDomain domainOf(const Model& m, const std::string& leaf) {
  for (const Node& n : m.graph.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] == leaf) {
        const ops::ValueDomain d = ops::specFor(n, m.defaultOpset()).inputSpec(i).domain;
        return d == ops::ValueDomain::Indices ? ops::ValueDomain::Any : d;
      }
  return ops::ValueDomain::Any;
}

}  // namespace

std::optional<TestCase> resolveNumbers(const GeneratorConfig& cfg, const TestCase& parent,
                                       Rng& rng) {
  using Variable = solver::GraphEncoding::Variable;
  z3::context ctx;
  std::optional<solver::GraphEncoding> e;
  try {
    e.emplace(ctx, parent);
  } catch (const Error&) {
    return std::nullopt;  // an op without a symbolic rule
  }
  z3::solver s =
      solver::makeSolver(ctx, static_cast<unsigned>(rng.next() & 0x7fffffff), kSolverBudget);
  for (const z3::expr& k : e->constraints()) s.add(k);
  for (const auto& [value, shape] : e->computedShapes())
    for (const z3::expr& d : e->dims(value)) s.add(d <= ctx.int_val(cfg.maxElements));

  std::vector<const Variable*> free;
  std::map<std::string, std::vector<const Variable*>> contents;  // shape operands' entries
  z3::expr_vector prefer(ctx);
  for (const Variable& v : e->variables()) {
    const z3::expr old = ctx.int_val(v.value);
    if (v.kind == Variable::Kind::Dim && v.structural) {
      s.add(v.var == old);
      continue;
    }
    int64_t lo = cfg.minDim, hi = cfg.maxDim;
    if (v.kind == Variable::Kind::Value) {
      lo = -cfg.maxElements;
      hi = cfg.maxElements;
      contents[v.leaf].push_back(&v);
    } else if (v.kind == Variable::Kind::Attr) {
      const ops::AttrSpec* as =
          ops::specFor(parent.model.graph.nodes[v.node], parent.model.defaultOpset())
              .attrSpec(v.attribute);
      lo = as->lo;
      hi = as->hi;
    }
    lo = std::min(lo, v.value);
    hi = std::max(hi, v.value);
    s.add(v.var >= ctx.int_val(lo) && v.var <= ctx.int_val(hi));
    free.push_back(&v);
    if (rng.chance(0.5)) prefer.push_back(v.var == old);  // stay near the parent
  }
  if (free.empty()) return std::nullopt;
  // One n-ary Or, not a chain of binary ones: z3 4.8 takes milliseconds to free a context that
  // holds a chain of forty (more than the check itself).
  z3::expr_vector changed(ctx);
  for (const Variable* v : free) changed.push_back(v->var != ctx.int_val(v->value));
  s.add(z3::mk_or(changed));

  // The aim: a hard constraint, so that the mutant differs where rewrites look.
  z3::expr aim = ctx.bool_val(true);
  switch (rng.uniform(0, 2)) {
    case 0: {  // two dims of one value equal: a square matrix, a cube
      std::vector<std::string> ranked;
      for (const auto& [value, shape] : e->computedShapes())
        if (shape.size() >= 2) ranked.push_back(value);
      for (const ValueInfo* in : parent.model.graph.feedInputs())
        if (in->shape() && in->shape()->size() >= 2) ranked.push_back(in->name);
      if (ranked.empty()) return std::nullopt;
      const auto& dims = e->dims(rng.pick(ranked));
      const size_t a = rng.index(dims.size());
      size_t b = rng.index(dims.size() - 1);
      b += b >= a ? 1 : 0;
      aim = dims[a] == dims[b];
      break;
    }
    case 1: {  // entries of one shape operand set to 0, each with even chance
      if (contents.empty()) return std::nullopt;
      auto it = contents.begin();
      std::advance(it, static_cast<long>(rng.index(contents.size())));
      for (const Variable* v : it->second)
        if (rng.chance(0.5)) s.add(v->var == 0);
      break;
    }
    default: {  // one number moved
      const Variable* v = free[rng.index(free.size())];
      aim = v->var != ctx.int_val(v->value);
      break;
    }
  }
  s.add(aim);
  // Near the parent if z3 finds it at once, else anywhere: one check each, where shrinking's
  // checkPreferring drops preferences round by round (a mutant need not be the nearest).
  if (s.check(prefer) != z3::sat && s.check() != z3::sat) return std::nullopt;

  TestCase out = e->apply(s.get_model(), parent, [&](const Tensor& old, const Shape& shape) {
    if (shape == old.shape()) return old;
    return randomTensor(rng, old.dtype(), shape, ops::ValueDomain::Any);
  });
  // Leaves refilled at a new shape take their reader's domain (Positive, NonZeroIfInteger).
  auto refill = [&](const std::string& name, Tensor& t, const Tensor& before) {
    if (t.shape() == before.shape()) return;
    const ops::ValueDomain d = domainOf(out.model, name);
    if (d != ops::ValueDomain::Any) t = randomTensor(rng, t.dtype(), t.shape(), d);
  };
  for (auto& [name, t] : out.inputs) refill(name, t, parent.inputs.at(name));
  for (Initializer& w : out.model.graph.initializers)
    if (const Initializer* before = parent.model.graph.initializer(w.name))
      refill(w.name, w.value, before->value);
  return finished(cfg, std::move(out));
}

std::optional<TestCase> redrawAttribute(const GeneratorConfig& cfg,
                                        const std::vector<OpEntry>& table, const TestCase& parent,
                                        Rng& rng) {
  const Graph& g = parent.model.graph;
  if (g.nodes.empty()) return std::nullopt;
  const size_t n = rng.index(g.nodes.size());
  const Node& node = g.nodes[n];
  const OpEntry* entry = nullptr;
  for (const OpEntry& t : table)
    if (t.spec->type == node.opType) entry = &t;
  if (!entry) return std::nullopt;
  std::vector<const ops::AttrSpec*> drawable;
  for (const ops::AttrSpec& a : entry->spec->attrs)
    if (a.sampling != ops::AttrSampling::Never && entry->knowsAttribute(a.name))
      drawable.push_back(&a);
  if (drawable.empty()) return std::nullopt;
  const ops::AttrSpec& a = *drawable[rng.index(drawable.size())];

  TestCase out = parent;
  Node& changed = out.model.graph.nodes[n];
  const Attribute* old = changed.attribute(a.name);
  if (old && !a.required && rng.chance(0.3)) {
    std::erase_if(changed.attributes, [&](const Attribute& x) { return x.name == a.name; });
  } else {
    std::optional<Shape> shape0;
    try {
      const auto facts = ops::inferModel(parent.model);
      shape0 = facts.at(node.inputs.at(0)).shape;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    std::optional<Attribute> v =
        drawAttribute(rng, a, changed, static_cast<int64_t>(shape0->size()), cfg.dtypes);
    if (!v || (old && *old == *v)) return std::nullopt;
    std::erase_if(changed.attributes, [&](const Attribute& x) { return x.name == a.name; });
    changed.attributes.push_back(std::move(*v));
  }
  return finished(cfg, std::move(out));
}

}  // namespace nncheck::gen
