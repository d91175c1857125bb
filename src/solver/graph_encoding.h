// A whole test case's numbers as z3 variables, with every node's rule chained over them: the
// dims of every leaf (graph input or initializer), the contents of shape operands (Reshape's
// target, Tile's repeats), and every node's symbolic attributes. Dims of computed values are
// the rules' output expressions. Shrinking re-solves a graph with it; the generator solves one
// node at a time with symbolize() (symbolic.h), over the same rules.
//
//   z3::context ctx;
//   GraphEncoding e(ctx, tc);
//   z3::solver s = makeSolver(ctx, 0);
//   for (const z3::expr& k : e.constraints()) s.add(k);
//   for (const auto& v : e.variables()) s.add(v.var >= 1 && v.var <= v.value);   // shrink only
//   if (s.check() == z3::sat) tc = e.apply(s.get_model(), tc, keepCorner);
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nncheck/test_case.h"
#include "solver/symbolic.h"

namespace nncheck::solver {

class GraphEncoding {
 public:
  struct Variable {
    enum class Kind { Dim, Value, Attr };
    z3::expr var;
    int64_t value;  // what the case has now
    Kind kind;
    std::string leaf;         // Dim, Value: the graph input or initializer
    size_t position;          // the axis, the content's index, or the attribute's index
    size_t node = 0;          // Attr: the node's index
    std::string attribute{};  // Attr: its name
    // A shape operand's dims: its length is structure, not a number to solve for.
    bool structural = false;
  };

  // Throws nncheck::Unsupported for an op the library lacks (like the interpreter).
  GraphEncoding(z3::context& ctx, const TestCase& tc);

  const std::vector<Variable>& variables() const { return variables_; }
  // Every node's rule, and every computed dim at least 1.
  const std::vector<z3::expr>& constraints() const { return constraints_; }
  // The dims of any value of the graph, as expressions over the variables.
  const std::vector<z3::expr>& dims(const std::string& value) const { return dims_.at(value); }
  // The values nodes compute, each with the shape it has in the case as it is.
  const std::map<std::string, Shape>& computedShapes() const { return computedShapes_; }

  // The shape of any value of the graph under a solution.
  Shape shape(const z3::model& model, const std::string& value) const;

  // The case with the solved numbers: leaves reshaped (their data by `resize(old, shape)`),
  // shape operands' contents and symbolic attributes replaced, indices wrapped into the axis
  // they index.
  TestCase apply(const z3::model& model, const TestCase& tc,
                 const std::function<Tensor(const Tensor&, const Shape&)>& resize) const;

 private:
  std::vector<Variable> variables_;
  std::vector<z3::expr> constraints_;
  std::map<std::string, std::vector<z3::expr>> dims_;
  std::map<std::string, std::vector<z3::expr>> contents_;  // shape operands
  std::map<std::string, Shape> computedShapes_;
};

}  // namespace nncheck::solver
