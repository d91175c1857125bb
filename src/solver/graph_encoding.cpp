#include "solver/graph_encoding.h"

namespace nncheck::solver {

GraphEncoding::GraphEncoding(z3::context& ctx, const TestCase& tc) {
  const Model& m = tc.model;
  const int64_t opset = m.defaultOpset();
  using Kind = Variable::Kind;

  // What each value is to the nodes that read it: a shape operand's contents become variables.
  std::map<std::string, ops::InputRole> roles;
  for (const Node& n : m.graph.nodes) {
    const ops::OpSpec& spec = ops::specFor(n, opset);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty()) roles[n.inputs[i]] = spec.inputSpec(i).role;
  }
  auto roleOf = [&](const std::string& name) {
    auto it = roles.find(name);
    return it == roles.end() ? ops::InputRole::Data : it->second;
  };

  auto addLeaf = [&](const std::string& name, const Shape& shape, const Tensor* data) {
    const bool shapeOperand = roleOf(name) != ops::InputRole::Data;
    std::vector<z3::expr> d;
    for (size_t a = 0; a < shape.size(); ++a) {
      d.push_back(ctx.int_const((name + "_d" + std::to_string(a)).c_str()));
      variables_.push_back({d.back(), shape[a], Kind::Dim, name, a, 0, "", shapeOperand});
    }
    dims_.emplace(name, d);
    if (!data || roleOf(name) != ops::InputRole::ShapeValues) return;
    std::vector<z3::expr> c;
    const std::vector<int64_t> old = data->toInt64s();
    for (size_t k = 0; k < old.size(); ++k) {
      c.push_back(ctx.int_const((name + "_v" + std::to_string(k)).c_str()));
      variables_.push_back({c.back(), old[k], Kind::Value, name, k});
    }
    contents_.emplace(name, c);
  };
  for (const ValueInfo& v : m.graph.inputs)
    if (!m.graph.initializer(v.name)) addLeaf(v.name, tc.inputs.at(v.name).shape(), nullptr);
  for (const Initializer& i : m.graph.initializers) addLeaf(i.name, i.value.shape(), &i.value);
  // The case as it is, so that shrinking can keep every computed value from growing.
  for (const auto& [name, facts] : ops::inferModel(m))
    if (!dims_.count(name)) computedShapes_[name] = facts.shape;

  for (size_t n = 0; n < m.graph.nodes.size(); ++n) {
    const Node& node = m.graph.nodes[n];
    const ops::OpSpec& spec = ops::specFor(node, opset);
    std::vector<ops::Rule<z3::expr>::Input> ins;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ops::Rule<z3::expr>::Input in;
      const std::string& name = node.inputs[i];
      if (!name.empty()) {
        in.present = true;
        in.dims = dims_.at(name);
        const Initializer* init = m.graph.initializer(name);
        in.dtype = init ? init->value.dtype() : DType::Undefined;
        if (auto c = contents_.find(name); c != contents_.end()) in.values = c->second;
        if (init) setConcreteOperands(spec, i, init->value, in);
      }
      ins.push_back(std::move(in));
    }
    std::string prefix = "n";
    prefix += std::to_string(n);
    prefix += "_";
    auto attrs = attributeVariables(
        ctx, spec, node, prefix,
        [&](const z3::expr& v, int64_t value, const std::string& attr, size_t k) {
          variables_.push_back({v, value, Kind::Attr, "", k, n, attr});
        });
    ops::Rule<z3::expr> rule(spec, node, ins, attrs, &ctx);
    spec.ruleSymbolic(rule);
    for (const auto& k : rule.constraints()) constraints_.push_back(k);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o].empty() || o >= rule.outputs().size() || !rule.outputs()[o]) continue;
      const auto& out = rule.outputs()[o]->dims;
      for (const auto& d : out) constraints_.push_back(d >= 1);
      dims_.emplace(node.outputs[o], out);
    }
  }
}

Shape GraphEncoding::shape(const z3::model& model, const std::string& value) const {
  Shape out;
  for (const auto& d : dims_.at(value)) out.push_back(model.eval(d, true).get_numeral_int64());
  return out;
}

TestCase GraphEncoding::apply(
    const z3::model& model, const TestCase& tc,
    const std::function<Tensor(const Tensor&, const Shape&)>& resize) const {
  auto eval = [&](const z3::expr& e) { return model.eval(e, true).get_numeral_int64(); };
  auto shapeOf = [&](const std::string& name) { return shape(model, name); };
  TestCase out = tc;
  Graph& g = out.model.graph;
  for (auto& [name, t] : out.inputs) t = resize(t, shapeOf(name));
  for (ValueInfo& v : g.inputs)
    if (auto it = out.inputs.find(v.name); it != out.inputs.end())
      v = ValueInfo::tensor(v.name, v.dtype, it->second.shape());
  for (Initializer& i : g.initializers) {
    auto c = contents_.find(i.name);
    if (c == contents_.end()) {
      const Shape shape = shapeOf(i.name);
      if (shape != i.value.shape()) i.value = resize(i.value, shape);
      continue;
    }
    Tensor t(i.value.dtype(), i.value.shape());
    visitCompute(t.dtype(), [&]<class T>() {
      auto span = t.span<T>();
      for (size_t k = 0; k < span.size(); ++k) span[k] = static_cast<T>(eval(c->second[k]));
    });
    i.value = t;
  }
  for (const Variable& v : variables_) {
    if (v.kind != Variable::Kind::Attr) continue;
    for (Attribute& a : g.nodes[v.node].attributes) {
      if (a.name != v.attribute) continue;
      if (a.kind == Attribute::Kind::Int)
        a.i = eval(v.var);
      else
        a.ints[v.position] = eval(v.var);
    }
  }
  // Indices moved into the dims they index, which may have shrunk; computed indices come from
  // the graph, valid already.
  ops::makeIndexOperandsValid(out.model, out.inputs);
  return out;
}

}  // namespace nncheck::solver
