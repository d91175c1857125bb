// Shrinking dims: the whole graph re-solved (solver::GraphEncoding) so that one leaf dim gets
// smaller, no leaf dim or symbolic attribute grows, and every node's rule still holds. Shape
// operands (Reshape's target, Slice's ends, ...) are free to follow; indices follow the axis
// they index.
#include "shrink/dims.h"

#include <cstring>
#include <functional>
#include <map>

#include "core/rng.h"
#include "generators/values.h"
#include "ops/kernels.h"
#include "solver/graph_encoding.h"

namespace nncheck::shrink {
namespace {

// The corner of `old` that fits `shape` (every new dim is <= the old one).
Tensor corner(const Tensor& old, const Shape& shape, bool trailing) {
  Tensor t(old.dtype(), shape);
  const size_t sz = dtypeSize(old.dtype());
  const Shape oldStrides = ops::stridesOf(old.shape());
  const Shape& s = shape;
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t o = 0; o < t.size(); ++o) {
    int64_t off = 0;
    for (size_t a = 0; a < s.size(); ++a)
      off += (idx[a] + (trailing ? old.shape()[a] - s[a] : 0)) * oldStrides[a];
    std::memcpy(t.bytes().data() + o * sz, old.bytes().data() + off * sz, sz);
    for (size_t a = s.size(); a-- > 0;) {
      if (++idx[a] < s[a]) break;
      idx[a] = 0;
    }
  }
  return t;
}

// Structural dims stay; shape-operand contents move freely; symbolic attributes only shrink.
// Returns false for a leaf dim, which the caller bounds.
bool boundOthers(const TestCase& tc, const solver::GraphEncoding::Variable& v, z3::solver& s,
                 z3::expr_vector& prefer) {
  using Kind = solver::GraphEncoding::Variable::Kind;
  z3::context& ctx = s.ctx();
  const z3::expr old = ctx.int_val(v.value);
  if (v.kind == Kind::Dim && v.structural) {
    s.add(v.var == old);
  } else if (v.kind == Kind::Value) {
    s.add(v.var >= -65536 && v.var <= 65536);
    prefer.push_back(v.var == old);
  } else if (v.kind == Kind::Attr) {
    const ops::OpSpec& spec = ops::specFor(tc.model.graph.nodes[v.node], tc.model.defaultOpset());
    s.add(v.var >= ctx.int_val(std::min(spec.attrSpec(v.attribute)->lo, v.value)) && v.var <= old);
    prefer.push_back(v.var == old);
  } else {
    return false;
  }
  return true;
}

// A graph is a larger problem than the generator's single node: a larger budget.
constexpr unsigned kGraphBudget = 2000000;

// A solver over the encoding in which no computed value grows: shrinking one leaf must not let a
// shape operand blow another value up (Expand to 65536 wide is "valid" too).
z3::solver shrinkingSolver(z3::context& ctx, const solver::GraphEncoding& e, unsigned budget) {
  z3::solver s = solver::makeSolver(ctx, 0, budget);
  for (const z3::expr& k : e.constraints()) s.add(k);
  for (const auto& [value, shape] : e.computedShapes()) {
    const auto& dims = e.dims(value);
    for (size_t a = 0; a < dims.size() && a < shape.size(); ++a)
      s.add(dims[a] <= ctx.int_val(shape[a]));
  }
  return s;
}

// The case with the solution's numbers, leaf data cut to a corner or refilled.
TestCase solved(const TestCase& tc, const solver::GraphEncoding& e, const z3::model& model,
                Fill fill, uint64_t refillSeed) {
  Rng rng(refillSeed);
  return e.apply(model, tc, [&](const Tensor& old, const Shape& shape) {
    if (fill != Fill::Fresh || shape == old.shape())
      return corner(old, shape, fill == Fill::Trailing);
    return randomTensor(rng, old.dtype(), shape, ops::ValueDomain::Any);
  });
}

}  // namespace

std::optional<TestCase> shrinkDim(const TestCase& tc, const std::string& leaf, size_t axis,
                                  DimTarget target, Fill fill) {
  using Kind = solver::GraphEncoding::Variable::Kind;
  z3::context ctx;
  solver::GraphEncoding e(ctx, tc);
  z3::solver s = shrinkingSolver(ctx, e, kGraphBudget);
  z3::expr_vector prefer(ctx);
  bool found = false;
  for (const auto& v : e.variables()) {
    if (boundOthers(tc, v, s, prefer)) continue;
    const z3::expr old = ctx.int_val(v.value);
    if (v.kind != Kind::Dim || v.leaf != leaf || v.position != axis) {
      s.add(v.var >= 1 && v.var <= old);
      prefer.push_back(v.var == old);
      continue;
    }
    found = true;
    if (target == DimTarget::One) s.add(v.var == 1);
    if (target == DimTarget::Two) s.add(v.var == 2 && v.var < old);
    if (target == DimTarget::Smaller) s.add(v.var >= 2 && v.var < old);
  }
  if (!found || solver::checkPreferring(s, prefer) != z3::sat) return std::nullopt;
  return solved(tc, e, s.get_model(), fill,
                tc.seed ^ (static_cast<uint64_t>(axis) << 32) ^ std::hash<std::string>{}(leaf));
}

std::optional<TestCase> shrinkAllDims(const TestCase& tc) {
  z3::context ctx;
  solver::GraphEncoding e(ctx, tc);
  // A smaller budget: when all-at-once is impossible, z3 may spend the whole budget proving it,
  // and the one-dim edits that follow do the work anyway.
  z3::solver s = shrinkingSolver(ctx, e, kGraphBudget / 10);
  z3::expr_vector prefer(ctx);  // other numbers stay when they can
  std::vector<const solver::GraphEncoding::Variable*> dims;
  for (const auto& v : e.variables()) {
    if (boundOthers(tc, v, s, prefer)) continue;
    s.add(v.var >= 1 && v.var <= ctx.int_val(v.value));
    if (v.value > 1) dims.push_back(&v);
  }
  if (dims.empty()) return std::nullopt;  // every leaf dim is 1 already
  // Two tries, each one satisfiability check: every dim 1, else every dim halved. (Minimizing
  // the sum is an optimization z3 does slowly on nonlinear rules; one dim at a time follows.)
  for (const bool toOne : {true, false}) {
    s.push();
    for (const auto* v : dims)
      s.add(v->var >= 1 && v->var <= ctx.int_val(toOne ? 1 : (v->value + 1) / 2));
    if (solver::checkPreferring(s, prefer) == z3::sat)
      return solved(tc, e, s.get_model(), Fill::Leading, 0);
    s.pop();
  }
  return std::nullopt;
}

}  // namespace nncheck::shrink
