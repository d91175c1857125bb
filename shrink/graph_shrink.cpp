#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/shrink.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"
#include "nncheck/variants.h"
#include "ops/control_flow.h"
#include "ops/infer.h"
#include "ops/rule.h"
#include "shrink/dims.h"
#include "shrink/rank.h"

namespace nncheck {
namespace {

struct Edit {
  enum class Kind {
    Cut,
    DropOutput,
    Bypass,
    BodyBypass,  // Bypass of a node inside a body: `first` the node, `name` its attribute,
                 // `count` the body's node
    Inline,      // a control-flow node replaced by one of its bodies (If's branch, a one-trip Loop
                 // or Scan)
    DropOperand,
    DropAttribute,
    LowerAttribute,
    DropAxis,
    AllDims,
    DimToOne,
    DimToOneTrailing,
    DimToOneRefilled,
    DimToTwo,
    DimSmaller,
    Zeros,
    Ones,
    Integers,
    DropRewrite,  // one of the case's equivalence rewrites left out: `first` its index
  };
  Kind kind;
  size_t first = 0, count = 0;  // Cut: node positions; DropOperand: node, operand; others: index
  std::string name;             // attribute or input name
};

bool allEqual(const Tensor& t, double v) {
  for (int64_t i = 0; i < t.size(); ++i)
    if (t.toDouble(i) != v) return false;
  return true;
}

bool allIntegers(const Tensor& t) {
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.toDouble(i);
    if (std::isfinite(v) && v != std::nearbyint(v)) return false;
  }
  return true;
}

Tensor filled(const Tensor& like, double v) {
  Tensor t(like.dtype(), like.shape());
  visitCompute(t.dtype(), [&]<class T>() {
    for (auto& x : t.span<T>()) {
      if constexpr (std::is_same_v<T, Half>)
        x = Half(static_cast<float>(v));
      else
        x = static_cast<T>(v);
    }
  });
  return t;
}

Tensor rounded(const Tensor& like) {
  Tensor t(like.dtype(), like.shape());
  visitCompute(t.dtype(), [&]<class T>() {
    auto out = t.span<T>();
    for (int64_t i = 0; i < like.size(); ++i) {
      double v = std::nearbyint(like.toDouble(i));
      if constexpr (std::is_same_v<T, Half>)
        out[static_cast<size_t>(i)] = Half(static_cast<float>(v));
      else
        out[static_cast<size_t>(i)] = static_cast<T>(v);
    }
  });
  return t;
}

// Routes node n's output 0 around it from its first input of the same type (`typeOf`), and
// drops it. Not when no input has the type, when the output is one of g's outputs and the
// input is not computed in g (an output may not be an input or an initializer), or when a
// subgraph captures the output by name (this edit renames readers, not captures).
bool bypassNode(Graph& g, size_t n,
                const std::function<std::optional<ops::TensorType>(const std::string&)>& typeOf) {
  const Node node = g.nodes[n];
  const std::string& o = node.outputs[0];
  const auto type = o.empty() ? std::nullopt : typeOf(o);
  if (!type) return false;
  std::string via;
  for (const auto& in : node.inputs)
    if (!in.empty() && typeOf(in) == type) {
      via = in;
      break;
    }
  if (via.empty()) return false;
  const bool computedHere = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& m) {
    return std::find(m.outputs.begin(), m.outputs.end(), via) != m.outputs.end();
  });
  const bool isOutput = std::any_of(g.outputs.begin(), g.outputs.end(),
                                    [&](const ValueInfo& v) { return v.name == o; });
  if (isOutput && !computedHere) return false;
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(n));
  for (const Node& m : g.nodes)
    for (const Graph* sub : m.subgraphs())
      for (const std::string& captured : capturedValues(*sub))
        if (captured == o) return false;
  for (Node& m : g.nodes)
    for (auto& in : m.inputs)
      if (in == o) in = via;
  for (ValueInfo& v : g.outputs)
    if (v.name == o) v.name = via;
  return true;
}

// A body's nodes that none of its outputs needs, and its initializers no node reads, dropped;
// bodies inside it first.
void pruneBody(Graph& body) {
  std::set<std::string> needed;
  for (const ValueInfo& o : body.outputs) needed.insert(o.name);
  std::vector<Node> nodes;
  for (size_t n = body.nodes.size(); n-- > 0;) {
    Node& node = body.nodes[n];
    if (std::none_of(node.outputs.begin(), node.outputs.end(),
                     [&](const std::string& o) { return needed.count(o) > 0; }))
      continue;
    for (Attribute& a : node.attributes)
      for (Graph& inner : a.graphs) pruneBody(inner);
    for (const auto& i : valuesRead(node)) needed.insert(i);
    nodes.insert(nodes.begin(), std::move(node));
  }
  body.nodes = std::move(nodes);
  std::erase_if(body.initializers, [&](const Initializer& i) { return !needed.count(i.name); });
}

}  // namespace

void pruneDeadNodes(TestCase& tc) {
  Graph& g = tc.model.graph;
  for (Node& node : g.nodes)
    for (Attribute& a : node.attributes)
      for (Graph& body : a.graphs) pruneBody(body);
  std::set<std::string> needed;
  for (const ValueInfo& o : g.outputs) needed.insert(o.name);
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t n = g.nodes.size(); n-- > 0;) {
    for (const auto& o : g.nodes[n].outputs)
      if (needed.count(o)) keep[n] = true;
    if (keep[n])
      for (const auto& i : valuesRead(g.nodes[n])) needed.insert(i);
  }
  std::vector<Node> nodes;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (keep[n]) nodes.push_back(std::move(g.nodes[n]));
  g.nodes = std::move(nodes);
  std::erase_if(g.inputs, [&](const ValueInfo& v) { return !needed.count(v.name); });
  std::erase_if(g.initializers, [&](const Initializer& i) { return !needed.count(i.name); });
  for (auto it = tc.inputs.begin(); it != tc.inputs.end();)
    it = needed.count(it->first) ? std::next(it) : tc.inputs.erase(it);
}

struct ShrinkCandidates::Impl {
  TestCase tc;
  std::vector<Edit> edits;
  mutable std::optional<TensorMap> values;  // every value of the case, computed on first need
  mutable std::optional<bool> finite;       // the case's values pass value search's checks

  // A case free of NaN/Inf shrinks to cases free of them: a structural edit's new values are
  // searched, and a value edit that breaks a domain (Log of zeros) is no simplification.
  bool keepsValuesSafe(TestCase& candidate, const Edit& e) const {
    const ValueSearchOptions checkOnly{.maxSteps = 0, .restarts = 0};
    if (!finite) {
      TestCase copy = tc;
      finite = searchValues(copy, checkOnly).finite;
    }
    if (!*finite) return true;
    const bool valueEdit =
        e.kind == Edit::Kind::Zeros || e.kind == Edit::Kind::Ones || e.kind == Edit::Kind::Integers;
    return searchValues(candidate, valueEdit ? checkOnly : ValueSearchOptions{}).finite;
  }

  const TensorMap& allValues() const {
    if (!values) values = runReferenceAllValues(tc.model, tc.inputs);
    return *values;
  }
  std::optional<TestCase> apply(const Edit& e) const;
  // The candidate `tc`, made by `e`, as a candidate: its dead nodes gone, its types refreshed;
  // nullopt when it is none (empty, invalid, or its values leave the finite).
  std::optional<TestCase> checked(std::optional<TestCase> tc, const Edit& e) const {
    if (!tc) return std::nullopt;
    pruneDeadNodes(*tc);
    if (tc->model.graph.nodes.empty() || tc->model.graph.outputs.empty()) return std::nullopt;
    ops::refreshOutputTypes(tc->model);
    if (whyInvalid(tc->model)) return std::nullopt;
    if (!keepsValuesSafe(*tc, e)) return std::nullopt;
    if (!tc->rewrites.empty()) {  // those whose value or precondition the edit took away go
      std::vector<Rewrite> applied;
      applyRewrites(tc->model, tc->rewrites, &applied);
      tc->rewrites = std::move(applied);
    }
    return tc;
  }
  TestCase cut(size_t first, size_t count) const;
  std::optional<TestCase> inlineBody(size_t node, const std::string& attr) const;
};

ShrinkCandidates::ShrinkCandidates(TestCase tc) : impl_(std::make_unique<Impl>()) {
  impl_->tc = std::move(tc);
  const Graph& g = impl_->tc.model.graph;
  auto& edits = impl_->edits;
  const size_t n = g.nodes.size();
  // Fewer equivalence rewrites first: a failing pair shrinks to the fewest that still disagree.
  for (size_t r = 0; r < impl_->tc.rewrites.size(); ++r)
    edits.push_back({Edit::Kind::DropRewrite, r, 0, {}});
  // Big cuts first, then smaller ones: halves, quarters, ..., single nodes (last ones first).
  for (size_t k = n / 2; k >= 1; k /= 2) {
    for (size_t start = n - k + 1; start-- > 0;)
      if (start % k == 0 || k == 1) edits.push_back({Edit::Kind::Cut, start, k, {}});
    if (k == 1) break;
  }
  if (g.outputs.size() > 1)
    for (size_t o = 0; o < g.outputs.size(); ++o)
      edits.push_back({Edit::Kind::DropOutput, o, 0, {}});
  for (size_t i = 0; i < n; ++i) edits.push_back({Edit::Kind::Bypass, i, 0, {}});
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (node.opType == "If")
      for (const char* branch : {"then_branch", "else_branch"})
        edits.push_back({Edit::Kind::Inline, i, 0, branch});
    if (node.opType == "Loop" || node.opType == "Scan")
      edits.push_back({Edit::Kind::Inline, i, 0, "body"});
    for (const Attribute& a : node.attributes)
      for (const Graph& body : a.graphs)
        for (size_t b = 0; b < body.nodes.size(); ++b)
          edits.push_back({Edit::Kind::BodyBypass, i, b, a.name});
  }
  // Fewer operands of variadic ops (Concat, Max, Min).
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    const ops::OpSpec* spec = nullptr;
    try {
      spec = &ops::specFor(node, impl_->tc.model.defaultOpset());
    } catch (const Unsupported&) {  // a custom op (the baseline oracle's cases): not variadic
      continue;
    }
    if (spec->isVariadic() && node.inputs.size() > spec->inputs.size())
      for (size_t k = spec->inputs.size() - 1; k < node.inputs.size(); ++k)
        edits.push_back({Edit::Kind::DropOperand, i, k, {}});
  }
  for (size_t i = 0; i < n; ++i)
    for (const Attribute& a : g.nodes[i].attributes) {
      edits.push_back({Edit::Kind::DropAttribute, i, 0, a.name});
      edits.push_back({Edit::Kind::LowerAttribute, i, 0, a.name});
    }
  // Dims of graph inputs and weights (after structure, before values): all at once to 1 or
  // halved, then one at a time to 1, to 2 (the smallest "more than one"), or smaller.
  // Rank first: an axis of size 1 dropped from a leaf and what is computed from it.
  auto addAxes = [&](const std::string& name, const Shape& shape) {
    for (size_t a = 0; a < shape.size() && shape.size() > 1; ++a)
      if (shape[a] == 1) edits.push_back({Edit::Kind::DropAxis, a, 0, name});
  };
  for (const auto& [name, t] : impl_->tc.inputs) addAxes(name, t.shape());
  for (const Initializer& i : g.initializers) addAxes(i.name, i.value.shape());
  edits.push_back({Edit::Kind::AllDims, 0, 0, {}});
  auto addDims = [&](const std::string& name, const Shape& shape) {
    for (size_t a = 0; a < shape.size(); ++a)
      if (shape[a] > 1) {
        edits.push_back({Edit::Kind::DimToOne, a, 0, name});
        edits.push_back({Edit::Kind::DimToOneTrailing, a, 0, name});
        edits.push_back({Edit::Kind::DimToOneRefilled, a, 0, name});
        if (shape[a] > 2) {
          edits.push_back({Edit::Kind::DimToTwo, a, 0, name});
          if (shape[a] > 3) edits.push_back({Edit::Kind::DimSmaller, a, 0, name});
        }
      }
  };
  for (const auto& [name, t] : impl_->tc.inputs) addDims(name, t.shape());
  for (const Initializer& i : g.initializers) addDims(i.name, i.value.shape());
  for (const auto& [name, t] : impl_->tc.inputs) {
    if (!isComputeDType(t.dtype())) continue;
    if (!allEqual(t, 0)) edits.push_back({Edit::Kind::Zeros, 0, 0, name});
    if (!allEqual(t, 0) && !allEqual(t, 1)) edits.push_back({Edit::Kind::Ones, 0, 0, name});
    if (!allIntegers(t)) edits.push_back({Edit::Kind::Integers, 0, 0, name});
  }
}

ShrinkCandidates::~ShrinkCandidates() = default;
ShrinkCandidates::ShrinkCandidates(ShrinkCandidates&&) noexcept = default;

size_t ShrinkCandidates::size() const { return impl_->edits.size(); }

std::string ShrinkCandidates::describe(size_t i) const {
  const Edit& e = impl_->edits.at(i);
  const Graph& g = impl_->tc.model.graph;
  switch (e.kind) {
    case Edit::Kind::Cut:
      return "cut " + std::to_string(e.count) + " node(s) from #" + std::to_string(e.first);
    case Edit::Kind::DropRewrite:
      return "drop rewrite " + describeRewrites({impl_->tc.rewrites.at(e.first)});
    case Edit::Kind::DropOutput:
      return "drop output " + g.outputs[e.first].name;
    case Edit::Kind::Bypass:
      return "bypass " + g.nodes[e.first].label(e.first);
    case Edit::Kind::BodyBypass:
      return "bypass " + g.nodes[e.first].attribute(e.name)->graph().nodes[e.count].label(e.count) +
             " in " + e.name + " of " + g.nodes[e.first].label(e.first);
    case Edit::Kind::Inline:
      return "inline " + e.name + " of " + g.nodes[e.first].label(e.first);
    case Edit::Kind::DropAttribute:
      return "default " + e.name + " of " + g.nodes[e.first].label(e.first);
    case Edit::Kind::LowerAttribute:
      return "lower " + e.name + " of " + g.nodes[e.first].label(e.first);
    case Edit::Kind::DropOperand:
      return "drop operand " + std::to_string(e.count) + " of " + g.nodes[e.first].label(e.first);
    case Edit::Kind::DropAxis:
      return "drop axis " + std::to_string(e.first) + " of " + e.name;
    case Edit::Kind::AllDims:
      return "every dim to 1, or halved";
    case Edit::Kind::DimToOne:
      return "dim " + std::to_string(e.first) + " of " + e.name + " to 1";
    case Edit::Kind::DimToOneTrailing:
      return "dim " + std::to_string(e.first) + " of " + e.name + " to 1, its last slice";
    case Edit::Kind::DimToOneRefilled:
      return "dim " + std::to_string(e.first) + " of " + e.name + " to 1, fresh values";
    case Edit::Kind::DimToTwo:
      return "dim " + std::to_string(e.first) + " of " + e.name + " to 2";
    case Edit::Kind::DimSmaller:
      return "dim " + std::to_string(e.first) + " of " + e.name + " smaller";
    case Edit::Kind::Zeros:
      return "zeros for " + e.name;
    case Edit::Kind::Ones:
      return "ones for " + e.name;
    case Edit::Kind::Integers:
      return "integers for " + e.name;
  }
  return "?";
}

std::optional<TestCase> ShrinkCandidates::make(size_t i) const {
  const ops::DefinedOnly definedOnly;  // a smaller case stays where the spec says one thing
  try {
    return impl_->checked(impl_->apply(impl_->edits.at(i)), impl_->edits.at(i));
  } catch (const std::exception&) {
    return std::nullopt;  // the edit broke a rule: not a candidate
  }
}

std::optional<TestCase> ShrinkCandidates::alone(size_t node) const {
  const Graph& g = impl_->tc.model.graph;
  if (node >= g.nodes.size()) return std::nullopt;
  const ops::DefinedOnly definedOnly;
  try {
    // Two cuts: the nodes before it, then (of what is left, where it is first) those after it,
    // whose values are the case's.
    TestCase before = node > 0 ? impl_->cut(0, node) : impl_->tc;
    Impl after;
    after.tc = std::move(before);
    after.values = impl_->allValues();
    const size_t rest = after.tc.model.graph.nodes.size() - 1;
    TestCase out = rest > 0 ? after.cut(1, rest) : after.tc;
    return impl_->checked(std::move(out), Edit{Edit::Kind::Cut, 0, g.nodes.size() - 1, {}});
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

TestCase ShrinkCandidates::Impl::cut(size_t first, size_t count) const {
  TestCase out = tc;
  Graph& g = out.model.graph;
  const int64_t opset = out.model.defaultOpset();
  std::set<std::string> removedOutputs;
  for (size_t n = first; n < first + count; ++n)
    for (const auto& o : g.nodes[n].outputs) removedOutputs.insert(o);
  // Each cut value read by a kept node is fed in: an initializer where a consumer wants a
  // weight or a shape operand, else a graph input.
  std::map<std::string, bool> fedAsInitializer;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (n >= first && n < first + count) continue;
    const Node& node = g.nodes[n];
    const ops::OpSpec& spec = ops::specFor(node, opset);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!removedOutputs.count(node.inputs[i])) continue;
      const ops::InputSpec& is = spec.inputSpec(i);
      bool& init = fedAsInitializer[node.inputs[i]];
      init = init || is.weight || is.role != ops::InputRole::Data;
    }
    for (const std::string& in : valuesRead(node))  // what its subgraphs capture: fed as inputs
      if (removedOutputs.count(in)) fedAsInitializer.emplace(in, false);
  }
  const TensorMap& vals = allValues();
  for (const auto& [name, init] : fedAsInitializer) {
    const Tensor& v = vals.at(name);
    if (init) {
      g.initializers.push_back({name, v, ""});
    } else {
      g.inputs.push_back(ValueInfo::tensor(name, v.dtype(), v.shape()));
      out.inputs[name] = v;
    }
  }
  std::erase_if(g.outputs, [&](const ValueInfo& o) { return removedOutputs.count(o.name) > 0; });
  // What the cut nodes read from kept nodes becomes observable: cutting a tail keeps its feeders.
  // A feeder a kept node also reads stays internal, as it was (an engine may fuse it only so).
  std::set<std::string> computedByKept, readByKept;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (n < first || n >= first + count) {
      for (const auto& o : g.nodes[n].outputs) computedByKept.insert(o);
      for (const auto& in : valuesRead(g.nodes[n])) readByKept.insert(in);
    }
  for (size_t n = first; n < first + count; ++n)
    for (const auto& in : valuesRead(g.nodes[n])) {
      if (!computedByKept.count(in) || readByKept.count(in)) continue;
      bool listed = false;
      for (const ValueInfo& o : g.outputs) listed = listed || o.name == in;
      if (!listed)
        g.outputs.push_back(ValueInfo::tensor(in, vals.at(in).dtype(), vals.at(in).shape()));
    }
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(first),
                g.nodes.begin() + static_cast<std::ptrdiff_t>(first + count));
  return out;
}

// The body's nodes and initializers take the node's place. An If runs the branch whatever its
// condition; a Loop whose trip count is 1, or a Scan over one slice, runs its body once: a
// Loop's iteration number is 0, its condition the Loop's; loop-carried values and states are
// their initial ones, a Scan's slices its inputs squeezed, and each scanned output gains its
// axis of 1. Identity nodes connect the body's outputs to the node's output names, so no reader
// is renamed (a later bypass removes them).
std::optional<TestCase> ShrinkCandidates::Impl::inlineBody(size_t index,
                                                           const std::string& attr) const {
  TestCase out = tc;
  Graph& g = out.model.graph;
  const Node node = g.nodes[index];
  const Graph& body = node.attribute(attr)->graph();
  const bool newUnsqueeze = out.model.defaultOpset() >= 13;  // axes an input, not an attribute
  std::vector<Node> nodes;
  auto copy = [&](const std::string& from, const std::string& to) {
    nodes.push_back(Node::make("Identity", {from}, {to}, to + "_inlined"));
  };
  // Squeeze or Unsqueeze of one axis.
  auto reshaped = [&](const char* op, const std::string& from, const std::string& to,
                      int64_t axis) {
    const std::string axes = to + "_axes";
    if (newUnsqueeze) {
      g.initializers.push_back({axes, Tensor::fromVector<int64_t>({1}, {axis}), ""});
      nodes.push_back(Node::make(op, {from, axes}, {to}, axes));
    } else {
      nodes.push_back(Node::make(op, {from}, {to}, axes));
      nodes.back().attributes = {Attribute::ofInts("axes", {axis})};
    }
  };
  const TensorMap& vals = allValues();
  size_t firstOutput = 0;  // of the body's outputs, where the node's begin
  size_t carried = node.outputs.size();
  std::vector<int64_t> outAxes(node.outputs.size(), 0);  // scanned outputs' new axes
  if (node.opType == "Loop") {
    if (!node.hasInput(0) || vals.at(node.inputs[0]).toInt64(0) != 1) return std::nullopt;
    g.initializers.push_back({body.inputs.at(0).name, Tensor::scalar<int64_t>(0), ""});
    if (node.hasInput(1))
      copy(node.inputs[1], body.inputs.at(1).name);
    else
      g.initializers.push_back({body.inputs.at(1).name, Tensor::scalar<bool>(true), ""});
    for (size_t k = 2; k < node.inputs.size(); ++k) copy(node.inputs[k], body.inputs.at(k).name);
    firstOutput = 1;
    carried = node.inputs.size() - 2;
  } else if (node.opType == "Scan") {
    const ops::OpSpec& spec = ops::specFor(node, out.model.defaultOpset());
    ops::KernelCall call(spec, node, {}, {});
    const size_t scans = static_cast<size_t>(call.attrInt("num_scan_inputs"));
    carried = node.inputs.size() - scans;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (k < carried) {
        copy(node.inputs[k], body.inputs.at(k).name);
        continue;
      }
      const Tensor& x = vals.at(node.inputs[k]);
      int64_t axis = ops::perItem(call, "scan_input_axes", k - carried);
      if (axis < 0) axis += x.rank();
      if (x.shape()[static_cast<size_t>(axis)] != 1) return std::nullopt;
      reshaped("Squeeze", node.inputs[k], body.inputs.at(k).name, axis);
    }
    for (size_t o = carried; o < node.outputs.size(); ++o) {
      const int64_t axis = ops::perItem(call, "scan_output_axes", o - carried);
      outAxes[o] =
          axis < 0 ? axis + static_cast<int64_t>(body.outputs.at(o).dims->size()) + 1 : axis;
    }
  }
  nodes.insert(nodes.end(), body.nodes.begin(), body.nodes.end());
  g.initializers.insert(g.initializers.end(), body.initializers.begin(), body.initializers.end());
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    const std::string& from = body.outputs.at(firstOutput + o).name;
    if (o < carried)
      copy(from, node.outputs[o]);
    else
      reshaped("Unsqueeze", from, node.outputs[o], outAxes[o]);
  }
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index));
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(index), nodes.begin(), nodes.end());
  return out;
}

std::optional<TestCase> ShrinkCandidates::Impl::apply(const Edit& e) const {
  switch (e.kind) {
    case Edit::Kind::Cut:
      return cut(e.first, e.count);
    case Edit::Kind::Inline:
      return inlineBody(e.first, e.name);
    case Edit::Kind::DropRewrite: {
      TestCase out = tc;
      out.rewrites.erase(out.rewrites.begin() + static_cast<std::ptrdiff_t>(e.first));
      return out;
    }
    case Edit::Kind::DropOutput: {
      TestCase out = tc;
      out.model.graph.outputs.erase(out.model.graph.outputs.begin() +
                                    static_cast<std::ptrdiff_t>(e.first));
      return out;
    }
    case Edit::Kind::Bypass: {
      TestCase out = tc;
      const TensorMap& vals = allValues();
      auto typeOf = [&](const std::string& name) -> std::optional<ops::TensorType> {
        auto it = vals.find(name);
        if (it == vals.end()) return std::nullopt;
        return ops::TensorType{it->second.dtype(), it->second.shape()};
      };
      if (!bypassNode(out.model.graph, e.first, typeOf)) return std::nullopt;
      return out;
    }
    case Edit::Kind::BodyBypass: {
      TestCase out = tc;
      Node& node = out.model.graph.nodes[e.first];
      auto it = std::find_if(node.attributes.begin(), node.attributes.end(),
                             [&](const Attribute& a) { return a.name == e.name; });
      Graph& body = it->graphs.at(0);
      // The body's types by our rules, in the scope of the top graph's values.
      std::map<std::string, ops::InputFacts> scope;
      for (const auto& [name, t] : allValues()) scope[name] = {true, t.dtype(), t.shape(), &t};
      const auto facts = ops::inferGraph(body, std::move(scope), out.model.defaultOpset());
      auto typeOf = [&](const std::string& name) -> std::optional<ops::TensorType> {
        auto f = facts.find(name);
        if (f == facts.end()) return std::nullopt;
        return ops::TensorType{f->second.dtype, f->second.shape};
      };
      if (!bypassNode(body, e.count, typeOf)) return std::nullopt;
      return out;
    }
    case Edit::Kind::DropAttribute:
    case Edit::Kind::LowerAttribute: {
      TestCase out = tc;
      Node& node = out.model.graph.nodes[e.first];
      const ops::OpSpec& spec = ops::specFor(node, out.model.defaultOpset());
      const ops::AttrSpec* as = spec.attrSpec(e.name);
      auto it = std::find_if(node.attributes.begin(), node.attributes.end(),
                             [&](const Attribute& a) { return a.name == e.name; });
      if (!as || it == node.attributes.end()) return std::nullopt;
      if (e.kind == Edit::Kind::DropAttribute) {
        if (as->required) return std::nullopt;
        node.attributes.erase(it);
        return out;
      }
      bool lowered = false;
      if (it->kind == Attribute::Kind::Int && as->intChoices.empty() && it->i > as->lo &&
          as->lo < as->hi) {
        it->i = std::max(as->lo, it->i > 0 ? it->i - 1 : as->lo);
        lowered = true;
      }
      if (it->kind == Attribute::Kind::Ints && as->symbolic)
        for (int64_t& v : it->ints)
          if (v > as->lo) {
            v = as->lo;
            lowered = true;
          }
      if (!lowered) return std::nullopt;
      return out;
    }
    case Edit::Kind::DropOperand: {
      TestCase out = tc;
      auto& ins = out.model.graph.nodes[e.first].inputs;
      ins.erase(ins.begin() + static_cast<std::ptrdiff_t>(e.count));
      return out;
    }
    case Edit::Kind::DropAxis:
      return shrink::dropAxis(tc, e.name, e.first);
    case Edit::Kind::AllDims:
      return shrink::shrinkAllDims(tc);
    case Edit::Kind::DimToOne:
      return shrink::shrinkDim(tc, e.name, e.first, shrink::DimTarget::One);
    case Edit::Kind::DimToOneTrailing:
      return shrink::shrinkDim(tc, e.name, e.first, shrink::DimTarget::One, shrink::Fill::Trailing);
    case Edit::Kind::DimToOneRefilled:
      return shrink::shrinkDim(tc, e.name, e.first, shrink::DimTarget::One, shrink::Fill::Fresh);
    case Edit::Kind::DimToTwo:
      return shrink::shrinkDim(tc, e.name, e.first, shrink::DimTarget::Two);
    case Edit::Kind::DimSmaller:
      return shrink::shrinkDim(tc, e.name, e.first, shrink::DimTarget::Smaller);
    case Edit::Kind::Zeros:
    case Edit::Kind::Ones:
    case Edit::Kind::Integers: {
      TestCase out = tc;
      Tensor& t = out.inputs.at(e.name);
      t = e.kind == Edit::Kind::Integers ? rounded(t)
                                         : filled(t, e.kind == Edit::Kind::Ones ? 1.0 : 0.0);
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace nncheck
