#include <gtest/gtest.h>

#include <set>

#include "ops/op_spec.h"
#include "solver/symbolic.h"
#include "test_util.h"

namespace nncheck::ops {
namespace {

const std::vector<std::string> kRequiredOps = {"Abs",
                                               "Neg",
                                               "Relu",
                                               "LeakyRelu",
                                               "PRelu",
                                               "Elu",
                                               "Selu",
                                               "Sigmoid",
                                               "HardSigmoid",
                                               "Tanh",
                                               "Softplus",
                                               "Exp",
                                               "Log",
                                               "Sqrt",
                                               "Reciprocal",
                                               "Sin",
                                               "Cos",
                                               "Tan",
                                               "Asin",
                                               "Acos",
                                               "Atan",
                                               "Erf",
                                               "Floor",
                                               "Ceil",
                                               "Round",
                                               "Sign",
                                               "Clip",
                                               "Cast",
                                               "Add",
                                               "Sub",
                                               "Mul",
                                               "Div",
                                               "Pow",
                                               "Max",
                                               "Min",
                                               "Mod",
                                               "Equal",
                                               "Greater",
                                               "Less",
                                               "And",
                                               "Or",
                                               "Xor",
                                               "Not",
                                               "Where",
                                               "MatMul",
                                               "Gemm",
                                               "Conv",
                                               "ConvTranspose",
                                               "MaxPool",
                                               "AveragePool",
                                               "GlobalAveragePool",
                                               "BatchNormalization",
                                               "InstanceNormalization",
                                               "Softmax",
                                               "LogSoftmax",
                                               "ReduceSum",
                                               "ReduceMean",
                                               "ReduceMax",
                                               "ReduceMin",
                                               "ReduceProd",
                                               "ArgMax",
                                               "ArgMin",
                                               "Reshape",
                                               "Transpose",
                                               "Concat",
                                               "Split",
                                               "Slice",
                                               "Pad",
                                               "Expand",
                                               "Squeeze",
                                               "Unsqueeze",
                                               "Flatten",
                                               "Gather",
                                               "Tile",
                                               "CumSum",
                                               "Resize"};

TEST(Registry, HoldsEveryRequiredOpWithRuleKernelAndDeclaredTypes) {
  for (const auto& op : kRequiredOps) {
    const OpSpec* s = Registry::instance().find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_TRUE(s->ruleConcrete && s->ruleSymbolic && s->kernelFn) << op;
    for (const InputSpec& in : s->inputs) {
      const TypeVarSpec* tv = s->typeVar(in.typeVar);
      ASSERT_NE(tv, nullptr) << op << " input " << in.name;
      EXPECT_FALSE(tv->allowed.empty()) << op;
      // Every declared dtype must be one the kernels compute on.
      for (DType t : tv->allowed) EXPECT_TRUE(isComputeDType(t)) << op;
    }
  }
}

// A type variable is bound by the inputs that use it (an output's dtype is its rule's), and the
// generator draws a dtype for each: one no input uses cannot be drawn.
TEST(Registry, EveryTypeVariableIsUsedByAnInput) {
  for (const auto& spec : Registry::instance().all())
    for (const TypeVarSpec& t : spec->typeVars) {
      bool used = false;
      for (const InputSpec& in : spec->inputs) used |= in.typeVar == t.name;
      EXPECT_TRUE(used) << spec->type << ": type variable " << t.name << " has no input";
    }
}

// The same generic rule, run with int64 and with z3 variables pinned to the same values, gives
// the same output shapes on every registered node test; with the pins dropped the constraints
// stay satisfiable. This is the proof that one text serves both checking and generating.
TEST(Registry, ConcreteAndSymbolicRulesAgreeOnEveryRegisteredNodeTest) {
  int compared = 0;
  std::set<std::string> opsSeen;
  for (auto& c : testing::registeredNodeCases()) {
    const Model& m = c.model;
    if (m.graph.nodes.size() != 1) continue;
    const Node& node = m.graph.nodes[0];
    const OpSpec& spec = specFor(node, m.defaultOpset());
    std::vector<InputFacts> facts;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        facts.push_back({});
        continue;
      }
      const Tensor* t =
          c.inputs.count(name) ? &c.inputs.at(name) : &m.graph.initializer(name)->value;
      facts.push_back({true, t->dtype(), t->shape(), t});
    }
    std::vector<TensorType> concrete = inferNode(spec, node, facts);

    z3::context ctx;
    solver::SymbolicNode sym = solver::symbolize(ctx, spec, node, facts);
    Rule<z3::expr> rule = sym.rule(spec, node);
    spec.ruleSymbolic(rule);
    z3::solver free(ctx);
    for (const auto& k : rule.constraints()) free.add(k);
    ASSERT_EQ(free.check(), z3::sat) << c.dir;
    z3::solver pinned(ctx);
    for (const auto& k : rule.constraints()) pinned.add(k);
    for (const auto& b : sym.bindings) pinned.add(b.var == ctx.int_val(b.value));
    ASSERT_EQ(pinned.check(), z3::sat) << c.dir << ": the concrete node violates the symbolic rule";
    z3::model model = pinned.get_model();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      ASSERT_TRUE(rule.outputs().size() > i && rule.outputs()[i]) << c.dir;
      const auto& out = *rule.outputs()[i];
      ASSERT_EQ(out.dims.size(), concrete[i].shape.size()) << c.dir;
      EXPECT_EQ(out.dtype, concrete[i].dtype) << c.dir;
      for (size_t a = 0; a < out.dims.size(); ++a)
        EXPECT_EQ(model.eval(out.dims[a], true).get_numeral_int64(), concrete[i].shape[a])
            << c.dir << " output " << i << " axis " << a;
    }
    opsSeen.insert(node.opType);
    ++compared;
  }
  EXPECT_GE(compared, 300);
  for (const auto& op : kRequiredOps) EXPECT_TRUE(opsSeen.count(op)) << op << " never compared";
}

// A violated constraint: concrete checking throws naming op, node and shapes; the symbolic
// rule, pinned to the same values, is unsatisfiable.
TEST(Registry, ViolationsAreCaughtByBothInstantiations) {
  Node node = Node::make("MatMul", {"a", "b"}, {"y"}, "mm");
  const OpSpec& spec = *Registry::instance().find("MatMul");
  Tensor a(DType::Float32, {2, 3}), b(DType::Float32, {4, 5});
  std::vector<InputFacts> facts{{true, DType::Float32, a.shape(), &a},
                                {true, DType::Float32, b.shape(), &b}};
  try {
    inferNode(spec, node, facts);
    FAIL() << "no exception";
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("MatMul 'mm'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float32[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("float32[4, 5]"), std::string::npos) << msg;
  }
  z3::context ctx;
  auto sym = solver::symbolize(ctx, spec, node, facts);
  Rule<z3::expr> rule = sym.rule(spec, node);
  spec.ruleSymbolic(rule);
  z3::solver s(ctx);
  for (const auto& k : rule.constraints()) s.add(k);
  for (const auto& b : sym.bindings) s.add(b.var == ctx.int_val(b.value));
  EXPECT_EQ(s.check(), z3::unsat);
}

}  // namespace
}  // namespace nncheck::ops
