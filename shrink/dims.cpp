// Shrinking dims: the whole graph re-solved with z3 so that one leaf dim gets smaller, no leaf dim
// or symbolic attribute grows, and every node's rule still holds. Shape operands (Reshape's
// target, Slice's ends, ...) are free to follow.
#include "shrink/dims.h"

#include <cstring>
#include <map>

#include "core/rng.h"
#include "generators/values.h"
#include "ops/infer.h"
#include "ops/kernels.h"

namespace nncheck::shrink {
namespace {

// The corner of `old` that fits `shape` (every new dim is <= the old one).
Tensor corner(const Tensor& old, const Shape& shape) {
  Tensor t(old.dtype(), shape);
  const size_t sz = dtypeSize(old.dtype());
  const Shape oldStrides = ops::stridesOf(old.shape());
  const Shape& s = shape;
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t o = 0; o < t.size(); ++o) {
    int64_t off = 0;
    for (size_t a = 0; a < s.size(); ++a) off += idx[a] * oldStrides[a];
    std::memcpy(t.bytes().data() + o * sz, old.bytes().data() + off * sz, sz);
    for (size_t a = s.size(); a-- > 0;) {
      if (++idx[a] < s[a]) break;
      idx[a] = 0;
    }
  }
  return t;
}

struct Leaf {
  std::vector<z3::expr> dims;
  std::optional<std::vector<z3::expr>> values;  // shape operands
};

}  // namespace

std::optional<TestCase> shrinkDim(const TestCase& tc, const std::string& leaf, size_t axis,
                                  bool toOne, bool refill) {
  const Model& m = tc.model;
  const int64_t opset = m.defaultOpset();
  z3::context ctx;
  z3::solver s(ctx, "QF_NIA");
  z3::params p(ctx);
  p.set("timeout", 200u);
  p.set("random_seed", 0u);
  s.set(p);
  z3::expr_vector prefer(ctx);

  // Which initializers are shape operands (their contents become variables).
  std::map<std::string, ops::InputRole> roles;
  for (const Node& n : m.graph.nodes) {
    const ops::OpSpec& spec = ops::specFor(n, opset);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty()) roles[n.inputs[i]] = spec.inputSpec(i).role;
  }

  std::map<std::string, std::vector<z3::expr>> dims;      // every value's dims
  std::map<std::string, std::vector<z3::expr>> contents;  // ShapeValues initializers
  bool found = false;
  auto addLeaf = [&](const std::string& name, const Shape& shape, const Tensor* data) {
    std::vector<z3::expr> d;
    for (size_t a = 0; a < shape.size(); ++a) {
      z3::expr v = ctx.int_const((name + "_d" + std::to_string(a)).c_str());
      const bool shapeOperand = roles.count(name) && roles.at(name) != ops::InputRole::Data;
      if (shapeOperand) {
        s.add(v == ctx.int_val(shape[a]));  // a shape operand's length is structural
      } else if (name == leaf && a == axis) {
        found = true;
        s.add(toOne ? v == 1 : (v >= 1 && v < ctx.int_val(shape[a])));
      } else {
        s.add(v >= 1 && v <= ctx.int_val(shape[a]));
        prefer.push_back(v == ctx.int_val(shape[a]));
      }
      d.push_back(v);
    }
    dims.emplace(name, d);
    if (data && roles.count(name) && roles.at(name) == ops::InputRole::ShapeValues) {
      std::vector<z3::expr> c;
      auto old = data->toInt64s();
      for (size_t k = 0; k < old.size(); ++k) {
        z3::expr v = ctx.int_const((name + "_v" + std::to_string(k)).c_str());
        s.add(v >= -65536 && v <= 65536);
        prefer.push_back(v == ctx.int_val(old[k]));
        c.push_back(v);
      }
      contents.emplace(name, c);
    }
  };
  for (const ValueInfo& v : m.graph.inputs)
    if (!m.graph.initializer(v.name)) addLeaf(v.name, tc.inputs.at(v.name).shape(), nullptr);
  for (const Initializer& i : m.graph.initializers) addLeaf(i.name, i.value.shape(), &i.value);
  if (!found) return std::nullopt;

  // Every node's rule, chained; symbolic attributes may only shrink.
  std::vector<std::map<std::string, std::vector<z3::expr>>> attrVars(m.graph.nodes.size());
  for (size_t n = 0; n < m.graph.nodes.size(); ++n) {
    const Node& node = m.graph.nodes[n];
    const ops::OpSpec& spec = ops::specFor(node, opset);
    std::vector<ops::Rule<z3::expr>::Input> ins;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ops::Rule<z3::expr>::Input in;
      const std::string& name = node.inputs[i];
      if (!name.empty()) {
        in.present = true;
        in.dims = dims.at(name);
        const Initializer* init = m.graph.initializer(name);
        in.dtype = init ? init->value.dtype() : DType::Undefined;
        if (contents.count(name)) in.values = contents.at(name);
        if (init && spec.inputSpec(i).role == ops::InputRole::AxesValues)
          in.axes = init->value.toInt64s();
        if (init && spec.inputSpec(i).role == ops::InputRole::FloatValues) {
          std::vector<double> f;
          for (int64_t k = 0; k < init->value.size(); ++k) f.push_back(init->value.toDouble(k));
          in.floats = f;
        }
      }
      ins.push_back(std::move(in));
    }
    for (const ops::AttrSpec& as : spec.attrs) {
      const Attribute* a = node.attribute(as.name);
      if (!as.symbolic || !a) continue;
      std::vector<int64_t> old =
          a->kind == Attribute::Kind::Int ? std::vector<int64_t>{a->i} : a->ints;
      std::vector<z3::expr> vars;
      for (size_t k = 0; k < old.size(); ++k) {
        std::string var = "n";  // built stepwise: GCC 12 warns wrongly on a "literal" + chain
        var += std::to_string(n);
        var += "_";
        var += as.name;
        var += std::to_string(k);
        z3::expr v = ctx.int_const(var.c_str());
        s.add(v >= ctx.int_val(std::min(as.lo, old[k])) && v <= ctx.int_val(old[k]));
        prefer.push_back(v == ctx.int_val(old[k]));
        vars.push_back(v);
      }
      attrVars[n].emplace(as.name, vars);
    }
    ops::Rule<z3::expr> rule(spec, node, ins, attrVars[n], &ctx);
    spec.ruleSymbolic(rule);
    for (const auto& k : rule.constraints()) s.add(k);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o].empty() || o >= rule.outputs().size() || !rule.outputs()[o]) continue;
      const auto& out = rule.outputs()[o]->dims;
      for (const auto& d : out) s.add(d >= 1);
      dims.emplace(node.outputs[o], out);
    }
  }

  if (s.check(prefer) != z3::sat && s.check() != z3::sat) return std::nullopt;
  z3::model model = s.get_model();
  auto eval = [&](const z3::expr& e) { return model.eval(e, true).get_numeral_int64(); };
  auto shapeOf = [&](const std::string& name) {
    Shape out;
    for (const auto& d : dims.at(name)) out.push_back(eval(d));
    return out;
  };

  TestCase out = tc;
  Graph& g = out.model.graph;
  Rng rng(tc.seed ^ (static_cast<uint64_t>(axis) << 32) ^ std::hash<std::string>{}(leaf));
  auto resized = [&](const Tensor& old, const Shape& shape) {
    if (!refill || shape == old.shape()) return corner(old, shape);
    return randomTensor(rng, old.dtype(), shape, ops::ValueDomain::Any, 0);
  };
  for (auto& [name, t] : out.inputs) t = resized(t, shapeOf(name));
  for (ValueInfo& v : g.inputs)
    if (out.inputs.count(v.name))
      v = ValueInfo::tensor(v.name, v.dtype, out.inputs.at(v.name).shape());
  for (Initializer& i : g.initializers) {
    if (contents.count(i.name)) {
      std::vector<int64_t> vals;
      for (const auto& v : contents.at(i.name)) vals.push_back(eval(v));
      Tensor t = Tensor::fromVector<int64_t>(i.value.shape(), vals);
      if (i.value.dtype() != DType::Int64) {
        Tensor c(i.value.dtype(), t.shape());
        visitCompute(c.dtype(), [&]<class T>() {
          for (int64_t k = 0; k < t.size(); ++k)
            c.span<T>()[static_cast<size_t>(k)] = static_cast<T>(vals[static_cast<size_t>(k)]);
        });
        t = c;
      }
      i.value = t;
    } else if (!roles.count(i.name) || roles.at(i.name) == ops::InputRole::Data) {
      i.value = resized(i.value, shapeOf(i.name));
    }
  }
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (Attribute& a : g.nodes[n].attributes) {
      auto it = attrVars[n].find(a.name);
      if (it == attrVars[n].end()) continue;
      if (a.kind == Attribute::Kind::Int)
        a.i = eval(it->second[0]);
      else
        for (size_t k = 0; k < a.ints.size(); ++k) a.ints[k] = eval(it->second[k]);
    }
  // Gather's indices must stay inside the (smaller) axis they index.
  for (const Node& node : g.nodes) {
    if (node.opType != "Gather") continue;
    const Shape data =
        out.inputs.count(node.inputs[0])
            ? out.inputs.at(node.inputs[0]).shape()
            : (g.initializer(node.inputs[0]) ? g.initializer(node.inputs[0])->value.shape()
                                             : shapeOf(node.inputs[0]));
    const Attribute* ax = node.attribute("axis");
    int64_t axisIdx = ax ? ax->i : 0;
    if (axisIdx < 0) axisIdx += static_cast<int64_t>(data.size());
    const int64_t D = data[static_cast<size_t>(axisIdx)];
    Tensor* idx = nullptr;
    for (Initializer& i : g.initializers)
      if (i.name == node.inputs[1]) idx = &i.value;
    if (!idx && out.inputs.count(node.inputs[1])) idx = &out.inputs.at(node.inputs[1]);
    if (!idx) continue;
    visitCompute(idx->dtype(), [&]<class T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        for (auto& v : idx->span<T>()) v = static_cast<T>(((static_cast<int64_t>(v) % D) + D) % D);
    });
  }
  return out;
}

}  // namespace nncheck::shrink
