#include "solver/symbolic.h"

namespace nncheck::solver {

SymbolicNode symbolize(z3::context& ctx, const ops::OpSpec& spec, const Node& node,
                       const std::vector<ops::InputFacts>& facts) {
  SymbolicNode s;
  s.ctx = &ctx;
  using Kind = SymbolicNode::Binding::Kind;
  auto var = [&](const std::string& name, int64_t value, Kind kind, size_t input, size_t pos,
                 const std::string& attr = "") {
    z3::expr v = ctx.int_const(name.c_str());
    s.bindings.push_back({v, value, kind, input, pos, attr});
    return v;
  };
  for (size_t i = 0; i < facts.size(); ++i) {
    const ops::InputFacts& f = facts[i];
    ops::Rule<z3::expr>::Input in;
    in.present = f.present;
    in.dtype = f.dtype;
    if (f.present) {
      for (size_t a = 0; a < f.shape.size(); ++a)
        in.dims.push_back(
            var("in" + std::to_string(i) + "_d" + std::to_string(a), f.shape[a], Kind::Dim, i, a));
      if (f.value) {
        switch (spec.inputSpec(i).role) {
          case ops::InputRole::Data:
            break;
          case ops::InputRole::ShapeValues: {
            std::vector<z3::expr> vals;
            auto concrete = f.value->toInt64s();
            for (size_t k = 0; k < concrete.size(); ++k)
              vals.push_back(var("in" + std::to_string(i) + "_v" + std::to_string(k), concrete[k],
                                 Kind::Value, i, k));
            in.values = vals;
            break;
          }
          case ops::InputRole::AxesValues:
            in.axes = f.value->toInt64s();
            break;
          case ops::InputRole::FloatValues: {
            std::vector<double> fl;
            for (int64_t k = 0; k < f.value->size(); ++k) fl.push_back(f.value->toDouble(k));
            in.floats = fl;
            break;
          }
        }
      }
    }
    s.inputs.push_back(std::move(in));
  }
  for (const ops::AttrSpec& as : spec.attrs) {
    if (!as.symbolic) continue;
    const Attribute* a = node.attribute(as.name);
    if (!a) continue;
    std::vector<int64_t> values =
        a->kind == Attribute::Kind::Int ? std::vector<int64_t>{a->i} : a->ints;
    std::vector<z3::expr> vars;
    for (size_t k = 0; k < values.size(); ++k)
      vars.push_back(var(as.name + "_" + std::to_string(k), values[k], Kind::Attr, 0, k, as.name));
    s.attrs.emplace(as.name, std::move(vars));
  }
  return s;
}

}  // namespace nncheck::solver
