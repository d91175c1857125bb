// The z3 side of the generic shape rules: a node's dims, shape-operand values and symbolic
// attributes as fresh z3 integer variables, and the rule's constraints over them.
//
//   z3::context ctx;
//   SymbolicNode s = symbolize(ctx, spec, node, facts);     // variables + their concrete values
//   Rule<z3::expr> rule = s.rule(spec, node);
//   spec.ruleSymbolic(rule);                                 // rule.constraints(), rule.outputs()
#pragma once

#include <map>
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

}  // namespace nncheck::solver
