// Constant subexpressions: every optimizer folds them (ORT's ConstantFolding, MLIR's
// canonicalize, TorchScript's freeze), and blind growth never forms one, since a forward node
// reads a computed value or a graph input first. Here a value the model reads becomes the output
// of a node reading only fresh initializers:
// - an initializer whose contents do not matter (or a graph input, while another stays) gets a
//   node drawn like a backward insertion (any op, its attributes drawn, judged by its rule, kept
//   finite), its leaves initializers; growing again on those leaves makes chains, and its
//   readers are mixes of constant and computed operands;
// - a shape operand (Reshape's shape, Slice's starts, ...) gets a node that reproduces its
//   contents exactly (Concat of two parts, Add of two addends; integers, which value search
//   leaves alone, unlike a float Cast to them), so the reader stays valid; unless
//   cfg.shapeOperandsAsInitializers (importers that need static shapes and fold nothing reject
//   a computed one).
#include <algorithm>
#include <set>

#include "generators/values.h"
#include "generators/ways_of_growing.h"

namespace nncheck::gen {
namespace {

using ops::InputRole;

const ops::InputSpec& inputSpec(Growth& g, size_t node, size_t input) {
  return ops::specFor(g.nodes()[node], g.cfg().opset).inputSpec(input);
}

// Whether every reader of `v` (one at least) reads it as a 1-D shape operand.
bool shapeOperand(Growth& g, const Value& v) {
  const auto readers = g.readersOf(v.name);
  return v.shape.size() == 1 && !readers.empty() &&
         std::all_of(readers.begin(), readers.end(), [&](const auto& r) {
           const InputRole role = inputSpec(g, r.first, r.second).role;
           return role == InputRole::ShapeValues || role == InputRole::AxesValues;
         });
}

// Whether the config's table has `op` with input 0 admitting `t`.
bool admits(const Growth& g, const std::string& op, DType t) {
  const OpEntry* e = g.entry(op);
  if (!e) return false;
  const auto& d = e->dtypesOfInput(0);
  return std::find(d.begin(), d.end(), t) != d.end();
}

// A node reproducing shape operand `v` (1-D integers) from fresh initializers.
bool computeShapeOperand(Growth& g, int index) {
  const Value& v = g.values()[static_cast<size_t>(index)];
  const std::vector<int64_t> contents = v.data.toInt64s();
  const int64_t n = static_cast<int64_t>(contents.size());
  auto leaf = [&](std::vector<int64_t> xs, DType t) {
    const Shape s{static_cast<int64_t>(xs.size())};
    Tensor data = castTensor(Tensor::fromVector<int64_t>(s, std::move(xs)), t);
    return Value{g.fresh("w"), t, s, Value::Kind::Initializer, data, true};
  };
  std::vector<const char*> ways;
  if (n >= 2 && admits(g, "Concat", v.dtype)) ways.push_back("Concat");
  if (admits(g, "Add", v.dtype)) ways.push_back("Add");
  if (ways.empty()) return false;
  const std::string way = g.rng().pick(ways);
  Rng& rng = g.rng();
  if (way == "Concat") {
    const int64_t k = rng.uniform(1, n - 1);
    Value a = leaf({contents.begin(), contents.begin() + k}, v.dtype);
    Value b = leaf({contents.begin() + k, contents.end()}, v.dtype);
    Node node = Node::make("Concat", {a.name, b.name}, {});
    node.attributes.push_back(Attribute::ofInt("axis", 0));
    g.computeInitializer(index, std::move(node), {std::move(a), std::move(b)});
  } else {
    std::vector<int64_t> addend(contents.size()), rest(contents.size());
    for (size_t i = 0; i < contents.size(); ++i) {
      addend[i] = rng.uniform(-3, 3);
      rest[i] = contents[i] - addend[i];
    }
    Value a = leaf(addend, v.dtype), b = leaf(rest, v.dtype);
    Node node = Node::make("Add", {a.name, b.name}, {});
    g.computeInitializer(index, std::move(node), {std::move(a), std::move(b)});
  }
  return true;
}

}  // namespace

bool growConstant(Growth& g) {
  const auto& dtypes = g.cfg().dtypes;
  const std::set<std::string> matter = g.contentsMatter();
  std::vector<int> free, shapeOperands, inputs;  // free: contents that do not matter
  for (size_t v = 0; v < g.values().size(); ++v) {
    const Value& val = g.values()[v];
    if (val.kind == Value::Kind::Computed || g.readersOf(val.name).empty()) continue;
    const bool isFree = !matter.count(val.name) &&
                        std::find(dtypes.begin(), dtypes.end(), val.dtype) != dtypes.end();
    if (val.kind == Value::Kind::Input) {
      inputs.push_back(static_cast<int>(v));
      if (isFree) free.push_back(static_cast<int>(v));
    } else if (isFree) {
      free.push_back(static_cast<int>(v));
    } else if (!g.cfg().shapeOperandsAsInitializers && shapeOperand(g, val)) {
      shapeOperands.push_back(static_cast<int>(v));
    }
  }
  // A graph input may become constant too, while another input stays.
  if (inputs.size() < 2)
    std::erase_if(
        free, [&](int v) { return g.values()[static_cast<size_t>(v)].kind == Value::Kind::Input; });
  const bool shape = !shapeOperands.empty() && (free.empty() || g.rng().chance(0.5));
  if (shape) return computeShapeOperand(g, g.rng().pick(shapeOperands));
  if (free.empty()) return false;
  return g.insert({.backward = true, .placeholder = g.rng().pick(free), .constantLeaves = true});
}

}  // namespace nncheck::gen
