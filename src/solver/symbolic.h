// The z3 side of the generic shape rules: a node's dims, shape-operand values and symbolic
// attributes as z3 integer variables, and the rule's constraints over them; and the solver as
// nncheck uses z3 (seeded, with a budget in resource units, never a timer).
//
//   z3::context ctx;
//   SymbolicNode s = symbolize(ctx, spec, node, facts);     // variables + their concrete values
//   Rule<z3::expr> rule = s.rule(spec, node);
//   spec.ruleSymbolic(rule);                                 // rule.constraints(), rule.outputs()
//   z3::solver solver = makeSolver(ctx, /*seed=*/7);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/infer.h"

namespace nncheck::solver {

struct SymbolicNode {
  z3::context* ctx = nullptr;
  std::vector<ops::Rule<z3::expr>::Input> inputs;
  std::map<std::string, std::vector<z3::expr>> attrs;
  // Each variable with the value the concrete node gives it, and what it stands for.
  struct Binding {
    enum class Kind { Dim, Value, Attr };
    z3::expr var;
    int64_t value;
    Kind kind;
    size_t input;      // Dim, Value: the input index
    size_t position;   // the axis, the value's index, or the attribute's index
    std::string attr;  // Attr: its name
  };
  std::vector<Binding> bindings;

  ops::Rule<z3::expr> rule(const ops::OpSpec& spec, const Node& node) const {
    return ops::Rule<z3::expr>(spec, node, inputs, attrs, ctx);
  }
};

// Variables for every dim of every present input, every value of ShapeValues inputs whose
// contents are known, and every symbolic integer attribute the node sets. Axes and float
// operands stay concrete, as they do when generating.
SymbolicNode symbolize(z3::context& ctx, const ops::OpSpec& spec, const Node& node,
                       const std::vector<ops::InputFacts>& facts);

// The parts of one rule input that stay concrete whatever z3 chooses: the axes (AxesValues) and
// float operands (FloatValues) of input i, read from its known contents.
void setConcreteOperands(const ops::OpSpec& spec, size_t i, const Tensor& value,
                         ops::Rule<z3::expr>::Input& in);

// The node's symbolic integer attributes (those it sets) as fresh variables named
// <prefix><attribute>_<k>; `onVariable(var, value, attribute, k)` sees each with its value.
std::map<std::string, std::vector<z3::expr>> attributeVariables(
    z3::context& ctx, const ops::OpSpec& spec, const Node& node, const std::string& prefix,
    const std::function<void(const z3::expr&, int64_t, const std::string&, size_t)>& onVariable);

// A solver for nncheck's constraints (nonlinear integer arithmetic), seeded, with a budget in
// z3's resource units: deterministic on any machine, where a timeout is not, and Debian's z3
// 4.8.12 can deadlock in the timer thread a timeout starts (Z3Prover/z3#5990).
z3::solver makeSolver(z3::context& ctx, unsigned seed, unsigned resourceLimit = 200000);

// Checks the solver keeping as many of `prefer` (soft constraints, e.g. "this dim stays") as it
// can: the preferences in an unsat core are dropped and the rest tried again, a few rounds,
// then none. sat, or unsat/unknown when even no preference is satisfiable (or the budget ran out).
z3::check_result checkPreferring(z3::solver& s, const z3::expr_vector& prefer);

}  // namespace nncheck::solver
