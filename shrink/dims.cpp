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

// Inputs whose op declares them indices into input 0 (ValueDomain::Indices) wrapped into the
// axis they index, which may have shrunk.
void keepIndicesInRange(TestCase& tc, const std::function<Shape(const std::string&)>& shapeOf) {
  Graph& g = tc.model.graph;
  auto tensorOf = [&](const std::string& name) -> Tensor* {
    for (Initializer& i : g.initializers)
      if (i.name == name) return &i.value;
    auto it = tc.inputs.find(name);
    return it == tc.inputs.end() ? nullptr : &it->second;
  };
  for (const Node& node : g.nodes) {
    const ops::OpSpec& spec = ops::specFor(node, tc.model.defaultOpset());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (spec.inputSpec(i).domain != ops::ValueDomain::Indices || node.inputs[i].empty()) continue;
      Tensor* indices = tensorOf(node.inputs[i]);
      if (!indices) continue;  // computed indices come from the (already valid) graph
      ops::wrapIndices(*indices, ops::indexBound(node, shapeOf(node.inputs[0])));
    }
  }
}

}  // namespace

std::optional<TestCase> shrinkDim(const TestCase& tc, const std::string& leaf, size_t axis,
                                  bool toOne, bool refill) {
  z3::context ctx;
  solver::GraphEncoding e(ctx, tc);
  // A graph is a larger problem than the generator's single node: a larger budget.
  z3::solver s = solver::makeSolver(ctx, 0, 2000000);
  for (const z3::expr& k : e.constraints()) s.add(k);
  z3::expr_vector prefer(ctx);
  bool found = false;
  using Kind = solver::GraphEncoding::Variable::Kind;
  for (const auto& v : e.variables()) {
    const z3::expr old = ctx.int_val(v.value);
    if (v.kind == Kind::Dim && v.structural) {
      s.add(v.var == old);
    } else if (v.kind == Kind::Dim && v.leaf == leaf && v.position == axis) {
      found = true;
      s.add(toOne ? v.var == 1 : (v.var >= 1 && v.var < old));
    } else if (v.kind == Kind::Dim) {
      s.add(v.var >= 1 && v.var <= old);
      prefer.push_back(v.var == old);
    } else if (v.kind == Kind::Value) {
      s.add(v.var >= -65536 && v.var <= 65536);
      prefer.push_back(v.var == old);
    } else {  // a symbolic attribute may only shrink
      const ops::OpSpec& spec = ops::specFor(tc.model.graph.nodes[v.node], tc.model.defaultOpset());
      s.add(v.var >= ctx.int_val(std::min(spec.attrSpec(v.attribute)->lo, v.value)) &&
            v.var <= old);
      prefer.push_back(v.var == old);
    }
  }
  if (!found) return std::nullopt;
  if (s.check(prefer) != z3::sat && s.check() != z3::sat) return std::nullopt;

  const z3::model model = s.get_model();
  Rng rng(tc.seed ^ (static_cast<uint64_t>(axis) << 32) ^ std::hash<std::string>{}(leaf));
  TestCase out = e.apply(model, tc, [&](const Tensor& old, const Shape& shape) {
    if (!refill || shape == old.shape()) return corner(old, shape);
    return randomTensor(rng, old.dtype(), shape, ops::ValueDomain::Any, 0);
  });
  keepIndicesInRange(out, [&](const std::string& value) { return e.shape(model, value); });
  return out;
}

}  // namespace nncheck::shrink
