// Mutation: a kept case changed a little, so that a rewrite's pattern or condition comes about
// from a case close to it (coverage-guided generation; see mutateTestCase).
#include <algorithm>
#include <set>

#include "generators/mutations.h"
#include "generators/ways_of_growing.h"
#include "nncheck/reference.h"

namespace nncheck::gen {
namespace {

using ops::InputRole;
using ops::ValueDomain;

constexpr double kInPlaceShare = 1.0 / 3;  // mutants that keep the parent's nodes and wiring
// Of those, the share whose numbers z3 re-solves (the rest redraw an attribute): a fresh z3
// context and a whole-graph check cost several cases' time.
constexpr double kResolveShare = 1.0 / 3;
// Of the insertions a mutant aims (GrowAfter, InsertBefore), the share that repeats one of the
// parent's own ops: rewrites match chains of the ops a kept case holds (Transpose -> Transpose),
// which an op drawn from a library of over a hundred rarely forms.
constexpr double kRepeatShare = 0.5;

// One forward insertion of op `op` (any, when empty) whose first input is value `first` (any,
// when -1); with `placeholder` >= 0, the node computes that value, of its shape, and goes at
// position `at`, before the nodes reading it.
bool insertAimed(Growth& g, const std::string& op, int first, int placeholder = -1, size_t at = 0) {
  Aim aim{.op = op, .placeholder = placeholder, .at = at};
  if (first >= 0) aim.reads[0] = first;
  return g.insert(aim);
}

// Mutation kinds, each a way a rewrite's pattern or condition comes about from a case close to
// it. Values computed by nodes left out become graph inputs holding them, so every kept node
// sees what it saw in the parent.
enum class Mutation {
  GrowAfter,     // one to three nodes added (up to twice cfg.nodes), the first reading a value the
                 // parent computed: a pattern of two nodes formed from a case holding one
  InsertBefore,  // a node put between a value and one reader of it, computing a value of the
                 // same shape: a pattern formed from the consumer's side
  Replace,       // one node drawn again (its op or any op, new attributes and operands) computing
                 // a value of its old shape, so that its readers stay
  Redraw,        // one node drawn again (same op and first input), free to change shape, without
                 // the nodes that depended on it, grown back
  Delete,        // one node left out, one or two grown
  Window,        // consecutive nodes kept, grown back to the parent's size
};

}  // namespace

// A third of the time, the nodes stay and their numbers or one attribute change instead
// (generators/mutations.h); when that is impossible, a mutation below is made.
TestCase mutate(Growth& g, const TestCase& parent) {
  const GeneratorConfig& cfg = g.cfg();
  Rng& rng = g.rng();
  const Graph& pg = parent.model.graph;
  const size_t n = pg.nodes.size();
  // Bodies capture values by name and declare their types: in-place edits and adopted copies
  // would break them, so a parent's control-flow nodes are left out and may grow anew.
  const bool bodies = std::any_of(pg.nodes.begin(), pg.nodes.end(),
                                  [](const Node& x) { return !x.subgraphs().empty(); });
  if (n > 0 && !bodies && rng.chance(kInPlaceShare)) {
    std::optional<TestCase> m = rng.chance(kResolveShare)
                                    ? resolveNumbers(cfg, parent, rng)
                                    : redrawAttribute(cfg, g.table(), parent, rng);
    if (m) {
      m->model.graph.name = "nncheck_" + std::to_string(g.seed());
      return *m;
    }
  }
  const size_t cap = static_cast<size_t>(2 * std::max(1, cfg.nodes));
  using M = Mutation;
  const std::vector<M> kinds = n == 0 ? std::vector<M>{M::GrowAfter}
                               : n < cap
                                   ? std::vector<M>{M::GrowAfter, M::InsertBefore, M::Replace,
                                                    M::Redraw,    M::Delete,       M::Window}
                                   : std::vector<M>{M::Replace, M::Redraw, M::Delete, M::Window};
  const M kind = rng.pick(kinds);
  std::vector<size_t> keep;
  size_t target = n;
  const size_t chosen = n == 0 ? 0 : rng.index(n);  // the node Replace and Redraw draw again
  switch (kind) {
    case M::GrowAfter:
    case M::InsertBefore:
      for (size_t i = 0; i < n; ++i) keep.push_back(i);
      if (kind == M::GrowAfter) target = std::min(cap, n + static_cast<size_t>(rng.uniform(1, 3)));
      break;
    case M::Replace:
    case M::Delete:
      for (size_t i = 0; i < n; ++i)
        if (i != chosen) keep.push_back(i);
      if (kind == M::Delete) target = std::min(cap, n - 1 + static_cast<size_t>(rng.uniform(1, 2)));
      break;
    case M::Window: {
      const size_t length = static_cast<size_t>(rng.uniform(1, static_cast<int64_t>(n)));
      const size_t start = rng.index(n - length + 1);
      for (size_t i = start; i < start + length; ++i) keep.push_back(i);
      target = std::max(n, length + 1);
      break;
    }
    case M::Redraw: {
      std::set<std::string> tainted(pg.nodes[chosen].outputs.begin(),
                                    pg.nodes[chosen].outputs.end());
      for (size_t i = 0; i < n; ++i) {
        bool depends = i == chosen;
        for (const std::string& in : pg.nodes[i].inputs) depends |= i > chosen && tainted.count(in);
        if (depends)
          tainted.insert(pg.nodes[i].outputs.begin(), pg.nodes[i].outputs.end());
        else
          keep.push_back(i);
      }
      break;
    }
  }
  std::erase_if(keep, [&](size_t i) { return !pg.nodes[i].subgraphs().empty(); });
  const std::map<std::string, std::string> renamed =
      g.adopt(parent, keep, runReferenceAllValues(parent.model, parent.inputs));
  auto indexOf = [&](const std::string& parentName) {
    auto it = renamed.find(parentName);
    return it == renamed.end() ? -1 : g.indexNamed(it->second);
  };
  // Each aimed insertion below may find no node that fits; the growth that follows is unaimed.
  const std::string repeated =
      n > 0 && rng.chance(kRepeatShare) ? pg.nodes[rng.index(n)].opType : std::string();
  if (kind == M::GrowAfter) {
    std::vector<int> computed;
    for (size_t v = 0; v < g.values().size(); ++v)
      if (g.values()[v].kind == Value::Kind::Computed) computed.push_back(static_cast<int>(v));
    if (!computed.empty()) {
      const int first = rng.pick(computed);
      if (!insertAimed(g, repeated, first) && !repeated.empty()) insertAimed(g, "", first);
    }
  } else if (kind == M::InsertBefore) {
    // (reader, input) of a value not a weight, read as plain data: a node computing indices or
    // a divisor would break what the reader needs of its values.
    std::vector<std::pair<size_t, size_t>> edges;
    for (size_t i = 0; i < g.nodes().size(); ++i)
      for (size_t k = 0; k < g.nodes()[i].inputs.size(); ++k) {
        const ops::InputSpec& is = ops::specFor(g.nodes()[i], cfg.opset).inputSpec(k);
        if (is.role != InputRole::Data || is.domain != ValueDomain::Any) continue;
        if (const Value* v =
                g.nodes()[i].inputs[k].empty() ? nullptr : g.valueNamed(g.nodes()[i].inputs[k]);
            v && v->kind != Value::Kind::Initializer)
          edges.emplace_back(i, k);
      }
    if (!edges.empty()) {
      const auto [reader, input] = rng.pick(edges);
      std::string& edge = g.nodes()[reader].inputs[input];
      const std::string read = edge;
      const int first = g.indexNamed(read);
      const Value& v = g.values()[static_cast<size_t>(first)];
      g.values().push_back({g.fresh("v"), v.dtype, v.shape, Value::Kind::Input, {}});
      const int placeholder = static_cast<int>(g.values().size()) - 1;
      edge = g.values().back().name;
      if (!insertAimed(g, repeated, first, placeholder, reader) &&
          (repeated.empty() || !insertAimed(g, "", first, placeholder, reader)))
        g.nodes()[reader].inputs[input] = read;  // the placeholder, unread, is left out
    }
  } else if (kind == M::Replace || kind == M::Redraw) {
    const Node& old = pg.nodes[chosen];
    const std::string op = kind == M::Redraw || rng.chance(0.5) ? old.opType : "";
    const int first = old.inputs.empty() ? -1 : indexOf(old.inputs[0]);
    const int placeholder = kind == M::Replace ? indexOf(old.outputs[0]) : -1;
    // Where the chosen node was among the kept ones (control-flow nodes may be left out).
    const size_t at = static_cast<size_t>(
        std::count_if(keep.begin(), keep.end(), [&](size_t i) { return i < chosen; }));
    if (placeholder >= 0)
      insertAimed(g, op, first, placeholder, at);
    else if (first >= 0 || kind == M::Redraw)
      insertAimed(g, op, first);
  }
  return growTo(g, target);
}

}  // namespace nncheck::gen
