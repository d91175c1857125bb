// The z3 side of the shape rules: a concrete node's numbers satisfy its symbolic rule, numbers
// the rule forbids do not, and the rule's symbolic outputs evaluate to the concrete outputs.
#include "solver/symbolic.h"

#include <gtest/gtest.h>

namespace nncheck {
namespace {

using Kind = solver::SymbolicNode::Binding::Kind;

struct MatMulRule {
  z3::context ctx;
  Tensor a{DType::Float32, {2, 3}}, b{DType::Float32, {3, 4}};
  Node node = Node::make("MatMul", {"a", "b"}, {"y"});
  const ops::OpSpec& spec = ops::specFor(node, 14);
  solver::SymbolicNode sym = solver::symbolize(
      ctx, spec, node,
      {{true, DType::Float32, {2, 3}, nullptr}, {true, DType::Float32, {3, 4}, nullptr}});
  ops::Rule<z3::expr> rule = [this] {
    ops::Rule<z3::expr> r = sym.rule(spec, node);
    spec.ruleSymbolic(r);
    return r;
  }();

  // A solver holding the rule, every binding but `except` fixed to its concrete value.
  z3::solver solverWith(const std::vector<std::pair<size_t, int64_t>>& overrides) {
    z3::solver s(ctx);
    for (const auto& k : rule.constraints()) s.add(k);
    for (size_t i = 0; i < sym.bindings.size(); ++i) {
      int64_t v = sym.bindings[i].value;
      for (const auto& [at, value] : overrides)
        if (at == i) v = value;
      s.add(sym.bindings[i].var == ctx.int_val(v));
    }
    return s;
  }
};

TEST(Symbolic, EveryDimOfEveryInputIsAVariableBoundToItsValue) {
  MatMulRule m;
  ASSERT_EQ(m.sym.bindings.size(), 4u);
  std::vector<int64_t> values;
  for (const auto& b : m.sym.bindings) {
    EXPECT_EQ(b.kind, Kind::Dim);
    values.push_back(b.value);
  }
  EXPECT_EQ(values, (std::vector<int64_t>{2, 3, 3, 4}));
}

TEST(Symbolic, TheConcreteNodeSatisfiesItsRuleAndItsOutputsFollow) {
  MatMulRule m;
  z3::solver s = m.solverWith({});
  ASSERT_EQ(s.check(), z3::sat);
  z3::model model = s.get_model();
  ASSERT_TRUE(m.rule.outputs()[0]);
  std::vector<int64_t> out;
  for (const z3::expr& d : m.rule.outputs()[0]->dims)
    out.push_back(model.eval(d, true).get_numeral_int64());
  EXPECT_EQ(out, (std::vector<int64_t>{2, 4}));
}

TEST(Symbolic, InnerDimsThatDisagreeAreUnsatisfiable) {
  MatMulRule m;
  // B's first dim (binding 2) to 5 while A's last stays 3.
  z3::solver s = m.solverWith({{2, 5}});
  EXPECT_EQ(s.check(), z3::unsat);
}

}  // namespace
}  // namespace nncheck
