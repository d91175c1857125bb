// Dropping an axis of size 1 through the graph. Which axis of each computed value goes with it
// is read off the shapes: the node's output loses a size-1 axis (that one), or keeps its rank
// (the drop was absorbed, e.g. by broadcasting). Only attributes that name axes are adjusted;
// anything else that no longer fits makes the edit fail, and candidates are validated anyway.
#include "shrink/rank.h"

#include <algorithm>
#include <map>
#include <set>

#include "ops/infer.h"

namespace nncheck::shrink {
namespace {

Shape without(const Shape& s, size_t axis) {
  Shape out = s;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  return out;
}

// The axis of `before` whose removal gives `after` (preferring `hint`), or nullopt.
std::optional<size_t> removedAxis(const Shape& before, const Shape& after, size_t hint) {
  if (before.size() != after.size() + 1) return std::nullopt;
  if (hint < before.size() && before[hint] == 1 && without(before, hint) == after) return hint;
  for (size_t a = 0; a < before.size(); ++a)
    if (before[a] == 1 && without(before, a) == after) return a;
  return std::nullopt;
}

// Renumbers the node's axis attributes for input 0 losing axis `a` of its rank `rank`; false
// when an attribute names the dropped axis itself (the node works on it: no drop here).
bool renumberAxes(Node& node, size_t a, size_t rank) {
  auto fix = [&](int64_t& v) {
    const int64_t r = static_cast<int64_t>(rank);
    const int64_t p = v < 0 ? v + r : v;
    if (p == static_cast<int64_t>(a)) return false;
    if (v >= 0 && p > static_cast<int64_t>(a)) --v;
    if (v < 0 && p < static_cast<int64_t>(a)) ++v;  // counted from the end: earlier axes move
    return true;
  };
  for (Attribute& attr : node.attributes) {
    if (attr.name == "axis" && attr.kind == Attribute::Kind::Int) {
      if (!fix(attr.i)) return false;
    } else if (attr.name == "axes" && attr.kind == Attribute::Kind::Ints) {
      for (int64_t& v : attr.ints)
        if (!fix(v)) return false;
    } else if (attr.name == "perm" && attr.kind == Attribute::Kind::Ints) {
      std::erase(attr.ints, static_cast<int64_t>(a));
      for (int64_t& v : attr.ints)
        if (v > static_cast<int64_t>(a)) --v;
    }
  }
  return true;
}

}  // namespace

std::optional<TestCase> dropAxis(const TestCase& tc, const std::string& leaf, size_t axis) {
  TestCase out = tc;
  Graph& g = out.model.graph;
  const int64_t opset = out.model.defaultOpset();
  auto dropLeaf = [&](const std::string& name, size_t a) {
    Tensor* t = nullptr;
    for (Initializer& i : g.initializers)
      if (i.name == name) t = &i.value;
    if (auto it = out.inputs.find(name); !t && it != out.inputs.end()) t = &it->second;
    if (!t || a >= t->shape().size() || t->shape()[a] != 1 || t->rank() < 2) return false;
    Tensor reshaped(t->dtype(), without(t->shape(), a));
    reshaped.bytes() = t->bytes();  // a size-1 axis: the same elements in the same order
    reshaped.strings() = t->strings();
    *t = std::move(reshaped);
    for (ValueInfo& v : g.inputs)
      if (v.name == name) v = ValueInfo::tensor(name, v.dtype, t->shape());
    return true;
  };
  if (!dropLeaf(leaf, axis)) return std::nullopt;

  // Shapes as they are and as they become, value by value.
  std::map<std::string, ops::InputFacts> now;
  for (const Initializer& i : g.initializers)
    now[i.name] = {true, i.value.dtype(), i.value.shape(), &i.value};
  for (const auto& [name, t] : out.inputs) now[name] = {true, t.dtype(), t.shape(), nullptr};
  std::map<std::string, Shape> before;  // every value's shape in the original case
  for (const auto& [name, facts] : ops::inferModel(tc.model)) before[name] = facts.shape;

  std::map<std::string, size_t> dropped = {{leaf, axis}};
  std::set<std::string> read;  // values a node has read (a leaf read before cannot drop now)
  for (Node& n : g.nodes) {
    auto first = n.inputs.empty() ? dropped.end() : dropped.find(n.inputs[0]);
    // Another operand of the dropped one's rank, a leaf with a 1 there, drops with it (Add of
    // two [1, 3] leaves becomes Add of two [3]).
    if (first != dropped.end()) {
      const size_t rank = before.at(n.inputs[0]).size();
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        const std::string& in = n.inputs[i];
        // dropLeaf refuses computed values.
        if (in.empty() || dropped.count(in) || read.count(in)) continue;
        if (now.at(in).shape.size() == rank && dropLeaf(in, first->second)) {
          dropped[in] = first->second;
          now[in].shape = without(now[in].shape, first->second);
        }
      }
    }
    for (const auto& in : n.inputs) read.insert(in);
    if (first != dropped.end() && !renumberAxes(n, first->second, before.at(n.inputs[0]).size()))
      return std::nullopt;
    std::vector<ops::InputFacts> ins;
    for (const auto& in : n.inputs) ins.push_back(in.empty() ? ops::InputFacts{} : now.at(in));
    std::vector<ops::TensorType> types;
    try {
      types = ops::inferNode(ops::specFor(n, opset), n, ins);
    } catch (const Error&) {
      return std::nullopt;
    }
    for (size_t o = 0; o < n.outputs.size() && o < types.size(); ++o) {
      const std::string& name = n.outputs[o];
      if (name.empty()) continue;
      now[name] = {true, types[o].dtype, types[o].shape, nullptr};
      const Shape& old = before.at(name);
      if (old == types[o].shape) continue;
      auto a = removedAxis(old, types[o].shape, first != dropped.end() ? first->second : 0);
      if (!a) return std::nullopt;  // the drop changed more than one axis
      dropped[name] = *a;
    }
  }
  // Recorded types of values that changed would contradict them.
  std::erase_if(g.valueInfos, [&](const ValueInfo& v) { return dropped.count(v.name) > 0; });
  return out;
}

}  // namespace nncheck::shrink
