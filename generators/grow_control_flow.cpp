// Control flow: an If, Loop or Scan node whose bodies are small graphs (one to three nodes)
// grown from values they capture from the enclosing graph and their own inputs.
#include <algorithm>
#include <set>

#include "generators/ways_of_growing.h"

namespace nncheck::gen {
namespace {

struct Body {
  Graph graph;                // inputs as given; nodes; initializers it made
  std::vector<Value> values;  // everything it can read: captured values, inputs, its own
};

// One to three nodes grown over `inputs` (the body's graph inputs) and the values of g it
// captures; no control flow inside.
Body growBody(Growth& g, const std::vector<Value>& inputs) {
  GeneratorConfig cfg = g.cfg();
  cfg.finiteValues = false;  // the node's run is checked whole, once its bodies are done
  cfg.seeds = nullptr;
  Growth b(cfg, g.table(), g.rng().next(), g.stats(), /*body=*/true);
  b.setCounter(g.counter());  // names stay unique across the nested graphs, as ONNX requires
  for (const Value& v : g.values())
    if (v.kind != Value::Kind::Initializer) b.values().push_back(v);
  const size_t captured = b.values().size();
  b.values().insert(b.values().end(), inputs.begin(), inputs.end());
  const int64_t n = g.rng().uniform(1, 3);
  for (int64_t k = 0; k < n; ++k)
    if (!b.insert({})) break;
  g.setCounter(b.counter());
  Body body;
  for (const Value& v : inputs)
    body.graph.inputs.push_back(ValueInfo::tensor(v.name, v.dtype, v.shape));
  body.graph.nodes = std::move(b.nodes());
  for (size_t v = captured + inputs.size(); v < b.values().size(); ++v)
    if (b.values()[v].kind == Value::Kind::Initializer)
      body.graph.initializers.push_back({b.values()[v].name, b.values()[v].data, ""});
  body.values = std::move(b.values());
  return body;
}

// Names a value of the body of this type (any, when t is Undefined) to be an output: the latest
// it computed, else an Identity of `fallback` (of type t) it adds, else (any type) ""; `avoid` is
// a name already listed.
std::string bodyOutput(Growth& g, Body& b, DType t, const Shape& s, const std::string& fallback,
                       const std::string& avoid = "") {
  std::set<std::string> own;
  for (const Node& n : b.graph.nodes) own.insert(n.outputs.begin(), n.outputs.end());
  for (auto v = b.values.rbegin(); v != b.values.rend(); ++v)
    if (own.count(v->name) && v->name != avoid && (t == DType::Undefined || v->dtype == t) &&
        (t == DType::Undefined || v->shape == s))
      return v->name;
  if (t == DType::Undefined) return "";
  Node copy = Node::make("Identity", {fallback}, {g.fresh("v")});
  copy.name = "Identity_" + copy.outputs[0];
  b.values.push_back({copy.outputs[0], t, s, Value::Kind::Computed, {}});
  b.graph.nodes.push_back(copy);
  return copy.outputs[0];
}

}  // namespace

bool growControlFlow(Growth& g, const OpEntry& e) {
  const std::string& op = e.spec->type;
  const GeneratorConfig& cfg = g.cfg();
  Rng& rng = g.rng();
  auto allowed = [&](DType t) {
    return std::find(cfg.dtypes.begin(), cfg.dtypes.end(), t) != cfg.dtypes.end();
  };
  std::vector<int> readable;  // what a node reads and a body carries: the config's dtypes
  for (size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].kind != Value::Kind::Initializer && allowed(g.values()[v].dtype))
      readable.push_back(static_cast<int>(v));
  if (readable.empty()) return false;
  const Value carried = g.values()[static_cast<size_t>(rng.pick(readable))];
  auto scalarInit = [&](const char* prefix, Tensor t) {
    g.values().push_back(
        {g.fresh(prefix), t.dtype(), t.shape(), Value::Kind::Initializer, t, true});
    return g.values().back().name;
  };
  auto typed = [](const std::string& name, const Value& like) {
    return Value{name, like.dtype, like.shape, Value::Kind::Input, {}};
  };
  std::vector<Value> saved = g.values();
  const int counter = g.counter();
  auto takeBack = [&] {
    g.values() = std::move(saved);
    g.setCounter(counter);
    return false;
  };
  Node node;
  node.opType = op;
  std::vector<ops::TensorType> outs;
  if (op == "If") {
    node.inputs = {scalarInit("w", Tensor::scalar<bool>(rng.chance(0.5)))};
    for (const char* branch : {"then_branch", "else_branch"}) {
      Body b = growBody(g, {});
      b.graph.name = g.fresh(branch == std::string("then_branch") ? "then" : "else");
      const std::string out = bodyOutput(g, b, carried.dtype, carried.shape, carried.name);
      b.graph.outputs = {ValueInfo::tensor(out, carried.dtype, carried.shape)};
      node.attributes.push_back(Attribute::ofGraph(branch, std::move(b.graph)));
    }
    outs = {{carried.dtype, carried.shape}};
  } else if (op == "Loop") {
    const int64_t trips = rng.uniform(1, 3);
    node.inputs = {scalarInit("w", Tensor::scalar<int64_t>(trips)),
                   rng.chance(0.5) ? scalarInit("w", Tensor::scalar<bool>(true)) : "",
                   carried.name};
    const Value iter{g.fresh("i"), DType::Int64, {}, Value::Kind::Input, {}};
    const Value cond{g.fresh("c"), DType::Bool, {}, Value::Kind::Input, {}};
    const Value in = typed(g.fresh("x"), carried);
    Body b = growBody(g, {iter, cond, in});
    b.graph.name = g.fresh("body");
    const std::string condOut = bodyOutput(g, b, DType::Bool, {}, cond.name);
    const std::string next = bodyOutput(g, b, in.dtype, in.shape, in.name, condOut);
    b.graph.outputs = {ValueInfo::tensor(condOut, DType::Bool, {}),
                       ValueInfo::tensor(next, in.dtype, in.shape)};
    outs = {{carried.dtype, carried.shape}};
    if (rng.chance(0.6)) {  // a scan output: the last value the body computed
      std::string scanned = bodyOutput(g, b, DType::Undefined, {}, "", condOut);
      if (scanned.empty() || scanned == next)
        scanned = bodyOutput(g, b, in.dtype, in.shape, in.name, next);
      const Value& v = *std::find_if(b.values.begin(), b.values.end(),
                                     [&](const Value& x) { return x.name == scanned; });
      b.graph.outputs.push_back(ValueInfo::tensor(scanned, v.dtype, v.shape));
      Shape s = v.shape;
      s.insert(s.begin(), trips);
      outs.push_back({v.dtype, s});
    }
    node.attributes.push_back(Attribute::ofGraph("body", std::move(b.graph)));
  } else {  // Scan: one state, one scan input
    std::vector<int> sequences;
    for (int v : readable)
      if (!g.values()[static_cast<size_t>(v)].shape.empty()) sequences.push_back(v);
    if (sequences.empty()) return false;
    const Value xs = g.values()[static_cast<size_t>(rng.pick(sequences))];
    const int64_t axis = rng.uniform(0, static_cast<int64_t>(xs.shape.size()) - 1);
    Shape slice = xs.shape;
    slice.erase(slice.begin() + axis);
    const Value state = typed(g.fresh("x"), carried);
    const Value item{g.fresh("x"), xs.dtype, slice, Value::Kind::Input, {}};
    Body b = growBody(g, {state, item});
    b.graph.name = g.fresh("body");
    const std::string next = bodyOutput(g, b, state.dtype, state.shape, state.name);
    std::string scanned = bodyOutput(g, b, DType::Undefined, {}, "", next);
    if (scanned.empty() || scanned == next)
      scanned = bodyOutput(g, b, item.dtype, item.shape, item.name, next);
    const Value& v = *std::find_if(b.values.begin(), b.values.end(),
                                   [&](const Value& x) { return x.name == scanned; });
    b.graph.outputs = {ValueInfo::tensor(next, state.dtype, state.shape),
                       ValueInfo::tensor(scanned, v.dtype, v.shape)};
    const bool reversed = rng.chance(0.3);
    const int64_t outAxis = rng.uniform(0, static_cast<int64_t>(v.shape.size()));
    Shape s = v.shape;
    s.insert(s.begin() + outAxis, xs.shape[static_cast<size_t>(axis)]);
    outs = {{carried.dtype, carried.shape}, {v.dtype, s}};
    node.inputs = {carried.name, xs.name};
    node.attributes = {Attribute::ofGraph("body", std::move(b.graph)),
                       Attribute::ofInt("num_scan_inputs", 1)};
    if (axis != 0) node.attributes.push_back(Attribute::ofInts("scan_input_axes", {axis}));
    if (reversed) node.attributes.push_back(Attribute::ofInts("scan_input_directions", {1}));
    if (outAxis != 0) node.attributes.push_back(Attribute::ofInts("scan_output_axes", {outAxis}));
  }
  for (const auto& o : outs)
    if (!g.withinLimits(o.shape)) return takeBack();
  return g.appendNode(std::move(node), outs, *e.spec) || takeBack();
}

}  // namespace nncheck::gen
