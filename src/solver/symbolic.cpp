#include "solver/symbolic.h"

namespace nncheck::solver {

void setConcreteOperands(const ops::OpSpec& spec, size_t i, const Tensor& value,
                         ops::Rule<z3::expr>::Input& in) {
  switch (spec.inputSpec(i).role) {
    case ops::InputRole::AxesValues:
      in.axes = value.toInt64s();
      break;
    case ops::InputRole::FloatValues: {
      std::vector<double> floats;
      for (int64_t k = 0; k < value.size(); ++k) floats.push_back(value.toDouble(k));
      in.floats = floats;
      break;
    }
    case ops::InputRole::Data:
    case ops::InputRole::ShapeValues:  // symbolic: the caller's variables
      break;
  }
}

std::map<std::string, std::vector<z3::expr>> attributeVariables(
    z3::context& ctx, const ops::OpSpec& spec, const Node& node, const std::string& prefix,
    const std::function<void(const z3::expr&, int64_t, const std::string&, size_t)>& onVariable) {
  std::map<std::string, std::vector<z3::expr>> out;
  for (const ops::AttrSpec& as : spec.attrs) {
    if (!as.symbolic) continue;
    const Attribute* a = node.attribute(as.name);
    if (!a) continue;
    std::vector<int64_t> values =
        a->kind == Attribute::Kind::Int ? std::vector<int64_t>{a->i} : a->ints;
    std::vector<z3::expr> vars;
    for (size_t k = 0; k < values.size(); ++k) {
      std::string name = prefix;  // built stepwise: GCC 12 warns wrongly on a "literal" + chain
      name += as.name;
      name += "_";
      name += std::to_string(k);
      vars.push_back(ctx.int_const(name.c_str()));
      onVariable(vars.back(), values[k], as.name, k);
    }
    out.emplace(as.name, std::move(vars));
  }
  return out;
}

SymbolicNode symbolize(z3::context& ctx, const ops::OpSpec& spec, const Node& node,
                       const std::vector<ops::InputFacts>& facts) {
  SymbolicNode s;
  s.ctx = &ctx;
  using Kind = SymbolicNode::Binding::Kind;
  auto var = [&](const std::string& name, int64_t value, Kind kind, size_t input, size_t pos) {
    z3::expr v = ctx.int_const(name.c_str());
    s.bindings.push_back({v, value, kind, input, pos, ""});
    return v;
  };
  for (size_t i = 0; i < facts.size(); ++i) {
    const ops::InputFacts& f = facts[i];
    ops::Rule<z3::expr>::Input in;
    in.present = f.present;
    in.dtype = f.dtype;
    if (f.present) {
      const std::string prefix = "in" + std::to_string(i);
      in.drawn = f.shape;
      for (size_t a = 0; a < f.shape.size(); ++a)
        in.dims.push_back(var(prefix + "_d" + std::to_string(a), f.shape[a], Kind::Dim, i, a));
      if (f.value && spec.inputSpec(i).role == ops::InputRole::ShapeValues) {
        std::vector<z3::expr> vals;
        auto concrete = f.value->toInt64s();
        for (size_t k = 0; k < concrete.size(); ++k)
          vals.push_back(var(prefix + "_v" + std::to_string(k), concrete[k], Kind::Value, i, k));
        in.values = vals;
      } else if (f.value) {
        setConcreteOperands(spec, i, *f.value, in);
      }
    }
    s.inputs.push_back(std::move(in));
  }
  s.attrs =
      attributeVariables(ctx, spec, node, "",
                         [&](const z3::expr& v, int64_t value, const std::string& attr, size_t k) {
                           s.bindings.push_back({v, value, Kind::Attr, 0, k, attr});
                         });
  return s;
}

z3::solver makeSolver(z3::context& ctx, unsigned seed, unsigned resourceLimit) {
  z3::solver s(ctx, "QF_NIA");
  z3::params p(ctx);
  p.set("random_seed", seed);
  p.set("rlimit", resourceLimit);
  s.set(p);
  return s;
}

z3::check_result checkPreferring(z3::solver& s, const z3::expr_vector& prefer) {
  std::vector<z3::expr> keep;
  for (unsigned i = 0; i < prefer.size(); ++i) keep.push_back(prefer[i]);
  for (int round = 0; round < 8 && !keep.empty(); ++round) {
    z3::expr_vector assumptions(s.ctx());
    for (const z3::expr& k : keep) assumptions.push_back(k);
    const z3::check_result r = s.check(assumptions);
    if (r != z3::unsat) return r;
    const z3::expr_vector core = s.unsat_core();
    if (core.empty()) break;  // the hard constraints alone conflict
    std::erase_if(keep, [&](const z3::expr& k) {
      for (unsigned i = 0; i < core.size(); ++i)
        if (z3::eq(core[i], k)) return true;
      return false;
    });
  }
  return s.check();
}

}  // namespace nncheck::solver
